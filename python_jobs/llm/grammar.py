"""Constrained decoding for the embedded LLM: an OpenAI `response_format` becomes an llguidance grammar that masks
the model's logits at every step, so the reply follows the JSON schema by construction (string `maxLength`, integer
and number `minimum` / `maximum`, `enum`, `required`, `additionalProperties: false` included).

- `json_schema`: its `schema`, compiled once per distinct schema (an LRU cache of compiled matchers); each request
  gets a copy of the compiled matcher (a matcher holds one generation's parse state). `json_object`: any JSON
  object (the same machinery, schema `{"type": "object"}`). `text` or no response_format: no constraint.
- JSON is written compactly with the separators of the judges' prompts (`{"score": 1, "rationale": "..."}`) and no
  free whitespace: a small model would otherwise pad with newlines until max_tokens. A schema's own `x-guidance`
  options win.
- A response_format that cannot be applied (an unknown type, no schema, a keyword or pattern the compiler does not
  implement) raises ResponseFormatError, which the server answers with a 400 naming response_format (the project's
  client then drops the field for the rest of the job, docs/llm.md).

Why llguidance and not xgrammar: llguidance is one 3 MB wheel with no dependencies; xgrammar 0.2.8 pulls
apache-tvm-ffi and triton (about 0.9 GB installed, unused on CPU). The price is the transformers logits processor
below, which is ours (bench/llm_constrained/README.md has the measurements).
"""

from __future__ import annotations

import json
import threading
from collections import OrderedDict
from collections.abc import Mapping
from typing import Any

import numpy as np

# how JSON is written under a schema (the schema's "x-guidance" options override these)
JSON_OPTIONS = {"whitespace_flexible": False, "item_separator": ", ", "key_separator": ": "}
ANY_OBJECT: dict[str, Any] = {"type": "object"}  # what `json_object` asks for
CACHE_SIZE = 64  # compiled schemas kept (the judges use one per metric, QA generation one per agent)


class ResponseFormatError(ValueError):
    """A response_format the embedded server cannot apply: answered with a 400 that names the field."""


def schema_of(response_format: Any) -> dict[str, Any] | None:
    """The JSON schema a response_format asks for; None for no constraint (absent, null or type `text`)."""
    if response_format is None:
        return None
    if not isinstance(response_format, Mapping):
        raise ResponseFormatError("response_format must be an object with a `type`")
    kind = response_format.get("type")
    if kind == "text":
        return None
    if kind == "json_object":
        return ANY_OBJECT
    if kind != "json_schema":
        raise ResponseFormatError(f"response_format type {kind!r} is not supported (text, json_object, json_schema)")
    spec = response_format.get("json_schema")
    schema = spec.get("schema") if isinstance(spec, Mapping) else None
    if not isinstance(schema, Mapping):
        raise ResponseFormatError("response_format json_schema needs a `schema` object")
    return dict(schema)


class Grammars:
    """Compiled JSON-schema grammars for one tokenizer, cached by the schema's canonical JSON."""

    def __init__(self, hf_tokenizer: Any, vocab_size: int):
        import llguidance.hf

        # ~1 s: the tokenizer's vocabulary as llguidance's token trie, once per server
        self.tokenizer = llguidance.hf.from_tokenizer(hf_tokenizer, n_vocab=vocab_size)
        self.vocab_size = vocab_size
        self._compiled: OrderedDict[str, Any] = OrderedDict()  # canonical schema -> LLMatcher, or its error
        self._lock = threading.Lock()
        self.compiles = 0  # how many schemas were compiled (the cache's misses)

    def matcher(self, response_format: Any) -> Any | None:
        """A fresh matcher for one generation under `response_format`, or None for no constraint."""
        schema = schema_of(response_format)
        if schema is None:
            return None
        key = json.dumps(schema, sort_keys=True, separators=(",", ":"))
        with self._lock:
            compiled = self._compiled.get(key)
            if compiled is None:
                compiled = self._compile(schema)
                self._compiled[key] = compiled
                if len(self._compiled) > CACHE_SIZE:
                    self._compiled.popitem(last=False)
            else:
                self._compiled.move_to_end(key)
            if isinstance(compiled, str):
                raise ResponseFormatError(compiled)
            return compiled.deep_copy()

    def _compile(self, schema: dict[str, Any]) -> Any:
        from llguidance import LLMatcher

        self.compiles += 1
        try:
            grammar = LLMatcher.grammar_from_json_schema(schema, defaults=JSON_OPTIONS)  # type: ignore[arg-type]
        except ValueError as exc:
            return f"response_format json_schema is not valid JSON: {exc}"
        matcher = LLMatcher(self.tokenizer, grammar, log_level=0)
        if matcher.is_error():  # the matcher never raises for a grammar: it starts in an error state
            return f"response_format json_schema cannot be compiled: {matcher.get_error().strip()}"
        return matcher


class GrammarLogitsProcessor:
    """A transformers logits processor that lets through only the tokens the grammar allows next (single use: one
    generate() call, batch size 1). The first call sees the prompt; each later call first feeds the matcher the
    token generated since. Once the grammar is complete only EOS is allowed, so generation ends there."""

    def __init__(self, matcher: Any, vocab_size: int):
        self.matcher = matcher
        self.vocab_size = vocab_size
        self._start: int | None = None  # the prompt's length: tokens after it were generated
        self._fed = 0

    def __call__(self, input_ids: Any, scores: Any) -> Any:
        import torch

        if input_ids.shape[0] != 1:
            raise ValueError("constrained decoding runs one sequence at a time")
        if self._start is None:
            self._start = int(input_ids.shape[1])
        new = input_ids[0, self._start + self._fed:].tolist()
        if new and not self.matcher.consume_tokens(new):
            raise RuntimeError(f"constrained decoding: the grammar rejected a generated token "
                               f"({self.matcher.get_error().strip()})")
        self._fed += len(new)
        # one bit per token (little-endian 32-bit words): bit i of the byte string is token i
        bits = np.unpackbits(np.frombuffer(self.matcher.compute_bitmask(), dtype=np.uint8), bitorder="little")
        allowed = torch.from_numpy(bits[: scores.shape[-1]].astype(bool))
        if allowed.shape[0] < scores.shape[-1]:  # logits beyond the tokenizer's vocabulary: never allowed
            allowed = torch.cat([allowed, allowed.new_zeros(scores.shape[-1] - allowed.shape[0])])
        return scores.masked_fill(~allowed, float("-inf"))

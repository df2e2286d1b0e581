"""Strict reading of the generator, inspector and classifier agents' replies, and the checks an instance must pass
(grounded in its passages, no copy of the prompt's example, no degenerate loop)."""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

from pydantic import BaseModel, ValidationError, field_validator, model_validator

from python_jobs.llm.prompts import PromptTemplate, load_template
from python_jobs.qa_generation.topics import Topic


def load_agent(name: str) -> PromptTemplate:
    return load_template(name)


# ---- strict reply parsing ----------------------------------------------------------------------------------------
_LABEL = re.compile(r"^\s*(?:[-*#>]+\s*)?\**\s*([A-Za-z]+)\s*\**\s*:\s*\**\s*(.*)$")


class ReplyError(ValueError):
    """A reply that does not follow its agent's format (the instance fails with this reason)."""


# ---- structured output: each agent's reply as a JSON schema (the request's response_format) ------------------------
# Endpoints with structured output (the embedded server's constrained decoding) answer in the schema, so the reply
# parses and its strings are bounded: a schema's strings together fit its agent's budget (pipeline.MAX_TOKENS) at
# about 3.3 characters a token, JSON keys and punctuation included. The keys are the labels of the labelled-line
# format (the prompts' format, which an endpoint without structured output follows), so one strict reading serves
# both (`labelled`). Like the parsers, the schemas are code: they are not part of a generation run's id.
def _text(min_length: int, max_length: int) -> dict[str, Any]:
    return {"type": "string", "minLength": min_length, "maxLength": max_length}


def _object(**properties: dict[str, Any]) -> dict[str, Any]:
    return {"type": "object", "properties": properties, "required": list(properties), "additionalProperties": False}


REPLY_SCHEMAS: dict[str, dict[str, Any]] = {
    "extractive": _object(question=_text(15, 140), answer=_text(1, 80)),  # 80 tokens
    "multi_hop_calc": _object(question=_text(15, 150), answer=_text(1, 40), calculation=_text(1, 100)),  # 120
    "multi_hop_chain": _object(question=_text(15, 150), answer=_text(1, 80), reasoning=_text(1, 200)),  # 150
    "contrast": _object(question=_text(15, 160), answer=_text(1, 180)),  # 120
    "long_form": _object(question=_text(15, 160), answer=_text(60, 500)),  # 220
    # two exchanges, as the prompt asks (the labelled-line reading takes up to MAX_EXCHANGES); 220 tokens
    "conversational": _object(turns={"type": "array", "minItems": 2, "maxItems": 2,
                                     "items": _object(user=_text(10, 120), assistant=_text(1, 160))}),
    "inspect": _object(verdict={"enum": ["keep", "drop"]}, score={"type": "integer", "minimum": 1, "maximum": 5},
                       reason=_text(1, 180)),  # 90 tokens
}


def reply_format(agent: str, topics: Sequence[Topic] = ()) -> dict[str, Any] | None:
    """The response_format of an agent's request (None for an agent without a schema); the classifier's is an enum
    of the leaf topics' English names."""
    if agent == "classify":
        schema = _object(topic={"enum": [t.name_en for t in topics]})
    elif agent in REPLY_SCHEMAS:
        schema = REPLY_SCHEMAS[agent]
    else:
        return None
    return {"type": "json_schema", "json_schema": {"name": f"qa_{agent}", "schema": schema}}


def json_pairs(reply: str) -> list[tuple[str, str]] | None:
    """A structured reply (one JSON object) as (label, value) pairs in the object's order, nested objects and lists
    of objects (a conversation's turns) flattened in order; None when the reply is not one JSON object."""
    text = reply.strip()
    if not text.startswith("{"):
        return None
    try:
        obj = json.loads(text)
    except json.JSONDecodeError:
        return None
    out: list[tuple[str, str]] = []

    def walk(value: Any, key: str) -> None:
        if isinstance(value, dict):
            for k, v in value.items():
                walk(v, str(k).lower())
        elif isinstance(value, list):
            for v in value:
                walk(v, key)
        elif value is not None:
            out.append((key, str(value)))

    if not isinstance(obj, dict):
        return None
    walk(obj, "")
    return out


def labelled(reply: str, labels: Sequence[str], multiline: Sequence[str] = ()) -> list[tuple[str, str]]:
    """The reply's labelled lines in order, e.g. [("question", "..."), ("answer", "...")]. Text before the first
    label (a "Sure, here is..." preamble) is ignored; lines after a label continue it only for `multiline` labels;
    other unlabelled lines end it. A JSON object (a structured reply) gives its keys as the labels; a value that
    repeats its own label ("Question: ...", the prompts' format leaking in) loses it."""
    structured = json_pairs(reply)
    if structured is not None:
        return [(k, re.sub(rf"^\s*{re.escape(k)}\s*:\s*", "", v, flags=re.IGNORECASE).strip())
                for k, v in structured if k in labels]
    out: list[tuple[str, str]] = []
    current: str | None = None
    for raw in reply.splitlines():
        m = _LABEL.match(raw)
        if m and m[1].lower() in labels:
            current = m[1].lower()
            out.append((current, m[2].strip().strip("*").strip()))
        elif current in multiline and raw.strip():
            out[-1] = (current, f"{out[-1][1]} {raw.strip()}".strip())
        elif raw.strip():
            current = None
    return out


def first_of(pairs: list[tuple[str, str]], label: str) -> str | None:
    return next((v for k, v in pairs if k == label), None)


def _words(text: str) -> list[str]:
    return re.findall(r"[a-z0-9]+(?:[.,][0-9]+)*", text.lower())


def degenerate(text: str, n: int = 6, times: int = 3) -> bool:
    """A small model's loop: some n-word sequence repeated `times` times or more."""
    w = _words(text)
    counts: dict[tuple[str, ...], int] = {}
    for i in range(len(w) - n + 1):
        g = tuple(w[i : i + n])
        counts[g] = counts.get(g, 0) + 1
        if counts[g] >= times:
            return True
    return False


def cut_loop(text: str, n: int = 6) -> str:
    """A multi-sentence value up to where it starts looping: sentences are kept while none repeats an n-word
    sequence already said (a small model's loop, then cut mid-sentence by max_tokens); a trailing fragment without
    end punctuation goes too when a full sentence precedes it."""
    sentences = re.findall(r"[^.!?]+(?:[.!?]+(?=\s|$)|$)", " ".join(text.split()))
    kept: list[str] = []
    seen: set[tuple[str, ...]] = set()
    for sent in (x.strip() for x in sentences if x.strip()):
        w = _words(sent)
        grams = {tuple(w[i : i + n]) for i in range(len(w) - n + 1)}
        if grams & seen or degenerate(sent):
            break
        seen |= grams
        kept.append(sent)
    if len(kept) > 1 and not re.search(r"[.!?]$", kept[-1]):
        kept.pop()
    return " ".join(kept)


def _clean(v: str) -> str:
    v = " ".join(v.split())
    if not v or v in ("...", "…") or re.fullmatch(r"<[^>]*>", v):
        raise ValueError("empty or a placeholder")
    if degenerate(v):
        raise ValueError("degenerate repetition")
    return v


class QA(BaseModel):
    question: str
    answer: str

    @field_validator("question", "answer")
    @classmethod
    def _not_empty(cls, v: str) -> str:
        return _clean(v)

    @field_validator("question")
    @classmethod
    def _is_question(cls, v: str) -> str:
        if len(_words(v)) < 4:
            raise ValueError("a question needs at least 4 words")
        return v

    @model_validator(mode="after")
    def _distinct(self) -> QA:
        if self.question.lower() == self.answer.lower():
            raise ValueError("the answer repeats the question")
        return self


class ShortQA(QA):
    @field_validator("answer")
    @classmethod
    def _short(cls, v: str) -> str:
        if len(_words(v)) > 60:
            raise ValueError("an extractive answer is a span of at most 60 words")
        return v


class CalcQA(QA):
    calculation: str | None = None

    @field_validator("answer")
    @classmethod
    def _numeric(cls, v: str) -> str:
        if not re.search(r"\d", v):
            raise ValueError("a calculation question needs a numeric answer")
        return v


class ChainQA(QA):
    reasoning: str | None = None


class LongQA(QA):
    @field_validator("answer")
    @classmethod
    def _long(cls, v: str) -> str:
        if len(_words(v)) < 15:
            raise ValueError("a long-form answer needs at least 15 words")
        return v


class Turn(BaseModel):
    role: Literal["user", "assistant"]
    content: str

    @field_validator("content")
    @classmethod
    def _not_empty(cls, v: str) -> str:
        return _clean(v)


class Conversation(BaseModel):
    turns: list[Turn]

    @model_validator(mode="after")
    def _alternating(self) -> Conversation:
        if len(self.turns) < 4:
            raise ValueError("a conversation needs at least two user/assistant exchanges")
        for i, t in enumerate(self.turns):
            if t.role != ("user" if i % 2 == 0 else "assistant"):
                raise ValueError(f"turn {i + 1} should be the {'user' if i % 2 == 0 else 'assistant'}'s")
        return self


MAX_EXCHANGES = 3  # further turns of a long reply are ignored (a small model keeps going until max_tokens)


@dataclass
class Generated:
    question: str
    answers: list[str]
    conversation: list[dict[str, str]] | None = None
    extra: dict[str, str] = field(default_factory=dict)  # calculation / reasoning


def _why(exc: ValidationError) -> str:
    e = exc.errors()[0]
    loc = ".".join(str(x) for x in e.get("loc", ())) or "reply"
    return f"{loc}: {e['msg'].removeprefix('Value error, ')}"


def parse_generation(kind: str, reply: str) -> Generated:
    """Parse one generator reply strictly; ReplyError names what is wrong."""
    try:
        if kind == "conversational":
            pairs = labelled(reply, ("user", "assistant"), multiline=("assistant",))
            turns: list[Turn] = []
            for role, text in pairs:
                # stop at the reply's first repeated user turn (a loop) or once enough exchanges were given
                if role == "user" and (any(t.content == " ".join(text.split()) for t in turns if t.role == "user")
                                       or len(turns) >= 2 * MAX_EXCHANGES):
                    break
                try:
                    turns.append(Turn(role=role, content=text))  # type: ignore[arg-type]
                except ValidationError as exc:
                    raise ReplyError(f"turn {len(turns) + 1} {_why(exc)}") from None
            if turns and turns[-1].role == "user":
                turns = turns[:-1]
            conv = Conversation(turns=turns)
            dialogue = [t.model_dump() for t in conv.turns]
            return Generated(question=conv.turns[-2].content, answers=[conv.turns[-1].content],
                             conversation=dialogue[:-1])
        model: type[QA] = {"extractive": ShortQA, "multi_hop_calc": CalcQA, "multi_hop_chain": ChainQA,
                           "contrast": QA, "long_form": LongQA}[kind]
        extra_label = {"multi_hop_calc": "calculation", "multi_hop_chain": "reasoning"}.get(kind)
        labels = ("question", "answer", *((extra_label,) if extra_label else ()))
        pairs = labelled(reply, labels, multiline=("answer", extra_label or "") if kind == "long_form" or extra_label
                         else ())
        values: dict[str, Any] = {}
        for label in labels:
            v = first_of(pairs, label)
            if v is None and label in ("question", "answer"):
                raise ReplyError(f"no '{label.capitalize()}:' line in the reply")
            if v is not None and (label in ("calculation", "reasoning") or (kind == "long_form" and label == "answer")):
                v = cut_loop(v) or v  # multi-sentence values: cut where the model starts looping
            values[label] = v
        qa = model(**values)
    except ValidationError as exc:
        raise ReplyError(_why(exc)) from None
    extra = {k: values[k] for k in ("calculation", "reasoning") if values.get(k)}
    return Generated(question=qa.question, answers=[qa.answer], extra=extra)


def copies_example(gen: Generated, agent: PromptTemplate, passages: str) -> bool:
    """True when the reply repeats the prompt's example (a small model's favourite failure): a question (or user
    turn) of the example, or an answer (or assistant turn) of the example that the passages do not hold."""
    def norm(v: str) -> str:
        return " ".join(v.split()).lower()

    asked, answered = set(), set()
    for ex in agent.examples():
        for label, v in labelled(ex, ("question", "answer", "user", "assistant")):
            (asked if label in ("question", "user") else answered).add(norm(v))
    turns = gen.conversation or []
    questions = [gen.question, *[t["content"] for t in turns if t["role"] == "user"]]
    answers = [*gen.answers, *[t["content"] for t in turns if t["role"] == "assistant"]]
    # a reworded copy is not verbatim: it borrows the example's numbers ("41.2% against 35.8%"), or nearly all
    # its words, and not from the passages (the example's phrasing alone, "the company of passage 1", is allowed)
    example = agent.example_text()
    borrowed = set(_terms(example)) - set(_terms(passages))
    return (any(norm(q) in asked for q in questions)
            or any(norm(a) in answered and not grounded(a, passages, 1.0) for a in answers)
            or any(any(w[0].isdigit() and w in borrowed for w in _terms(a))
                   or (word_share(a, example) >= 0.8 and not grounded(a, passages)) for a in answers))


def _terms(text: str) -> list[str]:
    """Words, numbers without thousands separators (the passage's 3410 is the answer's 3,410)."""
    return [w.replace(",", "") for w in _words(text)]


def word_share(answer: str, passage: str) -> float:
    """The share of the answer's words that occur in the passage."""
    have = set(_terms(passage))
    mine = _terms(answer)
    return sum(w in have for w in mine) / len(mine) if mine else 0.0


def grounded(answer: str, passage: str, min_share: float = 0.6) -> bool:
    """Extractive answers come from the passage: at least `min_share` of the answer's words occur in it."""
    return word_share(answer, passage) >= min_share


class Verdict(BaseModel):
    verdict: Literal["keep", "drop"]
    score: int | None = None
    reason: str = ""

    @field_validator("verdict", mode="before")
    @classmethod
    def _word(cls, v: str) -> str:
        m = re.match(r"\W*(keep|drop)\b", str(v).lower())
        if not m:
            raise ValueError(f"verdict must be keep or drop, got {str(v)[:40]!r}")
        return m[1]

    @field_validator("score", mode="before")
    @classmethod
    def _score(cls, v: Any) -> int | None:
        if v is None:
            return None
        m = re.match(r"\s*([1-5])(?:\s*/\s*5)?\s*(?:\D|$)", str(v))
        if not m:
            raise ValueError(f"score must be 1 to 5, got {str(v)[:20]!r}")
        return int(m[1])


def parse_verdict(reply: str) -> Verdict:
    pairs = labelled(reply, ("verdict", "score", "reason"), multiline=("reason",))
    v = first_of(pairs, "verdict")
    if v is None:
        raise ReplyError("no 'Verdict:' line in the inspector's reply")
    try:
        return Verdict(verdict=v, score=first_of(pairs, "score"), reason=(first_of(pairs, "reason") or "")[:500])
    except ValidationError as exc:
        raise ReplyError(_why(exc)) from None


def parse_topic(reply: str, topics: Sequence[Topic]) -> Topic:
    """The classifier names one topic: the earliest leaf name (English, or Chinese) in the 'Topic:' line (or, without
    that label, the reply); ReplyError when it names none."""
    line = first_of(labelled(reply, ("topic",)), "topic") or reply
    low = line.lower()
    found: list[tuple[int, int, Topic]] = []
    for t in topics:
        for name in {t.name_en.lower(), t.name_zh.lower()}:
            i = low.find(name)
            if i >= 0:
                found.append((i, -len(name), t))
    if not found:
        raise ReplyError(f"the reply names no topic of the list: {' '.join(reply.split())[:80]!r}")
    return min(found, key=lambda x: (x[0], x[1]))[2]

"""OmniEval-style QA generation (shared by `finrag generate-qa`, `export-inspection` and `import-inspection`).

The pipeline is a chain of agents, each a versioned prompt under prompts/ (their name@hash12 go into the run id):

    qa_classify_v1        a sampled unit (a chunk, or one chunk per document) -> its most relevant leaf topic
    qa_<task>_v1          per task: extractive, multi_hop_calc / multi_hop_chain (task multi_hop), contrast,
                          long_form, conversational -> question, answer(s), from the passages the pipeline gave it
    qa_inspect_v1         the quality inspector: keep / drop with a score and a reason (lands in qa_inspections)

Every reply is parsed strictly (pydantic models over labelled lines, "Question: ..." / "Answer: ..."): a reply that
does not parse, copies the prompt's example, degenerates into repetition, or (extractive) whose answer is not in
the passage fails its instance with the reason, recorded in qa_generation_attempts; it never lands as a question.
The gold evidence of an instance is the chunks the pipeline gave the generator (never ids the model names), so the
retrieval metrics score generated instances at chunk, page and doc granularity.

Splits: a kept instance is 'gen_train' or 'gen_test' by a seeded hash of its question id (--test-fraction); an instance the
LLM inspector dropped lands with split 'dropped'. Human inspection (import-inspection) overrides the LLM: score 1-2
-> 'dropped'; 3 -> the corrected text applied (original kept in meta); 4-5 -> kept; a human-accepted instance whose
seeded split is 'gen_test' becomes 'gen_human_test' (the human-annotated test set), the others stay 'gen_train'.
`apply_human` is the one place that rule lives: generate-qa applies it too, so a re-run keeps the human verdicts.
"""

from __future__ import annotations

import csv
import hashlib
import json
import random
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

import polars as pl
from pydantic import BaseModel, ValidationError, field_validator, model_validator

from .config import PROJECT_DIR
from .errors import InputError
from .lake import Lake
from .llm import PromptTemplate, load_template

TASKS = ("extractive", "multi_hop", "contrast", "long_form", "conversational")
KINDS = {  # task -> the generator prompt(s) it uses (question_type = the kind)
    "extractive": ("extractive",),
    "multi_hop": ("multi_hop_calc", "multi_hop_chain"),
    "contrast": ("contrast",),
    "long_form": ("long_form",),
    "conversational": ("conversational",),
}
# kinds whose second passage comes from another document (the first from the cell's unit)
CROSS_DOC_KINDS = ("multi_hop_chain", "contrast")
DEFAULT_TOPICS_CSV = PROJECT_DIR / "seeds" / "omnieval_topics.csv"
MIN_UNIT_CHARS = 200  # a chunk shorter than this (a heading, a page number) is no unit
SPLIT_DROPPED = "dropped"
# generated splits carry a prefix: an ingested benchmark's questions are 'test' in the same dataset, and a run on
# the generated test set must not be scored against (or counted with) the benchmark's qrels
SPLIT_TRAIN = "gen_train"
SPLIT_TEST = "gen_test"
SPLIT_HUMAN_TEST = "gen_human_test"
HUMAN = "human"


# ---- topics ------------------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class Topic:
    topic_id: str  # the path below the root, '/'-joined zh names (= questions.topic_path joined)
    name_zh: str
    name_en: str

    @property
    def path(self) -> list[str]:
        return self.topic_id.split("/")


def load_topics(path: str | Path | None = None) -> list[Topic]:
    """The leaf topics of a flattened topic tree (the seed CSV `finrag topics flatten` writes)."""
    p = Path(path) if path else DEFAULT_TOPICS_CSV
    try:
        with open(p, newline="", encoding="utf-8") as fh:
            reader = csv.DictReader(fh)
            need = ["topic_id", "level", "name_zh", "name_en", "is_leaf"]
            missing = [c for c in need if c not in (reader.fieldnames or [])]
            if missing:
                raise InputError(f"topics file lacks column {missing[0]!r} (write it with `finrag topics flatten`)",
                                 file=str(p), line=1, field=missing[0])
            leaves = []
            for line, row in enumerate(reader, start=2):
                if not row["topic_id"]:
                    raise InputError("empty topic_id", file=str(p), line=line, field="topic_id")
                if row["is_leaf"].strip().lower() not in ("true", "false"):
                    raise InputError(f"is_leaf must be True/False, got {row['is_leaf']!r}", file=str(p), line=line,
                                     field="is_leaf")
                if row["is_leaf"].strip().lower() == "true" and row["level"] != "0":
                    leaves.append(Topic(row["topic_id"], row["name_zh"], row["name_en"] or row["name_zh"]))
    except (OSError, UnicodeDecodeError) as exc:
        raise InputError(f"cannot read the topics file: {exc}", file=str(p), field="topics") from None
    if not leaves:
        raise InputError("the topics file has no leaf topic below the root", file=str(p), field="is_leaf")
    names = [t.name_en.lower() for t in leaves]
    dup = next((n for n in names if names.count(n) > 1), None)
    if dup:  # the classifier answers with a name: it must pick out one leaf
        raise InputError(f"two leaf topics share the name {dup!r}", file=str(p), field="name_en")
    return leaves


# ---- prompts with one-shot examples ---------------------------------------------------------------------------------
_SECTIONS = re.compile(r"^\[(system|user|example_user|example_assistant)\]\s*$", re.MULTILINE)


@dataclass(frozen=True)
class Agent:
    """A prompt file with [system], example [example_user]/[example_assistant] pairs and the [user] turn. Small models
    follow a reply format far better when the example is an earlier chat turn than when it is described."""

    template: PromptTemplate

    @property
    def ref(self) -> str:
        return self.template.ref

    def _parts(self) -> list[tuple[str, str]]:
        body = "\n".join(x for x in self.template.text.splitlines() if not x.startswith("#"))
        bits = _SECTIONS.split(body)
        return [(bits[i], bits[i + 1].strip("\n")) for i in range(1, len(bits) - 1, 2)]

    def examples(self) -> list[str]:
        """The example replies (an instance that copies one is rejected)."""
        return [text for role, text in self._parts() if role == "example_assistant"]

    def example_text(self) -> str:
        """The worked example, its passages and its reply: what a paraphrased copy borrows its words from."""
        return "\n".join(text for role, text in self._parts() if role in ("example_user", "example_assistant"))

    def render(self, **values: str) -> tuple[tuple[str, str], ...]:
        def fill(s: str) -> str:
            return re.sub(r"\{(\w+)\}", lambda m: values.get(m[1], m[0]), s)

        role = {"system": "system", "user": "user", "example_user": "user", "example_assistant": "assistant"}
        return tuple((role[r], fill(t)) for r, t in self._parts())


def load_agent(name: str) -> Agent:
    return Agent(load_template(name))


# ---- strict reply parsing ----------------------------------------------------------------------------------------
_LABEL = re.compile(r"^\s*(?:[-*#>]+\s*)?\**\s*([A-Za-z]+)\s*\**\s*:\s*\**\s*(.*)$")


class ReplyError(ValueError):
    """A reply that does not follow its agent's format (the instance fails with this reason)."""


def labelled(reply: str, labels: Sequence[str], multiline: Sequence[str] = ()) -> list[tuple[str, str]]:
    """The reply's labelled lines in order, e.g. [("question", "..."), ("answer", "...")]. Text before the first
    label (a "Sure, here is..." preamble) is ignored; lines after a label continue it only for `multiline` labels;
    other unlabelled lines end it."""
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


def copies_example(gen: Generated, agent: Agent, passages: str) -> bool:
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


# ---- ids and splits ------------------------------------------------------------------------------------------------
def digest(*parts: object) -> str:
    return hashlib.sha256(json.dumps(parts, sort_keys=True, ensure_ascii=False, default=str).encode()).hexdigest()


def assigned_split(question_id: str, seed: int, test_fraction: float) -> str:
    """'gen_test' or 'gen_train', a seeded hash of the question id (stable across re-runs and resumes)."""
    u = int(digest("split", seed, question_id)[:8], 16) / 0x1_0000_0000
    return SPLIT_TEST if u < test_fraction else SPLIT_TRAIN


# ---- human inspection: the one rule -------------------------------------------------------------------------------
def human_verdict(score: int) -> str:
    return "drop" if score <= 2 else "fix" if score == 3 else "keep"


def latest_human(lake: Lake) -> pl.DataFrame:
    """The latest human inspection per question (a later import wins)."""
    ins = lake.read("qa_inspections").filter(pl.col("inspector") == HUMAN)
    return ins.sort(["created_at", "inspection_run_id"]).unique("question_id", keep="last")


def apply_human(questions: pl.DataFrame, human: pl.DataFrame) -> pl.DataFrame:
    """Questions of a generation run with the human verdicts applied, from their original (generated) text, so
    applying any number of times gives the same rows. meta keeps: original_question / original_answers (when
    fixed), llm_split (what the LLM inspector left), human_verdict / human_score / inspection_run_id."""
    by_q = {r["question_id"]: r for r in human.iter_rows(named=True)}
    rows = []
    for q in questions.iter_rows(named=True):
        meta = json.loads(q["meta"] or "{}")
        # restore the generated text first, then apply the latest human verdict (if any)
        if "original_question" in meta:
            q["question"] = meta.pop("original_question")
            q["reference_answers"] = meta.pop("original_answers")
            if q["conversation"]:
                q["conversation"] = [*q["conversation"][:-1], {"role": "user", "content": q["question"]}]
        q["split"] = meta.get("llm_split", q["split"])
        for k in ("human_verdict", "human_score", "inspection_run_id"):
            meta.pop(k, None)
        h = by_q.get(q["question_id"])
        if h is not None:
            verdict = h["verdict"]
            meta.update(human_verdict=verdict, human_score=h["score"], inspection_run_id=h["inspection_run_id"])
            if verdict == "drop":
                q["split"] = SPLIT_DROPPED
            else:
                q["split"] = SPLIT_HUMAN_TEST if meta.get("assigned_split") == SPLIT_TEST else SPLIT_TRAIN
            if verdict == "fix":
                meta["original_question"], meta["original_answers"] = q["question"], q["reference_answers"]
                if h["corrected_question"]:
                    q["question"] = h["corrected_question"]
                    if q["conversation"]:
                        q["conversation"] = [*q["conversation"][:-1], {"role": "user", "content": q["question"]}]
                if h["corrected_answer"]:
                    q["reference_answers"] = [h["corrected_answer"]]
        q["meta"] = json.dumps(meta, sort_keys=True, ensure_ascii=False)
        rows.append(q)
    return pl.DataFrame(rows, schema=questions.schema) if rows else questions


def generated_questions(lake: Lake, dataset: str | None = None, generation_run_id: str | None = None) -> pl.DataFrame:
    """Questions landed by generate-qa (meta carries the generation run; `finrag synth`'s are source=generated too)."""
    qs = lake.read("questions").filter(pl.col("source") == "generated")
    if dataset:
        qs = qs.filter(pl.col("dataset") == dataset)
    qs = qs.with_columns(pl.col("meta").str.json_path_match("$.generation_run_id").alias("generation_run_id"))
    qs = qs.filter(pl.col("generation_run_id").is_not_null())
    if generation_run_id:
        qs = qs.filter(pl.col("generation_run_id") == generation_run_id)
    return qs


def reland_with_human(lake: Lake, generation_run_ids: Iterable[str], human: pl.DataFrame,
                      extra: Sequence[tuple[str, str, pl.DataFrame]] = ()) -> list[tuple[str, pl.DataFrame]]:
    """Re-land each generation run's questions partition with the human verdicts applied, together with `extra`
    frames, in one atomic landing (same load id: the partition is replaced)."""
    frames = []
    out = []
    for run_id in sorted(set(generation_run_ids)):
        qs = lake.read_partition("questions", run_id)
        fixed = apply_human(qs.drop("load_id", "created_at"), human)
        frames.append(("questions", run_id, fixed))
        out.append((run_id, fixed))
    lake.land([*extra, *frames])
    return out


def seeded_shuffle(items: list[Any], seed: int, salt: str) -> list[Any]:
    out = list(items)
    random.Random(f"{seed}:{salt}").shuffle(out)
    return out

"""`finrag answer`: an answer run over a retrieval run (RAG) or closed-book, through the one LLM client.

    finrag answer --retrieval-run R [--k K] [--template rag_answer_v1] [--max-words 300] [--limit N]
    finrag answer --closed-book --dataset D [--template closed_book_v1] [--limit N]

- Prompts are template files (prompts/*.txt); the template's name and hash, the model, the retrieval run and every
  parameter go into the config hash, and the default run id is `<dataset>-<rag|closed_book>-<hash10>`.
- RAG: the top-k chunks of the question (by rank) go into the prompt with their doc ids and pages; chunk text comes
  from the lake's `chunks` table; `answers.context_chunk_ids` lists them in prompt order.
- Long context, as the FinanceRAG system manages it: when the passages exceed --context-tokens, they are split into
  parts that fit (in rank order), the question is answered on each part, and one more call fuses the partial
  answers (template fuse_answers_v1). The stored prompt is every prompt of the answer, in order.
- --max-words N asks for the answer-file guideline's cut (300 words): the full answer is stored, and params carry
  max_words, so dbt and export-answers cut it to its first N words before scoring or export.
- Calls that finally fail give an answer row with `error` set and no answer (never an empty answer). generation_runs
  and answers land together at the end; the LLM ledger lands progressively, so a killed run resumes from the cache.
- Sharded (`--shard I/N`, python_jobs/core/shards.py): the question selection (splits, --question-id, --limit, the
  questions with results) is the whole run's, so the run id and the generation_runs row are the unsharded run's;
  the shard answers the questions whose question_id falls in its slice and lands them as its part of the run.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from typing import Any

import polars as pl
from pydantic import Field, ValidationInfo, field_validator

from python_jobs.core.console import say
from python_jobs.core.contracts import contract
from python_jobs.core.errors import InputError
from python_jobs.core.job_config import JobConfig, required
from python_jobs.core.lake import Lake, check_id
from python_jobs.core.question_sets import select_splits, splits_param
from python_jobs.core.run_ids import derived_id
from python_jobs.core.shards import Shard, select_shard
from python_jobs.llm.client import ChatRequest, LLMClient, LLMResult, model_name, raise_if_all_failed
from python_jobs.llm.config import LLMConfig
from python_jobs.llm.prompts import PromptTemplate, load_template, render_prompt

DEFAULT_RAG_TEMPLATE = "rag_answer_v1"
DEFAULT_CLOSED_TEMPLATE = "closed_book_v1"
DEFAULT_FUSE_TEMPLATE = "fuse_answers_v1"
PART_SEPARATOR = "\n\n=== next prompt ===\n\n"


class AnswerConfig(JobConfig):
    """An answer run: over a retrieval run (RAG), or closed book (no retrieval run; the dataset is then required).
    Everything but run_id and ledger_batch enters the config hash (and the run id), with the model and templates."""

    retrieval_run_id: str | None = Field(None, description="Answer over this retrieval run (RAG).")
    dataset: str | None = Field(None, validate_default=True,
                                description="Dataset of the questions (closed book; checked for RAG).")
    k: int = Field(5, ge=1, description="Top-k chunks into the prompt.")
    template: str | None = Field(None, description=(
        "Prompt template name (prompts/<name>.txt) or path "
        f"[default: {DEFAULT_RAG_TEMPLATE} / {DEFAULT_CLOSED_TEMPLATE}]."))
    fuse_template: str = Field(DEFAULT_FUSE_TEMPLATE, description="Prompt that fuses the answers of a split context.")
    context_tokens: int = Field(1500, ge=64, description=(
        "Context budget; longer contexts are split, answered per part and fused."))
    max_tokens: int = Field(200, ge=1, description="Completion tokens per call.")
    temperature: float = Field(0.0, ge=0, le=2)
    max_words: int | None = Field(None, ge=1, description=(
        "Cut answers to their first N words before scoring and export (answer-file runs: 300)."))
    limit: int | None = Field(None, ge=1, description="Only the first N questions (by id).")
    question_ids: tuple[str, ...] = Field((), strict=False, description="Only these questions.")
    splits: tuple[str, ...] | None = Field(None, strict=False, description=(
        "Question splits to answer (default: every split except 'dropped')."))
    run_id: str | None = Field(None, description="Run id (default: <dataset>-<mode>-<config hash>).")
    ledger_batch: int = Field(16, ge=1, description=(
        "LLM calls per landed llm_calls batch (a killed run loses at most one batch)."))

    @field_validator("dataset")
    @classmethod
    def _closed_book_needs_a_dataset(cls, value: str | None, info: ValidationInfo) -> str | None:
        if not value and info.data.get("retrieval_run_id") is None:
            raise required("a closed-book run (no retrieval_run_id) needs a dataset")
        return value

    @property
    def closed_book(self) -> bool:
        return self.retrieval_run_id is None


@dataclass(frozen=True)
class Passage:
    chunk_id: str
    doc_id: str
    page_start: int | None
    page_end: int | None
    text: str

    def render(self, i: int) -> str:
        pages = ""
        if self.page_start is not None:
            pages = f", page {self.page_start}" if self.page_end in (None, self.page_start) else \
                f", pages {self.page_start}-{self.page_end}"
        return f"[{i}] (doc {self.doc_id}{pages})\n{self.text.strip()}"


@dataclass
class Plan:
    """Everything one question's answer needs: its calls in stages (parts, then the fusion)."""

    question_id: str
    question: str
    passages: list[Passage]
    parts: list[list[Passage]]


class TokenCounter:
    """Token estimates for the context budget (the project's default fast tokenizer; the endpoint's own tokenizer
    is unknown to the client, so the budget is an estimate with headroom left to the user)."""

    def __init__(self) -> None:
        from python_jobs.corpus.tokenizers import load_tokenizer

        self.tok = load_tokenizer()

    def count(self, text: str) -> int:
        return self.tok.count(text)

    def truncate(self, text: str, budget: int) -> str:
        ids, offsets = self.tok.encode(text)
        return text if len(ids) <= budget else text[: offsets[budget - 1][1]]


def split_parts(passages: list[Passage], budget: int, counter: TokenCounter) -> list[list[Passage]]:
    """Pack passages in rank order into parts of at most `budget` tokens; a passage longer than the budget alone
    is cut to it."""
    parts: list[list[Passage]] = []
    current: list[Passage] = []
    used = 0
    for p in passages:
        n = counter.count(p.render(1))
        if n > budget:
            p = Passage(p.chunk_id, p.doc_id, p.page_start, p.page_end, counter.truncate(p.text, budget - 32))
            n = counter.count(p.render(1))
        if current and used + n > budget:
            parts.append(current)
            current, used = [], 0
        current.append(p)
        used += n
    if current or not parts:
        parts.append(current)
    return parts


def context_text(passages: list[Passage], first_index: int = 1) -> str:
    return "\n\n".join(p.render(first_index + i) for i, p in enumerate(passages))


def config_hash(config: dict[str, Any]) -> str:
    return hashlib.sha256(json.dumps(config, sort_keys=True).encode()).hexdigest()


def load_questions(lake: Lake, dataset: str, question_ids: tuple[str, ...], limit: int | None,
                   splits: tuple[str, ...] | None = None) -> pl.DataFrame:
    qs = lake.read("questions", where={"dataset": dataset}, columns=["question_id", "question", "split"])
    qs = qs.sort("question_id")
    if qs.height == 0:
        raise InputError(f"no questions for dataset {dataset!r} in the lake (run `finrag ingest` first)",
                         field="dataset")
    qs = select_splits(qs, splits)
    if question_ids:
        unknown = sorted(set(question_ids) - set(qs["question_id"]))
        if unknown:
            raise InputError(f"question {unknown[0]!r} is not in dataset {dataset!r}", field="question_id")
        qs = qs.filter(pl.col("question_id").is_in(list(question_ids)))
    return qs.head(limit) if limit else qs


def load_passages(lake: Lake, dataset: str, retrieval_run_id: str, k: int) -> dict[str, list[Passage]]:
    results = lake.read("retrieval_results", where={"run_id": retrieval_run_id},
                        columns=["question_id", "rank", "chunk_id", "doc_id", "page_start", "page_end"])
    results = results.filter(pl.col("rank") <= k).sort(["question_id", "rank"])
    missing_chunk = results.filter(pl.col("chunk_id").is_null())
    if missing_chunk.height:
        raise InputError(f"retrieval run {retrieval_run_id!r} has results without a chunk id (e.g. question "
                         f"{missing_chunk['question_id'][0]!r}): an answer run needs chunk texts", field="chunk_id")
    ids = results["chunk_id"].unique().to_list()
    # chunk ids are unique within a dataset only: the run's own dataset's chunks
    chunks = lake.read("chunks", where={"dataset": dataset}, columns=["chunk_id", "text"]).filter(
        pl.col("chunk_id").is_in(ids))
    text = dict(zip(chunks["chunk_id"], chunks["text"], strict=True))
    unknown = [c for c in ids if c not in text]
    if unknown:
        raise InputError(f"chunk {unknown[0]!r} of retrieval run {retrieval_run_id!r} is not in the lake's chunks",
                         field="chunk_id")
    out: dict[str, list[Passage]] = {}
    for r in results.iter_rows(named=True):
        out.setdefault(r["question_id"], []).append(
            Passage(r["chunk_id"], r["doc_id"], r["page_start"], r["page_end"], text[r["chunk_id"]]))
    return out


@dataclass(frozen=True)
class AnswerIdentity:
    """What an answer run's id derives from, known before any call: the dataset (a RAG run's from its retrieval
    run), the templates, the hashed params."""

    run_id: str
    dataset: str
    mode: str
    template: PromptTemplate
    fuse: PromptTemplate
    params: dict[str, Any]
    digest: str


def answer_identity(lake: Lake, cfg: AnswerConfig, model: str) -> AnswerIdentity:
    """The run `cfg` lands as when `model` answers (its id is `cfg.run_id`, else derived from the config hash)."""
    closed_book, retrieval_run_id, dataset = cfg.closed_book, cfg.retrieval_run_id, cfg.dataset
    if not closed_book:
        runs = lake.read("retrieval_runs", where={"run_id": retrieval_run_id})
        if runs.height == 0:
            raise InputError(f"no retrieval run {retrieval_run_id!r} in the lake", field="retrieval_run")
        run_dataset = runs["dataset"][0]
        if dataset and dataset != run_dataset:
            raise InputError(f"retrieval run {retrieval_run_id!r} is over dataset {run_dataset!r}, not {dataset!r}",
                             field="dataset")
        dataset = run_dataset
    assert dataset is not None
    tpl: PromptTemplate = load_template(cfg.template or (DEFAULT_CLOSED_TEMPLATE if closed_book
                                                         else DEFAULT_RAG_TEMPLATE))
    fuse: PromptTemplate = load_template(cfg.fuse_template)
    mode = "closed_book" if closed_book else "rag"
    params = {"mode": mode, "k": None if closed_book else cfg.k,
              "context_tokens": None if closed_book else cfg.context_tokens, "max_tokens": cfg.max_tokens,
              "temperature": cfg.temperature, "max_words": cfg.max_words, "limit": cfg.limit,
              "question_ids": sorted(cfg.question_ids) or None, "template_sha256": tpl.sha256,
              "fuse_template": None if closed_book else fuse.ref,
              **({"splits": list(cfg.splits)} if cfg.splits else {})}  # an explicit selection changes the run id
    digest = config_hash({"dataset": dataset, "retrieval_run_id": retrieval_run_id, "model": model,
                          "prompt_template": tpl.ref, **params})
    run_id = check_id(cfg.run_id or derived_id(dataset, mode, digest), "run id")
    return AnswerIdentity(run_id, dataset, mode, tpl, fuse, params, digest)


def planned_run_id(lake: Lake, cfg: AnswerConfig, llm_config: LLMConfig) -> str:
    """The run id `run_answers(lake, cfg, llm_config)` lands under, known without running it."""
    return answer_identity(lake, cfg, model_name(llm_config)).run_id


def run_answers(lake: Lake, cfg: AnswerConfig, llm_config: LLMConfig, *, shard: Shard | None = None) -> str:
    """Answer `cfg`'s questions and land the run. Beside the config: the LLM endpoint (the environment's, with its
    key; the model enters the hash through the client) and this process's shard of the run (the run and its id are
    the whole run's)."""
    closed_book, retrieval_run_id = cfg.closed_book, cfg.retrieval_run_id
    ident = answer_identity(lake, cfg, model_name(llm_config))
    run_id, dataset, mode, tpl, fuse, params, digest = (ident.run_id, ident.dataset, ident.mode, ident.template,
                                                         ident.fuse, ident.params, ident.digest)
    questions = load_questions(lake, dataset, cfg.question_ids, cfg.limit, cfg.splits)

    llm = LLMClient(lake.home, llm_config, job_run_id=f"answer-{dataset}{f'-{shard.tag}' if shard else ''}",
                    batch_size=cfg.ledger_batch)

    passages = {} if closed_book else load_passages(lake, dataset, retrieval_run_id, cfg.k)  # type: ignore[arg-type]
    if not closed_book:
        before = questions.height
        questions = questions.filter(pl.col("question_id").is_in(list(passages)))
        if questions.height < before:
            say(f"{before - questions.height} questions have no results in {retrieval_run_id!r}: not answered")
    question_splits = splits_param(cfg.splits, questions)  # the whole run's selection, before a shard takes its slice
    questions = select_shard(questions, "question_id", shard)
    counter = None if closed_book else TokenCounter()
    plans = []
    for q in questions.iter_rows(named=True):
        ps = passages.get(q["question_id"], [])
        parts = [[]] if closed_book else split_parts(ps, cfg.context_tokens, counter)  # type: ignore[arg-type]
        plans.append(Plan(q["question_id"], q["question"], ps, parts))
    n_split = sum(len(p.parts) > 1 for p in plans)
    say(f"run {run_id}{f' shard {shard}' if shard else ''}: {len(plans)} questions, {mode}, model {llm.model}"
        + (f", {n_split} over the {cfg.context_tokens}-token context budget (split and fused)" if n_split else ""))

    def part_messages(plan: Plan, part_index: int) -> tuple[tuple[str, str], ...]:
        if closed_book:
            return tpl.render(question=plan.question)
        first = 1 + sum(len(p) for p in plan.parts[:part_index])
        return tpl.render(question=plan.question, context=context_text(plan.parts[part_index], first))

    try:
        # stage 1: one call per question and part
        stage1 = [(plan, i, ChatRequest(part_messages(plan, i), "answer" if len(plan.parts) == 1 else "answer_part",
                                        temperature=cfg.temperature, max_tokens=cfg.max_tokens))
                  for plan in plans for i in range(len(plan.parts))]
        results1 = llm.complete_many([r for _, _, r in stage1], desc="answer")
        by_plan: dict[str, list[tuple[ChatRequest, LLMResult]]] = {}
        for (plan, _, req), res in zip(stage1, results1, strict=True):
            by_plan.setdefault(plan.question_id, []).append((req, res))
        # stage 2: fuse the partial answers of split contexts (only when every part answered)
        fuse_reqs: dict[str, ChatRequest] = {}
        for plan in plans:
            calls = by_plan[plan.question_id]
            if len(calls) > 1 and all(r.ok for _, r in calls):
                partial = "\n".join(f"Part {i + 1}: {r.text}" for i, (_, r) in enumerate(calls))
                fuse_reqs[plan.question_id] = ChatRequest(
                    fuse.render(question=plan.question, partial_answers=partial), "fuse",
                    temperature=cfg.temperature, max_tokens=cfg.max_tokens)
        fused = dict(zip(fuse_reqs, llm.complete_many(list(fuse_reqs.values()), desc="fuse"), strict=True))
    finally:
        llm.close()

    rows = []
    for plan in plans:
        calls = list(by_plan[plan.question_id])
        if plan.question_id in fused:
            calls.append((fuse_reqs[plan.question_id], fused[plan.question_id]))
        final = calls[-1][1]
        errors = [r.error for _, r in calls if r.error]
        if len(calls) > 1 and plan.question_id not in fused and not errors:
            errors = ["fusion not run"]
        rows.append({
            "run_id": run_id, "question_id": plan.question_id,
            "answer": final.text if not errors else None,
            "prompt": PART_SEPARATOR.join(render_prompt(req.messages) for req, _ in calls),  # type: ignore[arg-type]
            "context_chunk_ids": [p.chunk_id for part in plan.parts for p in part] if not closed_book else None,
            "passages": json.dumps([{"doc_ids": [p.doc_id], "chunk_id": p.chunk_id}
                                    for part in plan.parts for p in part]) if not closed_book else None,
            "prompt_tokens": _sum(r.prompt_tokens for _, r in calls),
            "completion_tokens": _sum(r.completion_tokens for _, r in calls),
            "latency_ms": _sum(r.latency_ms for _, r in calls),
            "cost_usd": _sum(r.cost_usd for _, r in calls),
            "error": "; ".join(errors) if errors else None,
        })
    answers = contract("answers").frame(rows)
    run = contract("generation_runs").frame([{
        "run_id": run_id, "dataset": dataset, "retrieval_run_id": retrieval_run_id, "model": llm.model,
        "eval_mode": mode, "prompt_template": tpl.ref, "max_words": cfg.max_words, "question_splits": question_splits,
        "params": json.dumps({**params, "splits": question_splits, "config_hash": digest, "source": "finrag"},
                             sort_keys=True),
    }])
    lake.land([("generation_runs", run_id, run), ("answers", run_id, answers)], shard=shard)
    n_failed = answers["error"].is_not_null().sum()
    say(f"landed generation_runs/answers run_id={run_id}: {answers.height} answers ({n_failed} failed); "
        f"LLM calls made {llm.calls_made}, from cache {llm.cache_hits}")
    raise_if_all_failed(f"answer of run {run_id}", answers["error"].to_list())
    return run_id




def _sum(values) -> float | None:
    vs = [v for v in values if v is not None]
    return sum(vs) if vs else None

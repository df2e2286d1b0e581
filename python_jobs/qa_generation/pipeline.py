"""`finrag generate-qa`: OmniEval-style QA instances generated from an ingested corpus (docs/qa_generation.md).

    finrag generate-qa --dataset D [--tasks extractive,multi_hop,...] [--per-cell N] [--seed S] [--sample U]
                       [--unit chunk|document] [--chunker-id C] [--topics seeds/omnieval_topics.csv] [--max-topics T]
                       [--test-fraction F] [--rounds R] [--concurrency K]

1. Sample `--sample` units (seeded): chunks, or one chunk per document; the classifier agent gives each a leaf topic.
2. Cells = (topic, task) for the topics that got units (the `--max-topics` most populated); each cell asks for
   min(N, units of the topic) instances, each from a different unit (cross-document kinds add a second passage from
   another document, multi_hop_calc a neighbouring chunk of the same document).
3. The task's generator agent writes the instance; a reply that fails the strict parse fails the attempt (reason
   recorded); the inspector agent keeps or drops each parsed instance. Failed attempts are refilled from the cell's
   unused units for up to `--rounds` rounds.
4. One atomic landing (partition = the generation run id): questions (source generated, in the corpus's dataset),
   evidence (the given chunks: chunk id, doc, every page they span), qa_inspections (the LLM inspector) and
   qa_generation_attempts. Every call goes through the cached LLM client, so a re-run with the same seed and
   settings makes no new call and replaces its own partitions; a killed run resumes from the cache.
`finrag generate-qa` prints the run id on stdout and a per-task summary on stderr.
"""

from __future__ import annotations

import json
import re
from collections import Counter
from dataclasses import dataclass, field
from typing import Any, Literal

import polars as pl
from pydantic import Field, field_validator
from pydantic_core import PydanticCustomError

from python_jobs.core.console import say
from python_jobs.core.contracts import contract
from python_jobs.core.errors import InputError
from python_jobs.core.job_config import JobConfig
from python_jobs.core.lake import Lake, check_id
from python_jobs.core.run_ids import derived_id
from python_jobs.corpus.lake_chunks import resolve_chunker
from python_jobs.llm.client import ChatRequest, LLMClient
from python_jobs.llm.config import LLMConfig
from python_jobs.llm.prompts import PromptTemplate
from python_jobs.qa_generation.human_inspection import apply_human, latest_human
from python_jobs.qa_generation.replies import (
    Generated,
    ReplyError,
    copies_example,
    grounded,
    load_agent,
    parse_generation,
    parse_topic,
    parse_verdict,
    reply_format,
)
from python_jobs.qa_generation.tasks import (
    CROSS_DOC_KINDS,
    KINDS,
    MIN_UNIT_CHARS,
    SPLIT_DROPPED,
    TASKS,
    assigned_split,
    digest,
    seeded_shuffle,
)
from python_jobs.qa_generation.topics import Topic, load_topics

MAX_TOKENS = {"classify": 24, "extractive": 80, "multi_hop_calc": 120, "multi_hop_chain": 150, "contrast": 120,
              "long_form": 220, "conversational": 220, "inspect": 90}


class GenerationConfig(JobConfig):
    """A generation run. Everything but run_id and ledger_batch enters the config hash (and the run id), with the
    model, the topics' and prompts' hashes."""

    dataset: str = Field(description="Corpus to generate from; instances land in this dataset.")
    tasks: tuple[str, ...] = Field(TASKS, strict=False, description="Tasks (the matrix's columns).")
    per_cell: int = Field(2, ge=1, description="Instances per topic x task cell.")
    seed: int = 0
    unit: Literal["chunk", "document"] = Field("chunk", description=(
        "What is sampled and classified: chunks, or one chunk per document."))
    chunker_id: str | None = Field(None, description="Chunks partition (default: the dataset's only one).")
    topics_path: str | None = Field(None, description=(
        "Flattened topic tree CSV (`finrag topics flatten`) [default: seeds/omnieval_topics.csv]."))
    max_topics: int | None = Field(None, ge=1, description="Keep the T most populated topics as cells.")
    sample: int = Field(40, ge=1, description="Units to sample and classify.")
    test_fraction: float = Field(0.5, ge=0, le=1, description=(
        "Share of kept instances in the 'gen_test' split (the rest 'gen_train'; seeded by question id)."))
    rounds: int = Field(2, ge=1, description=(
        "Generation rounds: failed attempts are refilled from the cell's unused units."))
    passage_chars: int = Field(1500, ge=100, description=(
        "Characters of each chunk put into a prompt (and stored as evidence text)."))
    run_id: str | None = Field(None, description="Generation run id (default: qagen-<dataset>-<config hash>).")
    ledger_batch: int = Field(8, ge=1, description=(
        "LLM calls per landed llm_calls batch (a killed run loses at most one batch)."))

    @field_validator("tasks")
    @classmethod
    def _known_tasks(cls, value: tuple[str, ...]) -> tuple[str, ...]:
        if not value or len(set(value)) != len(value) or not set(value) <= set(TASKS):
            raise PydanticCustomError("tasks", "a list of distinct tasks of {tasks}", {"tasks": ", ".join(TASKS)})
        return value


@dataclass(frozen=True)
class Unit:
    chunk_id: str
    doc_id: str
    title: str
    ordinal: int
    page_start: int | None
    page_end: int | None
    text: str


@dataclass
class Attempt:
    attempt_id: str
    topic: Topic | None
    task: str | None
    kind: str | None
    units: list[Unit] = field(default_factory=list)
    status: str = "failed"
    reason: str | None = None
    question_id: str | None = None
    generated: Generated | None = None
    verdict: Any = None


def render_passages(units: list[Unit], chars: int) -> str:
    def one(i: int, u: Unit) -> str:
        pages = "" if u.page_start is None else (f", page {u.page_start}" if u.page_end in (None, u.page_start)
                                                 else f", pages {u.page_start}-{u.page_end}")
        return f"[{i}] (doc {u.title}{pages})\n{u.text.strip()[:chars]}"

    return "\n\n".join(one(i, u) for i, u in enumerate(units, start=1))


def read_units(lake: Lake, dataset: str, chunker_id: str) -> list[Unit]:
    chunks = lake.read_partition("chunks", f"{dataset}.{chunker_id}").filter(pl.col("parent_chunk_id").is_null())
    docs = lake.read("documents", where={"dataset": dataset}, columns=["doc_id", "title"])
    title = {d: (t or d) for d, t in docs.iter_rows()}
    return [Unit(r["chunk_id"], r["doc_id"], title.get(r["doc_id"], r["doc_id"]), r["ordinal"], r["page_start"],
                 r["page_end"], r["text"])
            for r in chunks.sort("doc_id", "ordinal").iter_rows(named=True)]


def sample_units(units: list[Unit], unit: str, sample: int, seed: int) -> list[Unit]:
    eligible = [u for u in units if len(u.text.strip()) >= MIN_UNIT_CHARS]
    if unit == "document":  # one seeded chunk per document, so the sample spreads over documents
        by_doc: dict[str, list[Unit]] = {}
        for u in eligible:
            by_doc.setdefault(u.doc_id, []).append(u)
        eligible = [seeded_shuffle(us, seed, f"doc/{d}")[0] for d, us in sorted(by_doc.items())]
    return seeded_shuffle(eligible, seed, "units")[:sample]


def run_generation(lake: Lake, cfg: GenerationConfig, llm_config: LLMConfig) -> str:
    """Generate `cfg`'s instances and land the run. Beside the config: the LLM endpoint (the environment's, with its
    key; the model enters the hash through the client)."""
    dataset, tasks, per_cell, seed, unit, sample, rounds, passage_chars, max_topics, test_fraction = (
        cfg.dataset, cfg.tasks, cfg.per_cell, cfg.seed, cfg.unit, cfg.sample, cfg.rounds, cfg.passage_chars,
        cfg.max_topics, cfg.test_fraction)
    chunker_id = resolve_chunker(lake, dataset, cfg.chunker_id)
    topics = load_topics(cfg.topics_path)
    all_units = read_units(lake, dataset, chunker_id)
    units = sample_units(all_units, unit, sample, seed)
    if not units:
        raise InputError(f"dataset {dataset!r} (chunker {chunker_id!r}) has no chunk of {MIN_UNIT_CHARS}+ characters",
                         field="dataset")
    kinds = [k for t in tasks for k in KINDS[t]]
    agents: dict[str, PromptTemplate] = {name: load_agent(f"qa_{name}_v1") for name in ["classify", *kinds, "inspect"]}

    llm = LLMClient(lake.home, llm_config, job_run_id=f"generate-qa-{dataset}", batch_size=cfg.ledger_batch)
    settings = {"dataset": dataset, "chunker_id": chunker_id, "tasks": list(tasks), "per_cell": per_cell, "seed": seed,
                "unit": unit, "sample": sample, "max_topics": max_topics, "test_fraction": test_fraction,
                "rounds": rounds, "passage_chars": passage_chars, "model": llm.model,
                "topics_sha256": digest([t.__dict__ for t in topics]),
                "prompts": {n: a.ref for n, a in agents.items()}, "max_tokens": MAX_TOKENS}
    config_hash = digest(settings)
    run_id = check_id(cfg.run_id or derived_id(dataset, "qagen", config_hash, kind_first=True), "generation run id")
    topic_names = "\n".join(f"- {t.name_en}" for t in topics)
    say(f"generation run {run_id}: {len(units)} {unit} units of {dataset} ({chunker_id}), {len(topics)} leaf topics, "
        f"tasks {','.join(tasks)}, {per_cell} per cell, model {llm.model}")

    def request(agent: str, **values: str) -> ChatRequest:
        return ChatRequest(agents[agent].render(**values), f"qa_{agent}", temperature=0.0, max_tokens=MAX_TOKENS[agent],
                           response_format=reply_format(agent, topics))

    attempts: list[Attempt] = []
    try:
        # 1. topic classification
        results = llm.complete_many([request("classify", topics=topic_names, passage=u.text.strip()[:passage_chars])
                                     for u in units], desc="classify topics")
        by_topic: dict[str, list[Unit]] = {}
        topic_of: dict[str, Topic] = {}
        for u, res in zip(units, results, strict=True):
            try:
                if not res.ok:
                    raise ReplyError(f"call failed: {res.error}")
                t = parse_topic(res.text or "", topics)
            except ReplyError as exc:
                attempts.append(Attempt(f"classify-{digest(run_id, u.chunk_id)[:12]}", None, None, None, [u],
                                        reason=f"topic classification: {exc}"))
                continue
            by_topic.setdefault(t.topic_id, []).append(u)
            topic_of[t.topic_id] = t
        ranked = sorted(by_topic, key=lambda tid: (-len(by_topic[tid]), digest(seed, tid)))
        cells_topics = ranked[:max_topics] if max_topics else ranked
        say(f"classified {sum(map(len, by_topic.values()))}/{len(units)} units into {len(by_topic)} topics; "
            f"cells: {len(cells_topics)} topics x {len(tasks)} tasks")

        # 2. cells and their candidate units (each task of a topic starts at a different unit)
        cells = []
        for task in tasks:
            for tid in cells_topics:
                cands = seeded_shuffle(by_topic[tid], seed, f"{tid}/{task}")
                cells.append({"topic": topic_of[tid], "task": task, "cands": cands, "next": 0, "done": 0,
                              "want": min(per_cell, len(cands)), "tried": 0,
                              "offset": int(digest(seed, tid, task)[:2], 16) % 2})
        docs_units = {}
        for u in all_units:
            if len(u.text.strip()) >= MIN_UNIT_CHARS:
                docs_units.setdefault(u.doc_id, []).append(u)
        by_ordinal = {(u.doc_id, u.ordinal): u for u in all_units}
        used_qids: set[str] = set()

        for rnd in range(rounds):
            batch: list[tuple[dict, Attempt]] = []
            for cell in cells:
                pending = 0
                while cell["done"] + pending < cell["want"] and cell["next"] < len(cell["cands"]):
                    primary = cell["cands"][cell["next"]]
                    cell["next"] += 1
                    kind_choices = KINDS[cell["task"]]
                    kind = kind_choices[(cell["tried"] + cell["offset"]) % len(kind_choices)]
                    cell["tried"] += 1
                    a = Attempt(f"{cell['topic'].topic_id}|{cell['task']}|{primary.chunk_id}", cell["topic"],
                                cell["task"], kind, [primary], status="pending")
                    partner = pick_partner(kind, primary, cell, docs_units, by_ordinal, seed)
                    if kind in CROSS_DOC_KINDS and partner is None:
                        a.status, a.reason = "failed", "needs passages of two documents; the corpus has one"
                    else:
                        pending += 1
                        if partner is not None:
                            a.units.append(partner)
                    batch.append((cell, a))
            todo = [a for _, a in batch if a.status == "pending"]
            if not batch:
                break
            say(f"round {rnd + 1}: {len(todo)} instances to generate")
            gen_results = llm.complete_many(
                [request(a.kind, topic=a.topic.name_en,  # type: ignore[arg-type,union-attr]
                         passages=render_passages(a.units, passage_chars)) for a in todo],
                desc=f"generate (round {rnd + 1})")
            to_inspect = []
            for a, res in zip(todo, gen_results, strict=True):
                try:
                    if not res.ok:
                        raise ReplyError(f"call failed: {res.error}")
                    gen = parse_generation(a.kind, res.text or "")  # type: ignore[arg-type]
                    if copies_example(gen, agents[a.kind], " ".join(u.text for u in a.units)):  # type: ignore[index]
                        raise ReplyError("the reply copies the prompt's example")
                    if a.kind == "extractive" and not grounded(gen.answers[0], " ".join(u.text for u in a.units)):
                        raise ReplyError("the extractive answer is not in the passage")
                except ReplyError as exc:
                    a.status, a.reason = "failed", f"{a.kind} generator: {exc}"
                    continue
                qid = "gen-" + digest(config_hash, a.topic.topic_id, a.task, a.kind,  # type: ignore[union-attr]
                                      [u.chunk_id for u in a.units])[:12]
                if qid in used_qids:
                    a.status, a.reason = "failed", "duplicate instance"
                    continue
                used_qids.add(qid)
                a.generated, a.question_id = gen, qid
                to_inspect.append(a)
            ins_results = llm.complete_many([request(
                "inspect", task=a.task or "", passages=render_passages(a.units, passage_chars),
                question=render_question(a.generated), answer=a.generated.answers[0])  # type: ignore[union-attr]
                for a in to_inspect], desc=f"inspect (round {rnd + 1})")
            for a, res in zip(to_inspect, ins_results, strict=True):
                try:
                    if not res.ok:
                        raise ReplyError(f"call failed: {res.error}")
                    a.verdict = parse_verdict(res.text or "")
                except ReplyError as exc:
                    a.status, a.reason, a.question_id = "failed", f"inspector: {exc}", None
                    continue
                a.status = "ok" if a.verdict.verdict == "keep" else "dropped"
                a.reason = a.verdict.reason or None
            for cell, a in batch:
                cell["done"] += a.status in ("ok", "dropped")
            attempts.extend(a for _, a in batch)
    finally:
        llm.close()

    frames = build_frames(run_id, dataset, attempts, settings, config_hash, seed, test_fraction, llm.model, lake)
    lake.land(frames)
    summary(run_id, attempts, tasks, llm)
    return run_id


def pick_partner(kind: str, primary: Unit, cell: dict, docs_units: dict[str, list[Unit]],
                 by_ordinal: dict[tuple[str, int], Unit], seed: int) -> Unit | None:
    """The second passage: the next (else previous) chunk of the same document for a calculation; for cross-document
    kinds a unit of the same topic from another document, else a seeded chunk of another document."""
    if kind == "multi_hop_calc":
        return (by_ordinal.get((primary.doc_id, primary.ordinal + 1))
                or by_ordinal.get((primary.doc_id, primary.ordinal - 1)))
    if kind not in CROSS_DOC_KINDS:
        return None
    same_topic = [u for u in cell["cands"] if u.doc_id != primary.doc_id]
    if same_topic:
        return seeded_shuffle(same_topic, seed, f"partner/{primary.chunk_id}/{kind}")[0]
    others = [d for d in sorted(docs_units) if d != primary.doc_id]
    if not others:
        return None
    doc = seeded_shuffle(others, seed, f"partner-doc/{primary.chunk_id}/{kind}")[0]
    return seeded_shuffle(docs_units[doc], seed, f"partner/{primary.chunk_id}/{kind}")[0]


def render_question(gen: Generated | None) -> str:
    assert gen is not None
    if gen.conversation:  # the inspector sees the whole dialogue up to the final question
        return "\n".join(f"{t['role'].capitalize()}: {t['content']}" for t in gen.conversation)
    return gen.question


def build_frames(run_id: str, dataset: str, attempts: list[Attempt], settings: dict, config_hash: str, seed: int,
                 test_fraction: float, model: str, lake: Lake) -> list[tuple[str, str, pl.DataFrame]]:
    questions, evidence, inspections, rows = [], [], [], []
    for a in attempts:
        rows.append({"attempt_id": a.attempt_id, "dataset": dataset,
                     "topic_id": a.topic.topic_id if a.topic else None, "task": a.task, "question_type": a.kind,
                     "status": a.status, "reason": a.reason, "question_id": a.question_id,
                     "chunk_ids": [u.chunk_id for u in a.units]})
        if a.status not in ("ok", "dropped"):
            continue
        gen, topic = a.generated, a.topic
        assert gen is not None and topic is not None and a.question_id is not None
        split = assigned_split(a.question_id, seed, test_fraction)
        meta = {"generation_run_id": run_id, "config_hash": config_hash, "cell": {"topic_id": topic.topic_id,
                "topic_en": topic.name_en, "task": a.task}, "kind": a.kind, "chunk_ids": [u.chunk_id for u in a.units],
                "doc_ids": sorted({u.doc_id for u in a.units}), "model": model, "prompts": {
                    k: settings["prompts"][k] for k in (a.kind, "classify", "inspect")},
                "seed": seed, "unit": settings["unit"], "assigned_split": split,
                "llm_split": SPLIT_DROPPED if a.status == "dropped" else split, **gen.extra}
        questions.append({
            "question_id": a.question_id, "dataset": dataset, "split": meta["llm_split"], "question": gen.question,
            "reference_answers": gen.answers, "task": a.task, "topic_path": topic.path, "question_type": a.kind,
            "question_reasoning": {"multi_hop_calc": "Numerical reasoning", "multi_hop_chain": "Entity chain",
                                   "contrast": "Comparison", "long_form": "Explanation",
                                   "conversational": "Dialogue", "extractive": "Information extraction"}[a.kind or ""],
            "conversation": gen.conversation, "source": "generated", "generation_run_id": run_id,
            "meta": json.dumps(meta, sort_keys=True, ensure_ascii=False)})
        ordinal = 0
        for u in a.units:
            pages = [None] if u.page_start is None else list(range(u.page_start, (u.page_end or u.page_start) + 1))
            for p in pages:  # one row per page the chunk spans: page / doc granularity; the chunk id: chunk level
                evidence.append({"question_id": a.question_id, "evidence_ordinal": ordinal, "dataset": dataset,
                                 "doc_id": u.doc_id, "page_number": p, "chunk_id": u.chunk_id, "relevance": 1,
                                 "evidence_text": u.text.strip()[: settings["passage_chars"]]})
                ordinal += 1
        inspections.append({"question_id": a.question_id, "inspector": f"llm:{model}", "verdict": a.verdict.verdict,
                            "score": a.verdict.score, "reason": a.verdict.reason or None})
    qframe = apply_human(contract("questions").frame(questions), latest_human(lake))
    eframe = contract("evidence").frame(evidence)
    iframe = contract("qa_inspections").frame(inspections)
    aframe = contract("qa_generation_attempts").frame(rows)
    return [("questions", run_id, qframe), ("evidence", run_id, eframe), ("qa_inspections", run_id, iframe),
            ("qa_generation_attempts", run_id, aframe)]


def summary(run_id: str, attempts: list[Attempt], tasks: tuple[str, ...], llm: LLMClient) -> None:
    say(f"landed generation run {run_id}:")
    for task in tasks:
        c = Counter(a.status for a in attempts if a.task == task)
        landed = c["ok"] + c["dropped"]
        say(f"  {task:<15} attempts {sum(c.values()):>3}  landed {landed:>3} (kept {c['ok']}, dropped {c['dropped']})"
            f"  failed {c['failed']}")
    n_cls = sum(a.task is None for a in attempts)
    if n_cls:
        say(f"  topic classification failed for {n_cls} units")
    reasons = Counter(re.sub(r":.*", "", a.reason or "") + ": " + (a.reason or "").split(": ", 1)[-1][:60]
                      for a in attempts if a.status == "failed")
    for why, n in reasons.most_common(5):
        say(f"  failed x{n}: {why}")
    say(f"LLM calls made {llm.calls_made}, from cache {llm.cache_hits}")





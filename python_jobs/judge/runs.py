"""`finrag judge`: an LLM-judge run over an answer run, through the one LLM client.

    finrag judge --answer-run A [--metrics correctness,faithfulness] [--judge-model M] [--limit N] [--question-id Q]
                 [--repeats N [--temperature T]]

- Metrics and their scales come from the judged rows of the metric registry, seeds/metrics.csv (core/metrics.py).
  Default metrics: every metric that applies to the run (those needing passages are left out when the run has none
  at all, e.g. closed book).
- One rubric prompt per metric, prompts/judge_<metric>_v1.txt (--rubric METRIC=NAME_OR_PATH swaps one). Each
  template's name@hash goes into judge_runs.rubric_version, and the answer run, judge model, metrics, rubric hashes
  and every parameter into the default judge_run_id `<answer run>-judge-<hash10>`: a re-run replaces its own partition
  and, through the client's cache, makes no new call.
- Each judgment is `ok` (a raw score on the metric's scale), `not_applicable`, or `failed` with the reason; the reply
  is read strictly (verdicts.parse_reply), never guessed. Decided without a call (status not_applicable, the reason
  in `rationale`): metrics needing passages when the answer had none (closed book; FinanceBench's singleStore /
  sharedStore runs, whose retrieved chunks are not published), NAC when the reference answer holds no number, and
  any metric when the answer itself failed (no text to judge).
- What the judge sees: the answer cut to the run's max_words, and for correctness and faithfulness to the
  answer-file guideline's first 300 words; faithfulness (and HAL / UTL) the first 10 passages, each cut so that all
  of them fit --passage-tokens (counted with the project's default tokenizer; SmolLM2's context is 2,048 tokens).
- Passages: the answer's own `passages` JSON texts (answer files), else its chunks' texts (finrag RAG runs), else,
  for FinanceBench's oracle / inContext runs, the gold evidence pages the system was given (from `pages`, else the
  full-page texts FinanceBench ships in the question's meta).
- Repeats (`--repeats N`, SPEC §10: the judge's noise): every answer is judged N times into the ONE judge run, each
  judgment a row of its own (`judgments.repeat` 1..N). N = 1 (the default) is the run it always was: greedy
  (temperature 0), no seed, the same params and so the same judge run id and LLM requests (the cache holds). N > 1
  samples: temperature --temperature (default 0.7) and seed r for repeat r, so each repeat is its own request (the
  request hash holds the seed) and a re-run is served from the cache; `repeats` and the temperature enter the params
  and the judge run id. A decision made without a call (not_applicable) is the same for every repeat and is written
  once per repeat, so every answer x metric has N rows. What the repeats give: fct_judge_answer_scores (the answer's
  mean over its ok repeats, which every judged mean and comparison uses) and mart_judge_reliability
  (Krippendorff's alpha, the answers whose repeats straddle the pass threshold).
- Sharded (`--shard I/N`, python_jobs/core/shards.py): the answers to judge (--question-id, --limit) and the default
  metrics are the whole run's, so the judge run id and the judge_runs row are the unsharded run's; the shard judges
  the answers whose question_id falls in its slice and lands them as its part of the run.
"""

from __future__ import annotations

import hashlib
import json
from collections import Counter
from dataclasses import dataclass, replace
from typing import Any, Self

import polars as pl
from pydantic import Field, field_validator, model_validator
from pydantic_core import PydanticCustomError

from python_jobs.core.console import say
from python_jobs.core.contracts import contract
from python_jobs.core.errors import InputError
from python_jobs.core.job_config import JobConfig
from python_jobs.core.lake import Lake, check_id
from python_jobs.core.metrics import ANSWER_FILE_WORDS, MAX_PASSAGES, MetricSpec, load_metrics
from python_jobs.core.rules import RULES
from python_jobs.core.run_ids import derived_id
from python_jobs.core.shards import Shard
from python_jobs.judge.verdicts import Verdict, parse_reply, reply_format
from python_jobs.llm.client import ChatRequest, LLMClient, LLMResult, raise_if_all_failed
from python_jobs.llm.config import LLMConfig
from python_jobs.llm.prompts import PromptTemplate, load_template
from python_jobs.stats.text_metrics import first_words, parse_amounts

# FinanceBench eval modes whose prompt held the gold evidence (oracle: the evidence pages; inContext: the whole
# filing, of which we have the evidence pages); *_reverse put the context after the question. The rules' oracle
# bounds declare them once (the same modes make an answer run an oracle bound on the leaderboards)
EVIDENCE_MODES = set(RULES.oracle_eval_modes)
REFERENCE_TOKENS = 200
# the sampling temperature of repeated judgments (--repeats > 1) when --temperature is not given: high enough that
# the judge's own uncertainty shows between repeats, the common default of chat endpoints
REPEAT_TEMPERATURE = 0.7


class JudgeConfig(JobConfig):
    """A judge run over an answer run. Everything but judge_run_id and ledger_batch enters the config hash (and the
    judge run id), with the judge model and the rubrics' hashes."""

    answer_run_id: str = Field(description="The answer run to judge.")
    metrics: tuple[str, ...] | None = Field(None, strict=False, description=(
        "Judged metrics (seeds/metrics.csv) [default: all that apply to the run]."))
    rubrics: dict[str, str] = Field({}, description=(
        "METRIC -> another rubric prompt for it (name under prompts/ or a path)."))
    limit: int | None = Field(None, ge=1, description="Only the first N answers (by question id).")
    question_ids: tuple[str, ...] = Field((), strict=False, description="Only these questions.")
    max_tokens: int = Field(128, ge=8, description="Completion tokens per judgment.")
    passage_tokens: int = Field(900, ge=64, description=(
        "Token budget of all passages in one prompt (each of the first 10 is cut to its share)."))
    judge_run_id: str | None = Field(None, description="Judge run id (default: <answer run>-judge-<config hash>).")
    ledger_batch: int = Field(16, ge=1, description="LLM calls per landed llm_calls batch.")
    repeats: int = Field(1, ge=1, description=(
        "Judge every answer N times (repeat r sampled with seed r) into the one judge run: the judge's noise."))
    temperature: float | None = Field(None, ge=0, le=2, description=(
        f"Sampling temperature of repeated judgments (--repeats > 1) [default: {REPEAT_TEMPERATURE}]; a single "
        "judgment is greedy (0)."))

    @model_validator(mode="after")
    def _temperature_only_with_repeats(self) -> Self:
        if self.temperature is not None and self.repeats == 1:
            raise InputError("a temperature is for repeated judgments (--repeats N, N > 1): a single judgment is "
                             "greedy (temperature 0)", field="temperature")
        return self

    @property
    def sampling_temperature(self) -> float:
        """The requests' temperature: 0 for a single judgment, else the given one or REPEAT_TEMPERATURE."""
        if self.repeats == 1:
            return 0.0
        return REPEAT_TEMPERATURE if self.temperature is None else self.temperature

    @field_validator("metrics")
    @classmethod
    def _distinct(cls, value: tuple[str, ...] | None) -> tuple[str, ...] | None:
        if value is not None and (not value or len(set(value)) != len(value)):
            raise PydanticCustomError("distinct_names", "a list of distinct metric names")
        return value


@dataclass
class Item:
    question_id: str
    question: str
    reference: str
    answer: str | None
    answer_error: str | None
    passages: list[str]


class Budget:
    """Token estimates with the project's default fast tokenizer (the endpoint's own is unknown to the client)."""

    def __init__(self) -> None:
        from python_jobs.corpus.tokenizers import load_tokenizer

        self.tok = load_tokenizer()

    def cut(self, text: str, budget: int) -> str:
        ids, offsets = self.tok.encode(text)
        return text if len(ids) <= budget else text[: offsets[max(budget, 1) - 1][1]] + " ..."


def _chunk_texts(lake: Lake, dataset: str, ids: set[str]) -> dict[str, str]:
    if not ids:
        return {}
    chunks = lake.read("chunks", where={"dataset": dataset}, columns=["chunk_id", "text"]).filter(
        pl.col("chunk_id").is_in(list(ids)))
    return dict(zip(chunks["chunk_id"], chunks["text"], strict=True))


def _evidence_pages(lake: Lake, dataset: str, question_ids: list[str],
                    questions: pl.DataFrame) -> dict[str, list[str]]:
    """The gold evidence page texts of each question, in evidence order (pages table, else the question's meta)."""
    ev = lake.read("evidence", where={"dataset": dataset},
                   columns=["question_id", "evidence_ordinal", "doc_id", "page_number", "evidence_text"])
    ev = ev.filter(pl.col("question_id").is_in(question_ids)).sort(["question_id", "evidence_ordinal"])
    pages = lake.read("pages", where={"dataset": dataset}, columns=["doc_id", "page_number", "text"]).filter(
        pl.col("doc_id").is_in(ev["doc_id"].unique().to_list()))
    page_text = {(r["doc_id"], r["page_number"]): r["text"] for r in pages.iter_rows(named=True)}
    meta = {r["question_id"]: json.loads(r["meta"] or "{}") for r in questions.iter_rows(named=True)}
    out: dict[str, list[str]] = {}
    for qid, rows in ev.group_by("question_id", maintain_order=True):
        full = meta.get(qid[0], {}).get("evidence_text_full_page") or []
        texts, seen = [], set()
        for i, r in enumerate(rows.iter_rows(named=True)):
            key = (r["doc_id"], r["page_number"])
            if key in seen:  # FinanceBench lists some pages twice
                continue
            seen.add(key)
            text = page_text.get(key) or (full[i] if i < len(full) else None) or r["evidence_text"]
            if text:
                texts.append(text)
        out[qid[0]] = texts
    return out


def load_items(lake: Lake, run: dict[str, Any], question_ids: tuple[str, ...], limit: int | None) -> list[Item]:
    run_id = run["run_id"]
    answers = lake.read("answers", where={"run_id": run_id}).sort("question_id")
    if question_ids:
        unknown = sorted(set(question_ids) - set(answers["question_id"]))
        if unknown:
            raise InputError(f"answer run {run_id!r} has no answer to question {unknown[0]!r}", field="question_id")
        answers = answers.filter(pl.col("question_id").is_in(list(question_ids)))
    if limit:
        answers = answers.head(limit)
    qids = answers["question_id"].to_list()
    questions = lake.read("questions", where={"dataset": run["dataset"]},
                          columns=["question_id", "question", "reference_answers", "meta"]).filter(
        pl.col("question_id").is_in(qids))
    missing = sorted(set(qids) - set(questions["question_id"]))
    if missing:
        raise InputError(f"question {missing[0]!r} of answer run {run_id!r} is not in the lake's questions: the judge "
                         f"needs its text and reference answer (ingest dataset {run['dataset']!r} first)",
                         field="question_id")
    qs = {r["question_id"]: r for r in questions.iter_rows(named=True)}
    chunk_ids = {c for ids in answers["context_chunk_ids"].to_list() if ids for c in ids}
    for p in answers["passages"].to_list():
        chunk_ids |= {x["chunk_id"] for x in json.loads(p or "[]") if x.get("chunk_id") and not x.get("text")}
    chunk_text = _chunk_texts(lake, run["dataset"], chunk_ids)
    evidence = (_evidence_pages(lake, run["dataset"], qids, questions) if run.get("eval_mode") in EVIDENCE_MODES
                else {})
    max_words = run.get("max_words")
    items = []
    for a in answers.iter_rows(named=True):
        passages: list[str] = []
        for p in json.loads(a["passages"] or "[]"):
            text = p.get("text") or p.get("passage") or chunk_text.get(p.get("chunk_id") or "")
            if text:
                passages.append(text)
        if not passages and a["context_chunk_ids"]:
            passages = [chunk_text[c] for c in a["context_chunk_ids"] if c in chunk_text]
        if not passages:
            passages = evidence.get(a["question_id"], [])
        q = qs[a["question_id"]]
        failed = a["error"] is not None or a["answer"] is None
        items.append(Item(a["question_id"], q["question"], " OR ".join(q["reference_answers"] or []),
                          None if failed else first_words(a["answer"], max_words),
                          (a["error"] or "no answer") if failed else None, passages))
    return items


def not_applicable(item: Item, spec: MetricSpec) -> str | None:
    """Why the metric does not apply to this answer (no call is made), or None."""
    if item.answer is None:
        return f"not judged: the answer failed ({item.answer_error})"
    if spec.needs_passages and not item.passages:
        return "not judged: the answer had no passages (closed book, or its retrieved passages are unknown)"
    if spec.needs_numeric_reference and not parse_amounts(item.reference):
        return "not judged: the reference answer holds no number"
    return None


def render(tpl: PromptTemplate, spec: MetricSpec, item: Item, budget: Budget, passage_tokens: int):
    answer = item.answer or ""
    if spec.judge_family == "answer_file":
        answer = first_words(answer, ANSWER_FILE_WORDS) or ""
    passages = item.passages[:MAX_PASSAGES]
    per = max(passage_tokens // max(len(passages), 1), 32)
    # whitespace collapsed: PDF tables are mostly blanks and newlines, which cost the judge's context for nothing
    context = "\n\n".join(f"[{i + 1}] {budget.cut(' '.join(p.split()), per)}" for i, p in enumerate(passages))
    return tpl.render(question=item.question, reference=budget.cut(item.reference, REFERENCE_TOKENS),
                      answer=answer, passages=context)


def run_judge(lake: Lake, cfg: JudgeConfig, llm_config: LLMConfig, *, shard: Shard | None = None) -> str:
    """Judge `cfg`'s answers and land the run. Beside the config: the LLM endpoint (the environment's, with its key;
    the judge model enters the hash through the client) and this process's shard of the run (the run and its id are
    the whole run's)."""
    answer_run_id, rubrics, max_tokens, passage_tokens = (cfg.answer_run_id, cfg.rubrics, cfg.max_tokens,
                                                          cfg.passage_tokens)
    specs = load_metrics()
    runs = lake.read("generation_runs", where={"run_id": answer_run_id})
    if runs.height == 0:
        raise InputError(f"no answer run {answer_run_id!r} in the lake", field="answer_run")
    run = runs.row(0, named=True)
    items = load_items(lake, run, cfg.question_ids, cfg.limit)
    if not items:
        raise InputError(f"answer run {answer_run_id!r} has no answers to judge", field="answer_run")

    metrics = list(cfg.metrics) if cfg.metrics is not None else None
    if metrics is None:
        has_passages = any(i.passages for i in items)
        metrics = [m for m, s in specs.items() if has_passages or not s.needs_passages]
    unknown = [m for m in metrics if m not in specs]
    if unknown:
        raise InputError(f"unknown metric {unknown[0]!r} (known: {', '.join(specs)})", field="metrics")
    stray = sorted(set(rubrics) - set(metrics))
    if stray:
        raise InputError(f"--rubric names metric {stray[0]!r}, which is not judged in this run", field="rubric")
    templates = {m: load_template(rubrics.get(m, f"judge_{m}_v1")) for m in metrics}

    llm = LLMClient(lake.home, llm_config, job_run_id=f"judge-{answer_run_id}{f'-{shard.tag}' if shard else ''}",
                    batch_size=cfg.ledger_batch)
    temperature, repeats = cfg.sampling_temperature, cfg.repeats
    params = {"metrics": metrics, "rubrics": {m: t.ref for m, t in templates.items()}, "max_tokens": max_tokens,
              "temperature": temperature, "passage_tokens": passage_tokens, "max_passages": MAX_PASSAGES,
              "answer_file_words": ANSWER_FILE_WORDS, "reference_tokens": REFERENCE_TOKENS,
              "token_counter": "minilm (estimate)", "limit": cfg.limit,
              "question_ids": sorted(cfg.question_ids) or None,
              "reply_formats": {m: reply_format(specs[m], cfg.max_tokens) for m in metrics}}
    if repeats > 1:  # only then: a single judgment's params, and so its run id, are what they always were
        params["repeats"] = repeats
    digest = hashlib.sha256(json.dumps({"answer_run_id": answer_run_id, "judge_model": llm.model, **params},
                                       sort_keys=True).encode()).hexdigest()
    judge_run_id = check_id(cfg.judge_run_id or derived_id(answer_run_id, "judge", digest), "judge run id")
    if shard is not None:  # the selection and default metrics above are the whole run's: the shard judges its slice
        items = [i for i in items if shard.owns(i.question_id)]
    say(f"judge run {judge_run_id}{f' shard {shard}' if shard else ''}: {len(items)} answers of {answer_run_id!r} "
        f"x {len(metrics)} metrics "
        f"({', '.join(metrics)}){f' x {repeats} repeats (temperature {temperature})' if repeats > 1 else ''}, "
        f"judge model {llm.model}")

    budget = Budget()
    verdicts: dict[tuple[str, str, int], Verdict] = {}
    calls: list[tuple[str, str, int, ChatRequest]] = []
    for item in items:
        for m in metrics:
            why = not_applicable(item, specs[m])
            prompt = None if why else render(templates[m], specs[m], item, budget, passage_tokens)
            for r in range(1, repeats + 1):
                if why:  # decided without a call: the same row for every repeat
                    verdicts[(item.question_id, m, r)] = Verdict("not_applicable", None, why, None)
                    continue
                # one repeat: greedy and unseeded, the request a single judgment always made
                req = ChatRequest(prompt, "judge", temperature=temperature, max_tokens=max_tokens,
                                  seed=r if repeats > 1 else None,
                                  response_format=reply_format(specs[m], max_tokens))
                calls.append((item.question_id, m, r, req))
    try:
        results = llm.complete_many([req for *_, req in calls], desc="judge")
    finally:
        llm.close()
    for (qid, m, r, _), res in zip(calls, results, strict=True):
        verdicts[(qid, m, r)] = read_verdict(res, specs[m], max_tokens)

    rows = []
    for item in items:
        for m in metrics:
            for r in range(1, repeats + 1):
                v = verdicts[(item.question_id, m, r)]
                rows.append({"judge_run_id": judge_run_id, "question_id": item.question_id, "metric": m,
                             "repeat": r, "rubric": templates[m].ref, "raw_score": v.raw_score,
                             "rationale": v.rationale, "status": v.status, "error": v.error})
    judgments = contract("judgments").frame(rows)
    judge_run = contract("judge_runs").frame([{
        "judge_run_id": judge_run_id, "answer_run_id": answer_run_id, "judge_model": llm.model,
        "rubric_version": ",".join(t.ref for t in templates.values()), "metrics": ",".join(metrics),
        "params": json.dumps({**params, "config_hash": digest}, sort_keys=True),
    }])
    lake.land([("judge_runs", judge_run_id, judge_run), ("judgments", judge_run_id, judgments)], shard=shard)

    counts = Counter((r["metric"], r["status"]) for r in rows)
    for m in metrics:
        say(f"  {m:<13} ok {counts[(m, 'ok')]:>4}  not_applicable {counts[(m, 'not_applicable')]:>4}  "
            f"failed {counts[(m, 'failed')]:>4}")
    say(f"landed judge_runs/judgments judge_run_id={judge_run_id}: {len(rows)} judgments; "
        f"LLM calls made {llm.calls_made}, from cache {llm.cache_hits}")
    raise_if_all_failed(f"LLM call of judge run {judge_run_id}", [res.error for res in results])
    return judge_run_id






def read_verdict(res: LLMResult, spec: MetricSpec, max_tokens: int) -> Verdict:
    if res.error:
        return Verdict("failed", None, None, f"LLM call failed: {res.error}")
    verdict = parse_reply(res.text, spec)
    if verdict.status == "failed" and res.completion_tokens is not None and res.completion_tokens >= max_tokens:
        # small models ramble before closing the JSON: say so, or the reason reads like a format problem only
        verdict = replace(verdict, error=f"{verdict.error} (the reply was cut at --max-tokens {max_tokens})")
    return verdict

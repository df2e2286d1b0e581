"""Table contracts of the lake (SPEC §4): schema, key, partition column and value rules.

Every lake table is defined here once; the lake module validates frames against these before anything lands,
and `ensure_lake` writes an empty typed placeholder per table so dbt's sources always bind.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import polars as pl

DOC_TYPES = ("10-K", "10-Q", "8-K", "earnings_call", "annual_report", "web", "other")
CONDITIONS = ("full", "oracle_doc", "oracle_page")
QUESTION_SOURCES = ("human", "generated", "imported")
JUDGE_STATUSES = ("ok", "not_applicable", "failed")
VERDICTS = ("keep", "fix", "drop")

TS = pl.Datetime("us", "UTC")
TURN = pl.Struct({"role": pl.String, "content": pl.String})


@dataclass(frozen=True)
class Contract:
    name: str
    partition: str  # the column whose value names the partition directory (load / run id)
    key: tuple[str, ...]
    schema: dict[str, pl.DataType]
    not_null: tuple[str, ...] = ()
    accepted: dict[str, tuple[str, ...]] = field(default_factory=dict)
    # column -> (min, max) inclusive; None = unbounded
    ranges: dict[str, tuple[float | None, float | None]] = field(default_factory=dict)

    @property
    def polars_schema(self) -> pl.Schema:
        return pl.Schema(self.schema)


def _contract(name: str, partition: str, key: tuple[str, ...], schema: dict[str, pl.DataType], **kw) -> Contract:
    # every row carries the id of the load or run that produced it, and when
    full = {**schema}
    full.setdefault(partition, pl.String)
    full.setdefault("created_at", TS)
    not_null = tuple(dict.fromkeys((*key, partition, "created_at", *kw.pop("not_null", ()))))
    return Contract(name, partition, key, full, not_null=not_null, **kw)


CONTRACTS: dict[str, Contract] = {
    c.name: c
    for c in [
        _contract(
            "documents",
            "load_id",
            ("doc_id",),
            {
                "doc_id": pl.String,
                "dataset": pl.String,
                "title": pl.String,
                "company": pl.String,
                "doc_type": pl.String,
                "period": pl.String,
                "sector": pl.String,
                "language": pl.String,
                "source_uri": pl.String,
                "n_pages": pl.Int32,  # null when the document's file is not present
                "content_sha256": pl.String,
                "has_content": pl.Boolean,
            },
            not_null=("dataset", "doc_type", "has_content"),
            accepted={"doc_type": DOC_TYPES},
            ranges={"n_pages": (0, None)},
        ),
        _contract(
            "pages",
            "load_id",
            ("doc_id", "page_number"),
            {"doc_id": pl.String, "dataset": pl.String, "page_number": pl.Int32, "text": pl.String},
            not_null=("dataset", "text"),
            ranges={"page_number": (0, None)},
        ),
        _contract(
            "chunks",
            "load_id",
            ("chunk_id",),
            {
                "chunk_id": pl.String,
                "doc_id": pl.String,
                "dataset": pl.String,
                "chunker_id": pl.String,
                "ordinal": pl.Int32,
                "page_start": pl.Int32,
                "page_end": pl.Int32,
                "char_start": pl.Int64,
                "char_end": pl.Int64,
                "n_tokens": pl.Int32,
                "text": pl.String,
                "parent_chunk_id": pl.String,
            },
            not_null=("doc_id", "dataset", "chunker_id", "ordinal", "text"),
            ranges={"ordinal": (0, None), "n_tokens": (0, None)},
        ),
        _contract(
            "questions",
            "load_id",
            ("question_id",),
            {
                "question_id": pl.String,
                "dataset": pl.String,
                "split": pl.String,
                "question": pl.String,
                "reference_answers": pl.List(pl.String),
                "task": pl.String,
                "topic_path": pl.List(pl.String),
                "question_type": pl.String,
                "question_reasoning": pl.String,
                "conversation": pl.List(TURN),
                "source": pl.String,
                "meta": pl.String,  # JSON object
            },
            not_null=("dataset", "split", "question", "source"),
            accepted={"source": QUESTION_SOURCES},
        ),
        _contract(
            "evidence",
            "load_id",
            ("question_id", "evidence_ordinal"),
            {
                "question_id": pl.String,
                "evidence_ordinal": pl.Int32,  # FinanceBench lists the same page twice for some questions
                "dataset": pl.String,
                "doc_id": pl.String,
                "page_number": pl.Int32,
                "chunk_id": pl.String,
                "relevance": pl.Int32,
                "evidence_text": pl.String,
            },
            not_null=("dataset", "doc_id", "relevance"),
            ranges={"page_number": (0, None)},
        ),
        _contract(
            "qa_inspections",
            "inspection_run_id",
            ("inspection_run_id", "question_id"),
            {
                "inspection_run_id": pl.String,
                "question_id": pl.String,
                "inspector": pl.String,
                "verdict": pl.String,
                "score": pl.Int32,
                "reason": pl.String,
                # human inspection (finrag import-inspection): a verdict 'fix' carries the corrected text
                "corrected_question": pl.String,
                "corrected_answer": pl.String,
                "comment": pl.String,
            },
            not_null=("inspector", "verdict"),
            accepted={"verdict": VERDICTS},
            ranges={"score": (1, 5)},
        ),
        _contract(
            "retrieval_runs",
            "run_id",
            ("run_id",),
            {
                "run_id": pl.String,
                "dataset": pl.String,
                "retriever": pl.String,
                "condition": pl.String,
                "k": pl.Int32,
                "embedder": pl.String,
                "reranker": pl.String,
                "chunker_id": pl.String,
                "params": pl.String,  # JSON: the full config
                "config_hash": pl.String,
                "source": pl.String,  # finrag (ranked by rank) or trec (ranked by trec_eval's rule)
            },
            not_null=("dataset", "retriever", "condition", "config_hash", "source"),
            accepted={"condition": CONDITIONS, "source": ("finrag", "trec")},
        ),
        _contract(
            "retrieval_results",
            "run_id",
            ("run_id", "question_id", "rank"),
            {
                "run_id": pl.String,
                "question_id": pl.String,
                "rank": pl.Int32,
                "chunk_id": pl.String,
                "doc_id": pl.String,
                "page_start": pl.Int32,
                "page_end": pl.Int32,
                "score": pl.Float64,
            },
            not_null=("doc_id",),
            ranges={"rank": (1, None)},
        ),
        _contract(
            "generation_runs",
            "run_id",
            ("run_id",),
            {
                "run_id": pl.String,
                "dataset": pl.String,
                "retrieval_run_id": pl.String,
                "model": pl.String,
                "eval_mode": pl.String,
                "prompt_template": pl.String,
                "params": pl.String,
            },
            not_null=("model",),
        ),
        _contract(
            "answers",
            "run_id",
            ("run_id", "question_id"),
            {
                "run_id": pl.String,
                "question_id": pl.String,
                "answer": pl.String,
                "prompt": pl.String,
                "context_chunk_ids": pl.List(pl.String),
                # JSON list of the passages put into the prompt, in order: [{"doc_ids": [...], "chunk_id": ...,
                # "text": ... (answer files only; finrag runs take the text from chunks)}]
                "passages": pl.String,
                "prompt_tokens": pl.Int32,
                "completion_tokens": pl.Int32,
                "latency_ms": pl.Float64,
                "cost_usd": pl.Float64,
                "error": pl.String,
            },
        ),
        _contract(
            "judge_runs",
            "judge_run_id",
            ("judge_run_id",),
            {
                "judge_run_id": pl.String,
                "answer_run_id": pl.String,
                "judge_model": pl.String,
                "rubric_version": pl.String,  # comma list of the rubric prompts' name@hash12, in metric order
                "metrics": pl.String,  # comma list of the judged metrics
                "params": pl.String,  # JSON: every parameter of the run (budgets, cuts, limit, config hash)
            },
            not_null=("answer_run_id", "judge_model", "rubric_version"),
        ),
        _contract(
            "judgments",
            "judge_run_id",
            ("judge_run_id", "question_id", "metric"),
            {
                "judge_run_id": pl.String,
                "question_id": pl.String,
                "metric": pl.String,
                "raw_score": pl.Float64,
                "rationale": pl.String,
                "status": pl.String,
                "error": pl.String,
            },
            not_null=("status",),
            accepted={"status": JUDGE_STATUSES},
        ),
        _contract(
            "human_labels",
            "label_set",
            ("label_set", "answer_run_id", "question_id", "metric"),
            {
                "label_set": pl.String,
                "answer_run_id": pl.String,
                "question_id": pl.String,
                "metric": pl.String,
                "raw_score": pl.Float64,
                "label": pl.String,  # the label as the source wrote it
                "annotator": pl.String,
            },
        ),
        _contract(
            "llm_calls",
            "batch_id",
            # a request that failed in one job and succeeded in a later one has a row in each job's batch; the
            # cache reads rows with error is null (python_jobs/llm.py)
            ("request_hash", "batch_id"),
            {
                "request_hash": pl.String,
                "batch_id": pl.String,
                "model": pl.String,
                "purpose": pl.String,
                "request": pl.String,
                "response": pl.String,
                "prompt_tokens": pl.Int32,
                "completion_tokens": pl.Int32,
                "latency_ms": pl.Float64,
                "cost_usd": pl.Float64,
                "error": pl.String,
                "attempts": pl.Int32,  # HTTP tries of this call (retries included)
            },
            not_null=("model", "purpose"),
        ),
        # one row per attempted QA instance of `finrag generate-qa` (python_jobs/qa_generation.py): ok = landed and
        # kept by the LLM inspector, dropped = landed with split 'dropped', failed = never landed (malformed reply,
        # unsupported answer, failed call), with the reason
        _contract(
            "qa_generation_attempts",
            "generation_run_id",
            ("generation_run_id", "attempt_id"),
            {
                "generation_run_id": pl.String,
                "attempt_id": pl.String,
                "dataset": pl.String,
                "topic_id": pl.String,  # null when the unit's topic classification failed
                "task": pl.String,  # null for a failed topic classification
                "question_type": pl.String,
                "status": pl.String,
                "reason": pl.String,
                "question_id": pl.String,  # set when the instance landed (ok / dropped)
                "chunk_ids": pl.List(pl.String),
            },
            not_null=("dataset", "status"),
            accepted={"status": ("ok", "failed", "dropped")},
        ),
    ]
}


def contract(table: str) -> Contract:
    try:
        return CONTRACTS[table]
    except KeyError:
        raise KeyError(f"unknown lake table {table!r}; known: {', '.join(CONTRACTS)}") from None

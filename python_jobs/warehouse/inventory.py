"""What a home's lake holds: its datasets (questions, reference answers, documents, pages, chunks and the runs over
them) and its runs (retrieval, answer, judge) with a label that says what each run is. `finrag ls` prints them and
the dashboard's overview shows them; the dashboard labels runs with run_labels everywhere.

Read from the lake's run tables through Lake.read (the runs' own configuration, under the lake's read lock), never
from the warehouse: it answers before any build."""

from __future__ import annotations

import os
from collections.abc import Sequence

import polars as pl

from python_jobs.core.config import lake_dir, warehouse_home
from python_jobs.core.lake import Lake

KINDS = ("retrieval", "answer", "judge")


def _short(name: str | None) -> str | None:
    """A model path's last component (sentence-transformers/all-MiniLM-L6-v2 -> all-MiniLM-L6-v2)."""
    return None if name is None else name.rstrip("/").rsplit("/", 1)[-1]


def _splits(splits: Sequence[str] | None) -> str:
    return "all splits" if splits is None or len(splits) == 0 else "split " + "+".join(splits)


def run_labels(lake: Lake) -> dict[str, str]:
    """run id -> what the run is: a retrieval run's retriever, condition, k, question split, embedder and reranker
    ("dense · full · k=10 · split test · all-MiniLM-L6-v2"); an answer run's mode, model and split, and the
    retrieval run it answered over; a judge run's model and the answer run it judged."""
    labels: dict[str, str] = {}
    for r in lake.read("retrieval_runs").iter_rows(named=True):
        parts = [r["retriever"], r["condition"], f"k={r['k']}" if r["k"] is not None else None,
                 _splits(r["question_splits"]), _short(r["embedder"]), _short(r["reranker"])]
        labels[r["run_id"]] = " · ".join(p for p in parts if p)
    for r in lake.read("generation_runs").iter_rows(named=True):
        label = " · ".join(p for p in [r["eval_mode"], _short(r["model"]), _splits(r["question_splits"])] if p)
        if r["retrieval_run_id"]:
            label += f" over [{labels.get(r['retrieval_run_id'], r['retrieval_run_id'])}]"
        labels[r["run_id"]] = label
    for r in lake.read("judge_runs").iter_rows(named=True):
        labels[r["judge_run_id"]] = (f"judge {_short(r['judge_model'])} of "
                                     f"[{labels.get(r['answer_run_id'], r['answer_run_id'])}]")
    return labels


def runs(lake: Lake) -> pl.DataFrame:
    """Every run of the lake, newest first: kind, run_id, dataset (a judge run's: its answer run's), label,
    created_at."""
    labels = run_labels(lake)
    answer_runs = lake.read("generation_runs", columns=["run_id", "dataset", "created_at"])
    judge_runs = lake.read("judge_runs", columns=["judge_run_id", "answer_run_id", "created_at"])
    frames = [
        lake.read("retrieval_runs", columns=["run_id", "dataset", "created_at"]).with_columns(kind=pl.lit("retrieval")),
        answer_runs.with_columns(kind=pl.lit("answer")),
        judge_runs.join(answer_runs.select(pl.col("run_id").alias("answer_run_id"), "dataset"), on="answer_run_id",
                        how="left")
        .select(pl.col("judge_run_id").alias("run_id"), "dataset", "created_at").with_columns(kind=pl.lit("judge")),
    ]
    out = pl.concat([f.select("kind", "run_id", "dataset", "created_at") for f in frames])
    return (out.with_columns(pl.col("run_id").map_elements(lambda r: labels.get(r, ""), return_dtype=pl.String)
                             .alias("label"))
            .select("kind", "run_id", "dataset", "label", "created_at")
            .sort("created_at", "run_id", descending=[True, False], nulls_last=True))


def datasets(lake: Lake) -> pl.DataFrame:
    """One row per dataset with questions: questions (not dropped), those with reference answers, documents, pages,
    chunks, and its retrieval, answer and judge runs."""
    questions = lake.read("questions", columns=["dataset", "split", "reference_answers"]) \
        .filter(pl.col("split").ne_missing("dropped"))
    counts = questions.group_by("dataset").agg(
        pl.len().alias("n_questions"),
        (pl.col("reference_answers").list.len().fill_null(0) > 0).sum().alias("n_with_reference"))

    def per_dataset(table: str, name: str) -> pl.DataFrame:
        return lake.read(table, columns=["dataset"]).group_by("dataset").agg(pl.len().alias(name))

    run_list = runs(lake)
    for table, name in [("documents", "n_documents"), ("pages", "n_pages"), ("chunks", "n_chunks")]:
        counts = counts.join(per_dataset(table, name), on="dataset", how="left")
    for kind in KINDS:
        per_kind = run_list.filter(pl.col("kind") == kind).group_by("dataset").agg(pl.len().alias(f"n_{kind}_runs"))
        counts = counts.join(per_kind, on="dataset", how="left")
    return counts.with_columns(pl.exclude("dataset").fill_null(0).cast(pl.Int64)).sort("dataset")


def existing_lake(home: str | os.PathLike[str] | None = None) -> Lake | None:
    """The home's lake, or None when it has none yet (a reader never creates one: Lake() would)."""
    return Lake(home) if lake_dir(warehouse_home(home)).is_dir() else None


def inventory(home: str | os.PathLike[str] | None = None) -> tuple[pl.DataFrame, pl.DataFrame] | None:
    """(datasets, runs) of the home's lake; None when the home has no lake."""
    lake = existing_lake(home)
    return None if lake is None else (datasets(lake), runs(lake))

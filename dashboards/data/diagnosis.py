"""The empty states: why a page (section) has nothing to show, found in the published marts, and the command
that fixes it (ui.empty_state shows it)."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import polars as pl

from dashboards.data.common import dataset_counts
from dashboards.data.costs import llm_costs
from dashboards.data.published import export_manifest, in_list, publishing_problem, query
from dashboards.data.qa_generation import qa_generation_runs
from dashboards.data.sweeps import sweeps


def judgment_failures(home: Path, datasets_: Sequence[str] | None = None) -> pl.DataFrame | None:
    """The judge runs and metrics whose every judgment failed (mart_judge_leaderboard.all_failed: no mean to show),
    with their counts and first error."""
    where, params = in_list("dataset", datasets_)
    return query(home, f"""
        select judge_run_id, answer_run_id, metric, n_ok, n_failed, first_error
        from mart_judge_leaderboard
        where all_failed and {where}
        order by judge_run_id, metric
    """, params, marts=["mart_judge_leaderboard"])


def _unpublished(home: Path) -> tuple[str, str]:
    """Why nothing can be read: no build has published anything, the published state is stale (a newer build was
    not published), or it was published by a build older than the marts the dashboard reads."""
    from python_jobs.marts.published import PublishError, read_manifest

    problem = publishing_problem(home)
    if problem is None:
        return ("the published marts are from an older version of the project (mart_datasets is not among them)",
                "finrag build --all")
    try:
        read_manifest(home, check_current=False)
    except PublishError:
        return ("nothing is published in this home yet: no build has run (has anything been ingested?)",
                "finrag ingest financebench --questions Q.jsonl --documents D.jsonl --pdfs DIR  then  finrag build  "
                "(or `finrag demo`)")
    return problem, "finrag publish"


def diagnose(home: Path, what: str, datasets_: Sequence[str] | None = None) -> tuple[str, str]:
    """Why a page (section) has nothing to show, found in the published marts, and the command that fixes it:
    (reason, command). `what`: retrieval, page (page-level metrics), generation, judged, agreement, comparison,
    costs, qa_generation, sweeps, or anything else (only the home-wide causes)."""
    found = dataset_counts(home)
    if found is None:
        return _unpublished(home)
    if found.is_empty():
        return ("nothing is ingested in this home (the last build saw no dataset)",
                "finrag ingest financebench --questions Q.jsonl --documents D.jsonl --pdfs DIR  then  finrag build  "
                "(or `finrag demo`)")
    scope = found.filter(pl.col("dataset").is_in(list(datasets_))) if datasets_ else found
    names = ", ".join(scope["dataset"]) or "these datasets"
    first = scope["dataset"][0] if scope.height else "DATASET"

    def none_with(column: str) -> bool:
        return scope.filter(pl.col(column) > 0).is_empty()

    if what == "page":
        without = scope.filter(pl.col("n_pages") == 0)["dataset"].to_list()
        if without:
            return (f"{', '.join(without)} has no pages (a BEIR / TREC corpus has documents only): page-level "
                    "metrics (PageRec, page granularity) do not exist for it; pick chunk or doc",
                    "finrag ingest financebench … --pdfs DIR  (a corpus with PDF pages)")
    if what in ("retrieval", "page") and none_with("n_retrieval_runs"):
        if none_with("n_chunks") and not none_with("n_documents"):
            return (f"{names} has documents but no chunks to retrieve from",
                    f"finrag chunk --dataset {first} && finrag retrieve --retriever bm25 --dataset {first}")
        return f"no retrieval run on {names}", f"finrag retrieve --retriever bm25 --dataset {first} --k 10"
    if what == "generation":
        if none_with("n_answer_runs"):
            return (f"no answer run on {names}",
                    f"finrag answer --closed-book --dataset {first}  (or --retrieval-run RUN for RAG)")
        no_reference = scope.filter((pl.col("n_answer_runs") > 0) & (pl.col("n_with_reference") == 0))
        if no_reference.height:
            return (f"the questions of {', '.join(no_reference['dataset'])} have no reference answers, so no "
                    "lexical metric can score their answers (judged metrics can)",
                    "finrag judge --answer-run RUN --metrics correctness  (or ingest questions with answers)")
    if what in ("judged", "agreement"):
        if none_with("n_answer_runs"):
            return (f"no answer run on {names}, so nothing to judge",
                    f"finrag answer --closed-book --dataset {first}  then  finrag judge --answer-run RUN")
        if none_with("n_judge_runs"):
            return (f"no judge run on the answers of {names}",
                    "finrag judge --answer-run RUN --metrics correctness")
        failures = judgment_failures(home, datasets_)
        if failures is not None and failures.height:
            f = failures.row(0, named=True)
            return (f"every {f['metric']} judgment of {f['judge_run_id']} failed ({f['n_failed']}; first error: "
                    f"{(f['first_error'] or '?')[:160]})",
                    f"finrag judge --answer-run {f['answer_run_id']} --metrics {f['metric']}  (once the endpoint "
                    "answers; failed judgments are retried)")
        if what == "agreement":
            return ("no judge run judged an answer run that has human labels",
                    "finrag import-human-labels FILE && finrag judge --answer-run LABELLED_RUN")
    if what == "comparison":
        comparable = scope.filter((pl.col("n_retrieval_runs") > 1) | (pl.col("n_answer_runs") > 1)
                                  | (pl.col("n_judge_runs") > 1))
        if comparable.is_empty():
            return (f"no dataset of {names} has two runs of one kind to compare",
                    f"finrag retrieve --retriever dense --dataset {first}  (a second run beside an existing one)")
    if what == "costs":
        costs = llm_costs(home)
        if costs is None or costs.is_empty():
            return ("no LLM call is in the ledger (no answer, judge, HyDE or QA-generation run yet)",
                    f"finrag answer --closed-book --dataset {first}")
    if what == "qa_generation":
        runs = qa_generation_runs(home)
        if runs is None or runs.is_empty():
            return ("no QA-generation run", f"finrag generate-qa --dataset {first}")
    if what == "sweeps":
        found_sweeps = sweeps(home)
        if found_sweeps is None or found_sweeps.is_empty():
            return ("no sweep has scored runs (a sweep runs a grid of configurations: python_jobs/sweeps/grid.py)",
                    "finrag sweep GRID.yaml  then  finrag build")
    manifest = export_manifest(home)
    built = f" (built {manifest['built_at'][:19]})" if manifest else ""
    return (f"the published marts{built} hold nothing for this selection: anything landed since needs a build",
            "finrag build")

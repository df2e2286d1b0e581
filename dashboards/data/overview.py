"""The overview page's data (views/overview.py): the home's landing validations and every run."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import polars as pl

from dashboards.data.published import query


def landing_validations(home: Path) -> dict[str, Any]:
    """The home's stored landing validations (Great Expectations results, python_jobs/validation/results.py): counts of
    passed and failed, the latest failed ones, and whether the Data Docs index exists."""
    from python_jobs.core.config import data_docs_dir
    from python_jobs.validation.results import stored_results

    results = stored_results(home)
    failed = [r for r in results if not r["success"]]
    return {"n": len(results), "passed": len(results) - len(failed), "failed": len(failed),
            "latest_failed": [f"{r['suite']} {r['run_name']}" for r in failed[-3:]][::-1],
            "docs_index": (data_docs_dir(home) / "index.html").exists()}


def all_runs(home: Path) -> pl.DataFrame | None:
    """Every run, newest first: kind, run id, dataset, label, created_at (dim_runs; what `finrag ls` prints)."""
    return query(home, """
        select kind, run_id, dataset, label, created_at
        from dim_runs
        order by created_at desc nulls last, run_id
    """, marts=["dim_runs"])

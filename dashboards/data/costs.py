"""The costs page's data (views/costs.py): mart_llm_costs."""

from __future__ import annotations

from pathlib import Path

import polars as pl

from dashboards.data.published import query


def llm_costs(home: Path) -> pl.DataFrame | None:
    """mart_llm_costs: per job run x purpose x model, calls, failures, retries, tokens, latency p50 / p95 and cost,
    newest job first."""
    return query(home, """
        select * from mart_llm_costs order by last_call_at desc, job_run_id, purpose, model
    """, marts=["mart_llm_costs"])

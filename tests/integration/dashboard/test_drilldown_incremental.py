"""mart_drilldown_results is incremental by run (issue 58): a build recomputes the retrieval runs whose version
changed, which includes the chunks answer runs over the run put into prompts (in_prompt), and no other run."""

from __future__ import annotations

import json
from pathlib import Path

from python_jobs.core.lake import Lake
from support.cli import MODELS_ONLY, dbt_build
from support.dashboard_home import DashHome
from support.shared_home import copy_home
from support.warehouse import warehouse_query

ROWS = """select * exclude (run_version, in_prompt), in_prompt from mart_drilldown_results
          order by run_id, question_id, result_position"""
VERSIONS = """select run_id, min(run_version), count(distinct run_version), count(*) filter (where in_prompt)
              from mart_drilldown_results group by run_id order by run_id"""


def published_runs(home: Path) -> dict[str, str]:
    manifest = json.loads((home / "exports" / "marts" / "_manifest.json").read_text())
    entry = next(m for m in manifest["models"] if m["name"] == "mart_drilldown_results")
    return {run["run_id"]: run["run_version"] for run in entry["runs"]}


def test_dropping_an_answer_run_recomputes_the_run_it_answered_over(dash: DashHome, tmp_path: Path) -> None:
    home = copy_home(dash.home, tmp_path / "home")
    rows, versions = warehouse_query(home, ROWS), warehouse_query(home, VERSIONS)
    bm25 = dash.facts["bm25"]
    # the RAG run answered from bm25's top 3: its chunks are marked, and only bm25's; one version per run
    assert [run for run, _, _, in_prompt in versions if in_prompt] == [bm25]
    assert len(versions) >= 5 and {n for _, _, n, _ in versions} == {1}

    assert Lake(home).drop_partition("answers", dash.facts["rag"])
    # the staging view too: the copy's views still read the shared home's lake
    dbt_build(home, "--select", "stg_lake__answers", "mart_drilldown_prompt_chunks", "mart_drilldown_results",
              *MODELS_ONLY)

    # the same rows, no chunk in a prompt any more; bm25 has a new version, every other run keeps its own
    assert warehouse_query(home, ROWS) == [(*row[:-1], False) for row in rows]
    after = warehouse_query(home, VERSIONS)
    before = {run: version for run, version, _, _ in versions}
    assert [run for run, version, _, _ in after if version != before[run]] == [bm25]
    # published one file per run (a build then writes the files of the runs it recomputed only)
    assert published_runs(home) == {run: version for run, version, _, _ in after}

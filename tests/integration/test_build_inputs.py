"""What an incremental model recomputes is derived from what it reads (macros/retrieval/retrieval_versions.sql
code_fingerprint): one test per kind of input - a var the marts read, a macro, a seed row, a registered Python
function - each changed on a built home, and the next plain `dbt build` recomputes exactly the runs of the models
the change reaches, and no other. Real dbt on a copy of the project (the change is made there, never in the
checkout) and a copy of the dashboard suites' home (a synthetic corpus with a bm25 run and its Oracle-Page
counterpart); a run counts as recomputed when its run_version in a model changed."""

from __future__ import annotations

import re
import shutil
from collections.abc import Callable
from pathlib import Path

import pytest

from support.cli import MODELS_ONLY
from support.dashboard_home import dashboard_home
from support.project_copy import copy_project, plain_dbt_build
from support.warehouse import warehouse_query

pytestmark = pytest.mark.slow

# the run-versioned incremental models (a run_version column), read from the warehouse
VERSIONED = ("int_retrieval_depths", "int_retrieval_hits", "fct_retrieval_question_scores",
             "fct_retrieval_results_judged", "fct_retrieval_evidence_overlap", "mart_retrieval_leaderboard",
             "mart_retrieval_by_slice", "fct_question_metric_scores")
# what is checked is which runs each model recomputes: the builds here leave out the data and unit tests
# (MODELS_ONLY), which neither read nor change a run_version


def versions(home: Path) -> dict[tuple[str, str], str]:
    out: dict[tuple[str, str], str] = {}
    for model in VERSIONED:
        for run_id, version in warehouse_query(home, f"select distinct run_id, run_version from {model} "
                                                     "where run_version is not null"):
            out[(model, run_id)] = version
    return out


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path, dict[tuple[str, str], str], list[str]]:
    """A project copy, and a home built by it (from the dashboard home, built by the checkout)."""
    dash = dashboard_home(tmp_path_factory)
    root = tmp_path_factory.mktemp("build_inputs")
    project = copy_project(root / "project")
    home = root / "home"
    shutil.copytree(dash.home, home, symlinks=True)
    before = versions(home)
    plain_dbt_build(project, home, *MODELS_ONLY)
    after = versions(home)
    # the copy is the same code: nothing is recomputed, and every versioned model holds both runs
    assert after == before
    runs = sorted({run for _, run in after})
    # the home's retrieval runs: bm25, its oracle_page variant and the sweep's
    landed = sorted(r for (r,) in warehouse_query(home, "select distinct run_id from stg_lake__retrieval_runs"))
    assert runs == landed and {dash.facts["bm25"], dash.facts["oracle"]} <= set(runs) and len(runs) > 2
    assert {model for model, _ in after} == set(VERSIONED)
    return project, home, after, runs


def edit(path: Path, old: str, new: str) -> None:
    text = path.read_text()
    assert old in text, f"{old!r} not in {path}"
    path.write_text(text.replace(old, new, 1))


def change_var(project: Path) -> None:
    edit(project / "dbt_project.yml", "retrieval_exclude_without_content: [doc_rec, page_rec]",
         "retrieval_exclude_without_content: []")


def change_macro(project: Path) -> None:
    # the long form of the retrieval means: the leaderboard and the slices call it
    path = project / "macros" / "retrieval" / "retrieval_means.sql"
    text = path.read_text()
    path.write_text(re.sub(r"(\{% macro retrieval_unpivot_means\([^)]*\) %\})", r"\1{#- changed -#}", text,
                           count=1))


def change_seed_row(project: Path) -> None:
    # one task's English label in the OmniEval task seed, which only the slices join
    path = project / "seeds" / "tasks.csv"
    lines = path.read_text().splitlines()
    lines[1] = lines[1] + " "
    path.write_text("\n".join(lines) + "\n")


def change_function(project: Path) -> None:
    # the body of ROUGE-L (a registered text metric): only the evidence overlap among the retrieval models calls it,
    # and fct_question_metric_scores reads the answers' ROUGE-L (its code reaches the function)
    edit(project / "python_jobs" / "stats" / "text_metrics.py", "def rouge_l_f(", "def rouge_l_f(  # changed\n")


CASES: dict[str, tuple[Callable[[Path], None], set[str]]] = {
    "var": (change_var, {"mart_retrieval_leaderboard", "mart_retrieval_by_slice", "fct_question_metric_scores"}),
    "macro": (change_macro, {"mart_retrieval_leaderboard", "mart_retrieval_by_slice"}),
    "seed_row": (change_seed_row, {"mart_retrieval_by_slice"}),
    "registered_function": (change_function, {"fct_retrieval_evidence_overlap", "fct_question_metric_scores"}),
}


def test_each_changed_input_recomputes_exactly_the_runs_it_reaches(built) -> None:
    """The four changes one after another on the one project copy and home: each build recomputes exactly what its
    change reaches (against the build before it). One copy, parsed once, where a copy per change re-parsed the whole
    project four times (113 s of the suite against ~60)."""
    project, home, before, runs = built
    for kind, (change, reached) in CASES.items():
        change(project)
        plain_dbt_build(project, home, *MODELS_ONLY)
        after = versions(home)
        assert set(after) == set(before), kind
        recomputed = {key for key in before if after[key] != before[key]}
        assert recomputed == {(model, run) for model in reached for run in runs}, kind
        before = after

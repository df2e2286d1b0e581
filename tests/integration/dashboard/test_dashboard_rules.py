"""The rules the run-vs-run page shows come from the marts, not from the dashboard: a question passes and a run wins
in the metric's own direction (hal: lower is better), and questions are keyed by dataset and id (two datasets may
share question ids). Over a small home of hand-worked scores (support/shared_ids_home.py)."""

from __future__ import annotations

import polars as pl
import pytest

from dashboards.data import run_vs_run
from support.shared_ids_home import JUDGED_IDS, QUESTION_IDS, SharedIdsHome, build, question_text


@pytest.fixture(scope="module")
def shared(tmp_path_factory: pytest.TempPathFactory) -> SharedIdsHome:
    return build(tmp_path_factory.mktemp("shared_ids") / "warehouse")


def by_question(frame: pl.DataFrame) -> dict[str, dict]:
    assert frame["question_id"].is_unique().all(), frame
    return {r["question_id"]: r for r in frame.iter_rows(named=True)}


def test_hal_passes_and_wins_when_lower(shared: SharedIdsHome) -> None:
    """hal: 1 = the answer hallucinates, 0 = it does not. j1 -> j2: h1 1 -> 0 is B passing (and winning), h3 0 -> 1
    is A passing (B losing), h2 0 -> 0 passes in both."""
    rows = by_question(run_vs_run.run_vs_run(shared.home, "j1", "j2", "hal", None, None))
    assert set(rows) == set(JUDGED_IDS)
    h1, h2, h3 = rows["h1"], rows["h2"], rows["h3"]
    assert (h1["value_a"], h1["value_b"], h1["diff"]) == (1.0, 0.0, -1.0)
    assert (h1["passes_in"], h1["flipped"]) == ("b only", True)
    assert (h3["passes_in"], h3["flipped"]) == ("a only", True)
    assert (h2["passes_in"], h2["flipped"]) == (None, False)
    assert (h1["outcome"], h2["outcome"], h3["outcome"]) == ("win", "tie", "loss")
    assert (h1["passes_a"], h1["passes_b"], h2["passes_a"], h2["passes_b"]) == (False, True, True, True)
    # the same pair the other way round: every outcome mirrored
    back = by_question(run_vs_run.run_vs_run(shared.home, "j2", "j1", "hal", None, None))
    assert (back["h1"]["passes_in"], back["h1"]["outcome"], back["h3"]["outcome"]) == ("a only", "loss", "win")
    # the per-question outcomes add up to the comparison's wins / ties / losses
    comparison = run_vs_run.run_comparison(shared.home, "j1", "j2", None, None).filter(pl.col("metric") == "hal")
    assert comparison.select("wins", "ties", "losses").row(0) == (1, 1, 1)


def test_questions_are_keyed_by_dataset_and_id(shared: SharedIdsHome) -> None:
    """shared_a and shared_b both have questions q1..q3: a pair of shared_a's runs lists each question once, with
    shared_a's text."""
    for run_a, run_b, dataset in (("a1", "a2", "shared_a"), ("b1", "b2", "shared_b")):
        rows = by_question(run_vs_run.run_vs_run(shared.home, run_a, run_b, "exact_match", None, None))
        assert set(rows) == set(QUESTION_IDS)
        assert {q: r["question"] for q, r in rows.items()} == {q: question_text(dataset, q) for q in QUESTION_IDS}
    a = by_question(run_vs_run.run_vs_run(shared.home, "a1", "a2", "exact_match", None, None))
    assert [(q, a[q]["value_a"], a[q]["value_b"], a[q]["passes_in"]) for q in QUESTION_IDS] == [
        ("q1", 1.0, 1.0, None), ("q2", 0.0, 1.0, "b only"), ("q3", 0.0, 0.0, None)]


"""Repeated judgments in Ragas and DeepEval files (sources/external_runs.py): the rows of one sample are one answer
judged several times, numbered by Ragas' `repeat` column or in file order; what does not fit is one InputError
naming the file, line and field, before anything lands. In process, on a fresh lake: the landing itself is replaced
by a recorder (the landing is the lake's, tested in tests/unit/core; the real files land in
tests/integration/test_ingest_external_tools.py)."""

from __future__ import annotations

import json
from pathlib import Path

import polars as pl
import pytest

from python_jobs.core.errors import InputError
from python_jobs.core.lake import Lake
from python_jobs.sources import external_runs
from python_jobs.sources.deepeval_runs import ingest_deepeval
from python_jobs.sources.external_runs import question_id_for
from python_jobs.sources.ragas_files import ingest_ragas

Q1, Q2 = "What was 3M's FY2018 capex?", "Did Adobe grow its revenue in FY2022?"


@pytest.fixture
def landed(monkeypatch: pytest.MonkeyPatch) -> dict[str, pl.DataFrame]:
    """What the ingest would land: table -> frame (the recorder stands in for Lake.land)."""
    frames: dict[str, pl.DataFrame] = {}
    monkeypatch.setattr(external_runs, "land", lambda lake, fs: frames.update({t: f for t, _, f in fs}))
    return frames


def scores(frames: dict[str, pl.DataFrame]) -> list[tuple[str, int, float | None, str]]:
    j = frames["judgments"].sort("question_id", "repeat")
    return [(q, r, s, st) for q, r, s, st in j.select("question_id", "repeat", "raw_score", "status").iter_rows()]


def jsonl(path: Path, rows: list[dict]) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return path


def ragas_row(question: str, response: str, score: float | None, **extra: object) -> dict:
    return {"user_input": question, "retrieved_contexts": ["ctx"], "response": response, "faithfulness": score,
            **extra}


def test_ragas_rows_of_one_sample_are_its_repeats(home: Path, tmp_path: Path, landed: dict) -> None:
    # numbered by the repeat column, in any order; the second question's repeat 2 failed (no score)
    numbered = jsonl(tmp_path / "numbered.jsonl", [
        ragas_row(Q1, "a1", 0.5, repeat=2), ragas_row(Q2, "a2", 1.0, repeat=1), ragas_row(Q1, "a1", 0.25, repeat=1),
        ragas_row(Q2, "a2", None, repeat=2)])
    ingest_ragas(Lake(home), numbered, "fin", None, "m", ())
    q1, q2 = question_id_for(Q1), question_id_for(Q2)
    assert sorted(landed["answers"]["question_id"]) == sorted([q1, q2])  # one answer per question
    assert scores(landed) == [(q1, 1, 0.25, "ok"), (q1, 2, 0.5, "ok"), (q2, 1, 1.0, "ok"), (q2, 2, None, "failed")]
    assert json.loads(landed["judge_runs"]["params"][0])["repeats"] == 2
    # a CSV without the column: file order
    csv = tmp_path / "ordered.csv"
    csv.write_text(f"user_input,response,faithfulness\n{Q1},a1,0.75\n{Q1},a1,0.5\n{Q1},a1,1.0\n")
    ingest_ragas(Lake(home), csv, "fin", None, "m", ())
    assert scores(landed) == [(q1, 1, 0.75, "ok"), (q1, 2, 0.5, "ok"), (q1, 3, 1.0, "ok")]
    # one row per sample: one repeat, as before
    single = jsonl(tmp_path / "single.jsonl", [ragas_row(Q1, "a1", 0.5), ragas_row(Q2, "a2", 1.0)])
    ingest_ragas(Lake(home), single, "fin", None, "m", ())
    assert scores(landed) == [(q1, 1, 0.5, "ok"), (q2, 1, 1.0, "ok")]
    assert "repeats" not in json.loads(landed["judge_runs"]["params"][0])


def deepeval_case(question: str, output: str, score: float) -> dict:
    return {"name": question, "input": question, "actualOutput": output, "retrievalContext": ["ctx"],
            "metricsData": [{"name": "Faithfulness", "threshold": 0.5, "success": score >= 0.5, "score": score}]}


def test_deepeval_repeated_test_cases_are_repeats(home: Path, tmp_path: Path, landed: dict) -> None:
    """`deepeval test run --repeat 2`: each test case twice in the one run, numbered in order."""
    run = tmp_path / "repeat_run.json"
    run.write_text(json.dumps({"testCases": [deepeval_case(Q1, "a1", 0.5), deepeval_case(Q2, "a2", 1.0),
                                             deepeval_case(Q1, "a1", 0.75), deepeval_case(Q2, "a2", 1.0)]}))
    ingest_deepeval(Lake(home), run, "fin", None, "m")
    q1, q2 = question_id_for(Q1), question_id_for(Q2)
    assert landed["answers"].height == 2
    assert scores(landed) == [(q1, 1, 0.5, "ok"), (q1, 2, 0.75, "ok"), (q2, 1, 1.0, "ok"), (q2, 2, 1.0, "ok")]


RAGAS_BAD = {
    # another answer to a question already answered: not a repeat
    "another_response": ([ragas_row(Q1, "a1", 0.5), ragas_row(Q2, "a2", 0.5), ragas_row(Q1, "other", 0.5)],
                         3, "response", "asked twice in one run with another response (first at line 1)"),
    # repeat 2 of a question repeat 1 does not hold
    "no_repeat_1": ([ragas_row(Q1, "a1", 0.5, repeat=1), ragas_row(Q1, "a1", 0.5, repeat=2),
                     ragas_row(Q2, "a2", 0.5, repeat=2)],
                    3, "repeat", "repeat 2 names question"),
    # a question with fewer repeats than the others (file order): named at its first row
    "fewer_repeats": ([ragas_row(Q1, "a1", 0.5), ragas_row(Q2, "a2", 0.5), ragas_row(Q1, "a1", 0.5)],
                      2, "user_input", "has repeats 1, not 2: every question of a run has the same repeats, 1..2"),
    "repeat_twice": ([ragas_row(Q1, "a1", 0.5, repeat=1), ragas_row(Q1, "a1", 0.5, repeat=1)],
                     2, "repeat", "repeat 1 of question"),
    "numbered_in_part": ([ragas_row(Q1, "a1", 0.5, repeat=1), ragas_row(Q1, "a1", 0.5)],
                         2, "repeat", "this sample has no repeat number"),
    "repeat_zero": ([ragas_row(Q1, "a1", 0.5, repeat=0)], 1, "repeat", "a repeat is a whole number from 1"),
}


@pytest.mark.parametrize("case", list(RAGAS_BAD))
def test_ragas_repeats_that_do_not_fit_name_file_line_field(home: Path, tmp_path: Path, landed: dict,
                                                            case: str) -> None:
    rows, line, field, message = RAGAS_BAD[case]
    path = jsonl(tmp_path / f"{case}.jsonl", rows)
    with pytest.raises(InputError) as err:
        ingest_ragas(Lake(home), path, "fin", None, "m", ())
    assert (err.value.file, err.value.line, err.value.field) == (str(path), line, field)
    assert message in err.value.detail
    assert landed == {} and Lake(home).partitions("judgments") == []


def test_deepeval_repeats_that_do_not_fit_name_the_test_case(home: Path, tmp_path: Path, landed: dict) -> None:
    run = tmp_path / "bad_run.json"
    # Q2 was evaluated once, Q1 twice
    run.write_text(json.dumps({"testCases": [deepeval_case(Q1, "a1", 0.5), deepeval_case(Q2, "a2", 1.0),
                                             deepeval_case(Q1, "a1", 0.75)]}))
    with pytest.raises(InputError) as err:
        ingest_deepeval(Lake(home), run, "fin", None, "m")
    assert (err.value.line, err.value.field) == (1, "testCases[1].input")
    assert "has repeats 1, not 2" in err.value.detail and "(repeat 2 is at testCases[2])" in err.value.detail
    run.write_text(json.dumps({"testCases": [deepeval_case(Q1, "a1", 0.5), deepeval_case(Q1, "a2", 0.75)]}))
    with pytest.raises(InputError) as err:
        ingest_deepeval(Lake(home), run, "fin", None, "m")
    assert (err.value.line, err.value.field) == (1, "testCases[1].actualOutput")
    assert "another actualOutput (first at testCases[0])" in err.value.detail
    assert landed == {} and Lake(home).partitions("judgments") == []

"""`finrag ingest financebench-answers` on the 16 real FinanceBench results files (2,400 human-labelled answers)."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

import pytest

from python_jobs.core.lake import Lake
from support.answers_homes import questions_home
from support.cli import dbt_build
from support.shared_home import copy_home
from support.warehouse import warehouse_query


def test_all_sixteen_files(home: Path, finrag, shared_data: Path) -> None:
    results = shared_data / "financebench" / "results"
    files = sorted(results.glob("*.jsonl"))
    assert len(files) == 16
    out = finrag("ingest", "financebench-answers", str(results))
    assert "16 answer runs, 2400 answers, 2400 labels" in out.stderr
    lake = Lake(home)
    runs, answers, labels = lake.read("generation_runs"), lake.read("answers"), lake.read("human_labels")
    assert (runs.height, answers.height, labels.height) == (16, 2400, 2400)
    assert sorted(runs["run_id"].to_list()) == [f.stem for f in files]
    # labels and their scores on the answer-file guideline's correctness scale, as the files have them
    expected = Counter(json.loads(ln)["label"] for f in files for ln in f.read_text().splitlines() if ln.strip())
    assert Counter(labels["label"].to_list()) == expected == {"Correct Answer": 1135, "Refusal": 737,
                                                              "Incorrect Answer": 528}
    score = {r["label"]: r["raw_score"] for r in labels.iter_rows(named=True)}
    assert score == {"Correct Answer": 2.0, "Incorrect Answer": -1.0, "Refusal": 0.0}
    assert set(labels["label_set"]) == {"financebench_human"} and set(labels["metric"]) == {"correctness"}
    assert set(labels["annotator"]) == {"financebench"}

    run = runs.filter(runs["run_id"] == "gpt-4_oracle").row(0, named=True)
    assert (run["model"], run["eval_mode"], run["dataset"], run["retrieval_run_id"]) == (
        "gpt-4", "oracle", "financebench", None)
    assert json.loads(run["params"]) | {"sha256": None} == {"temp": 0.01, "source_file": "gpt-4_oracle.jsonl",
                                                           "sha256": None}
    first = json.loads((results / "gpt-4_oracle.jsonl").read_text().splitlines()[0])
    a = answers.filter((answers["run_id"] == "gpt-4_oracle") & (answers["question_id"] == first["financebench_id"]))
    assert a["answer"].to_list() == [first["model_answer"]]
    # one real answer is a bare number (not a string): kept, as text
    odd = [(f.stem, r) for f in files for r in map(json.loads, f.read_text().splitlines()) if
           not isinstance(r["model_answer"], str)]
    assert len(odd) == 1
    stem, r = odd[0]
    got = answers.filter((answers["run_id"] == stem) & (answers["question_id"] == r["financebench_id"]))
    assert got["answer"].to_list() == [str(r["model_answer"])]

    # again: nothing changes; one file again: its labels are replaced, the other 15 runs' labels stay
    finrag("ingest", "financebench-answers", str(results))
    finrag("ingest", "financebench-answers", str(results / "gpt-4_oracle.jsonl"))
    lake = Lake(home)
    assert (lake.read("generation_runs").height, lake.read("answers").height, lake.read("human_labels").height) == (
        16, 2400, 2400)

    # the staging models and their data tests over the landed answer tables
    dbt_build(home, "--select", "stg_lake__answers", "stg_lake__human_labels", "stg_lake__generation_runs")
    assert warehouse_query(home, "select count(*) from stg_lake__human_labels")[0][0] == 2400


def test_answers_checked_against_ingested_questions(home: Path, finrag, shared_data: Path, tmp_path: Path,
                                                   tmp_path_factory: pytest.TempPathFactory) -> None:
    """With the FinanceBench questions in the lake (a copy of the session's shared ingest, support/answers_homes.py),
    an answer to an unknown question is an error naming it."""
    home.rmdir()
    copy_home(questions_home(tmp_path_factory), home)
    lines = (shared_data / "financebench" / "results" / "gpt-4_oracle.jsonl").read_text().splitlines()
    bad = json.loads(lines[1]) | {"financebench_id": "financebench_id_99999"}
    f = tmp_path / "gpt-4_oracle.jsonl"
    f.write_text("\n".join([lines[0], json.dumps(bad), *lines[2:]]) + "\n")
    proc = finrag("ingest", "financebench-answers", str(f), check=False)
    assert proc.returncode == 2
    assert f"file {f}, line 2, field 'financebench_id'" in proc.stderr and "financebench_id_99999" in proc.stderr
    assert Lake(home).partitions("answers") == []
    finrag("ingest", "financebench-answers", str(shared_data / "financebench" / "results"))
    assert Lake(home).read("answers").height == 2400

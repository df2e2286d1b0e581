"""TREC files larger than a slice land in question-aligned slices (python_jobs/sources/trec.py `_trec_slices`,
python_jobs/core/lake.py `Slices`): the same rows as one slice, every check still exact, all or nothing. The slice
size is forced small with FINRAG_LANDING_SLICE_ROWS, so small files take the sliced path. The refusal tests start
from one good sliced landing made once per module (`landed`), each on its own copy."""

from __future__ import annotations

import hashlib
import os
import random
import signal
import subprocess
import sys
import time
from pathlib import Path

import duckdb
import polars as pl
import pytest

from python_jobs.core.lake import Lake
from python_jobs.validation.results import stored_results
from support.cli import run_finrag
from support.paths import PROJECT
from support.shared_home import copy_home

SMALL = {"FINRAG_LANDING_SLICE_ROWS": "60"}


def run_lines(n_questions: int = 40, n_results: int = 10, seed: int = 7) -> list[str]:
    """A run whose lines are NOT grouped by question (shuffled), scores falling with the rank within a question."""
    lines = [f"q{q} Q0 d{(q * 31 + r * 7) % 500} {r + 1} {10 - r * 0.5:.2f} tagA"
             for q in range(n_questions) for r in range(n_results)]
    random.Random(seed).shuffle(lines)
    return lines


def write(path: Path, lines: list[str]) -> Path:
    path.write_text("".join(x + "\n" for x in lines))
    return path


def parts(home: Path, table: str, partition: str) -> list[str]:
    return sorted(p.name for p in (home / "lake" / table / partition).glob("*.parquet"))


def snapshot(home: Path) -> dict[str, str]:
    lake = home / "lake"
    return {str(p.relative_to(lake)): hashlib.sha256(p.read_bytes()).hexdigest()
            for p in sorted(lake.glob("*/*/*.parquet")) if "__empty__" not in str(p)}


def no_leftovers(home: Path) -> None:
    for sub in ("lake/_staging", "lake/_journal", "landing_work"):
        d = home / sub
        assert not d.exists() or list(d.iterdir()) == [], sub


def test_a_run_in_slices_lands_the_rows_of_one_slice(home: Path, tmp_path: Path) -> None:
    run = write(tmp_path / "run.trec", run_lines())
    qrels = write(tmp_path / "qrels.trec", [f"q{q} 0 d{(q * 31) % 500} 1" for q in range(40)]
                  + [f"q{q} 0 d{(q * 31 + 7) % 500} 0" for q in range(40)])
    whole = tmp_path / "whole"
    whole.mkdir()
    for h, env in ((whole, {}), (home, SMALL)):
        run_finrag(h, "ingest", "trec-qrels", str(qrels), "--dataset", "ds", env=env)
        run_finrag(h, "ingest", "trec-run", str(run), "--dataset", "ds", "--run-id", "R", env=env)
    assert parts(whole, "retrieval_results", "run_id=R") == ["part-0.parquet"]
    sliced = parts(home, "retrieval_results", "run_id=R")
    assert len(sliced) >= 5 and len(parts(home, "evidence", "load_id=ds")) >= 1
    assert parts(home, "retrieval_runs", "run_id=R") == ["part-0.parquet"]
    for table in ("retrieval_results", "retrieval_runs", "evidence"):
        a, b = (Lake(h).read(table).drop("created_at") for h in (whole, home))
        assert a.height == b.height > 0
        assert a.sort(a.columns).equals(b.sort(b.columns)), table
    # one created_at for the whole landing, every part file read by the lake and by a DuckDB glob (dbt's sources)
    results = Lake(home).read_partition("retrieval_results", "R")
    assert results.height == 400 and results["created_at"].n_unique() == 1
    glob = home / "lake" / "retrieval_results" / "*" / "*.parquet"
    assert duckdb.sql(f"select count(*) from read_parquet('{glob}', union_by_name = true) "
                      "where run_id = 'R'").fetchall() == [(400,)]
    # rank is the line order within the question (its lines are spread over the file), whichever slice it went to
    ranks = results.sort("question_id", "rank").group_by("question_id", maintain_order=True).agg("chunk_id")
    expected: dict[str, list[str]] = {}
    for line in run.read_text().splitlines():
        expected.setdefault(line.split()[0], []).append(line.split()[2])
    assert dict(ranks.iter_rows()) == expected
    # one Great Expectations validation per slice, all passed
    runs = [r for r in stored_results(home) if r["suite"] == "retrieval_results"]
    assert len(runs) == len(sliced) and all(r["success"] for r in runs)
    assert all(r["run_name"].startswith("run_id=R.slice-") for r in runs)
    no_leftovers(home)


@pytest.fixture(scope="module")
def landed(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A home with `run_lines()` landed in slices as run R of dataset ds; tests copy it before they write."""
    root = tmp_path_factory.mktemp("sliced")
    home = root / "warehouse"
    home.mkdir()
    run_finrag(home, "ingest", "trec-run", str(write(root / "good.trec", run_lines())), "--dataset", "ds",
               "--run-id", "R", env=SMALL)
    return home


def test_a_duplicate_at_the_files_far_ends_is_refused_naming_both_lines(landed: Path, tmp_path: Path) -> None:
    lines = run_lines()
    home = copy_home(landed, tmp_path / "warehouse")
    assert len(parts(home, "retrieval_results", "run_id=R")) >= 5
    before = snapshot(home)
    topic, q0, docno, *_ = lines[0].split()
    dup = write(tmp_path / "dup.trec", [*lines, f"{topic} {q0} {docno} 99 0.01 tagA"])
    proc = run_finrag(home, "ingest", "trec-run", str(dup), "--dataset", "ds", "--run-id", "R", check=False,
                      env=SMALL)
    assert proc.returncode == 2, proc.stderr
    assert (f"error: file {dup}, line {len(lines) + 1}, field 'docno': duplicate (topic, docno) "
            f"('{topic}', '{docno}') (first on line 1)") in proc.stderr
    assert snapshot(home) == before
    no_leftovers(home)


def test_a_bad_line_in_a_later_slice_lands_nothing(landed: Path, tmp_path: Path) -> None:
    lines = run_lines()
    home = copy_home(landed, tmp_path / "warehouse")
    assert len(parts(home, "retrieval_results", "run_id=R")) >= 5
    before = snapshot(home)
    n = len(lines)
    topic, q0, docno, rank, _, tag = lines[-3].split()
    cases = [
        # a line the format refuses, in the file's last block
        ([*lines[:-3], f"{topic} {q0} {docno} {rank} high {tag}", *lines[-2:]], n - 2, "score"),
        # a second run tag, on the last line
        ([*lines[:-1], " ".join([*lines[-1].split()[:5], "tagB"])], n, "tag"),
    ]
    for i, (bad, line, field) in enumerate(cases):
        f = write(tmp_path / f"bad{i}.trec", bad)
        for run_id in ("R", "NEW"):  # replacing a landed run, or a new one
            proc = run_finrag(home, "ingest", "trec-run", str(f), "--dataset", "ds", "--run-id", run_id,
                              check=False, env=SMALL)
            assert proc.returncode == 2, proc.stderr
            assert f"error: file {f}, line {line}, field '{field}'" in proc.stderr, proc.stderr
            assert snapshot(home) == before
            no_leftovers(home)


def test_a_question_of_another_dataset_in_a_later_slice_lands_nothing(home: Path, tmp_path: Path) -> None:
    """A rule only the landing's validation (Great Expectations, one slice at a time) checks: the topic must be a
    question of the dataset once it has questions. The slices before the bad one validated and were staged: gone."""
    questions = [f'{{"_id": "q{q}", "text": "question {q}"}}' for q in range(40)]
    beir = tmp_path / "beir"
    beir.mkdir()
    write(beir / "queries.jsonl", questions)
    write(beir / "corpus.jsonl", [f'{{"_id": "d{d}", "title": "", "text": "doc {d}"}}' for d in range(500)])
    write(beir / "qrels.tsv", ["query-id\tcorpus-id\tscore", *(f"q{q}\td{(q * 31) % 500}\t1" for q in range(40))])
    run_finrag(home, "ingest", "beir", "--dir", str(beir), "--dataset", "ds")
    before = snapshot(home)
    lines = run_lines()
    bad = write(tmp_path / "bad.trec", [*lines, "qOTHER Q0 d1 1 1.0 tagA"])
    proc = run_finrag(home, "ingest", "trec-run", str(bad), "--dataset", "ds", "--run-id", "R", check=False,
                      env=SMALL)
    assert proc.returncode == 2, proc.stderr
    assert f"error: file {bad}, line {len(lines) + 1}, field 'topic'" in proc.stderr, proc.stderr
    assert "unknown question 'qOTHER'" in proc.stderr
    assert snapshot(home) == before
    no_leftovers(home)
    # the failed slice's result is stored with the passed ones before it
    results = [r for r in stored_results(home) if r["suite"] == "retrieval_results"]
    assert len(results) >= 2 and [r["success"] for r in results] == [True] * (len(results) - 1) + [False]
    assert all(r["run_name"].startswith("run_id=R.slice-") for r in results)


def test_a_killed_sliced_ingest_leaves_no_partial_partition(home: Path, tmp_path: Path) -> None:
    """`finrag ingest trec-run` killed once it has staged some of a run's slices: the run's old partition stays
    whole, the next job removes the staged slices and the killed job's work dir."""
    lines = run_lines(n_questions=300, n_results=10)
    good = write(tmp_path / "old.trec", lines[:600])
    run_finrag(home, "ingest", "trec-run", str(good), "--dataset", "ds", "--run-id", "R")
    before = snapshot(home)
    new = write(tmp_path / "new.trec", lines)
    staged = home / "lake" / "_staging"
    for delay in (0.0, 0.2):
        proc = subprocess.Popen([sys.executable, "-m", "python_jobs.cli", "--home", str(home), "ingest", "trec-run",
                                 str(new), "--dataset", "ds", "--run-id", "R"], cwd=PROJECT,
                                env={**os.environ, "FINRAG_HOME": str(home),
                                     "FINRAG_LANDING_SLICE_ROWS": "20"},
                                stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline and proc.poll() is None:
            if list(staged.glob("*/retrieval_results/*/part-3.parquet")):  # slices are being staged
                break
            time.sleep(0.01)
        assert proc.poll() is None, "the ingest ended before it was killed"
        time.sleep(delay)
        proc.send_signal(signal.SIGKILL)
        proc.wait()
        assert snapshot(home) == before
        lake = Lake(home)  # the next job: recovers the lake, removes the dead job's work dir
        assert lake.read_partition("retrieval_results", "R").height == 600
        no_leftovers(home)
    assert pl.read_parquet(home / "lake" / "retrieval_results" / "run_id=R" / "part-0.parquet").height == 600

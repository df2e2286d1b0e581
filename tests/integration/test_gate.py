"""`finrag gate` end to end, on one home built once for the module: FinanceBench's 150 questions and document list
(the shared questions home, no PDFs) with three TREC runs whose docnos are documents - `base` (each question's gold
document at rank 1 or 2), `same` (base's ranking under another id) and `regress` (base, but in the
novel-generated questions 10 of the 50 gold documents at rank 1 move to rank 3: nDCG@10 0.1 worse on that slice,
0.033 on the whole set). `regress` lands, builds and is gated through docs/ci_gate.sh, the docs' CI script, as CI
runs it; the other tests gate the built home again (read-only) and check exit codes 0 / 1 / 2, the JUnit XML, the
baseline `best` and that the whole-set interval is `finrag compare`'s."""

from __future__ import annotations

import hashlib
import json
import os
import subprocess
from pathlib import Path

import polars as pl
import pytest
from junitparser import Failure, JUnitXml

from support.answers_homes import questions_home
from support.cli import run_finrag
from support.paths import PROJECT, SHARED_DATA
from support.shared_home import copy_home
from support.trec_runs import write_trec_runs

DATASET = "financebench"
SLICE = "novel-generated"
GATE = """\
dataset: financebench
kind: retrieval
min_questions: 10
slices: [question_type, doc_type, company]
metrics:
  - {metric: ndcg, granularity: doc, k: 10, margin: 0.01}
  - {metric: recall, granularity: doc, k: 10, margin: 0.02}
"""


def write_runs(directory: Path) -> dict[str, Path]:
    """The three run files (see the module docstring)."""
    questions = pl.read_ndjson(SHARED_DATA / "financebench" / "data" / "financebench_open_source.jsonl")
    docs = sorted(set(questions["doc_name"]))
    moved = 0
    lines: dict[str, list[str]] = {"base": [], "same": [], "regress": []}
    for qid, gold, qtype in questions.sort("financebench_id").select("financebench_id", "doc_name",
                                                                      "question_type").iter_rows():
        rank = 1 + hashlib.sha256(qid.encode()).digest()[0] % 2
        others = [d for d in docs if d != gold][:9]
        base = [*others[:rank - 1], gold, *others[rank - 1:]]
        regress = base
        if qtype == SLICE and rank == 1 and moved < 10:
            regress, moved = [*others[:2], gold, *others[2:]], moved + 1
        for name, ranking in (("base", base), ("same", base), ("regress", regress)):
            lines[name] += [f"{qid} Q0 {d} {i + 1} {10 - i} {name}" for i, d in enumerate(ranking)]
    assert moved == 10
    return write_trec_runs(directory, lines)


@pytest.fixture(scope="module")
def gated(tmp_path_factory: pytest.TempPathFactory) -> dict:
    root = tmp_path_factory.mktemp("gate")
    home = copy_home(questions_home(tmp_path_factory), root / "warehouse")
    runs = write_runs(root)
    for name in ("base", "same"):
        run_finrag(home, "ingest", "trec-run", str(runs[name]), "--dataset", DATASET, "--run-id", name, "--quiet")
    gate = root / "gate.yaml"
    gate.write_text(GATE)
    env = {**os.environ, "FINRAG_HOME": str(home), "FINRAG": str(PROJECT / ".venv" / "bin" / "finrag"),
           "DATASET": DATASET, "CANDIDATE": "regress", "RUN_FILE": str(runs["regress"]), "GATE_FILE": str(gate),
           "BASELINE": "base", "BUILD_ARGS": "--exclude-resource-type test", "OUT_DIR": str(root / "report"),
           "TQDM_DISABLE": "1"}
    proc = subprocess.run(["bash", str(PROJECT / "docs" / "ci_gate.sh")], env=env, cwd=root, capture_output=True,
                          text=True, timeout=900)
    return {"home": home, "root": root, "gate": gate, "proc": proc, "report": root / "report"}


def gate(gated: dict, *args: str, gate_file: Path | None = None) -> subprocess.CompletedProcess[str]:
    return run_finrag(gated["home"], "gate", str(gate_file or gated["gate"]), *args, check=False)


def test_the_docs_script_fails_the_planted_regression_naming_its_slice(gated: dict) -> None:
    proc = gated["proc"]
    assert proc.returncode == 1, proc.stdout + proc.stderr
    failing = [line for line in proc.stdout.splitlines() if line.startswith("fail")]
    assert failing and all(f"question_type={SLICE}" in line for line in failing), proc.stdout
    assert "nDCG@10 (doc)" in failing[0]
    # the JUnit XML: one test case per metric x slice, the failure with difference, interval and adjusted p
    rows = json.loads(gate(gated, "--baseline", "base", "--candidate", "regress", "--format", "json").stdout)["rows"]
    (suite,) = list(JUnitXml.fromfile(str(gated["report"] / "gate.xml")))
    cases = list(suite)
    assert len(cases) == len(rows) == len({(c.classname, c.name) for c in cases})
    failures = [c for c in cases if any(isinstance(x, Failure) for x in c.result)]
    assert [c.name for c in failures] == [f"question_type={SLICE}"]
    message = failures[0].result[0].message
    assert "delta -0.1" in message and "interval [" in message and "adjusted p" in message
    assert (suite.failures, suite.tests) == (1, len(rows))
    markdown = (gated["report"] / "gate.md").read_text()
    assert markdown.startswith("### finrag gate: **FAIL**") and "Questions that regressed most" in markdown


def test_exit_codes(gated: dict, tmp_path: Path) -> None:
    passed = gate(gated, "--candidate", "same", "--baseline", "base")
    assert passed.returncode == 0 and passed.stdout.startswith("gate pass"), passed.stdout + passed.stderr
    # the baseline from the gate file: each metric's best run (base and same tie; the smaller id wins)
    best = tmp_path / "best.yaml"
    best.write_text(GATE + "baseline: best\n")
    failed = gate(gated, "--candidate", "regress", gate_file=best)
    assert failed.returncode == 1 and "against base " in failed.stdout, failed.stdout + failed.stderr
    missing = gate(gated, "--candidate", "nosuch", "--baseline", "base")
    assert missing.returncode == 2 and "field '--candidate'" in missing.stderr and "nosuch" in missing.stderr
    bad = tmp_path / "bad.yaml"
    for text, field in ((GATE.replace("ndcg", "ndgc"), "metrics[0].metric"),
                        (GATE.replace("margin: 0.01}", "margin: 1.5}"),
                         "metrics[0].margin"),
                        (GATE.replace("dataset: financebench", "dataset: tatqa"), "dataset"),
                        (GATE.replace("kind: retrieval", "kind: judge"), "kind"),
                        (GATE.replace("company]", "firm]"), "slices[2]")):
        bad.write_text(text)
        proc = gate(gated, "--candidate", "regress", "--baseline", "base", gate_file=bad)
        assert proc.returncode == 2 and f"file {bad}, field '{field}'" in proc.stderr, (field, proc.stderr)
    empty = tmp_path / "empty_home"
    empty.mkdir()
    unpublished = run_finrag(empty, "gate", str(gated["gate"]), "--candidate", "regress", check=False)
    assert unpublished.returncode == 2 and "error:" in unpublished.stderr


def test_the_whole_set_interval_is_finrag_compares(gated: dict) -> None:
    rows = json.loads(gate(gated, "--baseline", "base", "--candidate", "regress", "--format", "json").stdout)["rows"]
    whole = next(r for r in rows if r["metric"] == "ndcg" and r["slice"] == "all")
    compared = json.loads(run_finrag(gated["home"], "compare", "--run-a", "base", "--run-b", "regress", "--metric",
                                     "ndcg", "--granularity", "doc", "--k", "10", "--format", "json").stdout)[0]
    assert whole["n_questions"] == compared["n_questions"] == 150
    assert whole["delta"] == pytest.approx(compared["delta"], abs=1e-12)
    assert (whole["ci_low"], whole["ci_high"]) == pytest.approx((compared["ci_low"], compared["ci_high"]), abs=1e-9)

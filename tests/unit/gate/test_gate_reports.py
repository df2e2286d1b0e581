"""The gate's outputs on a fixed result (python_jobs/gate/reports.py): the Markdown comment against its snapshot
(tests/unit/gate/gate_summary.md; FINRAG_UPDATE_SNAPSHOTS=1 writes it again), the JUnit XML as pytest writes it (one
test case per metric x slice, failures with difference, interval and adjusted p, small slices skipped), and the gate
file's errors naming file and field."""

from __future__ import annotations

import os
from pathlib import Path

import numpy as np
import polars as pl
import pytest
from junitparser import Failure, JUnitXml, Skipped

from python_jobs.core.errors import InputError
from python_jobs.gate.evaluation import GateResult
from python_jobs.gate.reports import junit_xml, markdown, table
from python_jobs.gate.spec import parse_gate
from python_jobs.gate.verdicts import PAIRED_SCHEMA, gate_statistics, gate_verdict

SNAPSHOT = Path(__file__).with_name("gate_summary.md")
SETTINGS = {"resamples": 2000, "sign_flips": 1000, "seed": 11, "level": 0.95}


def result() -> GateResult:
    n = 60
    rng = np.random.default_rng(8)
    base = rng.uniform(0.35, 0.65, n)
    cand = base + rng.normal(0, 0.05, n)
    groups = np.array(["10-K"] * 40 + ["10-Q"] * 14 + ["8-K"] * 6)
    cand[groups == "10-Q"] -= 0.2
    ids = [f"q{i:03d}" for i in range(n)]
    rows = pl.DataFrame({"question_id": ids, "value_baseline": base, "value_candidate": cand, "g": groups})
    paired = (pl.concat([rows.with_columns(slice=pl.lit("all"), slice_value=pl.lit("all")),
                         rows.with_columns(slice=pl.lit("doc_type"), slice_value=pl.col("g"))])
              .with_columns(metric=pl.lit("ndcg"), granularity=pl.lit("doc"), k=pl.lit(10), baseline=pl.lit("base"),
                            higher_is_better=pl.lit(True), margin=pl.lit(0.02))
              .select(list(PAIRED_SCHEMA)).cast(PAIRED_SCHEMA))
    stats = gate_statistics(paired, SETTINGS, 0.05, 10).with_columns(label=pl.lit("nDCG@10 (doc)"))
    regressed = (rows.with_columns(delta=pl.col("value_candidate") - pl.col("value_baseline"))
                 .sort("delta", "question_id").head(3)
                 .select(pl.lit("nDCG@10 (doc)").alias("label"), "question_id",
                         pl.format("What is the revenue of {}?", "question_id").alias("question"),
                         "value_baseline", "value_candidate", "delta"))
    return GateResult("gate.yaml", "cand", "toy", "retrieval", ("base",), 0.05, 10, stats, regressed,
                      gate_verdict(stats))


def test_the_markdown_comment_matches_its_snapshot() -> None:
    text = markdown(result())
    if os.environ.get("FINRAG_UPDATE_SNAPSHOTS"):
        SNAPSHOT.write_text(text)
    assert text == SNAPSHOT.read_text()
    assert text.startswith("### finrag gate: **FAIL**")


def test_the_junit_xml_has_one_case_per_metric_and_slice() -> None:
    r = result()
    parsed = JUnitXml.fromstring(junit_xml(r).encode())
    assert isinstance(parsed, JUnitXml)  # <testsuites>
    (suite,) = list(parsed)
    cases = list(suite)
    assert [(c.classname, c.name) for c in cases] == [
        ("gate.nDCG@10 (doc)", name) for name in ("doc_type=10-Q", "all", "doc_type=10-K", "doc_type=8-K")]
    assert (suite.tests, suite.failures, suite.skipped) == (4, 1, 1)
    (failure,) = cases[0].result
    assert isinstance(failure, Failure) and "interval [" in failure.message and "adjusted p" in failure.message
    assert [type(x) for x in cases[3].result] == [Skipped] and cases[1].is_passed
    assert table(r).splitlines()[1].split()[:2] == ["verdict", "metric"]


@pytest.mark.parametrize(("text", "field", "message"), [
    ("metrics: []\n", "metrics", "at least 1 item"),
    ("metrics: [{metric: ndcg, margin: -0.1}]\n", "metrics[0].margin", "greater than or equal to 0"),
    ("metrics: [{metric: ndcg, margin: 0.1, cutoff: 3}]\n", "metrics[0].cutoff", "Extra inputs"),
    ("slices: [doc_type, firm]\nmetrics: [{metric: ndcg, margin: 0.1}]\n", "slices[1]", "unknown slice dimension"),
    ("alpha: 1.5\nmetrics: [{metric: ndcg, margin: 0.1}]\n", "alpha", "less than 1"),
    ("kind: answers\nmetrics: [{metric: ndcg, margin: 0.1}]\n", "kind", "retrieval"),
    ("- just a list\n", "metrics", "a mapping"),
])
def test_a_bad_gate_file_names_file_and_field(text: str, field: str, message: str) -> None:
    with pytest.raises(InputError) as caught:
        parse_gate(text, "gate.yaml")
    assert (caught.value.file, caught.value.field) == ("gate.yaml", field), caught.value
    assert message in caught.value.detail

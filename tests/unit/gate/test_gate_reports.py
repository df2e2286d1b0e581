"""The gate's outputs on a fixed result (python_jobs/gate/reports.py): the Markdown comment against its snapshot
(tests/unit/gate/gate_summary.md; FINRAG_UPDATE_SNAPSHOTS=1 writes it again), the JUnit XML as pytest writes it (one
test case per metric x slice, failures with difference, interval and adjusted p, small slices skipped), every output
on the metric's own scale (correctness, -1 to 2), the p-values and verdicts the same on either scale, and the gate
file's errors naming file and field."""

from __future__ import annotations

import json
import os
import re
from pathlib import Path

import numpy as np
import polars as pl
import pytest
from junitparser import Failure, JUnitXml, Skipped

from python_jobs.core.errors import InputError
from python_jobs.gate.evaluation import GateResult
from python_jobs.gate.reports import as_json, junit_xml, markdown, on_metric_scale, table
from python_jobs.gate.spec import parse_gate
from python_jobs.gate.verdicts import PAIRED_SCHEMA, gate_statistics, gate_verdict

SNAPSHOT = Path(__file__).with_name("gate_summary.md")
SETTINGS = {"resamples": 2000, "sign_flips": 1000, "seed": 11, "level": 0.95}


def scores() -> pl.DataFrame:
    """60 questions' normalised scores of two runs: 10-Q 0.2 worse, 8-K below min_questions."""
    n = 60
    rng = np.random.default_rng(8)
    base = rng.uniform(0.35, 0.65, n)
    cand = base + rng.normal(0, 0.05, n)
    groups = np.array(["10-K"] * 40 + ["10-Q"] * 14 + ["8-K"] * 6)
    cand[groups == "10-Q"] -= 0.2
    return pl.DataFrame({"question_id": [f"q{i:03d}" for i in range(n)], "value_baseline": base,
                         "value_candidate": cand, "g": groups})


def paired(rows: pl.DataFrame, metric: str, margin: float) -> pl.DataFrame:
    """`rows` paired as evaluation.py hands them to the statistics: the whole set and the doc_type slices."""
    retrieval = metric == "ndcg"
    return (pl.concat([rows.with_columns(slice=pl.lit("all"), slice_value=pl.lit("all")),
                       rows.with_columns(slice=pl.lit("doc_type"), slice_value=pl.col("g"))])
            .with_columns(metric=pl.lit(metric), granularity=pl.lit("doc" if retrieval else None, pl.String),
                          k=pl.lit(10 if retrieval else None, pl.Int64), baseline=pl.lit("base"),
                          higher_is_better=pl.lit(True), margin=pl.lit(margin))
            .select(list(PAIRED_SCHEMA)).cast(PAIRED_SCHEMA))


def result(metric: str = "ndcg", label: str = "nDCG@10 (doc)", scale: tuple[float, float] = (0.0, 1.0),
           margin: float = 0.02) -> GateResult:
    """A gate of one metric with `margin` on its own scale: normalised scores and margin go to the statistics, as
    python_jobs/gate/evaluation.py hands them over, and the frames carry the scale."""
    rows = scores()
    on_scale = {"scale_min": pl.lit(scale[0]), "scale_max": pl.lit(scale[1])}
    stats = (gate_statistics(paired(rows, metric, margin / (scale[1] - scale[0])), SETTINGS, 0.05, 10)
             .with_columns(label=pl.lit(label), **on_scale))
    regressed = (rows.with_columns(delta=pl.col("value_candidate") - pl.col("value_baseline"))
                 .sort("delta", "question_id").head(3)
                 .select(pl.lit(label).alias("label"), "question_id",
                         pl.format("What is the revenue of {}?", "question_id").alias("question"),
                         "value_baseline", "value_candidate", "delta", **on_scale))
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


# correctness as the registry scales it, -1 to 2: width 3
CORRECTNESS = {"metric": "correctness", "label": "Correctness", "scale": (-1.0, 2.0)}
NUMBER = r"([-+]?\d+\.\d+)"


def slice_name(row: dict) -> str:
    return "all" if row["slice"] == "all" else f"{row['slice']}={row['slice_value']}"


def expected_on_scale(r: GateResult) -> dict[str, dict]:
    """Per slice, the values a report prints on correctness' scale, from the statistics' normalised rows: scores
    -1 + 3 v, differences 3 d."""
    return {slice_name(row): {
        "baseline": -1 + 3 * row["mean_baseline"], "candidate": -1 + 3 * row["mean_candidate"],
        "delta": 3 * row["delta"], "margin": 3 * row["margin"],
        "interval": None if row["ci_low"] is None else (3 * row["ci_low"], 3 * row["ci_high"])}
        for row in r.rows.iter_rows(named=True)}


def assert_printed(printed: dict[str, str], want: dict) -> None:
    """Cells printed with 4 decimals against the expected values (the rounding: 5e-5)."""
    for key in ("baseline", "candidate", "delta", "margin"):
        assert float(printed[key]) == pytest.approx(want[key] if key != "margin" else -want[key], abs=5.1e-5), key
    if want["interval"] is None:
        assert printed["interval"] == "-"
    else:
        low, high = re.fullmatch(rf"\[{NUMBER}, {NUMBER}\]", printed["interval"]).groups()
        assert (float(low), float(high)) == pytest.approx(want["interval"], abs=5.1e-5)


def test_every_output_speaks_the_metrics_own_scale() -> None:
    """Correctness (-1..2) with margin 0.25 in the gate file: the statistics see 0.25 / 3 and normalised scores; the
    table, JUnit, Markdown and JSON show the margin 0.25 and every score, delta and interval on -1..2."""
    r = result(**CORRECTNESS, margin=0.25)
    want = expected_on_scale(r)
    assert r.rows["margin"].to_list() == pytest.approx([0.25 / 3] * 4)
    assert set(r.rows["verdict"]) == {"fail", "pass", "not tested"}
    columns = ("verdict", "metric", "slice", "test", "n", "baseline", "candidate", "delta", "interval", "margin",
               "p_holm")
    # the table: columns two spaces apart at least
    lines = table(r).splitlines()
    assert "scores on each metric's own scale" in lines[0]
    printed = [dict(zip(columns, re.split(r" {2,}", line), strict=False)) for line in lines[2:]]
    assert [p["slice"] for p in printed] == list(want) and all(p["margin"] == "-0.2500" for p in printed)
    for p in printed:
        assert_printed(p, want[p["slice"]])
    # the Markdown comment: the same table, and the regressed questions' scores on -1..2
    md = markdown(r).splitlines()
    cells = [line[2:-2].split(" | ") for line in md if line.startswith("| ") and "Correctness" in line]
    rows_md, regressed_md = [c for c in cells if len(c) == 12], [c for c in cells if len(c) == 6]
    assert [c[2] for c in rows_md] == list(want) and len(regressed_md) == 3
    for c in rows_md:
        assert_printed(dict(zip(columns, c, strict=False)), want[c[2]])
    for c, q in zip(regressed_md, r.regressed.iter_rows(named=True), strict=True):
        assert [float(x) for x in c[3:]] == pytest.approx(
            [-1 + 3 * q["value_baseline"], -1 + 3 * q["value_candidate"], 3 * q["delta"]], abs=5.1e-5)
    # the JUnit XML, read back: the failure's message and the others' system-out carry the same numbers
    (suite,) = list(JUnitXml.fromstring(junit_xml(r).encode()))
    pattern = (rf"delta {NUMBER} \(candidate {NUMBER} - baseline {NUMBER}\) on \d+ questions \(paired_t\), interval "
               rf"(\[{NUMBER}, {NUMBER}\]|\[-, -\]), margin {NUMBER} on the scale \[-1, 2\], adjusted p")
    seen = []
    for case in suite:
        results = list(case.result)
        if results and isinstance(results[0], Skipped):
            continue
        text = results[0].message if results else case.system_out
        found = re.search(pattern, text)
        assert found, text
        delta, candidate, baseline, interval, _, _, margin = found.groups()
        assert_printed({"delta": delta, "candidate": candidate, "baseline": baseline, "interval": interval,
                        "margin": margin}, want[case.name])
        seen.append(case.name)
    assert seen == [s for s in want if want[s]["interval"] is not None] and len(seen) == 3
    # JSON: full precision, the registry's scale beside each row; the p-values are the statistics' own
    data = json.loads(as_json(r))
    for row, stat in zip(data["rows"], r.rows.iter_rows(named=True), strict=True):
        w = want[slice_name(row)]
        assert row["margin"] == 0.25 and (row["scale_min"], row["scale_max"]) == (-1, 2)
        assert (row["mean_baseline"], row["mean_candidate"], row["delta"]) == pytest.approx(
            (w["baseline"], w["candidate"], w["delta"]), rel=1e-12)
        interval = (None, None) if w["interval"] is None else pytest.approx(w["interval"], rel=1e-12)
        assert (row["ci_low"], row["ci_high"]) == interval
        assert (row["p_value"], row["p_holm"], row["verdict"]) == (stat["p_value"], stat["p_holm"], stat["verdict"])
    assert [q["delta"] for q in data["regressed"]] == pytest.approx([3 * d for d in r.regressed["delta"]], rel=1e-12)


def test_a_linear_rescaling_keeps_p_values_and_verdicts() -> None:
    """The statistics run on correctness' own scale (-1 + 3 v, margin 0.06) give the p-values, verdicts and
    n_needed they give on the normalised scores (margin 0.02), and the very numbers on_metric_scale reports."""
    rows = scores()
    normalised = gate_statistics(paired(rows, "correctness", 0.02), SETTINGS, 0.05, 10)
    raw_rows = rows.with_columns((-1 + 3 * pl.col(c)).alias(c) for c in ("value_baseline", "value_candidate"))
    raw = gate_statistics(paired(raw_rows, "correctness", 0.06), SETTINGS, 0.05, 10)
    assert set(raw["verdict"]) == {"fail", "inconclusive", "pass", "not tested"}
    assert raw.select("slice_value", "verdict", "n_needed").equals(
        normalised.select("slice_value", "verdict", "n_needed"))
    reported = on_metric_scale(normalised.with_columns(scale_min=pl.lit(-1.0), scale_max=pl.lit(2.0)))
    tested = pl.col("verdict") != "not tested"
    for frame in (raw, normalised, reported):  # the one slice not tested has none of them
        untested = frame.filter(~tested).select("p_value", "p_holm", "ci_low", "ci_high")
        assert untested.height == 1 and untested.null_count().row(0) == (1, 1, 1, 1)
    for column in ("p_value", "p_holm"):
        assert raw.filter(tested)[column].to_list() == pytest.approx(normalised.filter(tested)[column].to_list(),
                                                                     rel=1e-9, abs=1e-300), column
    for column in ("mean_baseline", "mean_candidate", "delta", "ci_low", "ci_high", "margin"):
        assert reported.filter(tested)[column].to_list() == pytest.approx(raw.filter(tested)[column].to_list(),
                                                                          abs=1e-12), column

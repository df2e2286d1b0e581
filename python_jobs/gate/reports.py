"""What a CI system reads of a gate: the table (stdout, worst first), JUnit XML (one test case per metric x slice, as
pytest writes it: GitLab, Jenkins and GitHub's test reporters render it), a Markdown pull-request comment and JSON.
Every output speaks each metric's own scale, the one the gate file writes its margins on (`on_metric_scale`)."""

from __future__ import annotations

import json
import xml.etree.ElementTree as ET
from typing import Any

import polars as pl

from python_jobs.gate.evaluation import GateResult
from python_jobs.gate.spec import WHOLE_SET
from python_jobs.gate.verdicts import FAIL, INCONCLUSIVE, NOT_TESTED
from python_jobs.stats.unpaired_tests import UNPAIRED

HEADER = ("verdict", "metric", "slice", "test", "n", "baseline", "candidate", "delta", "interval", "margin", "p_holm",
          "note")
QUESTION_CHARS = 80  # a question's text in the Markdown summary, cut
# what on_metric_scale moves to the metric's own scale: scores (scale_min + width x v) and differences of scores
# (width x d); n, the p-values and the verdict have no scale
SCORES = ("mean_baseline", "mean_candidate", "value_baseline", "value_candidate")
DIFFERENCES = ("delta", "ci_low", "ci_high", "margin")


def on_metric_scale(frame: pl.DataFrame) -> pl.DataFrame:
    """A gate's rows or regressed questions (GateResult) with every score and difference of scores moved from the
    normalised [0, 1] the statistics ran on to the metric's own scale, the registry's scale_min..scale_max each row
    carries: the one conversion every output calls (a [0, 1] metric's values stay as they are, bit for bit).

    Only the reporting converts, and the verdicts would be the same had the statistics run on the metric's own scale:
    that is the linear map v -> scale_min + w v (w = scale_max - scale_min > 0), under which each per-question
    difference and the margin become w times what they were (scale_min cancels). The t statistic
    mean(d + margin) / (sd(d + margin) / sqrt(n)) is unchanged by the factor w, so are the one-sided p and Holm's p;
    the bootstrap draws its resamples independently of the values and its percentiles are linear in them, so the
    interval's ends are w times theirs and "lower end >= -margin" holds on both scales or on neither; n_needed depends
    only on a ratio of two such differences. tests/unit/gate/test_gate_reports.py checks it on correctness (-1..2)."""
    width = pl.col("scale_max") - pl.col("scale_min")
    return frame.with_columns(
        *[(pl.col("scale_min") + width * pl.col(c)).alias(c) for c in SCORES if c in frame.columns],
        *[(width * pl.col(c)).alias(c) for c in DIFFERENCES if c in frame.columns])


def _num(v: float | None, fmt: str = ".4f") -> str:
    # + 0.0: a difference of -1e-17 (the margin added and taken away again) prints as 0, not -0
    return "-" if v is None else format(round(v, 4) + 0.0 if fmt.endswith("4f") else v, fmt)


def _slice(row: dict[str, Any]) -> str:
    return WHOLE_SET if row["slice"] == WHOLE_SET else f"{row['slice']}={row['slice_value']}"


def _margin(row: dict[str, Any]) -> str:
    return f"{'-' if row['higher_is_better'] else '+'}{row['margin']:.4f}"  # the loss it allows, in its direction


def _questions(row: dict[str, Any]) -> str:
    """How many questions the row's statistics rest on: the shared ones (paired), or each run's own (unpaired)."""
    if row["test"] == UNPAIRED:
        return f"{row['n_baseline']} baseline and {row['n_candidate']} candidate questions"
    return f"{row['n_questions']} questions"


def _n(row: dict[str, Any]) -> str:
    """The table's n: the shared questions, or baseline / candidate when unpaired."""
    return f"{row['n_baseline']}/{row['n_candidate']}" if row["test"] == UNPAIRED else str(row["n_questions"])


def note(row: dict[str, Any], min_questions: int) -> str:
    if row["verdict"] == NOT_TESTED:
        return f"{_questions(row)}, below min_questions {min_questions}"
    if row["verdict"] == INCONCLUSIVE:
        more = (f"; about {row['n_needed']}{' in all' if row['test'] == UNPAIRED else ''} would settle it"
                if row["n_needed"] else "")
        return f"the interval reaches beyond the margin on {_questions(row)}{more}"
    return ""


def cells(row: dict[str, Any], min_questions: int) -> list[str]:
    interval = "-" if row["ci_low"] is None else f"[{_num(row['ci_low'], '+.4f')}, {_num(row['ci_high'], '+.4f')}]"
    return [row["verdict"], row["label"], _slice(row), row["test"] or "-", _n(row), _num(row["mean_baseline"]),
            _num(row["mean_candidate"]), _num(row["delta"], "+.4f"), interval, _margin(row),
            _num(row["p_holm"], ".3g"), note(row, min_questions)]


def headline(result: GateResult) -> str:
    baseline = result.baselines[0] if len(result.baselines) == 1 else "each metric's best run (" + ", ".join(
        result.baselines) + ")"
    return (f"gate {result.verdict}: candidate {result.candidate} against {baseline} ({result.kind} runs of "
            f"{result.dataset}); {result.n_tested} metric x slice tested, Holm at alpha {result.alpha:g}; test: "
            f"{', '.join(result.tests) or '-'} (n: shared questions, or baseline/candidate unpaired); scores on "
            "each metric's own scale, delta = candidate - baseline, interval at the comparisons' level, margin = the "
            "loss allowed")


def table(result: GateResult) -> str:
    lines = [list(HEADER)] + [cells(r, result.min_questions)
                              for r in on_metric_scale(result.rows).iter_rows(named=True)]
    widths = [max(len(line[i]) for line in lines) for i in range(len(HEADER))]
    text = ["  ".join(c.ljust(w) for c, w in zip(line, widths, strict=True)).rstrip() for line in lines]
    return "\n".join([headline(result), *text]) + "\n"


def junit_xml(result: GateResult) -> str:
    """One testsuite, one testcase per metric x slice (classname: the metric; name: the slice): a failure carries the
    difference, its interval and the adjusted p; a slice not tested is skipped."""
    rows = list(on_metric_scale(result.rows).iter_rows(named=True))
    count = {v: sum(r["verdict"] == v for r in rows) for v in (FAIL, NOT_TESTED)}
    suites = ET.Element("testsuites", name="finrag gate")
    suite = ET.SubElement(suites, "testsuite", name=f"finrag gate {result.gate_file}", errors="0",
                          failures=str(count[FAIL]), skipped=str(count[NOT_TESTED]), tests=str(len(rows)), time="0")
    props = ET.SubElement(suite, "properties")
    for name, value in (("candidate", result.candidate), ("baseline", ", ".join(result.baselines)),
                        ("dataset", result.dataset), ("alpha", f"{result.alpha:g}"),
                        ("tests", ", ".join(result.tests)), ("verdict", result.verdict)):
        ET.SubElement(props, "property", name=name, value=value)
    for r in rows:
        case = ET.SubElement(suite, "testcase", classname=f"gate.{r['label']}", name=_slice(r), time="0")
        detail = (f"delta {_num(r['delta'], '+.4f')} (candidate {_num(r['mean_candidate'])} - baseline "
                  f"{_num(r['mean_baseline'])}) on {_questions(r)} ({r['test']}), interval "
                  f"[{_num(r['ci_low'], '+.4f')}, {_num(r['ci_high'], '+.4f')}], margin {_margin(r)} on the "
                  f"scale [{r['scale_min']:g}, {r['scale_max']:g}], adjusted p {_num(r['p_holm'], '.3g')}")
        if r["verdict"] == FAIL:
            ET.SubElement(case, "failure", message=f"worse by more than the margin: {detail}").text = detail
        elif r["verdict"] == NOT_TESTED:
            ET.SubElement(case, "skipped", message=note(r, result.min_questions))
        else:
            ET.SubElement(case, "system-out").text = f"{r['verdict']}: {detail}" + (
                f"; {note(r, result.min_questions)}" if r["verdict"] == INCONCLUSIVE else "")
    ET.indent(suites)
    return '<?xml version="1.0" encoding="utf-8"?>\n' + ET.tostring(suites, encoding="unicode") + "\n"


def _md(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")


def markdown(result: GateResult) -> str:
    """A pull-request comment: the verdict, the table, and the questions that regressed most (per metric, on the
    whole set: ids and both runs' scores)."""
    out = [f"### finrag gate: **{result.verdict.upper()}**", "", _md(headline(result)), "",
           "| " + " | ".join(HEADER) + " |", "|" + "---|" * len(HEADER)]
    out += ["| " + " | ".join(_md(c) for c in cells(r, result.min_questions)) + " |"
            for r in on_metric_scale(result.rows).iter_rows(named=True)]
    if not result.regressed.is_empty():
        out += ["", "#### Questions that regressed most", "",
                "| metric | question_id | question | baseline | candidate | delta |", "|---|---|---|---|---|---|"]
        for q in on_metric_scale(result.regressed).iter_rows(named=True):
            text = (q["question"] or "")[:QUESTION_CHARS]
            out.append(f"| {_md(q['label'])} | `{_md(q['question_id'])}` | {_md(text)} | {q['value_baseline']:.4f} "
                       f"| {q['value_candidate']:.4f} | {q['delta']:+.4f} |")
    return "\n".join(out) + "\n"


def as_json(result: GateResult) -> str:
    return json.dumps({
        "verdict": result.verdict, "candidate": result.candidate, "baselines": list(result.baselines),
        "dataset": result.dataset, "kind": result.kind, "alpha": result.alpha, "min_questions": result.min_questions,
        "tests": list(result.tests), "rows": on_metric_scale(result.rows).to_dicts(),
        "regressed": on_metric_scale(result.regressed).to_dicts()}, ensure_ascii=False, indent=1)

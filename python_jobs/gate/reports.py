"""What a CI system reads of a gate: the table (stdout, worst first), JUnit XML (one test case per metric x slice, as
pytest writes it: GitLab, Jenkins and GitHub's test reporters render it), a Markdown pull-request comment and JSON."""

from __future__ import annotations

import json
import xml.etree.ElementTree as ET
from typing import Any

from python_jobs.gate.evaluation import GateResult
from python_jobs.gate.spec import WHOLE_SET
from python_jobs.gate.verdicts import FAIL, INCONCLUSIVE, NOT_TESTED

HEADER = ("verdict", "metric", "slice", "n", "baseline", "candidate", "delta", "interval", "margin", "p_holm", "note")
QUESTION_CHARS = 80  # a question's text in the Markdown summary, cut


def _num(v: float | None, fmt: str = ".4f") -> str:
    # + 0.0: a difference of -1e-17 (the margin added and taken away again) prints as 0, not -0
    return "-" if v is None else format(round(v, 4) + 0.0 if fmt.endswith("4f") else v, fmt)


def _slice(row: dict[str, Any]) -> str:
    return WHOLE_SET if row["slice"] == WHOLE_SET else f"{row['slice']}={row['slice_value']}"


def _margin(row: dict[str, Any]) -> str:
    return f"{'-' if row['higher_is_better'] else '+'}{row['margin']:.4f}"  # the loss it allows, in its direction


def note(row: dict[str, Any], min_questions: int) -> str:
    if row["verdict"] == NOT_TESTED:
        return f"{row['n_questions']} questions, below min_questions {min_questions}"
    if row["verdict"] == INCONCLUSIVE:
        more = f"; about {row['n_needed']} would settle it" if row["n_needed"] else ""
        return f"the interval reaches beyond the margin on {row['n_questions']} questions{more}"
    return ""


def cells(row: dict[str, Any], min_questions: int) -> list[str]:
    interval = "-" if row["ci_low"] is None else f"[{_num(row['ci_low'], '+.4f')}, {_num(row['ci_high'], '+.4f')}]"
    return [row["verdict"], row["label"], _slice(row), str(row["n_questions"]), _num(row["mean_baseline"]),
            _num(row["mean_candidate"]), _num(row["delta"], "+.4f"), interval, _margin(row),
            _num(row["p_holm"], ".3g"), note(row, min_questions)]


def headline(result: GateResult) -> str:
    baseline = result.baselines[0] if len(result.baselines) == 1 else "each metric's best run (" + ", ".join(
        result.baselines) + ")"
    return (f"gate {result.verdict}: candidate {result.candidate} against {baseline} ({result.kind} runs of "
            f"{result.dataset}); {result.n_tested} metric x slice tested, Holm at alpha {result.alpha:g}; delta = "
            "candidate - baseline, interval at the comparisons' level, margin = the loss allowed")


def table(result: GateResult) -> str:
    lines = [list(HEADER)] + [cells(r, result.min_questions) for r in result.rows.iter_rows(named=True)]
    widths = [max(len(line[i]) for line in lines) for i in range(len(HEADER))]
    text = ["  ".join(c.ljust(w) for c, w in zip(line, widths, strict=True)).rstrip() for line in lines]
    return "\n".join([headline(result), *text]) + "\n"


def junit_xml(result: GateResult) -> str:
    """One testsuite, one testcase per metric x slice (classname: the metric; name: the slice): a failure carries the
    difference, its interval and the adjusted p; a slice not tested is skipped."""
    rows = list(result.rows.iter_rows(named=True))
    count = {v: sum(r["verdict"] == v for r in rows) for v in (FAIL, NOT_TESTED)}
    suites = ET.Element("testsuites", name="finrag gate")
    suite = ET.SubElement(suites, "testsuite", name=f"finrag gate {result.gate_file}", errors="0",
                          failures=str(count[FAIL]), skipped=str(count[NOT_TESTED]), tests=str(len(rows)), time="0")
    props = ET.SubElement(suite, "properties")
    for name, value in (("candidate", result.candidate), ("baseline", ", ".join(result.baselines)),
                        ("dataset", result.dataset), ("alpha", f"{result.alpha:g}"), ("verdict", result.verdict)):
        ET.SubElement(props, "property", name=name, value=value)
    for r in rows:
        case = ET.SubElement(suite, "testcase", classname=f"gate.{r['label']}", name=_slice(r), time="0")
        detail = (f"delta {_num(r['delta'], '+.4f')} (candidate {_num(r['mean_candidate'])} - baseline "
                  f"{_num(r['mean_baseline'])}) on {r['n_questions']} questions, interval "
                  f"[{_num(r['ci_low'], '+.4f')}, {_num(r['ci_high'], '+.4f')}], margin {_margin(r)}, "
                  f"adjusted p {_num(r['p_holm'], '.3g')}")
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
            for r in result.rows.iter_rows(named=True)]
    if not result.regressed.is_empty():
        out += ["", "#### Questions that regressed most", "",
                "| metric | question_id | question | baseline | candidate | delta |", "|---|---|---|---|---|---|"]
        for q in result.regressed.iter_rows(named=True):
            text = (q["question"] or "")[:QUESTION_CHARS]
            out.append(f"| {_md(q['label'])} | `{_md(q['question_id'])}` | {_md(text)} | {q['value_baseline']:.4f} "
                       f"| {q['value_candidate']:.4f} | {q['delta']:+.4f} |")
    return "\n".join(out) + "\n"


def as_json(result: GateResult) -> str:
    return json.dumps({
        "verdict": result.verdict, "candidate": result.candidate, "baselines": list(result.baselines),
        "dataset": result.dataset, "kind": result.kind, "alpha": result.alpha, "min_questions": result.min_questions,
        "rows": result.rows.to_dicts(), "regressed": result.regressed.to_dicts()}, ensure_ascii=False, indent=1)

"""`finrag gate GATE_FILE --candidate RUN [--baseline RUN]`: a regression gate for CI. For every metric x slice of
the gate file, is the candidate worse than the baseline by more than the metric's margin? Exit 0 pass (or
inconclusive), 1 fail, 2 cannot evaluate (missing run, a baseline without scores on a metric, nothing published, a
bad gate file). Runs that share no or too few questions (two versions' traffic) are compared unpaired (Welch).

    --format table   a headline, then one row per metric x slice, worst first: verdict, metric, slice, n, both means,
                     delta (candidate - baseline), its interval, the margin, the Holm-adjusted p, a note
    --format json    one object: verdict, runs, every row's columns and the most-regressed questions
    --junit FILE     JUnit XML, one test case per metric x slice
    --markdown FILE  a pull-request comment: verdict, table, the questions that regressed most

The gate file and the rules: python_jobs/gate/spec.py and python_jobs/gate/__init__.py; a CI job: docs/ci_gate.md.
"""

from __future__ import annotations

import sys
from pathlib import Path

import click
import polars as pl

from python_jobs.core.console import say
from python_jobs.core.errors import JobError
from python_jobs.gate.evaluation import evaluate_gate
from python_jobs.gate.reports import as_json, junit_xml, markdown, table
from python_jobs.gate.spec import WHOLE_SET
from python_jobs.gate.verdicts import FAIL, INCONCLUSIVE


@click.command("gate")
@click.argument("gate_file", metavar="GATE_FILE")
@click.option("--candidate", required=True, help="The run under test (retrieval, answer or judge run id).")
@click.option("--baseline", default=None,
              help="The run it must not be worse than (default: the gate file's `baseline`: a run id, best, sweep "
                   "or sweep:<sweep id>).")
@click.option("--junit", "junit_file", type=click.Path(dir_okay=False), default=None,
              help="Also write JUnit XML here (one test case per metric x slice).")
@click.option("--markdown", "markdown_file", type=click.Path(dir_okay=False), default=None,
              help="Also write a Markdown pull-request comment here.")
@click.option("--format", "fmt", type=click.Choice(["table", "json"]), default="table", show_default=True)
def command(gate_file: str, candidate: str, baseline: str | None, junit_file: str | None,
            markdown_file: str | None, fmt: str) -> None:
    """Fail (exit 1) when the candidate is worse than the baseline by more than a margin on any metric x slice."""
    result = evaluate_gate(gate_file, candidate, baseline)
    for path, render in ((junit_file, junit_xml), (markdown_file, markdown)):
        if path:
            Path(path).write_text(render(result), encoding="utf-8")
    sys.stdout.write(as_json(result) + "\n" if fmt == "json" else table(result))
    if result.verdict == INCONCLUSIVE:
        say("gate inconclusive: no significant loss beyond a margin, but not every interval rules one out")
    if result.verdict == FAIL:  # a JobError: the CLI says why on stderr and exits 1
        failed = result.rows.filter(pl.col("verdict") == FAIL)
        first = failed.row(0, named=True)
        where = first["slice"] if first["slice"] == WHOLE_SET else f"{first['slice']}={first['slice_value']}"
        raise JobError(f"gate failed: {failed.height} metric x slice worse than the baseline by more than their "
                       f"margin, first {first['label']} on {where}")

"""`finrag export-run`: write a landed retrieval run as a TREC run file or a FinanceRAG submission CSV, or an answer
or judge run as Ragas (JSONL; CSV when --out ends in .csv) or DeepEval (a test run JSON) reads it.

The rules and decisions are documented in python_jobs/retrieval/run_files.py, python_jobs/sources/ragas_files.py
and python_jobs/sources/deepeval_runs.py.
"""

from __future__ import annotations

import sys

import click

from python_jobs.core.console import say
from python_jobs.core.lake import Lake
from python_jobs.retrieval.run_files import FORMATS, export
from python_jobs.sources.deepeval_runs import export_deepeval
from python_jobs.sources.ragas_files import export_ragas

EXTERNAL = ("ragas", "deepeval")


@click.command("export-run")
@click.option("--run-id", required=True)
@click.option("--format", "fmt", type=click.Choice(FORMATS + EXTERNAL), default="trec", show_default=True,
              help="trec / financerag-csv: a retrieval run; ragas / deepeval: an answer run or a judge run.")
@click.option("--out", type=click.Path(dir_okay=False, allow_dash=True), default="-", show_default=True,
              help="Output file (- for stdout).")
@click.option("--score", type=click.Choice(("rank", "raw")), default="rank", show_default=True,
              help="trec: rank-derived scores (order-exact re-import) or the retriever's own.")
@click.option("--top", type=int, default=10, show_default=True, help="financerag-csv: documents per query.")
def command(run_id: str, fmt: str, out: str, score: str, top: int) -> None:
    """Export a retrieval run as TREC or FinanceRAG CSV, an answer or judge run for Ragas or DeepEval."""
    if fmt == "ragas":
        text = export_ragas(Lake(), run_id, as_csv=out.endswith(".csv"))
    elif fmt == "deepeval":
        text = export_deepeval(Lake(), run_id)
    else:
        text = export(Lake(), run_id, fmt, score, top)
    if out == "-":
        sys.stdout.write(text)
    else:
        with open(out, "w", encoding="utf-8", newline="") as fh:
            fh.write(text)
        say(f"wrote {out}")

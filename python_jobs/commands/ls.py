"""`finrag ls`: what the warehouse holds as the last build saw it - its datasets (questions, reference answers,
documents, pages, chunks, runs: mart_datasets) and its runs with what each is (dim_runs) - read from the published
marts like every other reader (`finrag sql`, `report`, `compare`, the dashboard's overview)."""

from __future__ import annotations

import json
import sys

import click
import polars as pl

from python_jobs.core.console import say
from python_jobs.marts.published import PublishError, select

DATASETS = "select * from mart_datasets order by dataset"
RUNS = "select kind, run_id, dataset, label, created_at from dim_runs order by created_at desc nulls last, run_id"


@click.command("ls")
@click.option("--runs/--no-runs", default=True, show_default=True, help="Also list every run (newest first).")
@click.option("--format", "fmt", type=click.Choice(["table", "json"]), default="table", show_default=True,
              help="json: one object {datasets: [...], runs: [...]}.")
def command(runs: bool, fmt: str) -> None:
    """List the warehouse's datasets and runs (the published marts of the last build)."""
    try:
        datasets = select(DATASETS)
        run_list = select(RUNS) if runs else None
    except PublishError as exc:
        say(f"nothing to list: {exc.detail} (an empty home: `finrag ingest ...` or `finrag demo` first)")
        if fmt == "json":
            sys.stdout.write(json.dumps({"datasets": [], **({"runs": []} if runs else {})}) + "\n")
        return
    if fmt == "json":
        out = {"datasets": datasets.to_dicts(), **({"runs": run_list.to_dicts()} if run_list is not None else {})}
        sys.stdout.write(json.dumps(out, default=str, ensure_ascii=False, indent=1) + "\n")
        return
    with pl.Config(tbl_rows=500, tbl_cols=20, fmt_str_lengths=90, tbl_width_chars=250, tbl_hide_dataframe_shape=True,
                   tbl_hide_column_data_types=True):
        click.echo("Datasets")
        click.echo(datasets)
        if run_list is not None:
            click.echo("\nRuns")
            click.echo(run_list.with_columns(pl.col("created_at").dt.strftime("%Y-%m-%d %H:%M")))

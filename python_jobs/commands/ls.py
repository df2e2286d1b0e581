"""`finrag ls`: what the home's lake holds - its datasets (questions, reference answers, documents, pages, chunks,
runs) and its runs with what each is (python_jobs/warehouse/inventory.py; the dashboard's overview shows the same)."""

from __future__ import annotations

import json
import sys

import click
import polars as pl

from python_jobs.core.console import say
from python_jobs.warehouse.inventory import inventory


@click.command("ls")
@click.option("--runs/--no-runs", default=True, show_default=True, help="Also list every run (newest first).")
@click.option("--format", "fmt", type=click.Choice(["table", "json"]), default="table", show_default=True,
              help="json: one object {datasets: [...], runs: [...]}.")
def command(runs: bool, fmt: str) -> None:
    """List the lake's datasets and runs."""
    found = inventory()
    if found is None:
        say("nothing is ingested in this home yet (no lake): `finrag ingest ...` or `finrag demo`")
        if fmt == "json":
            sys.stdout.write(json.dumps({"datasets": [], **({"runs": []} if runs else {})}) + "\n")
        return
    datasets, run_list = found
    if fmt == "json":
        out = {"datasets": datasets.to_dicts(), **({"runs": run_list.to_dicts()} if runs else {})}
        sys.stdout.write(json.dumps(out, default=str, ensure_ascii=False, indent=1) + "\n")
        return
    with pl.Config(tbl_rows=500, tbl_cols=20, fmt_str_lengths=90, tbl_width_chars=250, tbl_hide_dataframe_shape=True,
                   tbl_hide_column_data_types=True):
        click.echo("Datasets")
        click.echo(datasets)
        if runs:
            click.echo("\nRuns")
            click.echo(run_list.with_columns(pl.col("created_at").dt.strftime("%Y-%m-%d %H:%M")))

"""`finrag sql "QUERY"`: a read-only query against the warehouse, for analysts."""

from __future__ import annotations

import json
import sys

import click
import polars as pl

from python_jobs.warehouse.queries import query


@click.command("sql")
@click.argument("sql_text")
@click.option("--format", "fmt", type=click.Choice(["table", "csv", "json"]), default="table", show_default=True)
def command(sql_text: str, fmt: str) -> None:
    """Run a read-only SQL query against the warehouse."""
    frame = query(sql_text)
    if fmt == "csv":
        sys.stdout.write(frame.write_csv())
    elif fmt == "json":
        sys.stdout.write(json.dumps(frame.to_dicts(), default=str, ensure_ascii=False, indent=1) + "\n")
    else:
        with pl.Config(tbl_rows=200, tbl_cols=50, fmt_str_lengths=60, tbl_width_chars=200):
            click.echo(frame)

"""`finrag sql "QUERY"`: a read-only query over the published warehouse, for analysts
(python_jobs/marts/queries.py)."""

from __future__ import annotations

import json
import sys

import click
import polars as pl

from python_jobs.commands._options import target_option
from python_jobs.marts.queries import DIALECTS, query, transpile


@click.command("sql")
@click.argument("sql_text")
@click.option("--format", "fmt", type=click.Choice(["table", "csv", "json"]), default="table", show_default=True)
@click.option("--dialect", type=click.Choice(DIALECTS), default="duckdb", show_default=True,
              help="The dialect the query is written in; it is transpiled (sqlglot) to the warehouse's.")
@click.option("--show-sql", is_flag=True, help="Print the query as the warehouse runs it, and do not run it.")
@target_option
def command(sql_text: str, fmt: str, dialect: str, show_sql: bool, target: str) -> None:
    """Run one read-only SELECT over the published marts and seeds (--target spark: the Spark warehouse's)."""
    if show_sql:
        click.echo(transpile(sql_text, dialect, "spark" if target == "spark" else "duckdb"))
        return
    frame = query(sql_text, dialect=dialect, target=target)
    if fmt == "csv":
        sys.stdout.write(frame.write_csv())
    elif fmt == "json":
        sys.stdout.write(json.dumps(frame.to_dicts(), default=str, ensure_ascii=False, indent=1) + "\n")
    else:
        with pl.Config(tbl_rows=200, tbl_cols=50, fmt_str_lengths=60, tbl_width_chars=200):
            click.echo(frame)

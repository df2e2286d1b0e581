"""`finrag sql "QUERY"`: a read-only query against the warehouse, for analysts."""

from __future__ import annotations

import json
import sys

import click
import duckdb
import polars as pl

from .config import warehouse_db, warehouse_home


def query(sql: str, home: str | None = None) -> pl.DataFrame:
    """Run one query on a read-only connection that is closed at once, so it never blocks `dbt build`."""
    db = warehouse_db(warehouse_home(home))
    if not db.exists():
        raise click.ClickException(f"no warehouse at {db}: run `finrag build` (dbt build) first")
    con = duckdb.connect(str(db), read_only=True)
    try:
        rel = con.sql(sql)
        return rel.pl() if rel is not None else pl.DataFrame()
    except duckdb.Error as exc:
        raise click.ClickException(str(exc).splitlines()[0]) from None
    finally:
        con.close()


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

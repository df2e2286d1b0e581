"""Analysts' read-only SQL over the warehouse (`finrag sql`).

A query is parsed before any connection opens: exactly one SELECT (WITH ... SELECT, UNION / INTERSECT / EXCEPT of
selects) is accepted, anything else (COPY, CREATE, INSERT, ATTACH, PRAGMA, SET, several statements) is refused with a
message. The analyst may write in another engine's dialect (`--dialect snowflake|bigquery|trino|postgres|spark`):
sqlglot transpiles it to DuckDB's. A DuckDB query is checked by DuckDB's own parser and parse tree (a write inside a
WITH included): importing sqlglot costs more than the rest of a read.

It runs on the published Parquet exports through the one opener every reader uses (python_jobs/marts/published.py),
never on the DuckDB file: a query can never hold the lock `dbt build` needs, a build never makes a query fail, and a
query sees one build's published state (the files one manifest names), with file access switched off except for the
exports directory.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import TYPE_CHECKING

import duckdb
import polars as pl

from python_jobs.core.errors import InputError
from python_jobs.marts.published import not_published, published_connection, tables_named

if TYPE_CHECKING:
    from sqlglot import exp

DIALECTS = ("duckdb", "spark", "trino", "postgres", "bigquery", "snowflake")


def _writing_nodes(tree: object) -> Iterator[str]:
    """The query nodes of DuckDB's parse tree that write (DELETE_QUERY_NODE, INSERT_QUERY_NODE, ...: every query node
    but a select's, a set operation's and a CTE's), wherever they sit: DuckDB runs a DELETE inside a WITH."""
    if isinstance(tree, dict):
        kind = tree.get("type")
        if isinstance(kind, str) and kind.endswith("_QUERY_NODE"):
            yield kind.removesuffix("_QUERY_NODE")
        for value in tree.values():
            yield from _writing_nodes(value)
    elif isinstance(tree, list):
        for value in tree:
            yield from _writing_nodes(value)


def check_read_only(sql: str, dialect: str = "duckdb") -> None:
    """InputError (field 'sql') unless `sql` is exactly one read-only statement: DuckDB's own parser and parse tree
    where the dialect is DuckDB's, sqlglot's check otherwise."""
    if dialect != "duckdb":
        read_only_statement(sql, dialect)
        return
    try:
        statements = duckdb.extract_statements(sql)
    except duckdb.ParserException as exc:
        raise InputError(f"not valid duckdb SQL: {str(exc).splitlines()[0]}", field="sql") from None
    if len(statements) != 1:
        raise InputError(f"finrag sql is read-only and runs exactly one SELECT; got {len(statements)} statements",
                         field="sql")
    kind = statements[0].type.name
    if kind == "SELECT":
        with duckdb.connect(":memory:") as con:
            tree = json.loads(con.execute("select json_serialize_sql(?)", [sql]).fetchall()[0][0])
        kind = next(_writing_nodes(tree), "SELECT")
    if kind != "SELECT":
        raise InputError(f"finrag sql is read-only: only SELECT (or WITH ... SELECT) is accepted, not {kind}",
                         field="sql")


def read_only_statement(sql: str, dialect: str = "duckdb") -> exp.Expression:
    """The one read-only statement of `sql`, parsed (sqlglot); InputError (field 'sql') for anything else."""
    import sqlglot
    from sqlglot import exp

    if dialect not in DIALECTS:
        raise InputError(f"unknown dialect {dialect!r}; one of {', '.join(DIALECTS)}", field="dialect")
    read_only = (exp.Select, exp.SetOperation)  # SetOperation: UNION / INTERSECT / EXCEPT
    writing = (exp.Insert, exp.Update, exp.Delete, exp.Merge, exp.Create, exp.Drop, exp.Alter, exp.Copy, exp.Into,
               exp.Command, exp.Pragma, exp.Set, exp.Attach, exp.Detach, exp.Use, exp.TruncateTable)
    try:
        statements = [s for s in sqlglot.parse(sql, read=dialect) if s is not None]
    except sqlglot.errors.SqlglotError as exc:
        raise InputError(f"not valid {dialect} SQL: {str(exc).splitlines()[0]}", field="sql") from None
    if len(statements) != 1:
        raise InputError(f"finrag sql is read-only and runs exactly one SELECT; got {len(statements)} statements",
                         field="sql")
    stmt = statements[0]
    writes = [node for node in stmt.walk() if isinstance(node, writing)]
    if not isinstance(stmt, read_only) or writes:
        kind = (writes[0] if writes else stmt).key.upper()
        raise InputError(f"finrag sql is read-only: only SELECT (or WITH ... SELECT) is accepted, not {kind}",
                         field="sql")
    return stmt


def transpile(sql: str, dialect: str = "duckdb", to: str = "duckdb") -> str:
    """The analyst's SQL (checked read-only) in the engine's dialect."""
    return read_only_statement(sql, dialect).sql(dialect=to)


def query(sql: str, home: str | None = None, dialect: str = "duckdb", target: str = "dev") -> pl.DataFrame:
    """Run one read-only query over the published exports (target `spark`: over the Spark warehouse's tables); the
    frame of its result. The query is parsed and checked before any connection or session opens."""
    if target == "spark":
        text = transpile(sql, dialect, "spark")
        from python_jobs.warehouse.spark_session import query as spark_query

        return spark_query(text, home=home)
    if dialect == "duckdb":
        check_read_only(sql, dialect)
        text = sql
    else:
        text = transpile(sql, dialect, "duckdb")
    with published_connection(home, tables_named(text), strict=False) as con:
        try:
            rel = con.sql(text)
            return rel.pl() if rel is not None else pl.DataFrame()
        except duckdb.CatalogException as exc:
            raise not_published(exc) from None
        except duckdb.Error as exc:
            raise InputError(str(exc).splitlines()[0], field="sql") from None

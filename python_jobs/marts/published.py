"""The one way every reader opens the published marts: `finrag sql`, `report`, `compare`, `ls`, the gate and the
dashboard.

A build publishes every mart and seed as Parquet under <home>/exports/marts and names the files in one manifest
(python_jobs/warehouse/publishing.py). A reader opens an in-memory DuckDB with one view per published table over the
files of that one manifest, so it sees one build's state and never opens the DuckDB file dbt writes (it can never
hold the lock a build needs). File access is limited to the exports directory before any view exists, so a query's
table functions cannot read other files (`read_text('/etc/passwd')`) and nothing can be written.

A view is made only for the published tables a query's words name (`tables_named`): binding a view reads its files'
Parquet footers, and a warehouse of a hundred runs publishes thousands of files that one query does not read. A
reader that runs several queries on one connection (`finrag compare`, the gate) opens it with no view and lets `run`
make each query's views as it comes: one connection and one manifest for the whole read, no view it does not use.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterable, Iterator, Mapping, Sequence
from contextlib import contextmanager

import duckdb
import polars as pl

from python_jobs.core.config import warehouse_home

# the manifest's reader is the publishing protocol's, beside its writer; readers take it from here
from python_jobs.warehouse.publishing import (
    BUILD_RECORD_NAME,
    EXPORTS_SUBDIR,
    MANIFEST_NAME,
    PublishError,
    exports_dir,
    published_tables,
    read_manifest,
)

__all__ = ["EXPORTS_SUBDIR", "NotPublished", "PublishError", "exports_dir", "not_published", "published_connection",
           "published_state", "read_manifest", "run", "select", "tables_named"]


class NotPublished(PublishError):
    """A table a reader needs is not in the published state: the one wording of every reader."""

    def __init__(self, name: str) -> None:
        super().__init__(f"{name} is not published: run `finrag build` (or `dbt build`), which publishes the marts")
        self.name = name


def not_published(exc: duckdb.CatalogException) -> NotPublished:
    """DuckDB's missing-table error as the readers' one "not published" error, naming the table."""
    text = str(exc).splitlines()[0]
    name = text.split(" with name ", 1)[1].split(" ", 1)[0] if " with name " in text else text
    return NotPublished(name)


def published_state(home: str | os.PathLike[str] | None = None) -> tuple[tuple[int, int, int] | None, ...]:
    """What tells one published state from the next without reading it: the identity (inode, size, modification
    time) of the manifest, which publishing replaces by a rename, and of the last build's record, which every build
    rewrites (None for a file that is not there). Reads keyed by it (the dashboard's) are never from another
    state."""
    out = exports_dir(home)
    def identity(name: str) -> tuple[int, int, int] | None:
        try:
            st = (out / name).stat()
        except FileNotFoundError:
            return None
        return st.st_ino, st.st_size, st.st_mtime_ns
    return identity(MANIFEST_NAME), identity(BUILD_RECORD_NAME)


def _literal(text: str) -> str:
    return "'" + text.replace("'", "''") + "'"


def tables_named(sql: str) -> set[str]:
    """Every word of a query, lower-cased: a superset of the tables it names, of which only published names become
    views (a column or string that happens to spell a table's name costs one view more). A scan, not a parser:
    importing one (sqlglot) costs more than the rest of a read."""
    return {word.lower() for word in _WORD.findall(sql)}


_WORD = re.compile(r"[A-Za-z_][A-Za-z0-9_$]*")


# an open published connection's manifest (table -> files) and the views made on it so far, for `run`'s views
_OPEN: dict[int, tuple[dict[str, list], set[str]]] = {}


@contextmanager
def published_connection(home: str | os.PathLike[str] | None = None, tables: Iterable[str] | None = None,
                         strict: bool = True) -> Iterator[duckdb.DuckDBPyConnection]:
    """An in-memory DuckDB with a view per published table over the files of one manifest (`tables`: those only;
    one that is not published is a NotPublished error, or with strict=False left for the query to report; `run` on
    the connection makes the views of the other published tables its query names). PublishError when nothing is
    published or it is stale."""
    h = warehouse_home(home)
    published = published_tables(h)
    wanted = list(published) if tables is None else [n for n in dict.fromkeys(tables) if n in published]
    missing = [] if tables is None or not strict else [n for n in tables if n not in published]
    if missing:
        raise NotPublished(missing[0])
    con = duckdb.connect(":memory:")
    try:
        con.execute(f"set allowed_directories = [{_literal(str(exports_dir(h)) + '/')}]")
        con.execute("set enable_external_access = false")
        con.execute("set enable_progress_bar = false")
        made: set[str] = set()
        _OPEN[id(con)] = (published, made)
        _make_views(con, wanted)
        yield con
    finally:
        _OPEN.pop(id(con), None)
        con.close()


def _make_views(con: duckdb.DuckDBPyConnection, names: Iterable[str]) -> None:
    published, made = _OPEN[id(con)]
    for name in names:
        if name in published and name not in made:
            paths = ", ".join(_literal(str(f)) for f in published[name])
            con.execute(f'create view "{name}" as select * from read_parquet([{paths}], union_by_name = true)')
            made.add(name)


def run(con: duckdb.DuckDBPyConnection, sql: str,
        params: Sequence[object] | Mapping[str, object] = ()) -> pl.DataFrame:
    """A query on an open published connection (positional or named parameters), with a view for each published
    table it names that the connection has none of yet; a table it names that is not published is NotPublished."""
    if id(con) in _OPEN:
        _make_views(con, tables_named(sql))
    try:
        return con.sql(sql, params=dict(params) if isinstance(params, Mapping) else list(params)).pl()
    except duckdb.CatalogException as exc:
        raise not_published(exc) from None


def select(sql: str, params: Sequence[object] = (), home: str | os.PathLike[str] | None = None) -> pl.DataFrame:
    """A query of the library's own (reports, comparisons, the inventory, the dashboard) over the published state,
    with views for the published tables it names: its frame."""
    with published_connection(home, tables=()) as con:  # `run` makes the views of the tables it names
        return run(con, sql, params)

"""`finrag sql`: one read-only SELECT over the published exports, whatever the query tries, in any dialect sqlglot
reads; it never opens the DuckDB file, so it neither blocks a build nor fails because of one."""

from __future__ import annotations

import json
import subprocess
import sys
import time
from pathlib import Path

import duckdb
import pytest

from support.cli import MODELS_ONLY, dbt_build
from support.paths import PROJECT


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory) -> Path:
    home = tmp_path_factory.mktemp("sql") / "warehouse"
    home.mkdir()
    dbt_build(home, *MODELS_ONLY)
    return home


def sql(home: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "python_jobs.cli", "--home", str(home), "sql", *args],
                          capture_output=True, text=True, cwd=PROJECT, timeout=300)


def test_selects_marts_and_seeds_in_every_format(built: Path) -> None:
    out = sql(built, "select level, count(*) as n from omnieval_topics group by 1 order by 1", "--format", "json")
    assert out.returncode == 0, out.stderr
    assert json.loads(out.stdout) == [{"level": 0, "n": 1}, {"level": 1, "n": 5}, {"level": 2, "n": 16},
                                      {"level": 3, "n": 24}]
    csv_out = sql(built, "select doc_type from doc_types order by doc_type limit 2", "--format", "csv").stdout
    assert csv_out.splitlines() == ["doc_type", "10-K", "10-Q"]
    assert sql(built, "select count(*) as n from dim_documents", "--format", "csv").stdout.splitlines() == ["n", "0"]


@pytest.mark.parametrize("query, says", [
    ("create table x as select 1", "not CREATE"),
    ("select 1; select 2", "2 statements"),
    ("insert into doc_types values ('x', 'y', 'z')", "not INSERT"),
    ("attach 'other.duckdb'", "read-only"),
    ("pragma database_list", "read-only"),
    ("set threads = 1", "read-only"),
    ("select * from (", "not valid duckdb SQL"),
])
def test_anything_but_one_select_is_refused(built: Path, query: str, says: str) -> None:
    out = sql(built, query)
    assert out.returncode == 2 and says in out.stderr and "Traceback" not in out.stderr, out.stderr


def test_copy_to_cannot_write_the_lake(built: Path) -> None:
    target = built / "lake" / "documents" / "load_id=injected" / "part-0.parquet"
    out = sql(built, f"copy (select 'x' as doc_id) to '{target}' (format parquet)")
    assert out.returncode == 2 and "not COPY" in out.stderr
    assert not target.exists() and not target.parent.exists()


def test_files_outside_the_exports_are_out_of_reach(built: Path) -> None:
    for query in ("select * from read_text('/etc/passwd')",
                  f"select * from read_parquet('{built}/lake/documents/*/*.parquet')",
                  f"select * from read_csv('{PROJECT}/seeds/doc_types.csv')"):
        out = sql(built, query)
        assert out.returncode == 2 and "disabled by configuration" in out.stderr and "root:" not in out.stdout, query


def test_other_dialects_are_transpiled(built: Path) -> None:
    # Snowflake's IFF and BigQuery's SAFE_DIVIDE do not exist in DuckDB: sqlglot rewrites them
    snow = sql(built, "select iff(level > 1, 'deep', 'top') as depth, count(*) as n from omnieval_topics "
                      "group by 1 order by 1", "--dialect", "snowflake", "--format", "json")
    assert snow.returncode == 0, snow.stderr
    assert json.loads(snow.stdout) == [{"depth": "deep", "n": 40}, {"depth": "top", "n": 6}]
    bq = sql(built, "select safe_divide(count(*), 0) as r from omnieval_topics", "--dialect", "bigquery",
             "--format", "json")
    assert bq.returncode == 0 and json.loads(bq.stdout) == [{"r": None}], bq.stderr
    shown = sql(built, "select iff(level > 1, 'a', 'b') from omnieval_topics", "--dialect", "snowflake", "--show-sql")
    assert shown.returncode == 0 and "CASE WHEN" in shown.stdout.upper() and "IFF" not in shown.stdout.upper()
    refused = sql(built, "delete from omnieval_topics", "--dialect", "postgres")
    assert refused.returncode == 2 and "not DELETE" in refused.stderr


def test_without_a_published_warehouse_it_says_so(home: Path, finrag) -> None:
    out = finrag("sql", "select 1", check=False)
    assert out.returncode == 2 and "nothing is published" in out.stderr and "dbt build" in out.stderr


def test_a_build_and_a_query_never_block_each_other(built: Path) -> None:
    # a writer holds the DuckDB file (as dbt build does): the query does not need it
    con = duckdb.connect(str(built / "finrag.duckdb"))
    try:
        out = sql(built, "select count(*) as n from tasks", "--format", "csv")
        assert out.returncode == 0 and out.stdout.splitlines() == ["n", "5"], out.stderr
    finally:
        con.close()
    # a long query runs while a build writes the file and republishes: both succeed
    slow = subprocess.Popen([sys.executable, "-m", "python_jobs.cli", "--home", str(built), "sql",
                             "select count(distinct hash(t.range * 7 + length(tasks.task)) % 1000003) as n "
                             "from range(40000000) t, tasks", "--format", "csv"],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=PROJECT)
    time.sleep(1.0)
    assert slow.poll() is None, "the long query ended before the build started"
    dbt_build(built, *MODELS_ONLY)
    stdout, stderr = slow.communicate(timeout=600)
    assert slow.returncode == 0, stderr
    assert stdout.splitlines() == ["n", "1000003"]


def test_a_duckdb_query_is_checked_without_sqlglot(built: Path) -> None:
    # importing sqlglot costs more than the rest of a read: DuckDB's own parser checks a DuckDB query, and the views
    # are made for the published names among its words
    code = ("import json, sys\nfrom python_jobs.marts.queries import query\n"
            f"frame = query('select count(*) as n from tasks', home={str(built)!r})\n"
            "print(json.dumps([frame.to_dicts(), 'sqlglot' in sys.modules]))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=PROJECT, timeout=300)
    assert out.returncode == 0, out.stderr
    assert json.loads(out.stdout.splitlines()[-1]) == [[{"n": 5}], False]
    # a write anywhere in DuckDB's parse tree is refused (DuckDB runs a DELETE inside a WITH); a word that spells
    # one in a string is not a write
    refused = sql(built, "with gone as (delete from tasks returning *) select * from gone")
    assert refused.returncode == 2 and "read-only" in refused.stderr and "not DELETE" in refused.stderr, refused.stderr
    words = sql(built, "select 'delete' as word from tasks limit 1", "--format", "csv")
    assert words.returncode == 0 and words.stdout.splitlines() == ["word", "delete"], words.stderr


def test_a_connection_opened_without_views_makes_each_querys_views(built: Path) -> None:
    # compare and the gate open one connection for several queries: `run` makes the views each one names, once
    from python_jobs.marts.published import NotPublished, published_connection, run

    def views(con: duckdb.DuckDBPyConnection) -> set[str]:
        return {r[0] for r in con.sql("select view_name from duckdb_views() where not internal").fetchall()}

    with published_connection(built, tables=()) as con:
        assert views(con) == set()
        assert run(con, "select count(*) as n from tasks")["n"].to_list() == [5]
        assert run(con, "select count(*) as n from tasks where task <> $task", {"task": "none"})["n"].to_list() == [5]
        assert run(con, "select count(*) as n from omnieval_topics where level = ?", [1])["n"].to_list() == [5]
        assert views(con) == {"tasks", "omnieval_topics"}
        with pytest.raises(NotPublished, match="no_such_mart is not published"):
            run(con, "select * from no_such_mart")
        with pytest.raises(duckdb.PermissionException, match="disabled by configuration"):
            run(con, "select * from read_text('/etc/passwd')")

"""Parquet exports of the marts, for the dashboard, `finrag sql` and other BI tools (`finrag publish`, `finrag build`).

Every model under models/marts (dim_*, fct_*, mart_*) and every seed (the reference tables analysts join: doc types,
tasks, topics, metrics, prices) is written to `<home>/exports/marts/<name>.parquet`, plus
`_manifest.json` (models, row counts, columns, build and publish times). Readers of the exports never touch the
DuckDB file, so they can never hold the lock that `dbt build` needs; the publisher itself opens the file read-only
once, copies, and closes it. Each file is written to a temp name and renamed into place, so a reader sees the old
file or the new one, never half of one.
"""

from __future__ import annotations

import json
import os
from dataclasses import asdict, dataclass
from datetime import UTC, datetime
from pathlib import Path

import duckdb

from python_jobs.core.config import warehouse_db, warehouse_home

EXPORTS_SUBDIR = Path("exports") / "marts"
MANIFEST_NAME = "_manifest.json"
MART_PREFIXES = ("dim_", "fct_", "mart_")


@dataclass(frozen=True)
class PublishedModel:
    name: str
    file: str
    rows: int
    columns: list[str]
    bytes: int


def exports_dir(home: str | os.PathLike[str] | None = None) -> Path:
    return warehouse_home(home) / EXPORTS_SUBDIR


def published_names_from_manifest(home: Path) -> list[str] | None:
    """Names (aliases) of the models under models/marts and of the seeds in dbt's last manifest, or None without a
    manifest."""
    path = home / "dbt_target" / "manifest.json"
    if not path.exists():
        return None
    nodes = json.loads(path.read_text())["nodes"].values()
    return sorted(
        n["alias"] or n["name"]
        for n in nodes
        if (n["resource_type"] == "model" and n["original_file_path"].startswith("models/marts/"))
        or n["resource_type"] == "seed"
    )


def _run_results(home: Path) -> dict | None:
    """dbt's run_results.json of the home's last invocation, None when missing or unreadable."""
    try:
        return json.loads((home / "dbt_target" / "run_results.json").read_text())
    except (OSError, ValueError):
        return None


def built_by_last_run(home: Path) -> set[str] | None:
    """Names of the models and seeds dbt's last invocation built (run_results.json), None when unknown."""
    results = (_run_results(home) or {}).get("results")
    if results is None:
        return None
    return {r["unique_id"].split(".")[-1] for r in results
            if r["unique_id"].startswith(("model.", "seed.")) and r["status"] == "success"}


def _built_at(home: Path, db: Path) -> str:
    """When the warehouse was last built: dbt's run_results time, else the file's mtime."""
    generated = ((_run_results(home) or {}).get("metadata") or {}).get("generated_at")
    return generated or datetime.fromtimestamp(db.stat().st_mtime, UTC).isoformat()


def _sql_literal(text: str) -> str:
    return "'" + text.replace("'", "''") + "'"


class PublishError(Exception):
    """The warehouse could not be published (missing, or locked by a running build)."""


def _previous(out: Path) -> dict[str, PublishedModel]:
    """The models of the exports' current manifest whose file is still there, by name."""
    try:
        models = json.loads((out / MANIFEST_NAME).read_text())["models"]
    except (OSError, ValueError, KeyError):
        return {}
    return {m["name"]: PublishedModel(**m) for m in models if (out / m["file"]).exists()}


def publish(home: str | os.PathLike[str] | None = None, only: set[str] | None = None) -> list[PublishedModel]:
    """Write every mart and seed to Parquet under <home>/exports/marts; returns what is published.

    The list is dbt's manifest (models/marts/**, seeds) intersected with the tables present in the warehouse (a
    `--select` build may not have built them all yet); without a manifest, every dim_/fct_/mart_ table. `only`: the
    models a build just rebuilt; the others keep their current export (rewritten when it is missing)."""
    h = warehouse_home(home)
    db = warehouse_db(h)
    if not db.exists():
        raise PublishError(f"no warehouse at {db}: run `finrag build` first")
    out = h / EXPORTS_SUBDIR
    out.mkdir(parents=True, exist_ok=True)
    wanted = published_names_from_manifest(h)
    published: list[PublishedModel] = []
    try:
        con = duckdb.connect(str(db), read_only=True)
    except duckdb.Error as exc:  # e.g. a build holds the file
        raise PublishError(f"cannot open {db} read-only: {str(exc).splitlines()[0]}") from None
    try:
        present = {
            name for (name,) in con.execute(
                "select table_name from information_schema.tables where table_schema = 'main'"
            ).fetchall()
        }
        names = sorted(present & set(wanted)) if wanted is not None else sorted(
            n for n in present if n.startswith(MART_PREFIXES)
        )
        previous = _previous(out) if only is not None else {}
        for name in names:
            if name in previous and name not in only:
                published.append(previous[name])
                continue
            final = out / f"{name}.parquet"
            tmp = out / f".{name}.parquet.tmp-{os.getpid()}"
            types = con.execute(
                "select column_name, data_type from information_schema.columns where table_schema = 'main' "
                "and table_name = ? order by ordinal_position", [name]).fetchall()
            columns = [c for c, _ in types]
            # sum() of integers is HUGEINT, which Parquet stores as DOUBLE: counts would reach BI tools as floats
            select = ", ".join(f'cast("{c}" as bigint) as "{c}"' if t in ("HUGEINT", "UHUGEINT") else f'"{c}"'
                               for c, t in types)
            con.execute(f'copy (select {select} from main."{name}") to {_sql_literal(str(tmp))} (format parquet)')
            os.replace(tmp, final)
            rows = con.execute(f'select count(*) from main."{name}"').fetchone()[0]
            published.append(PublishedModel(name, final.name, int(rows), columns, final.stat().st_size))
        built_at = _built_at(h, db)
    finally:
        con.close()
    # exports of models that no longer exist would show stale numbers: remove them
    keep = {p.file for p in published}
    for stale in out.glob("*.parquet"):
        if stale.name not in keep:
            stale.unlink()
    manifest = {
        "built_at": built_at,
        "published_at": datetime.now(UTC).isoformat(),
        "warehouse": str(db),
        "models": [asdict(p) for p in published],
    }
    tmp = out / f".{MANIFEST_NAME}.tmp-{os.getpid()}"
    tmp.write_text(json.dumps(manifest, indent=1) + "\n")
    os.replace(tmp, out / MANIFEST_NAME)
    return published

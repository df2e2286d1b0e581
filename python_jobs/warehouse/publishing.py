"""The published state readers use: Parquet exports of the marts and seeds under <home>/exports/marts.

dbt writes it (macros/publishing/publish_marts.sql, an on-run-end hook), so a plain `dbt build` and `finrag build`
leave the same files; `finrag publish` runs the same macro over every node. Readers (`finrag sql`, `report`,
`compare`, `ls`, the dashboard, BI tools) never open the DuckDB file that dbt writes, so they can never hold the lock
a build needs. This module is the readers' side and the housekeeping:

- `read_manifest` / `published_tables`: the one consistent set of files a manifest names, with the check that no
  successful build is newer than what was published (then the reader says so instead of answering);
- `prepare`: called by the dbt plugin when dbt starts, creates the exports directory and deletes export files that
  neither the current nor the previous manifest names (and that are older than the current one, so a running
  build's new files are never touched).

A run-versioned model (incremental, with a run_version column) is published one file per run: a build rewrites
the files of the runs whose version changed and keeps the others, so adding a run to a warehouse of a hundred
writes that run's rows only; its reader still reads one table (the files, and an empty file holding its columns).
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path

from python_jobs.core.config import warehouse_db, warehouse_home
from python_jobs.core.errors import InputError

EXPORTS_SUBDIR = Path("exports") / "marts"
MANIFEST_NAME = "_manifest.json"
PREVIOUS_MANIFEST_NAME = "_manifest.previous.json"
BUILD_RECORD_NAME = "_build.json"


@dataclass(frozen=True)
class PublishedRun:
    run_id: str
    run_version: str
    file: str


@dataclass(frozen=True)
class PublishedModel:
    name: str
    files: list[str]  # relative to the exports directory: one file, or a run-versioned model's schema file + a file
    rows: int         # per run
    columns: list[str]
    runs: list[PublishedRun]  # a run-versioned model's per-run files (empty for the others)


@dataclass(frozen=True)
class Manifest:
    build_id: str
    built_at: datetime
    published_at: datetime
    models: dict[str, PublishedModel]


class PublishError(InputError):
    """Nothing is published, or what is published is older than the warehouse's last successful build."""

    def __init__(self, message: str) -> None:
        super().__init__(message, field="home")


def exports_dir(home: str | os.PathLike[str] | None = None) -> Path:
    return warehouse_home(home) / EXPORTS_SUBDIR


def _read_json(path: Path) -> dict | None:
    try:
        return json.loads(path.read_text())
    except (OSError, ValueError):
        return None


def _parse(raw: dict) -> Manifest:
    return Manifest(
        build_id=raw["build_id"],
        built_at=datetime.fromisoformat(raw["built_at"]),
        published_at=datetime.fromisoformat(raw["published_at"]),
        models={m["name"]: PublishedModel(m["name"], list(m["files"]), int(m["rows"]), list(m["columns"]),
                                          [PublishedRun(**r) for r in m.get("runs") or []])
                for m in raw["models"]},
    )


def read_manifest(home: str | os.PathLike[str] | None = None, check_current: bool = True) -> Manifest:
    """The published state's manifest. PublishError when nothing is published, or (check_current) when a build
    that succeeded after it was not published."""
    out = exports_dir(home)
    raw = _read_json(out / MANIFEST_NAME)
    if raw is None or "build_id" not in raw:
        raise PublishError(f"nothing is published at {out} (no build yet?): run `dbt build` (or `finrag build`)")
    manifest = _parse(raw)
    if check_current:
        record = _read_json(out / BUILD_RECORD_NAME)
        built_at = datetime.fromisoformat(record["built_at"]) if record else None
        if record and record.get("build_id") != manifest.build_id and built_at > manifest.built_at:
            raise PublishError(
                f"the published marts are stale: they are from the build of {manifest.built_at:%Y-%m-%d %H:%M:%S} "
                f"UTC, and the warehouse was built again at {built_at:%Y-%m-%d %H:%M:%S} UTC without publishing "
                "(FINRAG_PUBLISH=0, or its publishing failed): run `finrag publish` (or `dbt build`) to publish it")
    return manifest


def published_tables(home: str | os.PathLike[str] | None = None) -> dict[str, list[Path]]:
    """Published name -> its Parquet files, from one manifest (PublishError as read_manifest)."""
    out = exports_dir(home)
    return {name: [out / f for f in m.files] for name, m in read_manifest(home).models.items()}


def _referenced(out: Path) -> set[str] | None:
    """Files named by the current and the previous manifest; None when the current one cannot be read."""
    current = _read_json(out / MANIFEST_NAME)
    if current is None:
        return None
    names: set[str] = set()
    for raw in (current, _read_json(out / PREVIOUS_MANIFEST_NAME) or {"models": []}):
        for model in raw.get("models", []):
            names.update(model.get("files", []))
    return names


def prepare(home: str | os.PathLike[str] | None = None) -> None:
    """At dbt's start (the plugin): the exports directory exists, and export files no manifest names any more are
    deleted (only those older than the current manifest: a build running now may be writing new ones)."""
    out = exports_dir(home)
    out.mkdir(parents=True, exist_ok=True)
    referenced = _referenced(out)
    if referenced is None:
        return
    cutoff = (out / MANIFEST_NAME).stat().st_mtime
    for path in sorted(out.rglob("*.parquet")):
        name = path.relative_to(out).as_posix()
        if name.startswith("_") or name in referenced or path.stat().st_mtime >= cutoff:
            continue
        path.unlink(missing_ok=True)
    # the folders of a run-versioned model's per-run files, once no file in them is named any more
    for folder in sorted((p for p in out.rglob("*") if p.is_dir()), key=lambda p: len(p.parts), reverse=True):
        if not any(folder.iterdir()):
            folder.rmdir()


def publish(home: str | os.PathLike[str] | None = None, quiet: bool = True) -> Manifest:
    """Publish every mart and seed of the warehouse again (the same macro a build runs), and return the manifest."""
    from python_jobs.warehouse.dbt_runner import run_dbt

    h = warehouse_home(home)
    if not warehouse_db(h).exists():
        raise PublishError(f"no warehouse at {warehouse_db(h)}: run `dbt build` (or `finrag build`) first")
    code = run_dbt(["run-operation", "publish_marts", "--args", "{everything: true}"], home=h, quiet=quiet,
                   env={"FINRAG_PUBLISH": "1"})
    if code:
        raise PublishError(f"publishing failed (dbt run-operation exit {code}; is a build running?)")
    return read_manifest(h)


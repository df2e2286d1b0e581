"""Where the warehouse lives. One environment variable (or the CLI's --home) sets it; profiles.yml reads the same."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from python_jobs.core.errors import InputError

HOME_ENV = "FINRAG_HOME"
DEFAULT_HOME = "warehouse"

# The checkout root: dbt_project.yml and profiles.yml live here.
PROJECT_DIR = Path(__file__).resolve().parents[2]

CACHE_ENV = "FINRAG_CACHE_DIR"


def project_yaml(path: Path) -> Any:
    """One of the project's own YAML files (dbt_project.yml, profiles.yml, rules.yml, contracts.yml) by libyaml's
    safe loader where PyYAML has it: the same values as yaml.safe_load in a tenth of the time (dbt_project.yml
    0.6 ms against 7.6), which every read verb pays at start-up. A user's file (a gate, a sweep grid) is read by
    yaml.safe_load, whose errors the loaders word."""
    import yaml

    return yaml.load(path.read_text(encoding="utf-8"), Loader=getattr(yaml, "CSafeLoader", yaml.SafeLoader))


def cache_dir() -> Path:
    """The machine's cache, shared by every home (PDF page texts, dbt's parse state): $FINRAG_CACHE_DIR, else
    ~/.cache/finrag. Everything in it can be deleted: it is only ever a shortcut to a result the jobs recompute."""
    return Path(os.environ.get(CACHE_ENV) or Path.home() / ".cache" / "finrag")


def warehouse_home(home: str | os.PathLike[str] | None = None) -> Path:
    """The warehouse home: explicit argument, else $FINRAG_HOME, else ./warehouse. A directory, or a path where one
    can be made: a file there (or on the way to it) is an InputError naming the file, not an OSError mid-job."""
    raw = home if home is not None else os.environ.get(HOME_ENV, DEFAULT_HOME)
    path = Path(raw).expanduser().resolve()
    blocking = next((p for p in (path, *path.parents) if p.exists() and not p.is_dir()), None)
    if blocking is not None:
        where = "is a file" if blocking == path else f"cannot be made: {blocking} is a file"
        raise InputError(f"the warehouse home must be a directory, and {path} {where}", file=str(blocking),
                         field=HOME_ENV if home is None else "home")
    return path


def lake_dir(home: Path) -> Path:
    return home / "lake"


WAREHOUSE_FILE = "finrag.duckdb"  # profiles.yml names it too


def warehouse_db(home: Path) -> Path:
    return home / WAREHOUSE_FILE


def lance_dir(home: Path) -> Path:
    return home / "lance"


def gx_dir(home: Path) -> Path:
    """The Great Expectations file context of the home: every landing's validation result
    (python_jobs/validation/)."""
    return home / "gx"


def data_docs_dir(home: Path) -> Path:
    """GX Data Docs of the home: the passed and failed validations of its landings, as HTML (index.html)."""
    return home / "data_docs"


def models_dir(home: Path) -> Path:
    """Models the jobs train (the page scorer's fold models), under the warehouse home."""
    return home / "models"

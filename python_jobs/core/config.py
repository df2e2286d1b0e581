"""Where the warehouse lives. One environment variable (or the CLI's --home) sets it; profiles.yml reads the same."""

from __future__ import annotations

import os
from pathlib import Path

HOME_ENV = "FINRAG_HOME"
DEFAULT_HOME = "warehouse"

# The checkout root: dbt_project.yml and profiles.yml live here.
PROJECT_DIR = Path(__file__).resolve().parents[2]


def warehouse_home(home: str | os.PathLike[str] | None = None) -> Path:
    """The warehouse home: explicit argument, else $FINRAG_HOME, else ./warehouse."""
    raw = home if home is not None else os.environ.get(HOME_ENV, DEFAULT_HOME)
    return Path(raw).expanduser().resolve()


def lake_dir(home: Path) -> Path:
    return home / "lake"


def warehouse_db(home: Path) -> Path:
    return home / "finrag.duckdb"


def lance_dir(home: Path) -> Path:
    return home / "lance"


def models_dir(home: Path) -> Path:
    """Models the jobs train (the page scorer's fold models), under the warehouse home."""
    return home / "models"

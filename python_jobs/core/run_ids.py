"""The one rule of a derived id (a run's, a training's, a sweep's): `<name>-<kind>-<digest[:10]>`, the name with
every character a lake partition may not hold turned into `_` and cut to 60 (room for the kind and the hash in the
lake's 200, tests/unit/core/test_derived_ids.py holds the ids it must keep). Generation runs put their kind first
(`qagen-<name>-<digest[:10]>`), as they always have. A given id (`--run-id`) is the job's, not this module's."""

from __future__ import annotations

import re

NAME_CHARS = 60
_UNSAFE = re.compile(r"[^A-Za-z0-9_.-]")


def lake_safe(name: str) -> str:
    """`name` with every character a lake partition may not hold (non-ASCII letters included) turned into `_`."""
    return _UNSAFE.sub("_", name)


def id_name(name: str) -> str:
    """`name` as it enters a derived id: lake-safe, at most NAME_CHARS characters."""
    return lake_safe(name)[:NAME_CHARS]


def derived_id(name: str, kind: str, digest: str, *, kind_first: bool = False) -> str:
    """The id derived from `name` (a dataset, an answer run), `kind` (`bm25-full`, `rag`, `judge`, ...) and the config
    hash `digest`; `kind_first` for the generation runs' `qagen-<name>-...`."""
    first, second = (kind, id_name(name)) if kind_first else (id_name(name), kind)
    return f"{first}-{second}-{digest[:10]}"

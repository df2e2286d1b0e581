"""What the lake needs from landing validation, declared here so core imports nothing outside core.

The `Lake` validates every frame it lands (lake.py) through a `Validator`: run the table's rules on a frame, raise
the InputError of a failed run, keep the results in the home. The implementation is Great Expectations
(python_jobs/validation/), which registers itself with `register` when the `python_jobs` package is imported, so
every `Lake` any job, test or script builds validates the same way without being handed a validator. A landing with
no validator registered is a JobError, never a landing left unvalidated.

The lake computes, per reference of a frame, the parent ids the validator checks it against: `ParentKeys`.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

from python_jobs.core.errors import JobError

if TYPE_CHECKING:
    import polars as pl

    from python_jobs.core.contracts import Contract, Reference


@dataclass(frozen=True)
class ParentKeys:
    """What a reference is checked against in one landing (the lake computes it: `Lake._parent_keys`).

    ids: the parent's ids (lake without the partitions this landing replaces, plus this landing's frames) that the
    frame holds; for same_dataset references, of the frame's datasets that have parent rows, listed in `datasets`.
    One value set serves every dataset of the frame: exact for a frame of one dataset (every ingest and job lands
    one per frame); a frame mixing datasets A and B would accept an A row naming one of B's ids (ids are unique
    across the lake, so that is the only gap; a per-row (dataset, id) check is GX's pair expectation, which pandas
    runs row by row — minutes on a 10M-row run).
    """

    ids: Sequence[Any]
    datasets: Sequence[str] | None = None  # None for a plain (same_dataset false) reference


class Validator(Protocol):
    """Landing validation as the lake calls it, frame by frame, then once for the landing's results."""

    def validate(self, c: Contract, partition_value: str, frame: pl.DataFrame,
                 parents: Mapping[Reference, ParentKeys], part: tuple[int, int] | None = None) -> Any:
        """Run the table's rules on a typed, stamped frame (slice i of n: `part`); returns the result."""

    def raise_for(self, result: Any, c: Contract, frame: pl.DataFrame,
                  fields: Mapping[str, str] | None = None) -> None:
        """Raise the InputError of a failed result (its first failing rule, first bad row); nothing if it passed."""

    def keep(self, home: Path, results: Sequence[Any]) -> None:
        """Store the landing's results, passed or failed, in the home."""


_REGISTERED: list[Validator] = []


def register(validator: Validator) -> None:
    """Make `validator` the one every landing uses (the last registered wins: a test may swap in its own)."""
    _REGISTERED[:] = [validator]


def validator() -> Validator:
    """The registered validator; a JobError when there is none (a landing is never left unvalidated)."""
    if not _REGISTERED:
        raise JobError("no landing validator is registered: import python_jobs.validation (the python_jobs package "
                       "does so itself) before landing into the lake")
    return _REGISTERED[0]

"""What every ingest shares: frames typed by the contracts, one landing per load, ids already in the lake.

The landing validates every frame against its contract through Great Expectations (python_jobs/validation/),
references included: an ingest checks by hand only what the contracts cannot say (a TREC docno that may be a chunk
id, the question of a FinanceBench answer, duplicates within a file named as the file names them, ...).
"""

from __future__ import annotations

import hashlib
import os
from collections import defaultdict
from collections.abc import Iterable
from pathlib import Path

import polars as pl

from python_jobs.core.console import say
from python_jobs.core.contracts import contract
from python_jobs.core.errors import InputError
from python_jobs.core.lake import Lake, Slices

CORPUS_CHUNKER = "corpus"  # chunker_id of BEIR corpus entries: each entry is one chunk of its own document
# a file of more lines lands in slices of about this many (python_jobs/core/lake.py `Slices`): ~2.5 GB of peak memory
# per slice for a TREC run (parsed, typed, Great Expectations' batch); the environment variable overrides it
SLICE_ROWS_ENV = "FINRAG_LANDING_SLICE_ROWS"
SLICE_ROWS = 5_000_000
BLOCK_BYTES = 64 * 2**20  # a sliced file is read in blocks of about this size


def file_digest(path: Path) -> tuple[str, int]:
    """The file's sha256 and its number of lines (one read)."""
    h, lines, last = hashlib.sha256(), 0, b""
    with open(path, "rb") as fh:
        for block in iter(lambda: fh.read(1 << 20), b""):
            h.update(block)
            lines += block.count(b"\n")
            last = block
    return h.hexdigest(), lines + (1 if last and not last.endswith(b"\n") else 0)


def slice_rows() -> int:
    """Rows per slice of a landing in slices (at least 1)."""
    raw = os.environ.get(SLICE_ROWS_ENV)
    try:
        return max(1, int(raw)) if raw else SLICE_ROWS
    except ValueError:
        raise InputError(f"{SLICE_ROWS_ENV}={raw!r} is not a number of rows", field=SLICE_ROWS_ENV) from None


def slice_count(lines: int) -> int:
    """How many slices a file of `lines` lines lands in (1: the file is read and landed whole, as it always was)."""
    return max(1, -(-lines // slice_rows()))


def write_slice(frame: pl.DataFrame, work: Path, name: str, index: int) -> Path:
    """A slice of a frame to land, written to the job's work dir (`Lake.work_dir`)."""
    path = work / f"{name}-{index:05d}.parquet"
    frame.write_parquet(path)
    return path


class SlicedLanding:
    """What a file read in `n_slices` slices lands as: the one frame of a file read whole (one slice, as small files
    always were), else each slice's rows as a part file in the job's work dir, landed as `Slices` sliced `by`."""

    def __init__(self, n_slices: int, work: Path, name: str, by: tuple[str, ...]) -> None:
        self.n_slices, self.work, self.name, self.by = n_slices, work, name, by
        self._whole: pl.DataFrame | None = None
        self._parts: list[Path] = []

    def add(self, index: int, frame: pl.DataFrame) -> None:
        if self.n_slices == 1:
            self._whole = frame
        elif frame.height:  # a slice no question hashed to writes no part file
            self._parts.append(write_slice(frame, self.work, self.name, index))

    def frame(self) -> pl.DataFrame | Slices:
        return self._whole if self._whole is not None else Slices(self._parts, self.by)


def land(lake: Lake, frames: list[tuple[str, str, pl.DataFrame | Slices]],
         fields: dict[str, dict[str, str]] | None = None) -> None:
    """One call: the lake validates every frame first and lands all of them or none. `fields`: per table, how the
    input names a contract column, so a validation error names the input's field (see `Lake.land`)."""
    landed = lake.land([f for f in frames if not f[2].is_empty()], fields=fields)
    by_table: dict[str, list] = defaultdict(list)
    for x in landed:
        by_table[x.table].append(x)
    for table, xs in by_table.items():
        where = (f"{contract(table).partition}={xs[0].partition_value}" if len(xs) == 1
                 else f"{len(xs)} partitions")
        say(f"landed {table} {where}: {sum(x.rows for x in xs)} rows")


def existing_ids(
    lake: Lake, table: str, dataset: str, column: str, skip_partition: str | None = None
) -> set[str] | None:
    """Ids already in the lake for a dataset (None when the dataset has no rows in that table).

    Rows of the partition being replaced by this load are ignored: they are about to go.
    """
    part = contract(table).partition
    df = lake.read(table, where={"dataset": dataset}, columns=[column, part])
    if skip_partition is not None:
        df = df.filter(pl.col(part) != skip_partition)
    return set(df[column].to_list()) if df.height else None


def _duplicate(what: str, key: object, first: int, file: str, line: int, field: str) -> InputError:
    return InputError(f"duplicate {what} {key!r} (first on line {first})", file=file, line=line, field=field)


def check_duplicates(rows: Iterable[tuple[int, object]], key, file: str, field: str, what: str) -> None:
    """Parsed records (line, record): the first line whose key(record) an earlier line already had is an error."""
    seen: dict[object, int] = {}
    for line, r in rows:
        k = key(r)
        if k in seen:
            raise _duplicate(what, k, seen[k], file, line, field)
        seen[k] = line


def check_frame_duplicates(frame: pl.DataFrame, key: list[str], file: str, field: str, what: str) -> None:
    """`check_duplicates` for a frame with a `_line` column, on the `key` columns. A 64-bit hash of the key finds
    the candidate rows (a window over the string keys of a 100M-line run needs tens of GB); only rows whose hash
    repeats are compared exactly."""
    suspects = frame.select(pl.struct(key).hash(seed=0).is_duplicated())[:, 0]
    if not suspects.any():
        return
    dup = (frame.filter(suspects).select("_line", *key)
           .with_columns(pl.col("_line").min().over(key).alias("_first"))
           .filter(pl.col("_line") != pl.col("_first")).sort("_line").head(1))
    if dup.height:
        row = dup.row(0, named=True)
        raise _duplicate(what, tuple(row[c] for c in key), row["_first"], file, row["_line"], field)

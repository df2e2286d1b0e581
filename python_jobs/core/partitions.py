"""The lake's files: partition directories and their part files, the frames and slices a landing writes, and the
contract's schema applied to them (lake.py lands them; a reader reads every part file of a partition).

    <home>/lake/<table>/<partition column>=<value>/part-0.parquet [part-1.parquet ...]
    <home>/lake/<table>/<partition column>=<value>/shard-<I>-of-<N>.part-<k>.parquet   (a shard's rows)
    <home>/lake/<table>/<partition column>=__empty__/part-0.parquet   (a typed placeholder, so dbt sources bind)
"""

from __future__ import annotations

import os
import re
import uuid
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import polars as pl

from python_jobs.core.console import say
from python_jobs.core.contracts import CONTRACTS, Contract
from python_jobs.core.errors import InputError, JobError
from python_jobs.core.shards import Shard

PLACEHOLDER = "__empty__"
_SAFE_ID = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.\-]{0,199}$")
ORIGIN = ("_file", "_line")
# a partition's part files: part-<k>.parquet (an unsharded landing), shard-<I>-of-<N>.part-<k>.parquet (a shard's)
_PART = re.compile(r"^(?:shard-(\d+)-of-(\d+)\.)?part-(\d+)\.parquet$")


def check_id(value: str, what: str = "id") -> str:
    if not _SAFE_ID.match(value or "") or value == PLACEHOLDER:
        raise InputError(f"{what} {value!r} must match {_SAFE_ID.pattern} (it names a lake partition)")
    return value


@dataclass(frozen=True)
class Slices:
    """One frame of a landing given as slices (see lake.py's docstring): `parts`, Parquet files of the frame's rows
    (with `_file` / `_line` when the rows have them), each read, validated and written on its own, in order; `by`,
    the columns the rows were sliced by (no value of them in two parts). Its rows are counted as they are landed."""

    parts: Sequence[Path]
    by: tuple[str, ...]

    def is_empty(self) -> bool:
        """No slice had a row (as `pl.DataFrame.is_empty`: callers skip empty frames of either kind alike)."""
        return not self.parts


def part_files(directory: Path) -> list[Path]:
    """A partition directory's part files in order: an unsharded landing's part-<n>.parquet, then shards' files by
    shard count, shard and part."""
    if not directory.is_dir():
        return []
    parts = []
    for p in directory.iterdir():
        m = _PART.match(p.name)
        if m:
            parts.append(((int(m[2]), int(m[1])) if m[1] else (0, 0), int(m[3]), p))
    return [p for _, _, p in sorted(parts, key=lambda x: x[:2])]


def is_run_level(c: Contract) -> bool:
    """A table of one row per partition (a run's own row: retrieval_runs, generation_runs, judge_runs)."""
    return c.key == (c.partition,)


def shard_prefix(c: Contract, shard: Shard | None) -> str:
    """The part-file name prefix of a shard's rows of `c` ('' = the partition's own part files: unsharded, or the
    one merged row of a run-level table)."""
    return f"{shard.tag}." if shard is not None and not is_run_level(c) else ""


def other_shards_files(directory: Path, shard: Shard | None) -> list[Path]:
    """The part files of the same sharding's other shards (what a shard's landing leaves in place)."""
    if shard is None:
        return []
    out = []
    for p in part_files(directory):
        m = _PART.match(p.name)
        if m and m[1] and int(m[2]) == shard.count and int(m[1]) != shard.index:
            out.append(p)
    return out


def say_replaced_sharding(c: Contract, value: str, shard: Shard | None, names: list[str]) -> None:
    if names:
        say(f"{c.name} {c.partition}={value}: shard {shard} replaces files of another landing of the run "
            f"({', '.join(names[:3])}{' ...' if len(names) > 3 else ''}): land the run's other shards too")


def write_part(frame: pl.DataFrame, directory: Path, index: int, prefix: str = "") -> None:
    directory.mkdir(parents=True, exist_ok=True)
    frame.drop([x for x in ORIGIN if x in frame.columns]).write_parquet(directory / f"{prefix}part-{index}.parquet")


def scan_frame(frame: pl.DataFrame | Slices) -> pl.LazyFrame:
    """The rows of a frame or of every slice (slices may lack a nullable column the others have)."""
    if not isinstance(frame, Slices):
        return frame.lazy()
    if not frame.parts:
        return pl.LazyFrame()
    return pl.concat([pl.scan_parquet(p) for p in frame.parts], how="diagonal_relaxed")


def check_slicing(c: Contract, frame: Slices) -> None:
    """Uniqueness within each slice is uniqueness within the frame only when every key and unique column set holds
    the slicing columns (a bug of the caller otherwise, not bad input)."""
    for cols in (c.key, *c.unique):
        if not set(frame.by) <= set(cols):
            raise JobError(f"{c.name}: sliced by {list(frame.by)}, which {list(cols)} does not contain: a slice's "
                           "uniqueness checks would not hold for the whole frame")


def check_disjoint(c: Contract, frame: Slices, piece: pl.DataFrame, seen: pl.Series | None) -> pl.Series:
    """No value of the slicing columns in two slices (then each slice's key checks are exact); returns the values
    seen so far."""
    values = piece.select(pl.struct(list(frame.by)).unique().alias("v"))["v"]
    if seen is not None and values.is_in(seen.implode()).any():
        raise JobError(f"{c.name}: a value of {list(frame.by)} is in two slices of the landing")
    return values if seen is None else pl.concat([seen, values])


def scan_files(files: list[Path]) -> pl.LazyFrame:
    """The files as one frame with every column any of them has (a file landed before a column was added lacks
    it: nulls there, which `conform` turns into the column's default). The union schema is given to the scan: from
    the first file's alone, a column the first file lacks would be dropped from every file."""
    schema: dict[str, pl.DataType] = {}
    for f in files:
        for name, dtype in pl.read_parquet_schema(f).items():
            schema.setdefault(name, dtype)
    return pl.scan_parquet(files, schema=schema, missing_columns="insert", extra_columns="ignore")


def read_key(files: list[Path], c: Contract, key: list[str]) -> pl.DataFrame:
    """Only the key columns of the files (a cross-load check of a 100M-row table reads no other column); a key
    column with a default that a file landed before it lacks (judgments.repeat) reads as its default."""
    scan = scan_files(files)
    have = set(scan.collect_schema().names())
    defaults = c.defaults
    return scan.select([
        (pl.col(k).cast(c.schema[k]).fill_null(pl.lit(defaults[k], dtype=c.schema[k])) if k in defaults
         else pl.col(k).cast(c.schema[k])) if k in have else pl.lit(defaults.get(k), dtype=c.schema[k]).alias(k)
        for k in key]).collect()


def conform(frame: pl.DataFrame, c: Contract, keep_origin: bool = False) -> pl.DataFrame:
    """Cast to the contract's schema (missing nullable columns become nulls; a column with a default, missing or
    null, its default: a partition landed before it), in contract column order."""
    cols = []
    defaults = c.defaults
    for name, dtype in c.schema.items():
        if name in frame.columns:
            col = pl.col(name).cast(dtype, strict=True)
            cols.append(col.fill_null(pl.lit(defaults[name], dtype=dtype)) if name in defaults else col)
        else:
            cols.append(pl.lit(defaults.get(name), dtype=dtype).alias(name))
    if keep_origin:
        cols += [pl.col(x) for x in ORIGIN if x in frame.columns]
    return frame.select(cols)


def conform_checked(frame: pl.DataFrame, c: Contract) -> pl.DataFrame:
    """The frame's shape and types: no column outside the contract, every required column present, each value cast
    to the contract's type (with the origin columns kept). Its other rules are the validator's (validator.py)."""
    unknown = [x for x in frame.columns if x not in c.schema and x not in ORIGIN]
    if unknown:
        raise InputError(f"{c.name}: columns not in the contract: {unknown}", field=unknown[0])
    missing = [x for x in c.not_null if x not in frame.columns and x not in c.defaults]
    if missing:
        raise InputError(f"{c.name}: required column missing", field=missing[0])
    try:
        return conform(frame, c, keep_origin=True)
    except (pl.exceptions.InvalidOperationError, pl.exceptions.ComputeError) as exc:
        raise InputError(f"{c.name}: a value does not fit the contract's type: {exc}".splitlines()[0]) from None


def ensure_placeholders(root: Path) -> None:
    """An empty, typed partition per table, so dbt sources bind before any job has run."""
    for c in CONTRACTS.values():
        path = root / c.name / f"{c.partition}={PLACEHOLDER}" / "part-0.parquet"
        empty = pl.DataFrame(schema=c.polars_schema)
        if path.exists():
            try:
                if pl.read_parquet_schema(path) == dict(empty.schema):
                    continue
            except Exception:  # noqa: BLE001 - an unreadable placeholder is rewritten below
                pass
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = path.with_suffix(f".{uuid.uuid4().hex}.tmp")
        empty.write_parquet(tmp)
        os.replace(tmp, path)


"""The Parquet lake: the only way any job lands a table partition (SPEC §2).

    <home>/lake/<table>/<partition column>=<value>/part-0.parquet [part-1.parquet ...]

A landing validates every frame against its contract first, writes all of them to a staging area, then swaps them
into place under a journal, so a crash leaves either the old or the new partitions (the next `Lake` rolls an
interrupted swap forward) and never a half-written file. Landing the same load/run id again replaces its partition:
re-runs are idempotent. The DuckDB warehouse file is never touched here.

Validation, in order: the frame's shape (no column outside the contract, every required column present), its types
(cast to the contract's Polars schema, `conform`), then the contract's rules through Great Expectations
(python_jobs/validation/, called through core/validator.py: required, accepted, ranges, key within the frame,
references to the lake and to the other frames of the same landing), then keys unique across loads (here: a key
another partition already landed is a property of the lake, not of one frame). Each frame's GX result, passed or
failed, is stored in the home ($FINRAG_HOME/gx/) and shown in its Data Docs ($FINRAG_HOME/data_docs/).

A landing's files and the swap machinery are partitions.py and journal.py; this module is the `Lake`: its readers,
its landing and the checks a landing runs.
Frames may carry `_file` and `_line` columns (where each row came from); validation errors then name them, and they
are dropped before writing.

A frame too large to hold and validate at once (a 100M-line TREC run) is given as `Slices`: Parquet files of the
frame's rows, each holding every row of its values of the slicing columns (e.g. all of a question's results). Each
slice is validated on its own (its own GX result) and written as its own part file (part-0, part-1, ... of one
partition directory); the partition is swapped in whole with the landing's other frames, under the same journal, so
all or nothing still holds. Keys and unique column sets contain the slicing columns and no value of them is in two
slices (checked), so uniqueness within each slice is uniqueness within the frame. Readers read every part file.

A shard of a sharded job (`land(..., shard=)`, python_jobs/core/shards.py) lands its rows as its own part files of
the run's partition, `shard-<I>-of-<N>.part-<k>.parquet`, beside the other shards' (same directory level, so dbt's
`<table>/*/*.parquet` source glob reads them all): its swap moves those files in and removes the files it replaces
(its own earlier ones, and any of another sharding of the partition: unsharded parts, shards of another N), under
the same journal, so a killed shard leaves the partition as it was or wholly updated. Keys are checked against the
other shards' files too. A run-level table (key = its partition column: one row per run) keeps one row: a shard
replaces the partition with its row merged into the landed one (`shards.merge_run_row`, under the writer lock, so
shards landing concurrently never lose each other's work). An unsharded landing replaces the whole partition, every
shard's files included.
"""

from __future__ import annotations

import os
import shutil
import uuid
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

import polars as pl

from python_jobs.core.config import lake_dir, warehouse_home
from python_jobs.core.contracts import Contract, Reference, contract
from python_jobs.core.errors import InputError
from python_jobs.core.journal import WORK_DIR, Journalled
from python_jobs.core.partitions import (
    ORIGIN,
    PLACEHOLDER,
    Slices,
    check_disjoint,
    check_id,
    check_slicing,
    conform,
    conform_checked,
    ensure_placeholders,
    is_run_level,
    other_shards_files,
    part_files,
    read_key,
    say_replaced_sharding,
    scan_files,
    scan_frame,
    shard_prefix,
    write_part,
)
from python_jobs.core.shards import Shard, merge_run_row
from python_jobs.core.validator import ParentKeys, Validator, validator

# other modules import these from here: the lake's API is one import (partitions.py is where they live)
__all__ = ["Landing", "Lake", "Slices", "check_id", "check_keys_across_loads", "conform", "ensure_placeholders",
           "now_utc"]


def now_utc() -> datetime:
    return datetime.now(UTC)


@dataclass(frozen=True)
class Landing:
    table: str
    partition_value: str
    rows: int
    path: Path


class Lake(Journalled):
    def __init__(self, home: str | os.PathLike[str] | None = None, replace_other_datasets: bool = False):
        """`replace_other_datasets`: a landing may replace a partition that holds another dataset's rows (a
        `--run-id` reused for another dataset); without it that is an InputError, since the other dataset's run
        would be gone without a word."""
        self.home = warehouse_home(home)
        self.replace_other_datasets = replace_other_datasets
        super().__init__(lake_dir(self.home), self.home / WORK_DIR)
        self.root.mkdir(parents=True, exist_ok=True)
        self.recover()
        self._clean_work()
        ensure_placeholders(self.root)

    # ---- reading -------------------------------------------------------------------------------------------
    def table_dir(self, table: str) -> Path:
        contract(table)
        return self.root / table

    def partition_path(self, table: str, value: str) -> Path:
        """The partition's first part file (a partition landed in slices has more: `partition_files`)."""
        c = contract(table)
        return self.table_dir(table) / f"{c.partition}={value}" / "part-0.parquet"

    def partition_files(self, table: str, value: str) -> list[Path]:
        """Every part file of a partition, in part order (a partition landed in slices has several)."""
        return part_files(self.partition_path(table, value).parent)

    def partitions(self, table: str) -> list[str]:
        c = contract(table)
        prefix = f"{c.partition}="
        d = self.table_dir(table)
        if not d.exists():
            return []
        return sorted(
            p.name[len(prefix) :]
            for p in d.iterdir()
            if p.is_dir() and p.name.startswith(prefix) and p.name != f"{prefix}{PLACEHOLDER}"
        )

    def read(
        self, table: str, where: Mapping[str, object] | None = None, columns: list[str] | None = None
    ) -> pl.DataFrame:
        """All rows of a table (optionally filtered by column equality), typed by its contract."""
        c = contract(table)
        with self.reading():
            files = [f for v in self.partitions(table) for f in self.partition_files(table, v)]
            if not files:
                frame = pl.DataFrame(schema=c.polars_schema)
            else:
                frame = conform(scan_files(files).collect(), c)
        for col, val in (where or {}).items():
            frame = frame.filter(pl.col(col) == val)
        return frame.select(columns) if columns else frame

    def read_partition(self, table: str, value: str) -> pl.DataFrame:
        with self.reading():
            files = self.partition_files(table, value)
            if not files:
                return pl.DataFrame(schema=contract(table).polars_schema)
            return conform(scan_files(files).collect(), contract(table))

    # ---- writing -------------------------------------------------------------------------------------------
    def land(self, frames: Iterable[tuple[str, str, pl.DataFrame | Slices]],
             fields: Mapping[str, Mapping[str, str]] | None = None, shard: Shard | None = None,
             work: Mapping[str, Mapping[str, str]] | None = None) -> list[Landing]:
        """Validate every (table, partition value, frame), then land them all or none.

        The partition column is filled with the partition value and `created_at` with now where absent (one time
        for the whole landing). A frame may be `Slices` (a frame too large to validate at once): each slice is
        validated and written in turn, under the writer lock. `fields`: per table, how the input names a contract
        column in error messages (e.g. a TREC run's `topic` for retrieval_results.question_id; a template over the row
        such as `evidence[{evidence_ordinal}].doc_name`).

        `shard`: land as that shard of a sharded job (see the module docstring); `work`: per run-level table, its
        params keys that are each shard's own (`shards.merge_run_row`).
        """
        now = now_utc()
        prepared: list[tuple[Contract, str, pl.DataFrame | Slices]] = []
        for table, value, frame in frames:
            c = contract(table)
            check_id(value, f"{c.partition} for {table}")
            if isinstance(frame, Slices):
                check_slicing(c, frame)
                prepared.append((c, value, frame))
            elif shard is not None and is_run_level(c):
                prepared.append((c, value, frame))  # merged with the landed row under the writer lock, below
            else:
                prepared.append((c, value, conform_checked(self._stamp(frame, c, value, now), c)))
        # check, stage and swap under the lake's writer lock: two landings never both pass the cross-load key
        # check, and no other job's recovery touches this landing's staging area
        with self._writer_lock():
            self._recover()  # a landing killed mid-apply is finished before anything reads the lake for this one
            if shard is not None:
                prepared = [(c, value, self._merged_run_row(c, value, frame, shard, (work or {}).get(c.name, {}), now))
                            if is_run_level(c) and isinstance(frame, pl.DataFrame) else (c, value, frame)
                            for c, value, frame in prepared]
            return self._land_locked(prepared, fields or {}, now, shard)

    def _merged_run_row(self, c: Contract, value: str, frame: pl.DataFrame, shard: Shard, work: Mapping[str, str],
                        now: datetime) -> pl.DataFrame:
        """A shard's run row merged into the run's landed one (under the writer lock: read, merge, land as one)."""
        merged = merge_run_row(self.read_partition(c.name, value), frame, shard, work, value)
        return conform_checked(self._stamp(merged, c, value, now), c)

    def _land_locked(self, prepared: list[tuple[Contract, str, pl.DataFrame | Slices]],
                     fields: Mapping[str, Mapping[str, str]], now: datetime,
                     shard: Shard | None = None) -> list[Landing]:
        txid = uuid.uuid4().hex
        stage = self._staging / txid
        try:
            staged_parts = self._validate(prepared, fields, now, stage, shard)
        except BaseException:
            shutil.rmtree(stage, ignore_errors=True)  # a kill leaves it to the next recovery instead
            raise
        moves = []
        paths = []
        for c, value, frame in prepared:
            target_dir = self.root / c.name / f"{c.partition}={value}"
            staged = stage / c.name / f"{c.partition}={value}"
            prefix = shard_prefix(c, shard)
            if not isinstance(frame, Slices):
                write_part(frame, staged, 0, prefix)
            move: dict[str, object] = {"staged": str(staged), "target": str(target_dir)}
            if prefix:  # a shard's files in, what they replace out; the other shards' files stay
                files = sorted(p.name for p in part_files(staged))
                keep = {p.name for p in other_shards_files(target_dir, shard)}
                replaced = [p.name for p in part_files(target_dir) if p.name not in keep]
                say_replaced_sharding(c, value, shard, [n for n in replaced if not n.startswith(prefix)])
                move |= {"files": files, "remove": [n for n in replaced if n not in files]}
                paths.append(target_dir / files[0] if files else target_dir)
            else:
                paths.append(target_dir / "part-0.parquet")
            moves.append(move)
        self._commit(txid, moves, stage)
        return [
            Landing(c.name, value, staged_parts[(c.name, value)] if isinstance(frame, Slices) else frame.height, path)
            for (c, value, frame), path in zip(prepared, paths, strict=True)
        ]

    def land_one(self, table: str, value: str, frame: pl.DataFrame) -> Landing:
        return self.land([(table, value, frame)])[0]

    def drop_partition(self, table: str, value: str) -> bool:
        with self._writer_lock():
            d = self.partition_path(table, value).parent
            if not d.exists():
                return False
            trash = self._trash / uuid.uuid4().hex
            trash.mkdir(parents=True)
            os.replace(d, trash / d.name)
            shutil.rmtree(trash, ignore_errors=True)
            return True

    def _validate(self, prepared: list[tuple[Contract, str, pl.DataFrame | Slices]],
                  fields: Mapping[str, Mapping[str, str]], now: datetime, stage: Path,
                  shard: Shard | None = None) -> dict[tuple[str, str], int]:
        """The contract's rules through GX, frame by frame (the first failing frame raises), then keys across loads.
        Every GX result of the landing, the failed one included, is kept in the home before this returns or raises.

        `Slices` are validated slice by slice, and each slice is written to the staging area `stage` once valid (so
        one slice is in memory at a time); returns the rows of each sliced frame."""
        check = validator()  # a JobError before anything is staged when no validator is registered
        if not self.replace_other_datasets:
            for c, value, frame in prepared:
                self._check_same_dataset(c, value, frame)
        results: list = []
        rows: dict[tuple[str, str], int] = {}
        try:
            for c, value, frame in prepared:
                if not isinstance(frame, Slices):
                    self._validate_frame(check, c, value, frame, prepared, fields, results, shard=shard)
                    continue
                seen = None  # the slicing columns' values of the slices before
                staged = stage / c.name / f"{c.partition}={value}"
                rows[(c.name, value)] = 0
                for i, part in enumerate(frame.parts):
                    piece = conform_checked(self._stamp(pl.read_parquet(part), c, value, now), c)
                    seen = check_disjoint(c, frame, piece, seen)
                    self._validate_frame(check, c, value, piece, prepared, fields, results,
                                         (i + 1, len(frame.parts)), shard)
                    write_part(piece, staged, i, shard_prefix(c, shard))
                    rows[(c.name, value)] += piece.height
                    del piece
        finally:
            check.keep(self.home, results)
        return rows

    def _validate_frame(self, check: Validator, c: Contract, value: str, frame: pl.DataFrame,
                        prepared: list[tuple[Contract, str, pl.DataFrame | Slices]],
                        fields: Mapping[str, Mapping[str, str]], results: list,
                        part: tuple[int, int] | None = None, shard: Shard | None = None) -> None:
        parents = {r: self._parent_keys(r, frame, prepared) for r in c.references}
        results.append(check.validate(c, value, frame, parents, part))
        check.raise_for(results[-1], c, frame, fields.get(c.name))
        check_keys_across_loads(self, c, value, frame, shard)

    def _check_same_dataset(self, c: Contract, value: str, frame: pl.DataFrame | Slices) -> None:
        """A partition that already holds rows of other datasets is not silently replaced by this one's."""
        files = self.partition_files(c.name, value)
        if c.partition == "dataset" or "dataset" not in scan_frame(frame).collect_schema().names() or not files:
            return
        before = set(pl.scan_parquet(files).select("dataset").unique().collect()["dataset"].drop_nulls())
        now = set(scan_frame(frame).select("dataset").unique().collect()["dataset"].drop_nulls())
        lost = sorted(before - now)
        if lost:
            raise InputError(
                f"{c.partition} {value!r} already holds {c.name} of dataset {', '.join(map(repr, lost))}; landing "
                f"dataset {', '.join(map(repr, sorted(now)))} under it would replace "
                "them: choose another id, or pass --replace", field=c.partition)

    def _parent_keys(self, ref: Reference, child: pl.DataFrame,
                     landing: list[tuple[Contract, str, pl.DataFrame | Slices]]) -> ParentKeys:
        """A reference's parent ids for one landing: the lake's (without the partitions this landing replaces) plus
        this landing's frames of the parent table; only the ids the child holds, and for same_dataset references only
        of the child's datasets (with the datasets that have parent rows at all)."""
        parent = contract(ref.table)
        cols = ["dataset", ref.field] if ref.same_dataset else [ref.field]
        schema = {col: parent.schema[col] for col in cols}
        replaced = {v for c, v, _ in landing if c.name == ref.table}
        files = [f for v in self.partitions(ref.table) if v not in replaced for f in self.partition_files(ref.table, v)]
        parts = [scan_frame(f).select(pl.col(col).cast(dtype) for col, dtype in schema.items())
                 for c, _, f in landing if c.name == ref.table]
        if files:
            parts.append(pl.scan_parquet(files, missing_columns="insert", extra_columns="ignore")
                         .select(pl.col(col).cast(dtype) for col, dtype in schema.items()))
        keys = pl.concat(parts) if parts else pl.LazyFrame(schema=schema)
        if not ref.same_dataset:
            return ParentKeys(ids=_ids_held(keys.select(ref.field).unique().collect()[ref.field], child[ref.column]))
        keys = keys.filter(pl.col("dataset").is_in(child["dataset"].drop_nulls().unique().implode())).collect()
        return ParentKeys(ids=_ids_held(keys[ref.field].unique(), child[ref.column]),
                          datasets=keys["dataset"].unique().sort().to_list())

    @staticmethod
    def _stamp(frame: pl.DataFrame, c: Contract, value: str, now: datetime | None = None) -> pl.DataFrame:
        if c.partition in frame.columns:
            bad = frame.filter(pl.col(c.partition) != value)
            if bad.height:
                raise InputError(f"rows carry {c.partition}={bad[c.partition][0]!r}, landing into {value!r}")
        else:
            frame = frame.with_columns(pl.lit(value).alias(c.partition))
        if "created_at" not in frame.columns:
            frame = frame.with_columns(pl.lit(now or now_utc()).cast(pl.Datetime("us", "UTC")).alias("created_at"))
        return frame


def _ids_held(parent_ids: pl.Series, column: pl.Series) -> list:
    """The parent's (distinct) ids that the child's column holds, sorted. The child's distinct values are hashed only
    when the parent has more ids than the child has rows: a pooled TREC qrels of 8M judgments names millions of
    docnos, of a dataset that often has no documents at all (then nothing is hashed) or far fewer ids than rows."""
    if parent_ids.is_empty():
        return []
    if parent_ids.len() < column.len():
        return column.filter(column.is_in(parent_ids.implode())).unique().sort().to_list()
    return parent_ids.filter(parent_ids.is_in(column.drop_nulls().unique().implode())).sort().to_list()


def check_keys_across_loads(lake: Lake, c: Contract, partition_value: str, frame: pl.DataFrame,
                            shard: Shard | None = None) -> None:
    """Keys are unique across the whole table, not just within one load: a key another partition already landed is
    a property of the lake, so it is checked here rather than in the frame's GX suite. A shard's rows are checked
    against the other shards' files of their own partition too."""
    key = list(c.key)
    if (c.partition in key and shard is None) or not frame.height:
        return
    # a key holding the partition column cannot clash with another partition's: then only the other shards' files
    values = [partition_value] if c.partition in key else lake.partitions(c.name)
    for value in values:
        files = lake.partition_files(c.name, value)
        if value == partition_value:
            files = other_shards_files(lake.partition_path(c.name, value).parent, shard)
        if not files:
            continue
        other = read_key(files, c, key)
        clash = frame.select(key).with_row_index("_i").join(other, on=key, how="inner")
        if clash.height:
            i = int(clash["_i"].min())
            where = {x.lstrip("_"): frame[x][i] for x in ORIGIN if x in frame.columns}
            raise InputError(
                f"{c.name}: key {tuple(frame.row(i, named=True)[k] for k in key)} already landed by "
                f"{c.partition}={value}",
                field=key[-1],
                **where,
            )



"""The Parquet lake: the only way any job lands a table partition (SPEC §2).

    <home>/lake/<table>/<partition column>=<value>/part-0.parquet [part-1.parquet ...]

A landing validates every frame against its contract first, writes all of them to a staging area, then swaps them
into place under a journal, so a crash leaves either the old or the new partitions (the next `Lake` rolls an
interrupted swap forward) and never a half-written file. Landing the same load/run id again replaces its partition:
re-runs are idempotent. The DuckDB warehouse file is never touched here.

Validation, in order: the frame's shape (no column outside the contract, every required column present), its types
(cast to the contract's Polars schema, `conform`), then the contract's rules through Great Expectations
(python_jobs/core/validation.py: required, accepted, ranges, key within the frame, references to the lake and to the
other frames of the same landing), then keys unique across loads (here: a key another partition already landed is a
property of the lake, not of one frame). Each frame's GX result, passed or failed, is stored in the home
($FINRAG_HOME/gx/) and shown in its Data Docs ($FINRAG_HOME/data_docs/).

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

import fcntl
import json
import os
import re
import shutil
import uuid
from collections.abc import Iterable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

import polars as pl

from python_jobs.core import validation
from python_jobs.core.config import lake_dir, warehouse_home
from python_jobs.core.console import say
from python_jobs.core.contracts import CONTRACTS, Contract, Reference, contract
from python_jobs.core.errors import InputError, JobError
from python_jobs.core.shards import Shard, merge_run_row

PLACEHOLDER = "__empty__"
# writer locks this process holds: a read under one must not wait for it (flock is per open file, so a second
# open of lake/_lock in the same process would wait for the first forever)
_WRITING = 0
_SAFE_ID = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.\-]{0,199}$")
_ORIGIN = ("_file", "_line")
# a partition's part files: part-<k>.parquet (an unsharded landing), shard-<I>-of-<N>.part-<k>.parquet (a shard's)
_PART = re.compile(r"^(?:shard-(\d+)-of-(\d+)\.)?part-(\d+)\.parquet$")


def check_id(value: str, what: str = "id") -> str:
    if not _SAFE_ID.match(value or "") or value == PLACEHOLDER:
        raise InputError(f"{what} {value!r} must match {_SAFE_ID.pattern} (it names a lake partition)")
    return value


def now_utc() -> datetime:
    return datetime.now(UTC)


@dataclass(frozen=True)
class Slices:
    """One frame of a landing given as slices (see the module docstring): `parts`, Parquet files of the frame's rows
    (with `_file` / `_line` when the rows have them), each read, validated and written on its own, in order; `by`,
    the columns the rows were sliced by (no value of them in two parts). Its rows are counted as they are landed."""

    parts: Sequence[Path]
    by: tuple[str, ...]

    def is_empty(self) -> bool:
        """No slice had a row (as `pl.DataFrame.is_empty`: callers skip empty frames of either kind alike)."""
        return not self.parts


@dataclass(frozen=True)
class Landing:
    table: str
    partition_value: str
    rows: int
    path: Path


class Lake:
    def __init__(self, home: str | os.PathLike[str] | None = None, replace_other_datasets: bool = False):
        """`replace_other_datasets`: a landing may replace a partition that holds another dataset's rows (a
        `--run-id` reused for another dataset); without it that is an InputError, since the other dataset's run
        would be gone without a word."""
        self.home = warehouse_home(home)
        self.replace_other_datasets = replace_other_datasets
        self.root = lake_dir(self.home)
        self._staging = self.root / "_staging"
        self._journal = self.root / "_journal"
        self._trash = self.root / "_trash"
        self._work = self.home / WORK_DIR
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

    @contextmanager
    def reading(self) -> Iterator[None]:
        """A view of the lake no landing changes while it is held: a shared flock on lake/_lock, which a landing's
        check-and-swap (exclusive) waits for, and which waits for a swap under way. A landing killed mid-apply is
        rolled forward before the view is taken, so no reader sees one table of a load new and another old.
        `finrag build` (the dbt plugin) holds it for the whole build. A no-op under this process's own landing."""
        if _WRITING:
            yield
            return
        fd = os.open(self.root / "_lock", os.O_RDWR | os.O_CREAT, 0o644)
        try:
            if any(self._journal.glob("*.json")) and _try_flock(fd, fcntl.LOCK_EX):
                self._recover()  # nobody holds the lake: the journal is a killed landing's
            _flock(fd, fcntl.LOCK_SH, "a landing is swapping its partitions in")
            yield
        finally:
            os.close(fd)  # releases the lock

    def resolve_chunker(self, dataset: str, chunker_id: str | None) -> str:
        """The dataset's chunks partition to use: the given chunker id, else the dataset's only one."""
        have = [p[len(dataset) + 1 :] for p in self.partitions("chunks") if p.startswith(f"{dataset}.")]
        if chunker_id:
            if chunker_id not in have:
                raise InputError(f"no chunks for dataset {dataset!r} with chunker id {chunker_id!r}; "
                                 f"have {have or 'none'}", field="chunker_id")
            return chunker_id
        if not have:
            raise InputError(f"no chunks for dataset {dataset!r}: run `finrag chunk` (or ingest a BEIR corpus) first",
                             field="dataset")
        if len(have) > 1:
            raise InputError(f"dataset {dataset!r} has several chunkers {have}: pick one with --chunker-id",
                             field="chunker_id")
        return have[0]

    def read_chunks(self, dataset: str, chunker_id: str) -> pl.DataFrame:
        return self.read_partition("chunks", f"{dataset}.{chunker_id}")

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
                _check_slicing(c, frame)
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
            prefix = _shard_prefix(c, shard)
            if not isinstance(frame, Slices):
                _write_part(frame, staged, 0, prefix)
            move: dict[str, object] = {"staged": str(staged), "target": str(target_dir)}
            if prefix:  # a shard's files in, what they replace out; the other shards' files stay
                files = sorted(p.name for p in part_files(staged))
                keep = {p.name for p in _other_shards_files(target_dir, shard)}
                replaced = [p.name for p in part_files(target_dir) if p.name not in keep]
                _say_replaced_sharding(c, value, shard, [n for n in replaced if not n.startswith(prefix)])
                move |= {"files": files, "remove": [n for n in replaced if n not in files]}
                paths.append(target_dir / files[0] if files else target_dir)
            else:
                paths.append(target_dir / "part-0.parquet")
            moves.append(move)
        self._journal.mkdir(parents=True, exist_ok=True)
        journal = self._journal / f"{txid}.json"
        tmp = journal.with_suffix(".tmp")
        tmp.write_text(json.dumps({"txid": txid, "moves": moves}))
        os.replace(tmp, journal)  # from here on, the landing is committed: recover() rolls it forward
        self._apply(txid, moves)
        journal.unlink()
        shutil.rmtree(stage, ignore_errors=True)
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

    @contextmanager
    def _writer_lock(self, wait: bool = True) -> Iterator[bool]:
        """The lake's one writer lock, an flock on lake/_lock: yields whether it is held (always, when waiting).
        The kernel drops it when its holder dies, so a killed job's journal is recovered by the next job, and only
        then: a live landing's journal and staging area are never touched. Not re-entrant (flock is per open file):
        nothing called under it takes it again."""
        global _WRITING
        fd = os.open(self.root / "_lock", os.O_RDWR | os.O_CREAT, 0o644)
        try:
            if wait:
                _flock(fd, fcntl.LOCK_EX, "another job is landing, or a build is reading the lake")
            elif not _try_flock(fd, fcntl.LOCK_EX):
                yield False
                return
            _WRITING += 1
            try:
                yield True
            finally:
                _WRITING -= 1
        finally:
            os.close(fd)  # releases the lock

    def _validate(self, prepared: list[tuple[Contract, str, pl.DataFrame | Slices]],
                  fields: Mapping[str, Mapping[str, str]], now: datetime, stage: Path,
                  shard: Shard | None = None) -> dict[tuple[str, str], int]:
        """The contract's rules through GX, frame by frame (the first failing frame raises), then keys across loads.
        Every GX result of the landing, the failed one included, is kept in the home before this returns or raises.

        `Slices` are validated slice by slice, and each slice is written to the staging area `stage` once valid (so
        one slice is in memory at a time); returns the rows of each sliced frame."""
        if not self.replace_other_datasets:
            for c, value, frame in prepared:
                self._check_same_dataset(c, value, frame)
        results = []
        rows: dict[tuple[str, str], int] = {}
        try:
            for c, value, frame in prepared:
                if not isinstance(frame, Slices):
                    self._validate_frame(c, value, frame, prepared, fields, results, shard=shard)
                    continue
                seen = None  # the slicing columns' values of the slices before
                staged = stage / c.name / f"{c.partition}={value}"
                rows[(c.name, value)] = 0
                for i, part in enumerate(frame.parts):
                    piece = conform_checked(self._stamp(pl.read_parquet(part), c, value, now), c)
                    seen = _check_disjoint(c, frame, piece, seen)
                    self._validate_frame(c, value, piece, prepared, fields, results, (i + 1, len(frame.parts)),
                                         shard)
                    _write_part(piece, staged, i, _shard_prefix(c, shard))
                    rows[(c.name, value)] += piece.height
                    del piece
        finally:
            validation.keep(self.home, results)
        return rows

    def _validate_frame(self, c: Contract, value: str, frame: pl.DataFrame,
                        prepared: list[tuple[Contract, str, pl.DataFrame | Slices]],
                        fields: Mapping[str, Mapping[str, str]], results: list,
                        part: tuple[int, int] | None = None, shard: Shard | None = None) -> None:
        parents = {r: self._parent_keys(r, frame, prepared) for r in c.references}
        results.append(validation.validate(c, value, frame, parents, part))
        validation.raise_for(results[-1], c, frame, fields.get(c.name))
        check_keys_across_loads(self, c, value, frame, shard)

    def _check_same_dataset(self, c: Contract, value: str, frame: pl.DataFrame | Slices) -> None:
        """A partition that already holds rows of other datasets is not silently replaced by this one's."""
        files = self.partition_files(c.name, value)
        if c.partition == "dataset" or "dataset" not in _scan(frame).collect_schema().names() or not files:
            return
        before = set(pl.scan_parquet(files).select("dataset").unique().collect()["dataset"].drop_nulls())
        now = set(_scan(frame).select("dataset").unique().collect()["dataset"].drop_nulls())
        lost = sorted(before - now)
        if lost:
            raise InputError(
                f"{c.partition} {value!r} already holds {c.name} of dataset {', '.join(map(repr, lost))}; landing "
                f"dataset {', '.join(map(repr, sorted(now)))} under it would replace "
                "them: choose another id, or pass --replace", field=c.partition)

    def _parent_keys(self, ref: Reference, child: pl.DataFrame,
                     landing: list[tuple[Contract, str, pl.DataFrame | Slices]]) -> validation.ParentKeys:
        """A reference's parent ids for one landing: the lake's (without the partitions this landing replaces) plus
        this landing's frames of the parent table; only the ids the child holds, and for same_dataset references only
        of the child's datasets (with the datasets that have parent rows at all)."""
        parent = contract(ref.table)
        cols = ["dataset", ref.field] if ref.same_dataset else [ref.field]
        schema = {col: parent.schema[col] for col in cols}
        replaced = {v for c, v, _ in landing if c.name == ref.table}
        files = [f for v in self.partitions(ref.table) if v not in replaced for f in self.partition_files(ref.table, v)]
        parts = [_scan(f).select(pl.col(col).cast(dtype) for col, dtype in schema.items())
                 for c, _, f in landing if c.name == ref.table]
        if files:
            parts.append(pl.scan_parquet(files, missing_columns="insert", extra_columns="ignore")
                         .select(pl.col(col).cast(dtype) for col, dtype in schema.items()))
        keys = pl.concat(parts) if parts else pl.LazyFrame(schema=schema)
        values = child[ref.column].drop_nulls().unique().implode()
        if not ref.same_dataset:
            ids = keys.filter(pl.col(ref.field).is_in(values)).select(ref.field).unique().collect()
            return validation.ParentKeys(ids=ids[ref.field].sort().to_list())
        keys = keys.filter(pl.col("dataset").is_in(child["dataset"].drop_nulls().unique().implode())).collect()
        ids = keys.filter(pl.col(ref.field).is_in(values))[ref.field].unique().sort()
        return validation.ParentKeys(ids=ids.to_list(), datasets=keys["dataset"].unique().sort().to_list())

    def _apply(self, txid: str, moves: list[dict]) -> None:
        for i, m in enumerate(moves):
            staged, target = Path(m["staged"]), Path(m["target"])
            if "files" in m:
                _apply_shard(staged, target, m["files"], m["remove"])
                continue
            if not staged.exists():  # already moved in by an earlier, interrupted apply
                continue
            target.parent.mkdir(parents=True, exist_ok=True)
            if target.exists():
                old = self._trash / txid / str(i)
                old.mkdir(parents=True, exist_ok=True)
                os.replace(target, old / target.name)
            os.replace(staged, target)
        shutil.rmtree(self._trash / txid, ignore_errors=True)

    def recover(self) -> None:
        """Finish landings whose journal was committed; discard staging areas of landings that never committed.
        Only when no landing is running (the writer lock is free): a running one owns its journal and staging."""
        with self._writer_lock(wait=False) as free:
            if free:
                self._recover()

    def _recover(self) -> None:
        if self._journal.exists():
            for journal in sorted(self._journal.glob("*.json")):
                entry = json.loads(journal.read_text())
                self._apply(entry["txid"], entry["moves"])
                journal.unlink()
                shutil.rmtree(self._staging / entry["txid"], ignore_errors=True)
            for tmp in self._journal.glob("*.tmp"):
                tmp.unlink()
        for d in (self._staging, self._trash):
            if d.exists():
                shutil.rmtree(d, ignore_errors=True)

    # ---- work areas of landings being prepared ----------------------------------------------------------------
    @contextmanager
    def work_dir(self) -> Iterator[Path]:
        """A private directory for a job preparing a sliced landing (its file's slices), outside the lake (dbt and
        `finrag build`'s change detection never see it) and removed on exit. Its owner holds an flock on its `lock`
        file; the next `Lake()` removes a work dir whose lock is free (its job was killed)."""
        d = self._work / uuid.uuid4().hex
        d.mkdir(parents=True)
        fd = os.open(d / "lock", os.O_RDWR | os.O_CREAT, 0o644)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX)
            (d / "owned").touch()  # only now may a free lock mean a dead owner (see _clean_work)
            yield d
        finally:
            shutil.rmtree(d, ignore_errors=True)
            os.close(fd)

    def _clean_work(self) -> None:
        if not self._work.exists():
            return
        for d in self._work.iterdir():
            lock = d / "lock"
            try:
                fd = os.open(lock, os.O_RDWR)
            except OSError:
                continue  # being created (its lock comes next), or not ours
            try:
                # a free lock on an owned dir: its job died (a dir not yet owned is one whose job is starting)
                if _try_flock(fd, fcntl.LOCK_EX) and (d / "owned").exists():
                    shutil.rmtree(d, ignore_errors=True)
            finally:
                os.close(fd)

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


WORK_DIR = "landing_work"


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


def _shard_prefix(c: Contract, shard: Shard | None) -> str:
    """The part-file name prefix of a shard's rows of `c` ('' = the partition's own part files: unsharded, or the
    one merged row of a run-level table)."""
    return f"{shard.tag}." if shard is not None and not is_run_level(c) else ""


def _other_shards_files(directory: Path, shard: Shard | None) -> list[Path]:
    """The part files of the same sharding's other shards (what a shard's landing leaves in place)."""
    if shard is None:
        return []
    out = []
    for p in part_files(directory):
        m = _PART.match(p.name)
        if m and m[1] and int(m[2]) == shard.count and int(m[1]) != shard.index:
            out.append(p)
    return out


def _say_replaced_sharding(c: Contract, value: str, shard: Shard | None, names: list[str]) -> None:
    if names:
        say(f"{c.name} {c.partition}={value}: shard {shard} replaces files of another landing of the run "
            f"({', '.join(names[:3])}{' ...' if len(names) > 3 else ''}): land the run's other shards too")


def _apply_shard(staged: Path, target: Path, files: list[str], remove: list[str]) -> None:
    """A shard's swap: its files in (each rename atomic), then the files it replaces out. Re-applied by recovery
    after a kill: files already moved are skipped, and `remove` never names a file of this landing."""
    target.mkdir(parents=True, exist_ok=True)
    for name in files:
        if (staged / name).exists():
            os.replace(staged / name, target / name)
    for name in remove:
        (target / name).unlink(missing_ok=True)


def _write_part(frame: pl.DataFrame, directory: Path, index: int, prefix: str = "") -> None:
    directory.mkdir(parents=True, exist_ok=True)
    frame.drop([x for x in _ORIGIN if x in frame.columns]).write_parquet(directory / f"{prefix}part-{index}.parquet")


def _scan(frame: pl.DataFrame | Slices) -> pl.LazyFrame:
    """The rows of a frame or of every slice (slices may lack a nullable column the others have)."""
    if not isinstance(frame, Slices):
        return frame.lazy()
    if not frame.parts:
        return pl.LazyFrame()
    return pl.concat([pl.scan_parquet(p) for p in frame.parts], how="diagonal_relaxed")


def _check_slicing(c: Contract, frame: Slices) -> None:
    """Uniqueness within each slice is uniqueness within the frame only when every key and unique column set holds
    the slicing columns (a bug of the caller otherwise, not bad input)."""
    for cols in (c.key, *c.unique):
        if not set(frame.by) <= set(cols):
            raise JobError(f"{c.name}: sliced by {list(frame.by)}, which {list(cols)} does not contain: a slice's "
                           "uniqueness checks would not hold for the whole frame")


def _check_disjoint(c: Contract, frame: Slices, piece: pl.DataFrame, seen: pl.Series | None) -> pl.Series:
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


# ---- validation ----------------------------------------------------------------------------------------------
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
        cols += [pl.col(x) for x in _ORIGIN if x in frame.columns]
    return frame.select(cols)


def conform_checked(frame: pl.DataFrame, c: Contract) -> pl.DataFrame:
    """The frame's shape and types: no column outside the contract, every required column present, each value cast
    to the contract's type (with the origin columns kept). The contract's other rules are GX's (validation.py)."""
    unknown = [x for x in frame.columns if x not in c.schema and x not in _ORIGIN]
    if unknown:
        raise InputError(f"{c.name}: columns not in the contract: {unknown}", field=unknown[0])
    missing = [x for x in c.not_null if x not in frame.columns and x not in c.defaults]
    if missing:
        raise InputError(f"{c.name}: required column missing", field=missing[0])
    try:
        return conform(frame, c, keep_origin=True)
    except (pl.exceptions.InvalidOperationError, pl.exceptions.ComputeError) as exc:
        raise InputError(f"{c.name}: a value does not fit the contract's type: {exc}".splitlines()[0]) from None


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
            files = _other_shards_files(lake.partition_path(c.name, value).parent, shard)
        if not files:
            continue
        other = read_key(files, c, key)
        clash = frame.select(key).with_row_index("_i").join(other, on=key, how="inner")
        if clash.height:
            i = int(clash["_i"].min())
            where = {x.lstrip("_"): frame[x][i] for x in _ORIGIN if x in frame.columns}
            raise InputError(
                f"{c.name}: key {tuple(frame.row(i, named=True)[k] for k in key)} already landed by "
                f"{c.partition}={value}",
                field=key[-1],
                **where,
            )


def _try_flock(fd: int, mode: int) -> bool:
    try:
        fcntl.flock(fd, mode | fcntl.LOCK_NB)
    except BlockingIOError:
        return False
    return True


def _flock(fd: int, mode: int, why: str) -> None:
    """Take the lock, saying why when it has to wait (a job that seems to hang is waiting for another)."""
    if not _try_flock(fd, mode):
        say(f"waiting for the lake: {why}")
        fcntl.flock(fd, mode)


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


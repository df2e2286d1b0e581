"""Sharded jobs: `finrag index | retrieve | answer | judge --shard I/N` (SPEC §2's scale path).

N processes, or N machines sharing the home on a common filesystem, each run the same job with the same options and
`--shard 1/N` ... `--shard N/N`; each handles a deterministic slice of the ids and lands its own piece of the SAME
run (the run id does not depend on the shard). Together the shards equal the unsharded run row for row.

- The slice: shard I (1-based) of N holds the ids whose SHA-256 (of the id's UTF-8 bytes, first 8 bytes read as a
  big-endian unsigned integer) mod N is I - 1. Not Python's `hash()` (salted per process) nor Polars' hash (may change
  between versions): every process and machine must agree. Ids: question_id for retrieve, answer and judge,
  chunk_id for index.
- Landing (python_jobs/core/lake.py, `Lake.land(..., shard=)`): a shard writes its rows as its own part files
  `shard-<I>-of-<N>.part-<k>.parquet` inside the run's partition directory (one level, as dbt's source glob reads),
  swapped in under the lake's journal and writer lock like any landing: a killed shard leaves nothing half-written, a
  re-run of shard I replaces shard I's files only, and shards land concurrently (the lock serialises the swaps). A
  shard landing replaces files of another sharding of the run (an unsharded landing, or shards of another N); an
  unsharded landing of the run replaces every shard's files.
- Run-level tables (one row per run: retrieval_runs, generation_runs, judge_runs; a contract whose key is its
  partition column alone) keep one row per run: each shard landing replaces it with `merge_run_row` of the landed
  row and its own, under the writer lock. Every column but created_at, and every params key but the job's own
  per-shard `work` keys (counters, timings), must equal the landed shards' (else the shard is refused: a run's shards
  share one config); params.shards records each landed shard's work ({"I/N": {...}}), and a work key of kind "sum"
  holds at the top level the sum over the landed shards (so, once all land, the unsharded run's count).
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING

from python_jobs.core.errors import InputError

if TYPE_CHECKING:  # polars only where frames are split: the read verbs import this module's Shard option
    import polars as pl

_SPEC = re.compile(r"^\s*(\d+)\s*/\s*(\d+)\s*$")
SHARDS_KEY = "shards"  # params key of a sharded run's row: each landed shard's work
WORK_KINDS = ("sum", "shard")  # a work key summed over the shards at the top level, or only under params.shards


def shard_number(value: str, count: int) -> int:
    """The 1-based shard of `count` that holds the id `value` (see the module docstring)."""
    digest = hashlib.sha256(value.encode("utf-8")).digest()
    return int.from_bytes(digest[:8], "big") % count + 1


@dataclass(frozen=True)
class Shard:
    """Shard `index` (1-based) of `count`."""

    index: int
    count: int

    def __post_init__(self) -> None:
        if self.count < 1 or not 1 <= self.index <= self.count:
            raise InputError(f"a shard is I/N with 1 <= I <= N, got {self.index}/{self.count}", field="shard")

    @classmethod
    def parse(cls, text: str) -> Shard:
        """'I/N' (e.g. '2/3')."""
        m = _SPEC.match(text or "")
        if not m:
            raise InputError(f"a shard is I/N (e.g. 2/3), got {text!r}", field="shard")
        return cls(int(m.group(1)), int(m.group(2)))

    def __str__(self) -> str:
        return f"{self.index}/{self.count}"

    @property
    def tag(self) -> str:
        """The shard's name in file and table names: shard-<I>-of-<N>."""
        return f"shard-{self.index}-of-{self.count}"

    def owns(self, value: str) -> bool:
        return shard_number(value, self.count) == self.index

    def select(self, frame: pl.DataFrame, column: str) -> pl.DataFrame:
        """The rows of `frame` whose `column` id falls in this shard."""
        import polars as pl

        mine = [self.owns(v) for v in frame[column].cast(pl.String).to_list()]
        return frame.filter(pl.Series(mine, dtype=pl.Boolean))


def select_shard(frame: pl.DataFrame, column: str, shard: Shard | None) -> pl.DataFrame:
    """`frame` itself without a shard, else the shard's rows."""
    return frame if shard is None else shard.select(frame, column)


# ---- run-level rows ------------------------------------------------------------------------------------------------
def landed_shards(row: Mapping[str, object] | None, count: int) -> dict[str, dict]:
    """The per-shard work of a landed run row whose shards are of `count` ({} for an unsharded row, or shards of
    another N: those the landing replaces)."""
    if row is None:
        return {}
    shards = json.loads(str(row.get("params") or "{}")).get(SHARDS_KEY)
    if not isinstance(shards, dict) or not all(str(k).endswith(f"/{count}") for k in shards):
        return {}
    return shards


def merge_run_row(landed: pl.DataFrame, row: pl.DataFrame, shard: Shard, work: Mapping[str, str],
                  run: str) -> pl.DataFrame:
    """The run's one row after shard `shard` lands `row` (one row, params JSON holding the shard's own `work` keys)
    over the `landed` partition (empty, or the row landed before). Refuses a config that differs from the landed
    shards' (see the module docstring); created_at is left to the landing."""
    if row.height != 1:
        raise ValueError(f"a run-level frame has one row, got {row.height}")
    unknown = sorted(set(work.values()) - set(WORK_KINDS))
    if unknown:
        raise ValueError(f"work kinds are {WORK_KINDS}, got {unknown}")
    mine = row.drop("created_at", strict=False).row(0, named=True)
    params = json.loads(mine.get("params") or "{}")
    own = {k: params.pop(k) for k in list(params) if k in work}
    old = landed.drop("created_at", strict=False).row(0, named=True) if landed.height == 1 else None
    shards = {k: v for k, v in landed_shards(old, shard.count).items() if k != str(shard)}
    if old is not None and shards:  # shards of this N landed: this one must share their config
        old_params = json.loads(old.get("params") or "{}")
        old_params = {k: v for k, v in old_params.items() if k not in work and k != SHARDS_KEY}
        diffs = [f"column {c} ({old.get(c)!r} landed, {mine.get(c)!r} now)"
                 for c in mine if c != "params" and old.get(c) != mine.get(c)]
        diffs += [f"params.{k} ({old_params.get(k)!r} landed, {params.get(k)!r} now)"
                  for k in sorted(set(old_params) | set(params)) if old_params.get(k) != params.get(k)]
        if diffs:
            raise InputError(
                f"shard {shard} of run {run!r} differs from its shard(s) {', '.join(sorted(shards))} already landed: "
                f"{'; '.join(diffs[:3])}. A run's shards must share one config: run every shard with the same options "
                "(or land the run unsharded, which replaces its shards)", field="shard")
    shards[str(shard)] = own
    merged = dict(params)
    for key, kind in work.items():
        values = [s[key] for s in shards.values() if isinstance(s.get(key), (int, float))]
        if kind == "sum" and values:
            merged[key] = round(sum(values), 6) if any(isinstance(v, float) for v in values) else sum(values)
    merged[SHARDS_KEY] = dict(sorted(shards.items()))
    import polars as pl

    return row.drop("created_at", strict=False).with_columns(pl.lit(json.dumps(merged, sort_keys=True)).alias("params"))

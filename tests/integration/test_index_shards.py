"""`finrag index --shard I/N` on the toy corpus (support/toy_corpus.py): three shards at once (two `finrag index`
processes and this one) embed their slices in parallel and merge them into the one LanceDB table, which then equals
an unsharded index row for row; a re-run of one shard re-embeds only its own slice's changed chunks. Real LanceDB,
the packaged MiniLM."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import lancedb
import numpy as np
import polars as pl
import pytest

from python_jobs.core.errors import InputError
from python_jobs.core.lake import Lake
from python_jobs.core.shards import Shard
from python_jobs.corpus.indexing import index_chunks
from python_jobs.corpus.vectors import table_name
from support.paths import PROJECT
from support.shards import SHARDS
from support.toy_corpus import DATASET, FLAT, land_corpus

pytestmark = pytest.mark.slow
TABLE = table_name("all-MiniLM-L6-v2", "window")


def lance_rows(home: Path) -> pl.DataFrame:
    db = lancedb.connect(str(home / "lance"))
    assert db.list_tables().tables == [TABLE]  # the shards' piece tables are gone once merged
    return pl.from_arrow(db.open_table(TABLE).to_arrow()).sort("chunk_id")


def assert_same_index(whole: Path, sharded: Path) -> None:
    a, b = lance_rows(whole), lance_rows(sharded)
    assert a.drop("vector").equals(b.drop("vector"))
    # a chunk's vector does not depend on its batch-mates beyond float rounding (here they come out bitwise equal)
    assert np.allclose(np.stack(a["vector"].to_list()), np.stack(b["vector"].to_list()), atol=1e-6)


def test_index_shards_run_concurrently_and_equal_the_unsharded_index(tmp_path: Path) -> None:
    whole, sharded = tmp_path / "whole", tmp_path / "sharded"
    lake = land_corpus(sharded, parent_child=False)
    land_corpus(whole, parent_child=False)
    index_chunks(Lake(whole), DATASET, FLAT, progress=False)
    env = {**os.environ, "FINRAG_HOME": str(sharded)}
    procs = [subprocess.Popen([sys.executable, "-m", "python_jobs.cli", "index", "--dataset", DATASET, "--chunker-id",
                               FLAT, "--shard", str(shard), "--threads", "1", "--json"], cwd=PROJECT, env=env,
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True) for shard in SHARDS[:2]]
    index_chunks(Lake(sharded), DATASET, FLAT, progress=False, shard=SHARDS[2])  # the third meanwhile, in this process
    outs = [p.communicate(timeout=300) for p in procs]
    assert all(p.returncode == 0 for p in procs), [err for _, err in outs]
    assert_same_index(whole, sharded)

    # a re-chunk changes a text in shard 1's slice and one in shard 2's: re-running shard 2 re-embeds its own only
    chunks = lake.read_partition("chunks", f"{DATASET}.{FLAT}").drop("load_id", "created_at")
    changed = {next(c for c in chunks["chunk_id"] if shard.owns(c)): f"A new text of shard {shard}"
               for shard in SHARDS[:2]}
    lake.land_one("chunks", f"{DATASET}.{FLAT}", chunks.with_columns(
        pl.col("chunk_id").replace_strict(changed, default=pl.col("text")).alias("text")))
    out = index_chunks(Lake(sharded), DATASET, FLAT, progress=False, shard=SHARDS[1])
    assert (out["embedded"], out["deleted"], out["merged"]) == (1, 1, 1)
    texts = dict(lance_rows(sharded).select("chunk_id", "text").iter_rows())
    mine, other = (next(c for c in changed if s.owns(c)) for s in (SHARDS[1], SHARDS[0]))
    assert texts[mine] == changed[mine] and texts[other] != changed[other]
    index_chunks(Lake(sharded), DATASET, FLAT, progress=False, shard=SHARDS[0])
    lake_whole = land_corpus(whole, parent_child=False)
    lake_whole.land_one("chunks", f"{DATASET}.{FLAT}", lake.read_partition("chunks", f"{DATASET}.{FLAT}")
                        .drop("load_id", "created_at"))
    index_chunks(Lake(whole), DATASET, FLAT, progress=False)
    assert_same_index(whole, sharded)

    with pytest.raises(InputError, match="run `finrag index --ann` unsharded"):
        index_chunks(Lake(sharded), DATASET, FLAT, progress=False, ann=True, shard=Shard(1, 2))

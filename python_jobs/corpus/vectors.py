"""LanceDB access: one table of chunk vectors per embedder (and long-text mode), under <home>/lance (SPEC §2).

A row is one chunk: chunk_id, doc_id, dataset, chunker_id, page_start, page_end, parent_chunk_id, text, text_sha256,
vector.
Rows of every dataset/chunker share the table; searches filter on dataset + chunker_id (and, for the oracle
conditions, on doc_id / page range) with a LanceDB *prefilter*, so a filter never eats into the k results.

Search modes: `flat` (exact cosine scan, the default; bypasses any ANN index) and `ann` (IVF_PQ, cosine). The
benchmark in bench/retrieval shows where ANN starts to pay off; at the corpus sizes here (1k-100k chunks) an exact scan
answers in milliseconds, and only exact search gives reproducible runs, so flat is the default.

A shard of `finrag index --shard I/N` embeds into a piece table of its own, `<table>__shard-<I>-of-<N>__<hash10>`
(hash of the dataset, chunker id and level), and merges it into the table under `writer_lock` (python_jobs/corpus/
indexing.py); searches never read pieces.
"""

from __future__ import annotations

import fcntl
import hashlib
import math
import os
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path

import numpy as np
import pyarrow as pa

from python_jobs.core.config import lance_dir
from python_jobs.core.console import say
from python_jobs.core.shards import Shard
from python_jobs.corpus.encoders import slug

SEARCH_MODES = ("flat", "ann")


def table_name(embedder: str, long_text: str) -> str:
    return f"chunks__{slug(embedder)}__{long_text}"


def schema(dim: int) -> pa.Schema:
    return pa.schema(
        [
            pa.field("chunk_id", pa.string(), nullable=False),
            pa.field("doc_id", pa.string()),
            pa.field("dataset", pa.string()),
            pa.field("chunker_id", pa.string()),
            pa.field("page_start", pa.int32()),
            pa.field("page_end", pa.int32()),
            pa.field("parent_chunk_id", pa.string()),
            pa.field("text", pa.string()),
            pa.field("text_sha256", pa.string()),
            pa.field("vector", pa.list_(pa.float32(), dim)),
        ]
    )


def sql_str(value: str) -> str:
    return "'" + str(value).replace("'", "''") + "'"


def in_list(column: str, values: Sequence[str]) -> str:
    return f"{column} IN ({', '.join(sql_str(v) for v in values)})"


class VectorStore:
    def __init__(self, home: Path):
        import lancedb  # heavy import, only for jobs that use vectors

        self.dir = lance_dir(home)
        self.dir.mkdir(parents=True, exist_ok=True)
        self.db = lancedb.connect(str(self.dir))

    def exists(self, name: str) -> bool:
        return name in self.db.list_tables().tables

    def open(self, name: str):
        return self.db.open_table(name)

    def open_or_create(self, name: str, dim: int):
        if self.exists(name):
            return self.open(name)
        return self.db.create_table(name, schema=schema(dim))

    @staticmethod
    def piece_name(name: str, dataset: str, chunker_id: str, level: str, shard: Shard) -> str:
        """The piece table a shard of `finrag index` embeds one chunks partition (at one level) into."""
        return f"{name}__{shard.tag}__{_partition_hash(dataset, chunker_id, level)}"

    def drop_pieces(self, name: str, dataset: str, chunker_id: str, level: str) -> None:
        """Drop every shard's piece of a partition (an unsharded run replaces a sharded one under way)."""
        suffix = f"__{_partition_hash(dataset, chunker_id, level)}"
        for table in self.db.list_tables().tables:
            if table.startswith(f"{name}__shard-") and table.endswith(suffix):
                self.db.drop_table(table)

    @contextmanager
    def writer_lock(self, name: str) -> Iterator[None]:
        """An flock on lance/<table>.lock: the shards of `finrag index` merge into the table one at a time (the kernel
        releases it when its holder dies)."""
        fd = os.open(self.dir / f"{name}.lock", os.O_RDWR | os.O_CREAT, 0o644)
        try:
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                say(f"waiting for LanceDB table {name}: another shard is merging into it")
                fcntl.flock(fd, fcntl.LOCK_EX)
            yield
        finally:
            os.close(fd)

    def embedded(self, name: str, dataset: str, chunker_id: str) -> pa.Table:
        """chunk_id + text_sha256 of the rows already embedded for one chunks partition."""
        if not self.exists(name):
            return pa.table({"chunk_id": pa.array([], pa.string()), "text_sha256": pa.array([], pa.string())})
        where = f"dataset = {sql_str(dataset)} AND chunker_id = {sql_str(chunker_id)}"
        return self.open(name).search().where(where).select(["chunk_id", "text_sha256"]).limit(None).to_arrow()

    @staticmethod
    def check_ann_size(n_rows: int) -> None:
        if n_rows < 256:
            from python_jobs.core.errors import InputError

            raise InputError(f"an IVF_PQ index needs at least 256 vectors to train on, the table would have {n_rows}; "
                             "use flat search", field="ann")

    @staticmethod
    def has_ann_index(table) -> bool:
        return any("vector" in (getattr(i, "columns", None) or []) for i in table.list_indices())

    @staticmethod
    def create_ann_index(table, n_rows: int) -> None:
        # IVF_PQ with cosine distance; ~sqrt(n) partitions, 384/8 = 48 sub-vectors for MiniLM
        VectorStore.check_ann_size(n_rows)
        dim = table.schema.field("vector").type.list_size
        table.create_index(
            metric="cosine",
            index_type="IVF_PQ",
            num_partitions=max(1, min(1024, int(math.sqrt(n_rows)))),
            num_sub_vectors=max(1, dim // 8) if dim % 8 == 0 else 1,
            vector_column_name="vector",
            replace=True,
        )


def _partition_hash(dataset: str, chunker_id: str, level: str) -> str:
    return hashlib.sha256(f"{dataset}\0{chunker_id}\0{level}".encode()).hexdigest()[:10]


def search(
    table,
    vectors: np.ndarray,
    where: str,
    limit: int,
    mode: str,  # SEARCH_MODES: flat (exact scan) or ann (the IVF_PQ index)
    nprobes: int = 20,
    columns: Sequence[str] = ("chunk_id", "doc_id", "page_start", "page_end"),
) -> list[pa.Table]:
    """One LanceDB query for a batch of query vectors sharing one filter; a result table per query vector
    (columns + `score` = cosine similarity), best first."""
    if len(vectors) == 0:
        return []
    q = table.search(vectors if len(vectors) > 1 else vectors[0]).distance_type("cosine")
    q = q.where(where, prefilter=True).select([*columns, "_distance"]).limit(limit)
    q = q.bypass_vector_index() if mode == "flat" else q.nprobes(nprobes)
    res = q.to_arrow()
    if "query_index" not in res.column_names:
        res = res.append_column("query_index", pa.array(np.zeros(res.num_rows, dtype=np.int32)))
    score = pa.array(1.0 - res.column("_distance").to_numpy().astype(np.float64))
    res = res.append_column("score", score)
    qi = res.column("query_index").to_numpy()
    out = []
    for i in range(len(vectors)):
        part = res.filter(pa.array(qi == i))
        order = np.argsort(-part.column("score").to_numpy(), kind="stable")
        out.append(part.take(pa.array(order)).select([*columns, "score"]))
    return out

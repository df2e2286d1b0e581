"""`finrag index`: embed a chunks partition into LanceDB, incrementally.

Only chunks the embedder has not embedded yet (or whose text changed) are encoded; rows of chunks no longer in the
partition (a re-chunk) are deleted, so the table mirrors the lake. The vectors live in one LanceDB table per
embedder and long-text mode under <home>/lance; the lake stays the source of truth (dbt never reads Lance).

Long chunks: the default embedder (all-MiniLM-L6-v2) reads at most 256 word pieces. By default a longer chunk is
embedded as consecutive 254-piece windows (a tail under 1/16 window is truncated) whose vectors are averaged
(`--long-text window`); `--long-text truncate` embeds only the first window (what sentence-transformers does
silently), ~4x faster on 1024-token chunks.
"""

from __future__ import annotations

import hashlib
import time

import polars as pl
import pyarrow as pa

from python_jobs.core.console import progress as console_progress
from python_jobs.core.lake import Lake
from python_jobs.corpus.encoders import load_embedder
from python_jobs.corpus.vectors import VectorStore, in_list, sql_str, table_name


def sha256(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


LEVELS = ("all", "top", "child")


def index_chunks(home, dataset: str, chunker_id: str | None, embedder: str | None = None, long_text: str = "window",
                 batch_size: int = 64, ann: bool = False, level: str = "all",
                 progress: bool = True) -> dict[str, object]:
    lake = Lake(home)
    chunker_id = lake.resolve_chunker(dataset, chunker_id)
    chunks = lake.read_chunks(dataset, chunker_id)
    if level != "all":  # parent-child partitions: parent_child searches only the children, the others the parents
        has_parent = pl.col("parent_chunk_id").is_not_null()
        chunks = chunks.filter(has_parent if level == "child" else ~has_parent)
    chunks = chunks.with_columns(
        pl.col("text").map_elements(sha256, return_dtype=pl.String).alias("text_sha256")
    )
    emb = load_embedder(embedder)
    store = VectorStore(lake.home)
    name = table_name(emb.name, long_text)
    have = pl.from_arrow(store.embedded(name, dataset, chunker_id))
    todo = chunks.join(have, on=["chunk_id", "text_sha256"], how="anti")
    stale = have.join(chunks.select("chunk_id", "text_sha256"), on=["chunk_id", "text_sha256"], how="anti")
    if level != "all":  # rows of the other level are not stale, just outside this call
        other = lake.read_chunks(dataset, chunker_id).join(chunks.select("chunk_id"), on="chunk_id", how="anti")
        stale = stale.join(other.select("chunk_id"), on="chunk_id", how="anti")
    if ann:  # checked before any embedding: a refused run changes nothing
        n_after = (store.open(name).count_rows() if store.exists(name) else 0) - stale.height + todo.height
        VectorStore.check_ann_size(n_after)
    table = store.open_or_create(name, emb.dim)
    if stale.height:
        ids = stale["chunk_id"].to_list()
        base = f"dataset = {sql_str(dataset)} AND chunker_id = {sql_str(chunker_id)}"
        for i in range(0, len(ids), 500):
            table.delete(f"{base} AND {in_list('chunk_id', ids[i:i + 500])}")
    t0 = time.perf_counter()
    # long chunks first: batches of similar length pad less
    todo = todo.with_columns(pl.col("text").str.len_chars().alias("_len")).sort("_len", descending=True)
    step = max(batch_size, 1)  # one LanceDB append per batch: the bar moves and an interruption loses one batch
    bar = console_progress(total=todo.height, desc=f"index {dataset}.{chunker_id}", unit="chunk", enabled=progress)
    for start in range(0, todo.height, step):
        part = todo.slice(start, step)
        vecs = emb.encode_documents(part["text"].to_list(), batch_size=batch_size, long_text=long_text)
        rows = part.select(
            "chunk_id", "doc_id", "dataset", "chunker_id", "page_start", "page_end", "parent_chunk_id", "text",
            "text_sha256",
        ).to_arrow()
        rows = rows.append_column(
            "vector", pa.FixedSizeListArray.from_arrays(pa.array(vecs.ravel(), pa.float32()), emb.dim)
        )
        table.add(rows.cast(table.schema))  # each batch is committed: an interrupted run resumes where it stopped
        bar.update(part.height)
    bar.close()
    seconds = time.perf_counter() - t0
    if todo.height or stale.height:
        table.optimize()  # one append per batch leaves many small fragments: compact them (and prune old versions)
    n_rows = table.count_rows()
    if ann and todo.height:
        VectorStore.create_ann_index(table, n_rows)
    return {
        "dataset": dataset, "chunker_id": chunker_id, "embedder": emb.name, "long_text": long_text, "table": name,
        "chunks": chunks.height, "embedded": todo.height, "deleted": stale.height, "table_rows": n_rows,
        "seconds": round(seconds, 2),
        "chunks_per_s": round(todo.height / seconds, 2) if todo.height and seconds else None,
    }

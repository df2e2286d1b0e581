"""`finrag index`: embed a chunks partition into LanceDB, incrementally.

Only chunks the embedder has not embedded yet (or whose text changed) are encoded; rows of chunks no longer in the
partition (a re-chunk) are deleted, so the table mirrors the lake. The vectors live in one LanceDB table per
embedder and long-text mode under <home>/lance; the lake stays the source of truth (dbt never reads Lance).

Long chunks: the default embedder (all-MiniLM-L6-v2) reads at most 256 word pieces. By default a longer chunk is
embedded as consecutive 254-piece windows (a tail under 1/16 window is truncated) whose vectors are averaged
(`--long-text window`); `--long-text truncate` embeds only the first window (what sentence-transformers does
silently), ~4x faster on 1024-token chunks.

Sharded (`--shard I/N`, python_jobs/core/shards.py): shard I embeds the chunks whose chunk_id falls in its slice
(SHA-256 of the chunk id mod N), in parallel with the others and without touching the shared table: its vectors go
to a piece table of its own (`<table>__<shard>__<partition hash>`; an interrupted shard resumes from it), and when
its slice is embedded it merges them in under the table's writer lock (lance/<table>.lock, an flock): deletes its
slice's stale rows, appends its piece's rows, compacts, drops the piece. Shards merge one at a time, in any order;
once all have, the table holds the rows an unsharded run gives (the same texts; vectors equal up to float rounding,
since a chunk's batch-mates differ). `--ann` is refused with --shard: build the index after the shards with an
unsharded `finrag index --ann`, which embeds nothing new. `--threads` caps torch's threads: with N shards on one
machine's cores, give each cores/N (bench/shards).
"""

from __future__ import annotations

import hashlib
import time

import polars as pl
import pyarrow as pa

from python_jobs.core.console import progress as console_progress
from python_jobs.core.errors import InputError
from python_jobs.core.lake import Lake
from python_jobs.core.shards import Shard, select_shard
from python_jobs.corpus.encoders import DEFAULT_LONG_TEXT, Embedder, load_embedder, set_threads
from python_jobs.corpus.lake_chunks import read_chunks, resolve_chunker
from python_jobs.corpus.vectors import VectorStore, in_list, sql_str, table_name


def sha256(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


LEVELS = ("all", "top", "child")


def index_chunks(lake: Lake, dataset: str, chunker_id: str | None, embedder: str | None = None,
                 long_text: str = DEFAULT_LONG_TEXT, batch_size: int = 64, ann: bool = False, level: str = "all",
                 progress: bool = True, shard: Shard | None = None, threads: int | None = None) -> dict[str, object]:
    if shard is not None and ann:
        raise InputError("--ann builds the index over the whole table: run `finrag index --ann` unsharded once the "
                         "shards have landed (it embeds nothing new)", field="ann")
    chunker_id = resolve_chunker(lake, dataset, chunker_id)
    chunks = read_chunks(lake, dataset, chunker_id)
    if level != "all":  # parent-child partitions: parent_child searches only the children, the others the parents
        has_parent = pl.col("parent_chunk_id").is_not_null()
        chunks = chunks.filter(has_parent if level == "child" else ~has_parent)
    chunks = chunks.with_columns(
        pl.col("text").map_elements(sha256, return_dtype=pl.String).alias("text_sha256")
    )
    set_threads(threads)
    emb = load_embedder(embedder)
    store = VectorStore(lake.home)
    name = table_name(emb.name, long_text)
    if shard is not None:
        return _index_shard(lake, store, name, emb, dataset, chunker_id, chunks, long_text, batch_size, level,
                            progress, shard)
    have = pl.from_arrow(store.embedded(name, dataset, chunker_id))
    todo = chunks.join(have, on=["chunk_id", "text_sha256"], how="anti")
    stale = stale_rows(lake, have, chunks, dataset, chunker_id, level)
    if ann:  # checked before any embedding: a refused run changes nothing
        n_after = (store.open(name).count_rows() if store.exists(name) else 0) - stale.height + todo.height
        VectorStore.check_ann_size(n_after)
    table = store.open_or_create(name, emb.dim)
    store.drop_pieces(name, dataset, chunker_id, level)  # an unsharded run supersedes a sharded one under way
    delete_rows(table, dataset, chunker_id, stale)
    seconds = embed_into(table, emb, todo, long_text, batch_size, f"index {dataset}.{chunker_id}", progress)
    if todo.height or stale.height:
        table.optimize()  # one append per batch leaves many small fragments: compact them (and prune old versions)
    n_rows = table.count_rows()
    if ann and (todo.height or stale.height or not VectorStore.has_ann_index(table)):
        VectorStore.create_ann_index(table, n_rows)
    return summary(dataset, chunker_id, emb, long_text, name, chunks, todo, stale, n_rows, seconds)


def stale_rows(lake: Lake, have: pl.DataFrame, chunks: pl.DataFrame, dataset: str, chunker_id: str,
               level: str) -> pl.DataFrame:
    """Embedded rows (chunk_id, text_sha256) of the partition whose chunk is gone or whose text changed."""
    stale = have.join(chunks.select("chunk_id", "text_sha256"), on=["chunk_id", "text_sha256"], how="anti")
    if level != "all":  # rows of the other level are not stale, just outside this call
        other = read_chunks(lake, dataset, chunker_id).join(chunks.select("chunk_id"), on="chunk_id", how="anti")
        stale = stale.join(other.select("chunk_id"), on="chunk_id", how="anti")
    return stale


def delete_rows(table, dataset: str, chunker_id: str, rows: pl.DataFrame) -> None:
    ids = rows["chunk_id"].to_list()
    base = f"dataset = {sql_str(dataset)} AND chunker_id = {sql_str(chunker_id)}"
    for i in range(0, len(ids), 500):
        table.delete(f"{base} AND {in_list('chunk_id', ids[i:i + 500])}")


def embed_into(table, emb: Embedder, todo: pl.DataFrame, long_text: str, batch_size: int, desc: str,
               progress: bool) -> float:
    """Embed `todo`'s chunks into `table`, one append per batch; the seconds it took."""
    t0 = time.perf_counter()
    # long chunks first: batches of similar length pad less
    todo = todo.with_columns(pl.col("text").str.len_chars().alias("_len")).sort("_len", descending=True)
    step = max(batch_size, 1)  # one LanceDB append per batch: the bar moves and an interruption loses one batch
    bar = console_progress(total=todo.height, desc=desc, unit="chunk", enabled=progress)
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
    return time.perf_counter() - t0


def _index_shard(lake: Lake, store: VectorStore, name: str, emb: Embedder, dataset: str, chunker_id: str,
                 chunks: pl.DataFrame, long_text: str, batch_size: int, level: str, progress: bool,
                 shard: Shard) -> dict[str, object]:
    """Embed the shard's slice into its piece table, then merge the piece into the shared table (module docstring)."""
    mine = shard.select(chunks, "chunk_id")
    piece_name = store.piece_name(name, dataset, chunker_id, level, shard)
    have = pl.from_arrow(store.embedded(name, dataset, chunker_id))
    done = pl.from_arrow(store.embedded(piece_name, dataset, chunker_id))  # an interrupted run of this shard's
    todo = mine.join(have, on=["chunk_id", "text_sha256"], how="anti").join(done, on=["chunk_id", "text_sha256"],
                                                                           how="anti")
    piece = store.open_or_create(piece_name, emb.dim)
    seconds = embed_into(piece, emb, todo, long_text, batch_size, f"index {dataset}.{chunker_id} shard {shard}",
                         progress)
    with store.writer_lock(name):  # one shard merges at a time: no two writers' commits on the shared table race
        table = store.open_or_create(name, emb.dim)
        have = select_shard(pl.from_arrow(store.embedded(name, dataset, chunker_id)), "chunk_id", shard)
        stale = stale_rows(lake, have, mine, dataset, chunker_id, level)
        rows = pl.from_arrow(piece.to_arrow()).join(mine.select("chunk_id", "text_sha256"),
                                                    on=["chunk_id", "text_sha256"], how="semi")
        new = rows.join(have, on=["chunk_id", "text_sha256"], how="anti")
        delete_rows(table, dataset, chunker_id, stale)
        if new.height:
            table.add(new.to_arrow().cast(table.schema))
        if new.height or stale.height:
            table.optimize()
        store.db.drop_table(piece_name)
        n_rows = table.count_rows()
    return {**summary(dataset, chunker_id, emb, long_text, name, mine, todo, stale, n_rows, seconds),
            "shard": str(shard), "merged": new.height}


def summary(dataset: str, chunker_id: str, emb: Embedder, long_text: str, name: str, chunks: pl.DataFrame,
            todo: pl.DataFrame, stale: pl.DataFrame, n_rows: int, seconds: float) -> dict[str, object]:
    return {
        "dataset": dataset, "chunker_id": chunker_id, "embedder": emb.name, "long_text": long_text, "table": name,
        "chunks": chunks.height, "embedded": todo.height, "deleted": stale.height, "table_rows": n_rows,
        "seconds": round(seconds, 2),
        "chunks_per_s": round(todo.height / seconds, 2) if todo.height and seconds else None,
    }

"""Indexing (`finrag index`'s library): LanceDB rows mirror a chunks partition, embedded once per embedder
(incremental), long chunks embedded as averaged windows. Real LanceDB, the packaged MiniLM."""

from __future__ import annotations

from pathlib import Path

import lancedb
import numpy as np
import polars as pl
import pytest

from python_jobs.core.lake import Lake
from python_jobs.corpus.encoders import load_embedder
from python_jobs.corpus.indexing import index_chunks
from python_jobs.corpus.vectors import table_name
from support.toy_corpus import DATASET, FLAT, PC, land_corpus

pytestmark = pytest.mark.slow


def lance_rows(home: Path, long_text: str = "window") -> pl.DataFrame:
    db = lancedb.connect(str(home / "lance"))
    return pl.from_arrow(db.open_table(table_name("all-MiniLM-L6-v2", long_text)).to_arrow())


def test_index_is_incremental_and_mirrors_the_partition(home: Path):
    lake = land_corpus(home)
    first = index_chunks(Lake(home), DATASET, FLAT, progress=False)
    assert (first["chunks"], first["embedded"], first["deleted"], first["table_rows"]) == (10, 10, 0, 10)
    rows = lance_rows(home)
    assert sorted(rows["chunk_id"].to_list()) == sorted(lake.read_partition("chunks", f"{DATASET}.{FLAT}")["chunk_id"])
    vec = np.stack(rows.sort("chunk_id")["vector"].to_list())
    assert vec.shape == (10, 384) and np.allclose(np.linalg.norm(vec, axis=1), 1, atol=1e-5)
    # the stored vector is the model's own embedding of the chunk text
    emb = load_embedder()
    texts = rows.sort("chunk_id")["text"].to_list()
    assert np.allclose(vec, emb.model.encode(texts, normalize_embeddings=True), atol=1e-5)

    again = index_chunks(Lake(home), DATASET, FLAT, progress=False)
    assert (again["embedded"], again["deleted"], again["table_rows"]) == (0, 0, 10)

    # a re-chunk changes one text and drops one chunk: one re-embedded, two rows removed (old text + dropped)
    chunks = lake.read_partition("chunks", f"{DATASET}.{FLAT}").drop("load_id", "created_at")
    changed = chunks.with_columns(
        pl.when(pl.col("ordinal") == 0).then(pl.lit("ACME was founded in 1902 in Ohio.")).otherwise(pl.col("text"))
        .alias("text")
    ).filter(pl.col("chunk_id") != f"INITECH_2021_10K::{FLAT}::00002")
    lake.land_one("chunks", f"{DATASET}.{FLAT}", changed)
    third = index_chunks(Lake(home), DATASET, FLAT, progress=False)
    assert third["embedded"] == 3  # the changed chunk of each of the three documents' ordinal 0
    assert third["deleted"] == 4  # three old texts + the dropped chunk
    assert third["table_rows"] == 9
    rows = lance_rows(home)
    acme0 = rows.filter(pl.col("chunk_id") == f"ACME_2022_10K::{FLAT}::00000").row(0, named=True)
    assert acme0["text"] == "ACME was founded in 1902 in Ohio."
    assert np.allclose(acme0["vector"], emb.model.encode([acme0["text"]], normalize_embeddings=True)[0], atol=1e-5)


def test_levels_and_partitions_share_one_table_without_clashing(home: Path):
    land_corpus(home)
    kids = index_chunks(Lake(home), DATASET, PC, level="child", progress=False)
    assert (kids["chunks"], kids["embedded"]) == (10, 10)
    tops = index_chunks(Lake(home), DATASET, PC, level="top", progress=False)
    assert (tops["chunks"], tops["embedded"], tops["deleted"]) == (6, 6, 0)
    flat = index_chunks(Lake(home), DATASET, FLAT, progress=False)
    assert (flat["embedded"], flat["table_rows"]) == (10, 26)
    assert index_chunks(Lake(home), DATASET, PC, progress=False)["embedded"] == 0


def test_long_chunks_are_embedded_as_averaged_windows(home: Path):
    emb = load_embedder()
    long = " ".join(f"Segment {i} revenue was {i * 13} million dollars in fiscal {2000 + i}." for i in range(120))
    pieces = emb.windows(long)
    n_tokens = len(emb.tokenizer(long, add_special_tokens=False, verbose=False)["input_ids"])
    n = -(-n_tokens // 254)
    n -= 1 if n_tokens - (n - 1) * 254 <= 15 else 0  # a tail of <= 1/16 window is truncated, not a window
    assert len(pieces) == n and len(pieces) >= 4
    assert "".join(pieces).replace(" ", "") == long.replace(" ", "")  # consecutive, nothing lost
    v = emb.model.encode(pieces, normalize_embeddings=True).mean(axis=0)
    got = emb.encode_documents([long, "short text"])
    assert np.allclose(got[0], v / np.linalg.norm(v), atol=1e-5)
    assert np.allclose(got[1], emb.model.encode(["short text"], normalize_embeddings=True)[0], atol=1e-5)
    trunc = emb.encode_documents([long], long_text="truncate")[0]
    assert np.allclose(trunc, emb.model.encode([long], normalize_embeddings=True)[0], atol=1e-5)
    assert float(trunc @ got[0]) < 0.999  # truncation loses the tail windows

"""A dataset's chunks in the lake: which chunker's partition a job reads, and its rows.

The chunks of a dataset land as partition `<dataset>.<chunker_id>` of the `chunks` table (chunking.py); this is
corpus knowledge, so it lives here rather than in the lake, which knows tables and partitions only. Kept apart from
chunking.py so a job that only reads chunks does not import a tokenizer.
"""

from __future__ import annotations

import polars as pl

from python_jobs.core.errors import InputError
from python_jobs.core.lake import Lake


def resolve_chunker(lake: Lake, dataset: str, chunker_id: str | None) -> str:
    """The dataset's chunks partition to use: the given chunker id, else the dataset's only one."""
    have = [p[len(dataset) + 1 :] for p in lake.partitions("chunks") if p.startswith(f"{dataset}.")]
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


def read_chunks(lake: Lake, dataset: str, chunker_id: str) -> pl.DataFrame:
    return lake.read_partition("chunks", f"{dataset}.{chunker_id}")

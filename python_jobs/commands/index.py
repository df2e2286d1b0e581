"""`finrag index`: embed a chunks partition into LanceDB, incrementally.

The rules and decisions are documented in python_jobs/corpus/indexing.py.
"""

from __future__ import annotations

import click

from python_jobs.commands._options import Produced, produces, shard_option
from python_jobs.core.lake import Lake
from python_jobs.core.shards import Shard
from python_jobs.corpus.encoders import DEFAULT_EMBEDDER, DEFAULT_LONG_TEXT, LONG_TEXT_MODES
from python_jobs.corpus.indexing import LEVELS, index_chunks


@click.command("index")
@produces
@click.option("--dataset", required=True, help="Dataset whose chunks to embed.")
@click.option("--chunker-id", default=None, help="Chunks partition (default: the dataset's only chunker).")
@click.option("--embedder", default=DEFAULT_EMBEDDER, show_default=True,
              help="sentence-transformers name or local path; prefix flag: for FlagEmbedding.")
@click.option("--long-text", type=click.Choice(LONG_TEXT_MODES), default=DEFAULT_LONG_TEXT, show_default=True,
              help="Chunks longer than the model's window: average of window vectors, or truncate.")
@click.option("--batch-size", type=int, default=64, show_default=True)
@click.option("--ann", is_flag=True, help="Also build an IVF_PQ (cosine) index for `retrieve --dense-search ann`.")
@click.option("--level", type=click.Choice(LEVELS), default="all", show_default=True,
              help="Parent-child partitions: embed only parents (top) or children (child, all parent_child needs).")
@shard_option("chunk ids")
@click.option("--threads", type=int, default=None,
              help="Torch threads for embedding (default: torch's, one per core; N shards on one machine: cores/N).")
def command(dataset: str, chunker_id: str | None, embedder: str, long_text: str, batch_size: int, ann: bool,
            level: str, shard: Shard | None, threads: int | None) -> Produced:
    """Embed a dataset's chunks into LanceDB (only those not embedded yet)."""
    out = index_chunks(Lake(), dataset, chunker_id, embedder, long_text, batch_size, ann, level,
                       shard=shard, threads=threads)
    return str(out["table"]), out

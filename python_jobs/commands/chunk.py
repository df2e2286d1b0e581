"""`finrag chunk`: split a dataset's documents into overlapping token windows, with page provenance.

    flat:          {doc_id}::{chunker_id}::{ordinal:05d}              parent_chunk_id null
    parent-child:  parent  {doc_id}::{chunker_id}::{p:05d}            parent_chunk_id null, ordinal p
                   child   {doc_id}::{chunker_id}::{p:05d}.{c:03d}    parent_chunk_id = its parent's id;
                                                                      ordinal = index over all the doc's children

The rules and decisions are documented in python_jobs/corpus/chunking.py.
"""

from __future__ import annotations

import click

from python_jobs.commands._options import Produced, produces
from python_jobs.core.lake import Lake
from python_jobs.corpus.chunking import PRESETS, ChunkingConfig, run_chunk


def _help(name: str) -> str | None:
    return ChunkingConfig.model_fields[name].description

@click.command("chunk")
@produces
@click.option("--dataset", required=True, help="Dataset whose pages to chunk (as ingested).")
@click.option("--preset", type=click.Choice(sorted(PRESETS)), default=None, help=_help("preset"))
@click.option("--size", type=int, default=None, help=_help("size"))
@click.option("--overlap", type=int, default=None, help=_help("overlap"))
@click.option("--parent-size", type=int, default=None, help=_help("parent_size"))
@click.option("--parent-overlap", type=int, default=None, help=_help("parent_overlap"))
@click.option("--parent-preset", type=click.Choice(sorted(PRESETS)), default=None, help=_help("parent_preset"))
@click.option("--tokenizer", default=ChunkingConfig.default("tokenizer"), show_default=True, help=_help("tokenizer"))
def command(dataset: str, **options: object) -> Produced:
    """Chunk a dataset's pages into overlapping token windows (lake table `chunks`)."""
    spec, tok = ChunkingConfig.from_dict(options).spec()
    res = run_chunk(Lake(), dataset, spec, tok)
    family = {"parents": res.parents, "children": res.children} if spec.parent_child else {}
    return res.chunker_id, {"dataset": dataset, "chunker_id": res.chunker_id, "documents": res.documents,
                            "chunks": res.chunks, **family, "skipped_without_pages": res.skipped_no_pages,
                            "skipped_without_text": res.skipped_empty, "load_id": res.load_id}

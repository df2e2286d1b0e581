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
from python_jobs.core.errors import InputError
from python_jobs.corpus.chunking import DEFAULT_PRESET, PRESETS, ChunkerSpec, run_chunk
from python_jobs.corpus.tokenizers import DEFAULT_TOKENIZER, load_tokenizer

# Two newlines: whitespace to every tokenizer, so no token spans a page break (a form feed would not do: BERT's
# normaliser deletes control characters and would glue the last word of a page to the first of the next).

@click.command("chunk")
@produces
@click.option("--dataset", required=True, help="Dataset whose pages to chunk (as ingested).")
@click.option("--preset", type=click.Choice(sorted(PRESETS)), default=None,
              help=f"Window size/overlap in tokens (default {DEFAULT_PRESET}, unless --size is given).")
@click.option("--size", type=int, default=None, help="Window size in tokens (instead of --preset).")
@click.option("--overlap", type=int, default=None, help="Window overlap in tokens (with --size).")
@click.option("--parent-size", type=int, default=None, help="Parent window size: makes parent and child chunks.")
@click.option("--parent-overlap", type=int, default=None, help="Parent window overlap (with --parent-size).")
@click.option("--parent-preset", type=click.Choice(sorted(PRESETS)), default=None,
              help="Parent size/overlap as a preset (instead of --parent-size/--parent-overlap).")
@click.option("--tokenizer", default=DEFAULT_TOKENIZER, show_default=True,
              help="'minilm', a directory with tokenizer.json, a tokenizer.json file, or a locally cached model name.")
def command(dataset: str, preset: str | None, size: int | None, overlap: int | None, parent_size: int | None,
            parent_overlap: int | None, parent_preset: str | None, tokenizer: str) -> Produced:
    """Chunk a dataset's pages into overlapping token windows (lake table `chunks`)."""
    if preset and (size is not None or overlap is not None):
        raise InputError("give either --preset or --size/--overlap", field="preset")
    if size is None and overlap is not None:
        raise InputError("--overlap needs --size", field="overlap")
    if size is None:
        size, overlap = PRESETS[preset or DEFAULT_PRESET]
    elif overlap is None:
        overlap = 0
    if parent_preset:
        if parent_size is not None or parent_overlap is not None:
            raise InputError("give either --parent-preset or --parent-size/--parent-overlap", field="parent_preset")
        parent_size, parent_overlap = PRESETS[parent_preset]
    elif parent_size is not None and parent_overlap is None:
        parent_overlap = 0
    tok = load_tokenizer(tokenizer)
    spec = ChunkerSpec(size, overlap, tok.slug, parent_size, parent_overlap)
    res = run_chunk(dataset, spec, tok)
    family = {"parents": res.parents, "children": res.children} if spec.parent_child else {}
    return res.chunker_id, {"dataset": dataset, "chunker_id": res.chunker_id, "documents": res.documents,
                            "chunks": res.chunks, **family, "skipped_without_pages": res.skipped_no_pages,
                            "skipped_without_text": res.skipped_empty, "load_id": res.load_id}

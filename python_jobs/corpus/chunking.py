"""`finrag chunk`: split a dataset's documents into overlapping token windows, with page provenance.

Each document's pages are joined (in page order, separated by PAGE_SEPARATOR) into one text, tokenised once with a
fast tokenizer, and cut into windows of `size` tokens that step by `size - overlap`; the last window may be short.
A chunk's text is the exact slice text[char_start:char_end] of the joined document, from the first character of its
first token to the last character of its last token; page_start/page_end are the (0-based) pages those two
characters fall on.

Chunk ids (stable across re-runs; the chunker id encodes every setting that changes the windows):

    flat:          {doc_id}::{chunker_id}::{ordinal:05d}              parent_chunk_id null
    parent-child:  parent  {doc_id}::{chunker_id}::{p:05d}            parent_chunk_id null, ordinal p
                   child   {doc_id}::{chunker_id}::{p:05d}.{c:03d}    parent_chunk_id = its parent's id;
                                                                      ordinal = index over all the doc's children

Children are windows over their parent's tokens (so the children of two overlapping parents overlap too): the
retriever searches the children (parent_chunk_id not null) and returns their parents.

The chunks land as partition `<dataset>.<chunker_id>` of the `chunks` table; a re-run replaces it.
"""

from __future__ import annotations

import bisect
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Literal, Self

import polars as pl
from pydantic import Field, model_validator

from python_jobs.core.console import progress
from python_jobs.core.contracts import contract
from python_jobs.core.errors import InputError
from python_jobs.core.job_config import JobConfig
from python_jobs.core.lake import Lake, check_id
from python_jobs.corpus.tokenizers import DEFAULT_TOKENIZER, LoadedTokenizer, load_tokenizer

# Two newlines: whitespace to every tokenizer, so no token spans a page break (a form feed would not do: BERT's
# normaliser deletes control characters and would glue the last word of a page to the first of the next).
PAGE_SEPARATOR = "\n\n"

PRESETS: dict[str, tuple[int, int]] = {"2048/256": (2048, 256), "1024/128": (1024, 128), "256/32": (256, 32)}
# The default fits the default embedder: all-MiniLM-L6-v2 reads at most 256 tokens and truncates the rest.
DEFAULT_PRESET = "256/32"


@dataclass(frozen=True)
class ChunkerSpec:
    size: int
    overlap: int
    tokenizer: str = DEFAULT_TOKENIZER  # the tokenizer's slug
    parent_size: int | None = None
    parent_overlap: int | None = None

    def __post_init__(self) -> None:
        if self.size < 1:
            raise InputError(f"chunk size must be >= 1, got {self.size}", field="size")
        if not 0 <= self.overlap < self.size:
            raise InputError(f"overlap must be in [0, size), got {self.overlap} for size {self.size}", field="overlap")
        if (self.parent_size is None) != (self.parent_overlap is None):
            raise InputError("--parent-size and --parent-overlap go together", field="parent_size")
        if self.parent_size is not None:
            assert self.parent_overlap is not None
            if self.parent_size <= self.size:
                raise InputError(f"parent size ({self.parent_size}) must exceed the child size ({self.size})",
                                 field="parent_size")
            if not 0 <= self.parent_overlap < self.parent_size:
                raise InputError(f"parent overlap must be in [0, parent size), got {self.parent_overlap}",
                                 field="parent_overlap")

    @property
    def parent_child(self) -> bool:
        return self.parent_size is not None

    @property
    def chunker_id(self) -> str:
        parts = [f"tok{self.size}o{self.overlap}"]
        if self.parent_child:
            parts.append(f"parent{self.parent_size}o{self.parent_overlap}")
        parts.append(self.tokenizer)
        return "-".join(parts)


Preset = Literal[tuple(PRESETS)]  # type: ignore[valid-type]


class ChunkingConfig(JobConfig):
    """A chunking as `finrag chunk` takes it (and a sweep's chunk_* settings): a preset, or a size and an overlap
    (default 0), optionally parent windows (a preset, or a size and an overlap), and the tokenizer. Nothing given:
    the default preset."""

    preset: Preset | None = Field(None, description=f"Window size/overlap in tokens (default {DEFAULT_PRESET}, "
                                  "unless size is given).")
    size: int | None = Field(None, description="Window size in tokens (instead of preset).")
    overlap: int | None = Field(None, description="Window overlap in tokens (with size; default 0).")
    parent_preset: Preset | None = Field(None, description=(
        "Parent size/overlap as a preset (instead of parent_size/parent_overlap)."))
    parent_size: int | None = Field(None, description="Parent window size: makes parent and child chunks.")
    parent_overlap: int | None = Field(None, description="Parent window overlap (with parent_size; default 0).")
    tokenizer: str = Field(DEFAULT_TOKENIZER, description=(
        "'minilm', a directory with tokenizer.json, a tokenizer.json file, or a locally cached model name."))

    @model_validator(mode="after")
    def _one_way_each(self) -> Self:
        if self.preset and (self.size is not None or self.overlap is not None):
            raise InputError("give either a preset or a size and overlap (--preset, --size/--overlap)", field="preset")
        if self.size is None and self.overlap is not None:
            raise InputError("an overlap needs a size (--overlap needs --size)", field="overlap")
        if self.parent_preset and (self.parent_size is not None or self.parent_overlap is not None):
            raise InputError(("give either a parent preset or a parent size and overlap (--parent-preset, "
                             "--parent-size/--parent-overlap)"), field="parent_preset")
        if self.parent_size is None and self.parent_overlap is not None:
            raise InputError("a parent overlap needs a parent size (--parent-overlap needs --parent-size)",
                             field="parent_overlap")
        self.windows(DEFAULT_TOKENIZER)  # the sizes' own checks (ChunkerSpec), before any tokenizer loads
        return self

    def windows(self, tokenizer_slug: str) -> ChunkerSpec:
        size, overlap = PRESETS[self.preset or DEFAULT_PRESET] if self.size is None else (self.size,
                                                                                         self.overlap or 0)
        parent_size, parent_overlap = (PRESETS[self.parent_preset] if self.parent_preset
                                       else (self.parent_size, self.parent_overlap))
        if parent_size is not None and parent_overlap is None:
            parent_overlap = 0
        return ChunkerSpec(size, overlap, tokenizer_slug, parent_size, parent_overlap)

    def spec(self) -> tuple[ChunkerSpec, LoadedTokenizer]:
        """The chunker (its id names the tokenizer's slug) and the tokenizer it chunks with."""
        tok = load_tokenizer(self.tokenizer)
        return self.windows(tok.slug), tok


def token_windows(n_tokens: int, size: int, overlap: int) -> list[tuple[int, int]]:
    """[start, end) token windows of `size` stepping by size - overlap; the last one ends at n_tokens."""
    out: list[tuple[int, int]] = []
    start, step = 0, size - overlap
    while start < n_tokens:
        end = min(start + size, n_tokens)
        out.append((start, end))
        if end >= n_tokens:
            break
        start += step
    return out


@dataclass(frozen=True)
class JoinedDocument:
    text: str
    page_numbers: list[int]  # page number of each page, in order
    page_starts: list[int]  # char offset where each page's text starts in `text`

    def page_at(self, char: int) -> int:
        """The page the character at offset `char` belongs to (separators count to the page before them)."""
        return self.page_numbers[bisect.bisect_right(self.page_starts, char) - 1]


def join_pages(pages: list[tuple[int, str]]) -> JoinedDocument:
    """Join (page_number, text) pairs in page order, keeping each page's start offset."""
    parts: list[str] = []
    numbers: list[int] = []
    starts: list[int] = []
    pos = 0
    for i, (number, text) in enumerate(sorted(pages)):
        if i:
            parts.append(PAGE_SEPARATOR)
            pos += len(PAGE_SEPARATOR)
        numbers.append(number)
        starts.append(pos)
        parts.append(text)
        pos += len(text)
    return JoinedDocument("".join(parts), numbers, starts)


def chunk_document(
    doc_id: str, pages: list[tuple[int, str]], tok: LoadedTokenizer, spec: ChunkerSpec
) -> list[dict[str, object]]:
    """All chunk rows of one document (no dataset / load columns)."""
    doc = join_pages(pages)
    # one call for the whole document: the fast tokenizer is far quicker than per-window calls
    _, offsets = tok.encode(doc.text)
    # drop zero-width tokens (none with add_special_tokens=False, but a custom tokenizer may emit some)
    offsets = [o for o in offsets if o[1] > o[0]]
    cid = spec.chunker_id

    def row(chunk_id: str, ordinal: int, t0: int, t1: int, parent: str | None) -> dict[str, object]:
        c0, c1 = offsets[t0][0], offsets[t1 - 1][1]
        return {
            "chunk_id": chunk_id,
            "doc_id": doc_id,
            "chunker_id": cid,
            "ordinal": ordinal,
            "page_start": doc.page_at(c0),
            "page_end": doc.page_at(c1 - 1),
            "char_start": c0,
            "char_end": c1,
            "n_tokens": t1 - t0,
            "text": doc.text[c0:c1],
            "parent_chunk_id": parent,
        }

    rows: list[dict[str, object]] = []
    if not spec.parent_child:
        for i, (t0, t1) in enumerate(token_windows(len(offsets), spec.size, spec.overlap)):
            rows.append(row(f"{doc_id}::{cid}::{i:05d}", i, t0, t1, None))
        return rows
    assert spec.parent_size is not None and spec.parent_overlap is not None
    n_children = 0
    for p, (p0, p1) in enumerate(token_windows(len(offsets), spec.parent_size, spec.parent_overlap)):
        parent_id = f"{doc_id}::{cid}::{p:05d}"
        rows.append(row(parent_id, p, p0, p1, None))
        for c, (c0, c1) in enumerate(token_windows(p1 - p0, spec.size, spec.overlap)):
            rows.append(row(f"{parent_id}.{c:03d}", n_children, p0 + c0, p0 + c1, parent_id))
            n_children += 1
    return rows


def _documents_pages(pages: pl.DataFrame) -> Iterator[tuple[str, list[tuple[int, str]]]]:
    for (doc_id,), group in pages.sort("doc_id", "page_number").group_by("doc_id", maintain_order=True):
        yield str(doc_id), list(zip(group["page_number"].to_list(), group["text"].to_list(), strict=True))


@dataclass(frozen=True)
class ChunkResult:
    load_id: str
    chunker_id: str
    documents: int  # documents chunked
    skipped_no_pages: int  # documents of the dataset without any page
    skipped_empty: int  # documents whose pages hold no token
    chunks: int
    parents: int
    children: int


def run_chunk(lake: Lake, dataset: str, spec: ChunkerSpec, tok: LoadedTokenizer) -> ChunkResult:
    pages = lake.read("pages", where={"dataset": dataset}, columns=["doc_id", "page_number", "text"])
    documents = lake.read("documents", where={"dataset": dataset}, columns=["doc_id"])
    if pages.is_empty():
        raise InputError(f"dataset {dataset!r} has no pages in the lake (run `finrag ingest` first)", field="dataset")
    with_pages = set(pages["doc_id"].unique().to_list())
    skipped_no_pages = len(set(documents["doc_id"].to_list()) - with_pages)
    load_id = check_id(f"{dataset}.{spec.chunker_id}", "chunk load id")

    rows: list[dict[str, object]] = []
    chunked = empty = 0
    docs = _documents_pages(pages)
    for doc_id, doc_pages in progress(docs, total=len(with_pages), desc=f"chunk {dataset}", unit="doc"):
        doc_rows = chunk_document(doc_id, doc_pages, tok, spec)
        if doc_rows:
            chunked += 1
            rows.extend(doc_rows)
        else:
            empty += 1
    frame = contract("chunks").frame(rows).with_columns(pl.lit(dataset).alias("dataset"))
    lake.land_one("chunks", load_id, frame)
    parents = frame.filter(pl.col("parent_chunk_id").is_null()).height if spec.parent_child else 0
    return ChunkResult(
        load_id=load_id,
        chunker_id=spec.chunker_id,
        documents=chunked,
        skipped_no_pages=skipped_no_pages,
        skipped_empty=empty,
        chunks=frame.height,
        parents=parents,
        children=frame.height - parents if spec.parent_child else 0,
    )

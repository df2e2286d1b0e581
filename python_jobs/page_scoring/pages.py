"""The page text the page scorer reads, for training and scoring alike.

A page as pypdf extracts it carries the filing's running headers and footers ("Table of Contents" — which pypdf
splits into "T" / "able of " / "Contents" on 3M's 10-K —, the page number, the company's name on every page): they
are the same on every page, so they tell pages apart by nothing and cost the model's 256-token window. Normalising:

1. a line is a *repeated header or footer* of a document when its key (lower-cased, digits replaced by `#`, so
   page numbers "11", "12", ... share the key "##"; whitespace collapsed) is among the first or last
   `ZONE_LINES` non-empty lines of at least `max(MIN_PAGES, MIN_SHARE x pages)` of the document's pages; those
   lines are removed where they occur in that zone (the same words in a page's body stay);
2. whitespace is collapsed to single spaces;
3. with `doc_label` (the default) the document's label is put in front — its company, type, period and title
   (`3M 10-K 2022 3M_2022_10K` → words deduplicated: `3M 10-K 2022 10K`): removing the headers removed most
   mentions of whose filing a page is, and a question names the company and the year.

The model then reads the first `max_seq_length` word pieces of that text (256 for MiniLM), in training and
in scoring: a page is embedded truncated to the model's window, once per fold model (cached, registry.py).
"""

from __future__ import annotations

import hashlib
import json
import math
import re
from collections import Counter
from collections.abc import Sequence

import polars as pl

from python_jobs.core.errors import InputError
from python_jobs.core.lake import Lake

ZONE_LINES = 4
MIN_PAGES = 3
MIN_SHARE = 0.2
NORMALISATION_VERSION = 1

_DIGITS = re.compile(r"\d")
_SPACE = re.compile(r"\s+")


def normalisation_params(doc_label: bool) -> dict[str, object]:
    """What decides the page text (recorded with a training, and part of its id)."""
    return {"version": NORMALISATION_VERSION, "zone_lines": ZONE_LINES, "min_pages": MIN_PAGES,
            "min_share": MIN_SHARE, "doc_label": doc_label}


def line_key(line: str) -> str:
    return _SPACE.sub(" ", _DIGITS.sub("#", line.lower())).strip()


def _lines(text: str) -> list[str]:
    return [x for x in text.splitlines() if x.strip()]


def repeated_lines(texts: Sequence[str], zone: int = ZONE_LINES, min_pages: int = MIN_PAGES,
                   min_share: float = MIN_SHARE) -> set[str]:
    """The keys of the lines that open or close at least max(min_pages, min_share x len(texts)) of the pages."""
    counts: Counter[str] = Counter()
    for text in texts:
        keys = [line_key(x) for x in _lines(text)]
        counts.update(set(keys[:zone] + keys[-zone:]))
    need = max(min_pages, math.ceil(min_share * len(texts)))
    return {k for k, n in counts.items() if n >= need}


def clean_page(text: str, repeated: set[str], zone: int = ZONE_LINES) -> str:
    """The page without its repeated header / footer lines, whitespace collapsed."""
    lines = _lines(text)
    n = len(lines)
    keep = [x for i, x in enumerate(lines) if not ((i < zone or i >= n - zone) and line_key(x) in repeated)]
    return _SPACE.sub(" ", " ".join(keep)).strip()


def doc_label(doc_id: str, title: str | None, company: str | None, doc_type: str | None,
              period: str | None) -> str:
    """Company, type, period and title (underscores as spaces), each word once (case-insensitive)."""
    words = " ".join(p for p in (company, doc_type, period, (title or doc_id).replace("_", " ")) if p).split()
    seen: dict[str, str] = {}
    for w in words:
        seen.setdefault(w.lower(), w)
    return " ".join(seen.values())


def normalise_pages(pages: pl.DataFrame, documents: pl.DataFrame | None = None,
                    doc_label_on: bool = True) -> pl.DataFrame:
    """pages (doc_id, page_number, text) → doc_id, page_number, text (normalised), sorted; pages left empty
    (nothing but headers, or no text at all) keep just their label, or an empty text without one."""
    labels: dict[str, str] = {}
    if doc_label_on and documents is not None:
        for d, title, company, dtype, period in documents.select(
                "doc_id", "title", "company", "doc_type", "period").iter_rows():
            labels[d] = doc_label(d, title, company, dtype, period)
    rows = []
    for (doc,), part in pages.sort("doc_id", "page_number").group_by("doc_id", maintain_order=True):
        texts = part["text"].to_list()
        repeated = repeated_lines(texts)
        label = labels.get(doc, doc_label(doc, None, None, None, None)) if doc_label_on else ""
        for num, text in zip(part["page_number"].to_list(), texts, strict=True):
            body = clean_page(text or "", repeated)
            rows.append((doc, num, f"{label} | {body}" if label else body))
    return pl.DataFrame(rows, schema={"doc_id": pl.String, "page_number": pl.Int32, "text": pl.String}, orient="row")


def read_page_texts(lake: Lake, dataset: str, doc_label_on: bool = True) -> pl.DataFrame:
    """The dataset's pages as the page scorer reads them (normalise_pages over the lake's pages and documents)."""
    pages = lake.read("pages", where={"dataset": dataset}, columns=["doc_id", "page_number", "text"])
    if pages.height == 0:
        raise InputError(f"dataset {dataset!r} has no pages: the page scorer reads page texts (ingest PDFs first)",
                         field="dataset")
    docs = lake.read("documents", where={"dataset": dataset})
    return normalise_pages(pages, docs, doc_label_on)


def digest(frame: pl.DataFrame, *extra: object) -> str:
    """SHA-256 of a frame's rows in order (and of any extra JSON-able values): names a cache entry or a data set."""
    h = hashlib.sha256(json.dumps(extra, sort_keys=True, default=str).encode())
    for row in frame.iter_rows():
        h.update(json.dumps(row, default=str, ensure_ascii=False).encode())
        h.update(b"\n")
    return h.hexdigest()

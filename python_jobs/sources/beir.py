"""BEIR-format datasets (FinanceRAG's seven sets): corpus.jsonl, queries.jsonl and qrels TSV."""

from __future__ import annotations

import hashlib
import json
import re
from collections import Counter
from pathlib import Path

from pydantic import Field, StrictStr

from python_jobs.core.console import say
from python_jobs.core.contracts import contract
from python_jobs.core.errors import InputError
from python_jobs.core.lake import Lake, check_id
from python_jobs.sources.landing import CORPUS_CHUNKER, check_duplicates, land
from python_jobs.sources.lines import PERIOD, Record, integer, read_delimited, read_jsonl


class BeirRecord(Record):
    id: StrictStr = Field(alias="_id", min_length=1)
    title: StrictStr = ""
    text: StrictStr


Relevance = integer(contract("evidence").schema["relevance"])  # a grade the evidence table can hold


class BeirQrel(Record):
    query_id: str = Field(min_length=1)
    corpus_id: str = Field(min_length=1)
    score: Relevance  # parsed from text: "1" is fine, "1.5" / "x" / 99999999999999999999 are not


# FinanceBench doc_name → doc type code, for BEIR corpora whose titles are FinanceBench doc names
# (e.g. PEPSICO_2022_10K, JOHNSON_JOHNSON_2023Q1_EARNINGS, MCDONALDS_8K_dated-2023-01-06)
_DOC_NAME = re.compile(
    rf"^(?P<company>[A-Za-z0-9&.\-]+(?:_[A-Za-z0-9&.\-]+)*?)(?:_(?P<period>{PERIOD}))?"
    r"_(?P<code>10K|10Q|8K|EARNINGS|annualreport)(?:_dated[-_][0-9\-]+)?$",
    re.IGNORECASE,
)
_NAME_CODES = {"10k": "10-K", "10q": "10-Q", "8k": "8-K", "earnings": "earnings_call", "annualreport": "annual_report"}


def doc_attrs_from_title(title: str) -> tuple[str, str | None]:
    """doc_type and period when a corpus title is a FinanceBench doc_name (FinanceRAG's FinanceBench corpus)."""
    m = _DOC_NAME.match(title.strip())
    if not m:
        return "other", None
    return _NAME_CODES[m["code"].lower()], m["period"]


def read_qrels_tsv(path: Path) -> list[tuple[int, BeirQrel]]:
    return read_delimited(path, BeirQrel, ("query_id", "corpus_id", "score"), sep="\t",
                          header=[("query_id", "corpus_id", "score")])


# how the files name the contract's columns: validation errors of the landing name the file's field
BEIR_FIELDS = {
    "questions": {"question_id": "_id", "question": "text"},
    "evidence": {"question_id": "query_id", "doc_id": "corpus_id", "chunk_id": "corpus_id", "relevance": "score"},
    "documents": {"doc_id": "_id", "title": "title"},
    "chunks": {"chunk_id": "_id", "doc_id": "_id", "text": "text"},
}


def ingest_beir(lake: Lake, src: Path, dataset: str) -> None:
    """A BEIR / FinanceRAG dataset → documents + chunks (corpus), questions (queries), evidence (qrels).

    The qrels must name queries of the dataset and, when it has a corpus, its entries: the landing's validation checks
    it (the contract's references of evidence, against this load's frames and the lake)."""
    check_id(dataset, "dataset")
    corpus_path, queries_path, qrels_path = src / "corpus.jsonl", src / "queries.jsonl", src / "qrels.tsv"
    if not queries_path.exists():
        raise InputError("queries.jsonl is missing", file=str(queries_path))
    queries = read_jsonl(queries_path, BeirRecord)
    check_duplicates(queries, lambda q: q.id, str(queries_path), "_id", "query _id")
    corpus = read_jsonl(corpus_path, BeirRecord) if corpus_path.exists() else None
    if corpus is not None:
        check_duplicates(corpus, lambda d: d.id, str(corpus_path), "_id", "corpus _id")
    qrels = read_qrels_tsv(qrels_path) if qrels_path.exists() else []
    check_duplicates(qrels, lambda r: (r.query_id, r.corpus_id), str(qrels_path), "corpus_id", "(query_id, corpus_id)")

    q_rows = []
    for line, q in queries:
        meta = {**({"title": q.title} if q.title else {}), **(q.model_extra or {})}
        q_rows.append({
            "question_id": q.id, "dataset": dataset, "split": "test", "question": q.text, "source": "imported",
            "meta": json.dumps(meta, sort_keys=True, ensure_ascii=False) if meta else None,
            "_file": str(queries_path), "_line": line,
        })
    ordinal: Counter[str] = Counter()
    ev_rows = []
    for line, r in qrels:
        ev_rows.append({
            "question_id": r.query_id, "evidence_ordinal": ordinal[r.query_id], "dataset": dataset,
            "doc_id": r.corpus_id, "page_number": None, "chunk_id": r.corpus_id, "relevance": r.score,
            "evidence_text": None, "_file": str(qrels_path), "_line": line,
        })
        ordinal[r.query_id] += 1
    frames = [("questions", dataset, contract("questions").frame(q_rows, fields=BEIR_FIELDS["questions"])),
              ("evidence", dataset, contract("evidence").frame(ev_rows, fields=BEIR_FIELDS["evidence"]))]
    if corpus is not None:
        doc_rows, chunk_rows = [], []
        for line, d in corpus:
            doc_type, period = doc_attrs_from_title(d.title)
            doc_rows.append({
                "doc_id": d.id, "dataset": dataset, "title": d.title or None, "doc_type": doc_type, "period": period,
                "language": "en", "n_pages": None, "has_content": True,
                "content_sha256": hashlib.sha256(d.text.encode("utf-8")).hexdigest(),
                "_file": str(corpus_path), "_line": line,
            })
            # the chunk text is the entry's text as the corpus has it; the title stays on the document
            chunk_rows.append({
                "chunk_id": d.id, "doc_id": d.id, "dataset": dataset, "chunker_id": CORPUS_CHUNKER, "ordinal": 0,
                "page_start": None, "page_end": None, "char_start": 0, "char_end": len(d.text),
                "n_tokens": len(d.text.split()), "text": d.text, "parent_chunk_id": None,
                "_file": str(corpus_path), "_line": line,
            })
        frames += [("documents", dataset, contract("documents").frame(doc_rows, fields=BEIR_FIELDS["documents"])),
                   ("chunks", f"{dataset}.{CORPUS_CHUNKER}",
                    contract("chunks").frame(chunk_rows, fields=BEIR_FIELDS["chunks"]))]
    else:
        say(f"no corpus.jsonl in {src}: questions and qrels only (a qrels-only dataset)")
    if not qrels:
        say(f"no qrels.tsv in {src}: the questions have no relevance judgments")
    land(lake, frames, fields=BEIR_FIELDS)

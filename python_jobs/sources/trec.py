"""TREC qrels and run files (trec_eval's formats), and FinanceRAG's submission CSV."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

from pydantic import Field

from python_jobs.core.console import say
from python_jobs.core.contracts import contract
from python_jobs.core.errors import InputError
from python_jobs.core.lake import Lake, check_id
from python_jobs.sources.landing import check_duplicates, existing_ids, file_sha256, land
from python_jobs.sources.lines import _Record, read_delimited


class TrecQrel(_Record):
    topic: str = Field(min_length=1)
    iteration: str
    docno: str = Field(min_length=1)
    rel: int


class TrecRunRow(_Record):
    topic: str = Field(min_length=1)
    q0: str
    docno: str = Field(min_length=1)
    rank: int
    score: float = Field(allow_inf_nan=False)
    tag: str = Field(min_length=1)


class CsvRunRow(_Record):
    query_id: str = Field(min_length=1)
    corpus_id: str = Field(min_length=1)


# how the files name the contract's columns: validation errors of the landing name the file's field
QRELS_FIELDS = {"evidence": {"question_id": "topic", "doc_id": "docno", "chunk_id": "docno", "relevance": "rel"}}


def ingest_trec_qrels(lake: Lake, path: Path, dataset: str) -> None:
    """TREC qrels (`topic iter docno rel`) → evidence with graded relevance (0 and negative grades kept).

    A TREC-only dataset needs no corpus or queries; when the dataset has documents, questions or chunks in the lake,
    the landing's validation checks that the qrels name them (the contract's references of evidence)."""
    check_id(dataset, "dataset")
    rows = read_delimited(path, TrecQrel, ("topic", "iteration", "docno", "rel"), sep=None)
    check_duplicates(rows, lambda r: (r.topic, r.docno), str(path), "docno", "judgment (topic, docno)")
    ordinal: Counter[str] = Counter()
    ev_rows = []
    for line, r in rows:
        ev_rows.append({
            "question_id": r.topic, "evidence_ordinal": ordinal[r.topic], "dataset": dataset, "doc_id": r.docno,
            "page_number": None, "chunk_id": r.docno, "relevance": r.rel, "evidence_text": None,
            "_file": str(path), "_line": line,
        })
        ordinal[r.topic] += 1
    land(lake, [("evidence", dataset, contract("evidence").frame(ev_rows))], fields=QRELS_FIELDS)


def ingest_trec_run(lake: Lake, path: Path, dataset: str, run_id: str, fmt: str, only_known_questions: bool) -> None:
    """An external run → retrieval_runs (source 'trec') + retrieval_results (rank = line order per question).

    Checked here: the file's format, duplicates, one run tag, and that a docno is a document or a chunk of the dataset
    when it has documents (the contract cannot say "either"). Checked by the landing's validation: that every topic
    is a question of the dataset when it has questions (the contract's reference of retrieval_results)."""
    check_id(dataset, "dataset")
    check_id(run_id, "run id")
    file = str(path)
    # (line, topic, docno, score, file rank, tag)
    parsed: list[tuple[int, str, str, float, int | None, str | None]] = []
    if fmt == "trec":
        for line, r in read_delimited(path, TrecRunRow, ("topic", "q0", "docno", "rank", "score", "tag"), sep=None):
            parsed.append((line, r.topic, r.docno, r.score, r.rank, r.tag))
    else:
        index: Counter[str] = Counter()
        for line, r in read_delimited(path, CsvRunRow, ("query_id", "corpus_id"), sep=",",
                                      header=[("query_id", "corpus_id")]):
            # rows are in rank order and carry no score: 10, 9, 8, … as the FinanceRAG derived TREC file does
            parsed.append((line, r.query_id, r.corpus_id, float(10 - index[r.query_id]), None, None))
            index[r.query_id] += 1
    check_duplicates(((ln, (t, d)) for ln, t, d, *_ in parsed), lambda k: k, file,
                     "docno" if fmt == "trec" else "corpus_id", "(topic, docno)")
    tags = {}
    for ln, *_, tag in parsed:
        tags.setdefault(tag, ln)
    if len(tags) > 1:
        second = sorted(tags.items(), key=lambda kv: kv[1])[1]
        raise InputError(f"run tags differ within one run file ({', '.join(map(str, tags))})", file=file,
                         line=second[1], field="tag")
    retriever = next(iter(tags)) if tags and next(iter(tags)) else "imported"

    topic_field, doc_field = ("topic", "docno") if fmt == "trec" else ("query_id", "corpus_id")
    skipped_rows, skipped_topics = 0, set()
    if only_known_questions:
        known_questions = existing_ids(lake, "questions", dataset, "question_id")
        if known_questions is None:
            raise InputError(f"--only-known-questions needs the questions of dataset {dataset!r} in the lake; "
                             f"ingest them first", file=file, field=topic_field)
        kept = [p for p in parsed if p[1] in known_questions]
        skipped_rows = len(parsed) - len(kept)
        skipped_topics = {p[1] for p in parsed} - {p[1] for p in kept}
        parsed = kept
        say(f"skipped {skipped_rows} rows of {len(skipped_topics)} questions not in dataset {dataset!r}")
        if not parsed:
            raise InputError(f"no row of the run names a question of dataset {dataset!r}", file=file, field=topic_field)
    known_docs = existing_ids(lake, "documents", dataset, "doc_id")
    # a docno may also be a chunk id of the dataset (a run exported by `finrag export-run`): its doc and pages
    # then come from the chunks table, so the run scores at chunk, page and doc level like the original
    chunk_rows = lake.read("chunks", where={"dataset": dataset},
                           columns=["chunk_id", "doc_id", "chunker_id", "page_start", "page_end"])
    chunks = {r[0]: r[1:] for r in chunk_rows.iter_rows()}
    for line, _topic, docno, *_ in parsed:
        if known_docs is not None and docno not in known_docs and docno not in chunks:
            raise InputError(f"unknown document {docno!r}: dataset {dataset!r} has documents and this is neither "
                             f"one of them nor one of its chunks", file=file, line=line, field=doc_field)
    chunkers = {chunks[d][1] for _, _, d, *_ in parsed if d in chunks and d not in (known_docs or ())}
    if len(chunkers) > 1:
        raise InputError(f"docnos are chunks of several chunkers ({', '.join(sorted(chunkers))})", file=file,
                         field=doc_field)

    rank: Counter[str] = Counter()
    res_rows = []
    for line, topic, docno, score, _file_rank, _tag in parsed:
        rank[topic] += 1  # line order within the question; trec_eval's score order is the metrics models' job
        doc_id, page_start, page_end = docno, None, None
        if docno in chunks and docno not in (known_docs or ()):
            doc_id, _chunker, page_start, page_end = chunks[docno]
        res_rows.append({
            "run_id": run_id, "question_id": topic, "dataset": dataset, "rank": rank[topic], "chunk_id": docno,
            "doc_id": doc_id,
            "page_start": page_start, "page_end": page_end, "score": score, "_file": file, "_line": line,
        })
    sha = file_sha256(path)
    params = {
        "file": path.name, "sha256": sha, "format": fmt, "rows": len(res_rows),
        "only_known_questions": only_known_questions, "skipped_rows": skipped_rows,
        "skipped_questions": len(skipped_topics),
        "rank_rule": "file rank column ignored; results ranked by score desc, docno desc (trec_eval)"
        if fmt == "trec" else "score = 10 - row index within the query (rows are in rank order)",
    }
    run_row = {
        "run_id": run_id, "dataset": dataset, "retriever": retriever, "condition": "full", "k": max(rank.values()),
        "embedder": None, "reranker": None, "chunker_id": next(iter(chunkers), None),
        "params": json.dumps(params, sort_keys=True),
        # an imported run has one condition (full): its config identity is the file's content
        "config_hash": sha, "config_id": sha, "source": "trec",
    }
    land(lake, [("retrieval_runs", run_id, contract("retrieval_runs").frame([run_row])),
                ("retrieval_results", run_id, contract("retrieval_results").frame(res_rows))],
         fields={"retrieval_results": {"question_id": topic_field, "chunk_id": doc_field, "doc_id": doc_field}})
    say(f"run {run_id}: {len(rank)} questions, {len(res_rows)} results, k={run_row['k']}")

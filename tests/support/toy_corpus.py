"""The hand-made toy corpus the retrieval tests land straight into the lake: three filings of a few pages, a flat
chunking (one chunk per page) and a parent-child one, five questions with page-level evidence; and readers of a
run's results."""

from __future__ import annotations

from pathlib import Path

import polars as pl

from python_jobs.core.lake import Lake
from python_jobs.corpus.indexing import index_chunks

DATASET = "toyfin"
FLAT = "toy64"
PC = "toy64-parent"

# (doc_id, page, text): three filings, a few pages each
PAGES = [
    ("ACME_2022_10K", 0, "ACME Corp annual report on Form 10-K for fiscal year 2022. Table of contents."),
    ("ACME_2022_10K", 1, "Capital expenditures were $1,577 million in FY2022, up from $1,400 million in FY2021."),
    ("ACME_2022_10K", 2, "Operating margin improved to 12.5% as revenue grew. Dividends per share were $2.10."),
    ("ACME_2022_10K", 3, "Risk factors include supply chain disruption, interest rates and foreign exchange."),
    ("GLOBEX_2023_10Q", 0, "Globex quarterly report on Form 10-Q for Q2 2023. Net revenue was $812 million."),
    ("GLOBEX_2023_10Q", 1, "Globex inventory rose to $230 million; the quick ratio fell to 0.9 in the quarter."),
    ("GLOBEX_2023_10Q", 2, "Globex repurchased shares and paid a dividend; cash and equivalents totaled $95 million."),
    ("INITECH_2021_10K", 0, "Initech annual report. Total debt was $3,100 million and interest expense rose."),
    ("INITECH_2021_10K", 1, "Initech capital expenditures were $220 million, mostly data centers and software."),
    ("INITECH_2021_10K", 2, "Initech operating margin was 8.0%; free cash flow was $410 million in 2021."),
]

QUESTIONS = [
    ("q1", "What were ACME's capital expenditures in FY2022?", [("ACME_2022_10K", 1)]),
    ("q2", "What was Globex net revenue in Q2 2023 according to its 10-Q?", [("GLOBEX_2023_10Q", 0)]),
    ("q3", "What was Initech operating margin and free cash flow in 2021?", [("INITECH_2021_10K", 2)]),
    ("q4", "How much cash did Globex hold and what was its quick ratio?",
     [("GLOBEX_2023_10Q", 1), ("GLOBEX_2023_10Q", 2)]),
    ("q5", "Which company has the largest total debt?", []),  # no evidence: skipped under the oracle conditions
]


def chunk_frames() -> tuple[pl.DataFrame, pl.DataFrame]:
    """A flat chunking (one chunk per page) and a parent-child one (parent = two pages, children = one page)."""
    flat, pc = [], []
    for doc in dict.fromkeys(d for d, _, _ in PAGES):
        pages = [(p, t) for d, p, t in PAGES if d == doc]
        for i, (p, t) in enumerate(pages):
            flat.append({"chunk_id": f"{doc}::{FLAT}::{i:05d}", "doc_id": doc, "chunker_id": FLAT, "ordinal": i,
                         "page_start": p, "page_end": p, "text": t, "n_tokens": len(t.split())})
        child = 0
        for j in range(0, len(pages), 2):
            group = pages[j : j + 2]
            pid = f"{doc}::{PC}::{j // 2:05d}"
            pc.append({"chunk_id": pid, "doc_id": doc, "chunker_id": PC, "ordinal": j // 2, "page_start": group[0][0],
                       "page_end": group[-1][0], "text": "\n\n".join(t for _, t in group), "parent_chunk_id": None})
            for p, t in group:
                pc.append({"chunk_id": f"{pid}.{child:03d}", "doc_id": doc, "chunker_id": PC, "ordinal": child,
                           "page_start": p, "page_end": p, "text": t, "parent_chunk_id": pid})
                child += 1
    return pl.DataFrame(flat).with_columns(pl.lit(DATASET).alias("dataset")), pl.DataFrame(pc).with_columns(
        pl.lit(DATASET).alias("dataset"))


def land_corpus(home: Path, parent_child: bool = True) -> Lake:
    lake = Lake(home)
    docs = pl.DataFrame([{"doc_id": d, "dataset": DATASET, "title": d, "doc_type": "10-K" if "10K" in d else "10-Q",
                          "has_content": True, "n_pages": sum(1 for x, _, _ in PAGES if x == d)}
                         for d in dict.fromkeys(d for d, _, _ in PAGES)])
    pages = pl.DataFrame([{"doc_id": d, "dataset": DATASET, "page_number": p, "text": t} for d, p, t in PAGES])
    qs = pl.DataFrame([{"question_id": q, "dataset": DATASET, "split": "test", "question": text, "source": "human"}
                       for q, text, _ in QUESTIONS])
    ev = pl.DataFrame([{"question_id": q, "evidence_ordinal": i, "dataset": DATASET, "doc_id": d, "page_number": p,
                        "relevance": 1} for q, _, gold in QUESTIONS for i, (d, p) in enumerate(gold)])
    flat, pc = chunk_frames()
    frames = [("documents", DATASET, docs), ("pages", DATASET, pages), ("questions", DATASET, qs),
              ("evidence", DATASET, ev), ("chunks", f"{DATASET}.{FLAT}", flat)]
    if parent_child:
        frames.append(("chunks", f"{DATASET}.{PC}", pc))
    lake.land(frames)
    return lake


def results(lake: Lake, run_id: str) -> pl.DataFrame:
    return lake.read_partition("retrieval_results", run_id).sort("question_id", "rank")


def ranking(lake: Lake, run_id: str, qid: str) -> list[str]:
    return results(lake, run_id).filter(pl.col("question_id") == qid)["chunk_id"].to_list()


def land_flat_indexed(home: Path) -> Lake:
    """The corpus with the flat chunking only, indexed (the LLM query-rewriting retrievers' toy lake)."""
    lake = land_corpus(home, parent_child=False)
    index_chunks(Lake(home), DATASET, FLAT, progress=False)
    return lake


def assert_reranked(lake: Lake, first_run_id: str, rerank_run_id: str, cross_encoder_dir: Path, k: int) -> None:
    """Each question's rerank results are its first-stage run's ranking ordered by the cross-encoder's own scores
    (ties by first-stage order), cut at k, with those scores."""
    import pytest
    from sentence_transformers import CrossEncoder

    ce = CrossEncoder(str(cross_encoder_dir), local_files_only=True)
    texts = dict(lake.read_partition("chunks", f"{DATASET}.{FLAT}").select("chunk_id", "text").iter_rows())
    res = results(lake, rerank_run_id)
    for qid, text, _ in QUESTIONS:
        cands = ranking(lake, first_run_id, qid)
        scores = ce.predict([(text, texts[c]) for c in cands]).reshape(-1)
        order = sorted(range(len(cands)), key=lambda i: (-scores[i], i))[:k]
        got = res.filter(pl.col("question_id") == qid)
        assert got["chunk_id"].to_list() == [cands[i] for i in order], qid
        assert got["score"].to_list() == pytest.approx([float(scores[i]) for i in order], abs=1e-5), qid

"""`finrag export-run`: write a landed retrieval run as a TREC run file or a FinanceRAG submission CSV.

- `trec`: `qid Q0 docno rank score tag`, docno = chunk_id (the unit the metrics rank), tag = run id. trec_eval
  ignores the rank column and re-sorts by score descending, docno descending; so that a re-import ranks exactly as the
  run did, the exported score is by default derived from the rank (`k - rank + 1`, strictly decreasing per question).
  `--score raw` writes the retriever's own scores instead, and refuses when ties or a non-decreasing score would
  reorder the run under trec_eval's rule.
- `financerag-csv`: the ACM-ICAIF'24 FinanceRAG Kaggle format, header `query_id,corpus_id`, rows in rank order,
  corpus_id = the document (chunks of one document collapse to its first occurrence), at most `--top` per query.
  The ids are the dataset's own (BEIR `_id`s): a question's `meta.source_id` / `meta.query_id` when the ingest kept
  one, else its question_id; likewise a document's `source_id` from its chunk/doc id.
"""

from __future__ import annotations

import csv
import io
import json

import polars as pl

from python_jobs.core.errors import InputError
from python_jobs.core.lake import Lake

FORMATS = ("trec", "financerag-csv")


def ranked_results(lake: Lake, run_id: str) -> tuple[dict, pl.DataFrame]:
    runs = lake.read_partition("retrieval_runs", run_id)
    if runs.height == 0:
        raise InputError(f"no retrieval run {run_id!r} in the lake", field="run_id")
    run = runs.row(0, named=True)
    res = lake.read_partition("retrieval_results", run_id)
    if run["source"] == "trec":  # imported runs rank by trec_eval's rule, not by their rank column
        res = res.sort(["question_id", "score", "chunk_id"], descending=[False, True, True])
        res = res.with_columns(pl.int_range(1, pl.len() + 1).over("question_id").cast(pl.Int32).alias("rank"))
    return run, res.sort("question_id", "rank")


def source_question_ids(lake: Lake, dataset: str) -> dict[str, str]:
    """question_id -> the dataset's own query id, when the ingest recorded it in meta."""
    q = lake.read("questions", where={"dataset": dataset}, columns=["question_id", "meta"])
    out = {}
    for qid, meta in q.iter_rows():
        try:
            m = json.loads(meta) if meta else {}
        except json.JSONDecodeError:
            m = {}
        out[qid] = str(m.get("source_id") or m.get("query_id") or m.get("_id") or qid)
    return out


def to_trec(run: dict, res: pl.DataFrame, score: str = "rank") -> str:
    buf = io.StringIO()
    k = int(run["k"] or res["rank"].max() or 0)
    if score == "raw":
        check = res.with_columns(pl.col("score").shift(1).over("question_id").alias("_prev"))
        bad = check.filter(
            pl.col("score").is_null() | (pl.col("_prev").is_not_null() & (pl.col("score") >= pl.col("_prev")))
        )
        if bad.height:
            r = bad.row(0, named=True)
            raise InputError(f"raw scores would reorder question {r['question_id']!r} at rank {r['rank']} "
                             "under trec_eval's tie rule; export with --score rank", field="score")
    for qid, rank, docno, s in res.select("question_id", "rank", "chunk_id", "score").iter_rows():
        value = float(s) if score == "raw" else float(max(k, rank) - rank + 1)
        buf.write(f"{qid}\tQ0\t{docno}\t{rank}\t{value:.6f}\t{run['run_id']}\n")
    return buf.getvalue()


def to_financerag_csv(lake: Lake, run: dict, res: pl.DataFrame, top: int = 10) -> str:
    qids = source_question_ids(lake, run["dataset"])
    docs = (
        res.select("question_id", "rank", "doc_id")
        .unique(["question_id", "doc_id"], keep="first", maintain_order=True)
        .with_columns(pl.int_range(1, pl.len() + 1).over("question_id").alias("_doc_rank"))
        .filter(pl.col("_doc_rank") <= top)
    )
    buf = io.StringIO()
    w = csv.writer(buf, lineterminator="\n")
    w.writerow(["query_id", "corpus_id"])
    for qid, doc in docs.select("question_id", "doc_id").iter_rows():
        w.writerow([qids.get(qid, qid), doc])
    return buf.getvalue()


def export(lake: Lake, run_id: str, fmt: str, score: str = "rank", top: int = 10) -> str:
    run, res = ranked_results(lake, run_id)
    if fmt == "trec":
        return to_trec(run, res, score)
    if fmt == "financerag-csv":
        return to_financerag_csv(lake, run, res, top)
    raise InputError(f"unknown format {fmt!r}; one of {FORMATS}", field="format")

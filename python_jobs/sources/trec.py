"""TREC qrels and run files (trec_eval's formats), and FinanceRAG's submission CSV."""

from __future__ import annotations

import json
from pathlib import Path

import polars as pl
from pydantic import Field

from python_jobs.core.console import say
from python_jobs.core.contracts import contract
from python_jobs.core.errors import InputError
from python_jobs.core.lake import Lake, check_id
from python_jobs.sources.landing import check_frame_duplicates, existing_ids, file_sha256, land
from python_jobs.sources.lines import _Record, read_delimited, read_whitespace_frame


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


TREC_QREL_SCHEMA = {"topic": pl.String, "iteration": pl.String, "docno": pl.String, "rel": pl.Int64}
TREC_RUN_SCHEMA = {"topic": pl.String, "q0": pl.String, "docno": pl.String, "rank": pl.Int64, "score": pl.Float64,
                   "tag": pl.String}


def _read_trec(path: Path, model: type[_Record], schema: dict[str, pl.DataType], keep: list[str],
               trailing: bool = False) -> pl.DataFrame:
    """`_line` + the `keep` columns of the schema (all are checked): the vectorised reader, or the per-line one
    (which names the line and field of what is wrong). `trailing`: text after the last column is ignored."""
    frame = read_whitespace_frame(path, schema, keep, trailing=trailing)
    if frame is None:
        rows = read_delimited(path, model, tuple(schema), sep=None, trailing=trailing)
        frame = pl.DataFrame({"_line": [ln for ln, _ in rows], **{n: [getattr(r, n) for _, r in rows] for n in keep}},
                             schema={"_line": pl.Int64, **{n: schema[n] for n in keep}})
    return frame


def ingest_trec_qrels(lake: Lake, path: Path, dataset: str) -> None:
    """TREC qrels (`topic iter docno rel`) → evidence with graded relevance (0 and negative grades kept).

    A TREC-only dataset needs no corpus or queries; when the dataset has documents, questions or chunks in the lake,
    the landing's validation checks that the qrels name them (the contract's references of evidence)."""
    check_id(dataset, "dataset")
    rows = _read_trec(path, TrecQrel, TREC_QREL_SCHEMA, ["topic", "docno", "rel"])
    check_frame_duplicates(rows, ["topic", "docno"], str(path), "docno", "judgment (topic, docno)")
    evidence = rows.select(
        pl.col("topic").alias("question_id"),
        (pl.int_range(pl.len()).over("topic")).cast(pl.Int32).alias("evidence_ordinal"),
        pl.lit(dataset).alias("dataset"),
        pl.col("docno").alias("doc_id"),
        pl.col("docno").alias("chunk_id"),
        pl.col("rel").alias("relevance"),
        pl.lit(str(path)).alias("_file"),
        "_line",
    )
    land(lake, [("evidence", dataset, contract("evidence").frame(**evidence.to_dict()))], fields=QRELS_FIELDS)


def ingest_trec_run(lake: Lake, path: Path, dataset: str, run_id: str, fmt: str, only_known_questions: bool) -> None:
    """An external run → retrieval_runs (source 'trec') + retrieval_results (rank = line order per question).

    Checked here: the file's format, duplicates, one run tag, and that a docno is a document or a chunk of the dataset
    when it has documents (the contract cannot say "either"). Checked by the landing's validation: that every topic
    is a question of the dataset when it has questions (the contract's reference of retrieval_results).
    Everything is done on columns: a 100M-line run fits in memory."""
    check_id(dataset, "dataset")
    check_id(run_id, "run id")
    file = str(path)
    # parsed: _line, topic, docno, score, tag (file order)
    if fmt == "trec":
        # trec_eval reads six fields of a run line and skips the rest (its own fixture results.trunc has free
        # text there); qrels lines keep their exact four columns
        parsed = _read_trec(path, TrecRunRow, TREC_RUN_SCHEMA, ["topic", "docno", "score", "tag"], trailing=True)
    else:
        rows = read_delimited(path, CsvRunRow, ("query_id", "corpus_id"), sep=",", header=[("query_id", "corpus_id")])
        parsed = pl.DataFrame({"_line": [ln for ln, _ in rows], "topic": [r.query_id for _, r in rows],
                               "docno": [r.corpus_id for _, r in rows]},
                              schema={"_line": pl.Int64, "topic": pl.String, "docno": pl.String})
        # rows are in rank order and carry no score: 10, 9, 8, … as the FinanceRAG derived TREC file does
        parsed = parsed.with_columns((10 - pl.int_range(pl.len()).over("topic")).cast(pl.Float64).alias("score"),
                                     pl.lit(None, pl.String).alias("tag"))
    topic_field, doc_field = ("topic", "docno") if fmt == "trec" else ("query_id", "corpus_id")
    check_frame_duplicates(parsed, ["topic", "docno"], file, doc_field, "(topic, docno)")
    tags = parsed.group_by("tag").agg(pl.col("_line").min()).sort("_line")
    if tags.height > 1:
        raise InputError(f"run tags differ within one run file ({', '.join(map(str, tags['tag']))})", file=file,
                         line=tags["_line"][1], field="tag")
    retriever = tags["tag"][0] if tags.height and tags["tag"][0] else "imported"

    skipped_rows, skipped_topics = 0, 0
    if only_known_questions:
        known_questions = existing_ids(lake, "questions", dataset, "question_id")
        if known_questions is None:
            raise InputError(f"--only-known-questions needs the questions of dataset {dataset!r} in the lake; "
                             f"ingest them first", file=file, field=topic_field)
        known = pl.col("topic").is_in(pl.Series(list(known_questions), dtype=pl.String).implode())
        kept = parsed.filter(known)
        skipped_rows = parsed.height - kept.height
        skipped_topics = parsed.filter(~known)["topic"].n_unique()
        parsed = kept
        say(f"skipped {skipped_rows} rows of {skipped_topics} questions not in dataset {dataset!r}")
        if not parsed.height:
            raise InputError(f"no row of the run names a question of dataset {dataset!r}", file=file, field=topic_field)
    known_docs = existing_ids(lake, "documents", dataset, "doc_id")
    # a docno may also be a chunk id of the dataset (a run exported by `finrag export-run`): its doc and pages
    # then come from the chunks table, so the run scores at chunk, page and doc level like the original
    chunks = lake.read("chunks", where={"dataset": dataset},
                       columns=["chunk_id", "doc_id", "chunker_id", "page_start", "page_end"])
    is_doc = (pl.col("docno").is_in(pl.Series(list(known_docs), dtype=pl.String).implode()) if known_docs is not None
              else pl.lit(False))
    parsed = parsed.with_columns(is_doc.alias("_is_doc")).join(
        chunks.rename({"chunk_id": "docno", "doc_id": "_chunk_doc"}), on="docno", how="left", maintain_order="left")
    if known_docs is not None:
        unknown = parsed.filter(~pl.col("_is_doc") & pl.col("_chunk_doc").is_null()).head(1)
        if unknown.height:
            docno = unknown["docno"][0]
            raise InputError(f"unknown document {docno!r}: dataset {dataset!r} has documents and this is neither "
                             f"one of them nor one of its chunks", file=file, line=unknown["_line"][0],
                             field=doc_field)
    as_chunk = ~pl.col("_is_doc") & pl.col("_chunk_doc").is_not_null()
    chunkers = parsed.filter(as_chunk)["chunker_id"].unique().sort().to_list()
    if len(chunkers) > 1:
        raise InputError(f"docnos are chunks of several chunkers ({', '.join(chunkers)})", file=file,
                         field=doc_field)

    results = parsed.select(
        pl.lit(run_id).alias("run_id"),
        pl.col("topic").alias("question_id"),
        pl.lit(dataset).alias("dataset"),
        # line order within the question; trec_eval's score order is the metrics models' job
        (pl.int_range(1, pl.len() + 1).over("topic")).cast(pl.Int32).alias("rank"),
        pl.col("docno").alias("chunk_id"),
        pl.when(as_chunk).then(pl.col("_chunk_doc")).otherwise(pl.col("docno")).alias("doc_id"),
        pl.when(as_chunk).then(pl.col("page_start")).alias("page_start"),
        pl.when(as_chunk).then(pl.col("page_end")).alias("page_end"),
        "score",
        pl.lit(file).alias("_file"),
        "_line",
    )
    sha = file_sha256(path)
    params = {
        "file": path.name, "sha256": sha, "format": fmt, "rows": results.height,
        "only_known_questions": only_known_questions, "skipped_rows": skipped_rows,
        "skipped_questions": skipped_topics,
        "rank_rule": "file rank column ignored; results ranked by score desc, docno desc (trec_eval)"
        if fmt == "trec" else "score = 10 - row index within the query (rows are in rank order)",
    }
    run_row = {
        "run_id": run_id, "dataset": dataset, "retriever": retriever, "condition": "full",
        "k": int(results["rank"].max()), "embedder": None, "reranker": None,
        "chunker_id": chunkers[0] if chunkers else None,
        "params": json.dumps(params, sort_keys=True),
        # an imported run has one condition (full): its config identity is the file's content
        "config_hash": sha, "config_id": sha, "source": "trec",
    }
    n_questions = results["question_id"].n_unique()
    land(lake, [("retrieval_runs", run_id, contract("retrieval_runs").frame([run_row])),
                ("retrieval_results", run_id, contract("retrieval_results").frame(**results.to_dict()))],
         fields={"retrieval_results": {"question_id": topic_field, "chunk_id": doc_field, "doc_id": doc_field}})
    say(f"run {run_id}: {n_questions} questions, {results.height} results, k={run_row['k']}")

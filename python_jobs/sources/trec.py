"""TREC qrels and run files (trec_eval's formats), and FinanceRAG's submission CSV."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import polars as pl
from pydantic import Field

from python_jobs.core.console import say
from python_jobs.core.contracts import contract
from python_jobs.core.errors import InputError
from python_jobs.core.lake import Lake, check_id
from python_jobs.sources.landing import (
    BLOCK_BYTES,
    SlicedLanding,
    check_frame_duplicates,
    existing_ids,
    file_digest,
    land,
    slice_count,
    write_slice,
)
from python_jobs.sources.lines import (
    Record,
    block_lines,
    empty_file_error,
    file_blocks,
    integer,
    parse_delimited,
    read_delimited,
    read_whitespace_frame,
)

# The columns as read (both readers): a value must fit its column here, where its line and field are known.
# rel lands in evidence.relevance, and takes its type; a run's rank is read, checked and not kept.
TREC_QREL_SCHEMA = {"topic": pl.String, "iteration": pl.String, "docno": pl.String,
                    "rel": contract("evidence").schema["relevance"]}
TREC_RUN_SCHEMA = {"topic": pl.String, "q0": pl.String, "docno": pl.String, "rank": pl.Int64, "score": pl.Float64,
                   "tag": pl.String}


class TrecQrel(Record):
    topic: str = Field(min_length=1)
    iteration: str
    docno: str = Field(min_length=1)
    rel: integer(TREC_QREL_SCHEMA["rel"])


class TrecRunRow(Record):
    topic: str = Field(min_length=1)
    q0: str
    docno: str = Field(min_length=1)
    rank: integer(TREC_RUN_SCHEMA["rank"])
    score: float = Field(allow_inf_nan=False)
    tag: str = Field(min_length=1)


class CsvRunRow(Record):
    query_id: str = Field(min_length=1)
    corpus_id: str = Field(min_length=1)


# how the files name the contract's columns: validation errors of the landing name the file's field
QRELS_FIELDS = {"evidence": {"question_id": "topic", "doc_id": "docno", "chunk_id": "docno", "relevance": "rel"}}


def _read_trec(path: Path, model: type[Record], schema: dict[str, pl.DataType], keep: list[str],
               trailing: bool = False, block: tuple[int, bytes] | None = None) -> pl.DataFrame:
    """`_line` + the `keep` columns of the schema (all are checked): the vectorised reader, or the per-line one
    (which names the line and field of what is wrong). `trailing`: text after the last column is ignored. `block`:
    read only that (first line, bytes) block of the file (`file_blocks`), with the file's line numbers."""
    if block is None:
        frame = read_whitespace_frame(path, schema, keep, trailing=trailing)
    else:
        frame = read_whitespace_frame(block[1], schema, keep, trailing=trailing, first_line=block[0])
    if frame is None:
        if block is None:
            rows = read_delimited(path, model, tuple(schema), sep=None, trailing=trailing)
        else:
            rows = list(parse_delimited(block_lines(*block), str(path), model, tuple(schema), sep=None,
                                        trailing=trailing))
        frame = pl.DataFrame({"_line": [ln for ln, _ in rows], **{n: [getattr(r, n) for _, r in rows] for n in keep}},
                             schema={"_line": pl.Int64, **{n: schema[n] for n in keep}})
    return frame


def _trec_slices(path: Path, model: type[Record], schema: dict[str, pl.DataType], keep: list[str], trailing: bool,
                 n_slices: int, work: Path) -> list[Callable[[], pl.DataFrame]]:
    """The parsed file (`_read_trec`) in `n_slices` question-aligned slices, each a function that reads it.

    One slice: the whole file, read as it always was. More: the file is read block by block (`file_blocks`, one
    block in memory at a time), each block's rows hash-partitioned by topic into the slices' piece files in the job's
    work dir; a slice is then every row of its topics, wherever they are in the file (grouped by query or not), in
    file order. Format errors name the file's first bad line, as reading the whole file does."""
    if n_slices == 1:
        return [lambda: _read_trec(path, model, schema, keep, trailing=trailing)]
    pieces: list[list[Path]] = [[] for _ in range(n_slices)]
    rows = 0
    for b, block in enumerate(file_blocks(path, BLOCK_BYTES)):
        frame = _read_trec(path, model, schema, keep, trailing=trailing, block=block)
        rows += frame.height
        frame = frame.with_columns((pl.col("topic").hash(seed=0) % n_slices).alias("_slice"))
        for (i,), piece in frame.partition_by("_slice", as_dict=True, include_key=False).items():
            pieces[i].append(write_slice(piece, work, f"parsed-{i:05d}", b))
        del frame
    if not rows:
        raise empty_file_error(str(path), next(iter(schema)))
    return [lambda files=files: pl.read_parquet(files) if files else pl.DataFrame(
        schema={"_line": pl.Int64, **{n: schema[n] for n in keep}}) for files in pieces]


def ingest_trec_qrels(lake: Lake, path: Path, dataset: str) -> None:
    """TREC qrels (`topic iter docno rel`) → evidence with graded relevance (0 and negative grades kept).

    A TREC-only dataset needs no corpus or queries; when the dataset has documents, questions or chunks in the lake,
    the landing's validation checks that the qrels name them (the contract's references of evidence). A file of more
    lines than a slice (`landing.slice_rows`) lands in question-aligned slices (`_trec_slices`)."""
    check_id(dataset, "dataset")
    _, n_lines = file_digest(path)
    with lake.work_dir() as work:
        slices = _trec_slices(path, TrecQrel, TREC_QREL_SCHEMA, ["topic", "docno", "rel"], False,
                              slice_count(n_lines), work)
        evidence_out = SlicedLanding(len(slices), work, "evidence", ("question_id",))
        for i, read in enumerate(slices):
            parsed = read()
            check_frame_duplicates(parsed, ["topic", "docno"], str(path), "docno", "judgment (topic, docno)")
            evidence = contract("evidence").frame(**parsed.select(
                pl.col("topic").alias("question_id"),
                (pl.int_range(pl.len()).over("topic")).cast(pl.Int32).alias("evidence_ordinal"),
                pl.lit(dataset).alias("dataset"),
                pl.col("docno").alias("doc_id"),
                pl.col("docno").alias("chunk_id"),
                pl.col("rel").alias("relevance"),
                pl.lit(str(path)).alias("_file"),
                "_line",
            ).to_dict(), fields=QRELS_FIELDS["evidence"])
            del parsed
            evidence_out.add(i, evidence)
        land(lake, [("evidence", dataset, evidence_out.frame())], fields=QRELS_FIELDS)


def ingest_trec_run(lake: Lake, path: Path, dataset: str, run_id: str, fmt: str, only_known_questions: bool) -> None:
    """An external run → retrieval_runs (source 'trec') + retrieval_results (rank = line order per question).

    Checked here: the file's format, duplicates, one run tag, and that a docno is a document or a chunk of the dataset
    when it has documents (the contract cannot say "either"). Checked by the landing's validation: that every topic
    is a question of the dataset when it has questions (the contract's reference of retrieval_results).

    Everything is done on columns, and a TREC file of more lines than a slice (`landing.slice_rows`, 5M) is read,
    checked, validated and written in question-aligned slices (`_trec_slices`; each slice a part file of the run's
    partition, landed all at once with the run's row): memory is bounded by the slice, not the file. In slices, the
    checks run file-wide for the format and the run tag, slice by slice for the rest (a file with several errors may
    name another of them first than a whole-file read would)."""
    check_id(dataset, "dataset")
    check_id(run_id, "run id")
    file = str(path)
    sha, n_lines = file_digest(path)
    topic_field, doc_field = ("topic", "docno") if fmt == "trec" else ("query_id", "corpus_id")
    with lake.work_dir() as work:
        # parsed slices: _line, topic, docno, score, tag (file order within a slice)
        if fmt == "trec":
            # trec_eval reads six fields of a run line and skips the rest (its own fixture results.trunc has free
            # text there); qrels lines keep their exact four columns
            slices = _trec_slices(path, TrecRunRow, TREC_RUN_SCHEMA, ["topic", "docno", "score", "tag"], True,
                                  slice_count(n_lines), work)
        else:
            slices = [lambda: _read_csv_run(path)]  # a submission CSV: small, read whole

        known_questions = None
        if only_known_questions:
            known_questions = existing_ids(lake, "questions", dataset, "question_id")
            if known_questions is None:
                raise InputError(f"--only-known-questions needs the questions of dataset {dataset!r} in the lake; "
                                 f"ingest them first", file=file, field=topic_field)
        known_docs = existing_ids(lake, "documents", dataset, "doc_id")
        # a docno may also be a chunk id of the dataset (a run exported by `finrag export-run`): its doc and pages
        # then come from the chunks table, so the run scores at chunk, page and doc level like the original
        chunks = lake.read("chunks", where={"dataset": dataset},
                           columns=["chunk_id", "doc_id", "chunker_id", "page_start", "page_end"])

        results_out = SlicedLanding(len(slices), work, "results", ("question_id",))
        rows, k, n_questions, skipped_rows, skipped_topics, chunkers = 0, 0, 0, 0, 0, set()
        for i, read in enumerate(slices):
            parsed = read()
            check_frame_duplicates(parsed, ["topic", "docno"], file, doc_field, "(topic, docno)")
            if i == 0:  # after the first slice's duplicates: the order of the checks of a whole-file read
                retriever = _run_tag(parsed.lazy() if len(slices) == 1 else pl.scan_parquet(
                    sorted(work.glob("parsed-*.parquet"))), file)
            if known_questions is not None:
                known = pl.col("topic").is_in(pl.Series(list(known_questions), dtype=pl.String).implode())
                kept = parsed.filter(known)
                skipped_rows += parsed.height - kept.height
                skipped_topics += parsed.filter(~known)["topic"].n_unique()
                parsed = kept
            results, slice_chunkers = _results(parsed, chunks, known_docs, run_id, dataset, file, doc_field)
            del parsed
            chunkers |= slice_chunkers
            rows += results.height
            n_questions += results["question_id"].n_unique()
            k = max(k, int(results["rank"].max() or 0))
            results_out.add(i, results)
            del results
        if known_questions is not None:
            say(f"skipped {skipped_rows} rows of {skipped_topics} questions not in dataset {dataset!r}")
            if not rows:
                raise InputError(f"no row of the run names a question of dataset {dataset!r}", file=file,
                                 field=topic_field)
        if len(chunkers) > 1:
            raise InputError(f"docnos are chunks of several chunkers ({', '.join(sorted(chunkers))})", file=file,
                             field=doc_field)

        params = {
            "file": path.name, "sha256": sha, "format": fmt, "rows": rows,
            "only_known_questions": only_known_questions, "skipped_rows": skipped_rows,
            "skipped_questions": skipped_topics,
            "rank_rule": "file rank column ignored; results ranked by score desc, docno desc (trec_eval)"
            if fmt == "trec" else "score = 10 - row index within the query (rows are in rank order)",
        }
        run_row = {
            "run_id": run_id, "dataset": dataset, "retriever": retriever, "condition": "full",
            "k": k, "embedder": None, "reranker": None,
            "chunker_id": min(chunkers) if chunkers else None,
            "params": json.dumps(params, sort_keys=True),
            # an imported run has one condition (full): its config identity is the file's content
            "config_hash": sha, "config_id": sha, "source": "trec",
        }
        land(lake, [("retrieval_runs", run_id, contract("retrieval_runs").frame([run_row])),
                    ("retrieval_results", run_id, results_out.frame())],
             fields={"retrieval_results": {"question_id": topic_field, "chunk_id": doc_field, "doc_id": doc_field}})
    say(f"run {run_id}: {n_questions} questions, {rows} results, k={run_row['k']}")


def _read_csv_run(path: Path) -> pl.DataFrame:
    rows = read_delimited(path, CsvRunRow, ("query_id", "corpus_id"), sep=",", header=[("query_id", "corpus_id")])
    parsed = pl.DataFrame({"_line": [ln for ln, _ in rows], "topic": [r.query_id for _, r in rows],
                           "docno": [r.corpus_id for _, r in rows]},
                          schema={"_line": pl.Int64, "topic": pl.String, "docno": pl.String})
    # rows are in rank order and carry no score: 10, 9, 8, … as the FinanceRAG derived TREC file does
    return parsed.with_columns((10 - pl.int_range(pl.len()).over("topic")).cast(pl.Float64).alias("score"),
                               pl.lit(None, pl.String).alias("tag"))


def _run_tag(parsed: pl.LazyFrame, file: str) -> str:
    """The run's one tag (its retriever), over the whole file: a second tag is an error naming its first line."""
    tags = parsed.group_by("tag").agg(pl.col("_line").min()).sort("_line").collect(engine="streaming")
    if tags.height > 1:
        raise InputError(f"run tags differ within one run file ({', '.join(map(str, tags['tag']))})", file=file,
                         line=tags["_line"][1], field="tag")
    return tags["tag"][0] if tags.height and tags["tag"][0] else "imported"


def _results(parsed: pl.DataFrame, chunks: pl.DataFrame, known_docs: set[str] | None, run_id: str, dataset: str,
             file: str, doc_field: str) -> tuple[pl.DataFrame, set[str]]:
    """One slice's retrieval_results rows (typed by the contract, with `_file` / `_line`) and the chunkers of its
    docnos that are chunk ids; an unknown docno is an error naming its line (the slice's first)."""
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
    chunkers = set(parsed.filter(as_chunk)["chunker_id"].unique().to_list())
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
    return contract("retrieval_results").frame(**results.to_dict()), chunkers

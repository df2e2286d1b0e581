"""`finrag ingest`: load benchmark files as they are into the lake (SPEC §4, §7, §8).

    finrag ingest financebench --questions F --documents F --pdfs DIR [--dataset financebench]
    finrag ingest beir --dir DIR --dataset NAME
    finrag ingest trec-qrels FILE --dataset NAME
    finrag ingest trec-run FILE --dataset NAME --run-id ID [--format trec|financerag-csv] [--only-known-questions]
    finrag ingest financebench-answers DIR_OR_FILE... [--label-set financebench_human]

Every subcommand parses and checks all of its input first (pydantic per line: errors name file, line and field), then
lands all of its tables in ONE `Lake.land` call, so a failed load lands nothing. The partition value is the load id,
derived from the dataset name (or the run id), so re-running the same load replaces its own partitions and changes
no count.

Decisions (where the design is silent):
- Load ids: documents/pages/questions/evidence land in partition `<dataset>`; BEIR corpus chunks in
  `<dataset>.corpus` (chunker_id 'corpus', as `finrag chunk` names its partitions `<dataset>.<chunker_id>`); runs in
  `<run id>`; human labels in `<label set>` (re-ingesting some answer files replaces only those runs' labels).
  `trec-qrels` lands its evidence in `<dataset>` too: it replaces the qrels a `beir` load of the same dataset landed.
- FinanceRAG dataset names used by the tests and docs: financerag_finder, financerag_finqabench,
  financerag_financebench, financerag_tatqa, financerag_finqa, financerag_convfinqa, financerag_multihiertt.
- BEIR corpus entries: one document and one chunk each (chunk text = the entry's `text` as the corpus has it; the
  title stays on the document). doc_type is 'other' unless the title is a FinanceBench doc_name
  (`COMPANY_2022_10K`, `…_2023Q1_EARNINGS`, `…_8K_dated-2023-01-06`): then the filing's type and period.
- FinanceBench's document list names FOOTLOCKER_2023_annualreport twice (doc_period 2023 and 2022, same doc_link;
  the repo has one such PDF): a repeated doc_name with the same doc_link, company and type is a second record of
  one document. Both records land (all 361): the first under its doc_name, the repeat as `<doc_name>__line<N>`
  (questions and PDFs refer to the doc_name); a warning names both lines. A repeated doc_name for a different
  document is an error.
- FinanceBench `model_answer`/`gold_answer` may be numbers in the real files: accepted (answers store text).
"""

from __future__ import annotations

import csv
import hashlib
import json
import re
from collections import Counter, defaultdict
from collections.abc import Iterable
from pathlib import Path

import click
import polars as pl

from .config import PROJECT_DIR
from .contracts import contract
from .errors import InputError
from .lake import Lake, check_id
from .readers import (
    BeirQrel,
    BeirRecord,
    CsvRunRow,
    FinanceBenchAnswer,
    FinanceBenchDocument,
    FinanceBenchQuestion,
    TrecQrel,
    TrecRunRow,
    read_delimited,
    read_jsonl,
)

ORIGIN = {"_file": pl.String, "_line": pl.Int64}
CORPUS_CHUNKER = "corpus"  # chunker_id of BEIR corpus entries: each entry is one chunk of its own document

# FinanceBench doc_name → doc type code, for BEIR corpora whose titles are FinanceBench doc names
# (e.g. PEPSICO_2022_10K, JOHNSON_JOHNSON_2023Q1_EARNINGS, MCDONALDS_8K_dated-2023-01-06)
_DOC_NAME = re.compile(
    r"^(?P<company>[A-Za-z0-9&.\-]+(?:_[A-Za-z0-9&.\-]+)*?)(?:_(?P<period>\d{4}(?:Q[1-4])?))?"
    r"_(?P<code>10K|10Q|8K|EARNINGS|annualreport)(?:_dated[-_][0-9\-]+)?$",
    re.IGNORECASE,
)
_NAME_CODES = {"10k": "10-K", "10q": "10-Q", "8k": "8-K", "earnings": "earnings_call", "annualreport": "annual_report"}


def say(msg: str) -> None:
    click.echo(msg, err=True)


def frame(table: str, rows: list[dict[str, object]], origin: bool = True) -> pl.DataFrame:
    """Rows → a frame typed by the table's contract (plus the _file/_line origin columns)."""
    schema = {k: v for k, v in contract(table).schema.items() if k not in ("created_at",)}
    if origin:
        schema = {**schema, **ORIGIN}
    cols = set().union(*(r.keys() for r in rows)) if rows else set()
    schema = {k: v for k, v in schema.items() if k in cols}
    return pl.DataFrame({k: [r.get(k) for r in rows] for k in schema}, schema=schema)


def file_sha256(path: Path) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as fh:
        for block in iter(lambda: fh.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


def land(lake: Lake, frames: list[tuple[str, str, pl.DataFrame]]) -> None:
    # one call: the lake validates every frame first and lands all of them or none
    landed = lake.land([f for f in frames if f[2].height])
    by_table: dict[str, list] = defaultdict(list)
    for x in landed:
        by_table[x.table].append(x)
    for table, xs in by_table.items():
        where = (f"{contract(table).partition}={xs[0].partition_value}" if len(xs) == 1
                 else f"{len(xs)} partitions")
        say(f"landed {table} {where}: {sum(x.rows for x in xs)} rows")


def existing_ids(lake: Lake, table: str, dataset: str, column: str, skip_partition: str | None = None) -> set[str] | None:
    """Ids already in the lake for a dataset (None when the dataset has no rows in that table).

    Rows of the partition being replaced by this load are ignored: they are about to go.
    """
    part = contract(table).partition
    df = lake.read(table, where={"dataset": dataset}, columns=[column, part])
    if skip_partition is not None:
        df = df.filter(pl.col(part) != skip_partition)
    return set(df[column].to_list()) if df.height else None


@click.group("ingest")
def command() -> None:
    """Load benchmark files (FinanceBench, BEIR/FinanceRAG, TREC qrels and runs, FinanceBench answers) into the lake."""


# ---- FinanceBench ----------------------------------------------------------------------------------------------
def doc_type_codes() -> dict[str, str]:
    """FinanceBench doc_type code → our doc_type, from the seed (one source of truth with dbt)."""
    with open(PROJECT_DIR / "seeds" / "doc_types.csv", newline="", encoding="utf-8") as fh:
        return {r["financebench_code"]: r["doc_type"] for r in csv.DictReader(fh) if r["financebench_code"]}


def read_financebench_documents(path: Path) -> dict[str, tuple[int, FinanceBenchDocument]]:
    codes = doc_type_codes()
    docs: dict[str, tuple[int, FinanceBenchDocument]] = {}
    for line, d in read_jsonl(path, FinanceBenchDocument):
        if d.doc_type not in codes:
            raise InputError(f"unknown doc_type code {d.doc_type!r}; known: {sorted(codes)}", file=str(path), line=line,
                             field="doc_type")
        if d.doc_name in docs:
            first_line, first = docs[d.doc_name]
            # The real file lists FOOTLOCKER_2023_annualreport twice (doc_period 2023 and 2022, same doc_link and one
            # PDF in the repo): one document described twice. A different source under the same name is a real clash.
            if (d.doc_link, d.company, d.doc_type) != (first.doc_link, first.company, first.doc_type):
                raise InputError(f"duplicate doc_name {d.doc_name!r} (first on line {first_line}) for a different "
                                 f"document", file=str(path), line=line, field="doc_name")
            # Both records are kept (nothing lost): the repeat gets its own id, named after the line it came from.
            # Questions and PDFs refer to the doc_name, i.e. to the first record.
            alias = f"{d.doc_name}__line{line}"
            differ = [k for k in ("gics_sector", "doc_period") if getattr(d, k) != getattr(first, k)]
            say(f"warning: {path} line {line}: doc_name {d.doc_name!r} repeats line {first_line} (same doc_link)"
                + (f" with a different {', '.join(differ)}" if differ else "") + f"; kept as doc_id {alias!r}")
            docs[alias] = (line, d)
            continue
        docs[d.doc_name] = (line, d)
    return docs


@command.command("financebench")
@click.option("--questions", "questions_path", required=True, type=click.Path(exists=True, dir_okay=False, path_type=Path),
              help="financebench_open_source.jsonl")
@click.option("--documents", "documents_path", required=True,
              type=click.Path(exists=True, dir_okay=False, path_type=Path), help="financebench_document_information.jsonl")
@click.option("--pdfs", "pdf_dir", type=click.Path(exists=True, file_okay=False, path_type=Path),
              help="Directory of <doc_name>.pdf files (any subset of the documents).")
@click.option("--dataset", default="financebench", show_default=True, help="Dataset name (also the load id).")
@click.option("--workers", default=2, show_default=True, type=click.IntRange(1, 2), help="pypdf processes.")
def financebench_cmd(questions_path: Path, documents_path: Path, pdf_dir: Path | None, dataset: str, workers: int) -> None:
    """FinanceBench questions, document metadata and PDFs → documents, pages, questions, evidence."""
    from .pdf_pages import extract_pages, inspect

    check_id(dataset, "dataset")
    lake = Lake()
    docs = read_financebench_documents(documents_path)
    codes = doc_type_codes()

    # questions and their evidence; every named document must be in the document list
    qfile = str(questions_path)
    questions = read_jsonl(questions_path, FinanceBenchQuestion)
    seen: dict[str, int] = {}
    for line, q in questions:
        if q.financebench_id in seen:
            raise InputError(f"duplicate financebench_id {q.financebench_id!r} (first on line {seen[q.financebench_id]})",
                             file=qfile, line=line, field="financebench_id")
        seen[q.financebench_id] = line
        if q.doc_name not in docs:
            raise InputError(f"unknown document {q.doc_name!r} (not in {documents_path.name})", file=qfile, line=line,
                             field="doc_name")
        for i, e in enumerate(q.evidence):
            if e.doc_name not in docs:
                raise InputError(f"evidence names unknown document {e.doc_name!r} (not in {documents_path.name})",
                                 file=qfile, line=line, field=f"evidence[{i}].doc_name")

    # PDFs: exact file name doc_name + '.pdf' (names are case-sensitive: Pfizer_2023Q2_10Q.pdf vs PFIZER_2021_10K.pdf)
    pdf_paths: dict[str, Path] = {}
    if pdf_dir is not None:
        on_disk = {p.name: p for p in pdf_dir.iterdir() if p.is_file() and p.suffix.lower() == ".pdf"}
        pdf_paths = {name: on_disk[f"{name}.pdf"] for name in docs if f"{name}.pdf" in on_disk}
        stray = sorted(set(on_disk) - {f"{n}.pdf" for n in pdf_paths})
        if stray:
            say(f"warning: {len(stray)} PDF(s) in {pdf_dir} match no doc_name and are ignored: {', '.join(stray[:5])}")
    infos = {name: inspect(p) for name, p in sorted(pdf_paths.items())}

    # evidence pages must exist in the PDF when we have it (checked before the slow text extraction)
    for line, q in questions:
        for i, e in enumerate(q.evidence):
            info = infos.get(e.doc_name)
            if info is not None and e.evidence_page_num >= info.n_pages:
                raise InputError(f"page {e.evidence_page_num} is beyond {e.doc_name} ({info.n_pages} pages, 0-based)",
                                 file=qfile, line=line, field=f"evidence[{i}].evidence_page_num")

    say(f"{len(docs)} documents, {len(questions)} questions, {len(infos)} PDFs "
        f"({sum(i.n_pages for i in infos.values())} pages)")
    texts = extract_pages(list(infos.values()), workers=workers) if infos else {}

    doc_rows = []
    for name, (line, d) in docs.items():
        info = infos.get(name)
        doc_rows.append({
            "doc_id": name, "dataset": dataset, "title": d.doc_name, "company": d.company, "doc_type": codes[d.doc_type],
            "period": None if d.doc_period is None else str(d.doc_period), "sector": d.gics_sector, "language": "en",
            "source_uri": d.doc_link, "n_pages": info.n_pages if info else None,
            "content_sha256": info.sha256 if info else None, "has_content": info is not None,
            "_file": str(documents_path), "_line": line,
        })
    page_rows = [
        {"doc_id": name, "dataset": dataset, "page_number": i, "text": t, "_file": str(info.path), "_line": None}
        for name, info in infos.items()
        for i, t in enumerate(texts[info.path])
    ]
    q_rows, ev_rows = [], []
    declared = set(FinanceBenchQuestion.model_fields) - {"financebench_id", "question", "answer", "question_type",
                                                         "question_reasoning", "evidence"}
    for line, q in questions:
        meta = {k: getattr(q, k) for k in sorted(declared)}
        meta.update(q.model_extra or {})
        # the full page text of each evidence item: kept for documents whose PDF is absent
        meta["evidence_text_full_page"] = [e.evidence_text_full_page for e in q.evidence]
        q_rows.append({
            "question_id": q.financebench_id, "dataset": dataset, "split": "test", "question": q.question,
            "reference_answers": [q.answer], "task": None, "topic_path": None, "question_type": q.question_type,
            # `finrag synth` labels its template-made questions SYNTHETIC; FinanceBench's own are human-written
            "question_reasoning": q.question_reasoning,
            "source": "generated" if q.dataset_subset_label == "SYNTHETIC" else "human",
            "meta": json.dumps(meta, sort_keys=True, ensure_ascii=False), "_file": qfile, "_line": line,
        })
        for i, e in enumerate(q.evidence):
            ev_rows.append({
                "question_id": q.financebench_id, "evidence_ordinal": i, "dataset": dataset, "doc_id": e.doc_name,
                "page_number": e.evidence_page_num, "chunk_id": None, "relevance": 1, "evidence_text": e.evidence_text,
                "_file": qfile, "_line": line,
            })
    frames = [
        ("documents", dataset, frame("documents", doc_rows)),
        ("questions", dataset, frame("questions", q_rows)),
        ("evidence", dataset, frame("evidence", ev_rows)),
    ]
    if page_rows:
        frames.append(("pages", dataset, frame("pages", page_rows)))
    land(lake, frames)
    if not page_rows and lake.drop_partition("pages", dataset):
        say(f"dropped the pages of an earlier {dataset} load (no PDFs in this one)")


# ---- BEIR / FinanceRAG -----------------------------------------------------------------------------------------
def doc_attrs_from_title(title: str) -> tuple[str, str | None]:
    """doc_type and period when a corpus title is a FinanceBench doc_name (FinanceRAG's FinanceBench corpus)."""
    m = _DOC_NAME.match(title.strip())
    if not m:
        return "other", None
    return _NAME_CODES[m["code"].lower()], m["period"]


def read_qrels_tsv(path: Path) -> list[tuple[int, BeirQrel]]:
    return read_delimited(path, BeirQrel, ("query_id", "corpus_id", "score"), sep="\t",
                          header=[("query_id", "corpus_id", "score")])


def check_duplicates(rows: Iterable[tuple[int, object]], key, file: str, field: str, what: str) -> None:
    seen: dict[object, int] = {}
    for line, r in rows:
        k = key(r)
        if k in seen:
            raise InputError(f"duplicate {what} {k!r} (first on line {seen[k]})", file=file, line=line, field=field)
        seen[k] = line


@command.command("beir")
@click.option("--dir", "src", required=True, type=click.Path(exists=True, file_okay=False, path_type=Path),
              help="corpus.jsonl (optional), queries.jsonl, qrels.tsv (query_id, corpus_id, score).")
@click.option("--dataset", required=True, help="Dataset name, also the load id (e.g. financerag_finder).")
def beir_cmd(src: Path, dataset: str) -> None:
    """A BEIR / FinanceRAG dataset → documents + chunks (corpus), questions (queries), evidence (qrels)."""
    check_id(dataset, "dataset")
    lake = Lake()
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
    query_ids = {q.id for _, q in queries}
    corpus_ids = {d.id for _, d in corpus} if corpus is not None else None
    for line, r in qrels:
        if r.query_id not in query_ids:
            raise InputError(f"unknown query id {r.query_id!r} (not in queries.jsonl)", file=str(qrels_path), line=line,
                             field="query_id")
        if corpus_ids is not None and r.corpus_id not in corpus_ids:
            raise InputError(f"unknown corpus id {r.corpus_id!r} (not in corpus.jsonl)", file=str(qrels_path),
                             line=line, field="corpus_id")

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
    frames = [("questions", dataset, frame("questions", q_rows)), ("evidence", dataset, frame("evidence", ev_rows))]
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
        frames += [("documents", dataset, frame("documents", doc_rows)),
                   ("chunks", f"{dataset}.{CORPUS_CHUNKER}", frame("chunks", chunk_rows))]
    else:
        say(f"no corpus.jsonl in {src}: questions and qrels only (a qrels-only dataset)")
    if not qrels:
        say(f"no qrels.tsv in {src}: the questions have no relevance judgments")
    land(lake, frames)


# ---- TREC qrels and runs ---------------------------------------------------------------------------------------
@command.command("trec-qrels")
@click.argument("path", type=click.Path(exists=True, dir_okay=False, path_type=Path))
@click.option("--dataset", required=True, help="Dataset name; the qrels land as its evidence (load id = dataset).")
def trec_qrels_cmd(path: Path, dataset: str) -> None:
    """TREC qrels (`topic iter docno rel`) → evidence with graded relevance (0 and negative grades kept)."""
    check_id(dataset, "dataset")
    lake = Lake()
    rows = read_delimited(path, TrecQrel, ("topic", "iteration", "docno", "rel"), sep=None)
    check_duplicates(rows, lambda r: (r.topic, r.docno), str(path), "docno", "judgment (topic, docno)")
    # a TREC-only dataset needs no corpus or queries; when they are in the lake, the qrels must name them
    known_docs = existing_ids(lake, "documents", dataset, "doc_id")
    known_questions = existing_ids(lake, "questions", dataset, "question_id")
    for line, r in rows:
        if known_docs is not None and r.docno not in known_docs:
            raise InputError(f"unknown docno {r.docno!r}: dataset {dataset!r} has documents and this is not one",
                             file=str(path), line=line, field="docno")
        if known_questions is not None and r.topic not in known_questions:
            raise InputError(f"unknown topic {r.topic!r}: dataset {dataset!r} has questions and this is not one",
                             file=str(path), line=line, field="topic")
    ordinal: Counter[str] = Counter()
    ev_rows = []
    for line, r in rows:
        ev_rows.append({
            "question_id": r.topic, "evidence_ordinal": ordinal[r.topic], "dataset": dataset, "doc_id": r.docno,
            "page_number": None, "chunk_id": r.docno, "relevance": r.rel, "evidence_text": None,
            "_file": str(path), "_line": line,
        })
        ordinal[r.topic] += 1
    land(lake, [("evidence", dataset, frame("evidence", ev_rows))])


@command.command("trec-run")
@click.argument("path", type=click.Path(exists=True, dir_okay=False, path_type=Path))
@click.option("--dataset", required=True)
@click.option("--run-id", required=True, help="Run id (the partition; re-ingesting it replaces the run).")
@click.option("--format", "fmt", type=click.Choice(["trec", "financerag-csv"]), default="trec", show_default=True,
              help="trec: `topic Q0 docno rank score tag`; financerag-csv: `query_id,corpus_id` in rank order.")
@click.option("--only-known-questions", is_flag=True,
              help="Keep only rows whose question belongs to --dataset (a run file spanning several datasets).")
def trec_run_cmd(path: Path, dataset: str, run_id: str, fmt: str, only_known_questions: bool) -> None:
    """An external run → retrieval_runs (source 'trec') + retrieval_results (rank = line order per question)."""
    check_id(dataset, "dataset")
    check_id(run_id, "run id")
    lake = Lake()
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
    known_questions = existing_ids(lake, "questions", dataset, "question_id")
    skipped_rows, skipped_topics = 0, set()
    if only_known_questions:
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
    for line, topic, docno, *_ in parsed:
        if known_questions is not None and topic not in known_questions:
            raise InputError(f"unknown question {topic!r}: dataset {dataset!r} has questions and this is not one",
                             file=file, line=line, field=topic_field)
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
            "run_id": run_id, "question_id": topic, "rank": rank[topic], "chunk_id": docno, "doc_id": doc_id,
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
        "config_hash": sha, "source": "trec",
    }
    land(lake, [("retrieval_runs", run_id, frame("retrieval_runs", [run_row], origin=False)),
                ("retrieval_results", run_id, frame("retrieval_results", res_rows))])
    say(f"run {run_id}: {len(rank)} questions, {len(res_rows)} results, k={run_row['k']}")


# ---- FinanceBench human-labelled answers ----------------------------------------------------------------------
# The answer-file guideline's correctness scale (SPEC §1): -1 incorrect, 0 abstention, 2 correct and relevant.
LABEL_SCORES = {"Correct Answer": 2.0, "Incorrect Answer": -1.0, "Refusal": 0.0}


def answer_files(paths: Iterable[Path]) -> list[Path]:
    files: list[Path] = []
    for p in paths:
        files += sorted(p.glob("*.jsonl")) if p.is_dir() else [p]
    if not files:
        raise InputError("no *.jsonl answer files given")
    stems = Counter(f.stem for f in files)
    dup = [s for s, n in stems.items() if n > 1]
    if dup:
        raise InputError(f"two answer files share the run id {dup[0]!r} (the file stem)", file=str(files[0]))
    return files


@command.command("financebench-answers")
@click.argument("paths", nargs=-1, required=True, type=click.Path(exists=True, path_type=Path))
@click.option("--label-set", default="financebench_human", show_default=True)
@click.option("--dataset", default="financebench", show_default=True,
              help="Dataset of the questions; when it is in the lake, every answer must name one of its questions.")
def financebench_answers_cmd(paths: tuple[Path, ...], label_set: str, dataset: str) -> None:
    """FinanceBench results/*.jsonl → generation_runs (one per file), answers, human_labels (correctness)."""
    check_id(label_set, "label set")
    lake = Lake()
    files = answer_files(paths)
    known_questions = existing_ids(lake, "questions", dataset, "question_id")
    run_rows, answer_rows, label_rows = [], [], []
    for f in files:
        run_id = check_id(f.stem, "run id (file stem)")
        rows = read_jsonl(f, FinanceBenchAnswer)
        check_duplicates(rows, lambda r: r.financebench_id, str(f), "financebench_id", "financebench_id")
        first_line, first = rows[0]
        for line, r in rows:
            for fld in ("model_name", "eval_mode", "temp"):
                if getattr(r, fld) != getattr(first, fld):
                    raise InputError(f"{fld} {getattr(r, fld)!r} differs from line {first_line}'s "
                                     f"{getattr(first, fld)!r} (one file is one run)", file=str(f), line=line, field=fld)
            if known_questions is not None and r.financebench_id not in known_questions:
                raise InputError(f"unknown question {r.financebench_id!r}: not in dataset {dataset!r}", file=str(f),
                                 line=line, field="financebench_id")
            answer_rows.append({"run_id": run_id, "question_id": r.financebench_id, "answer": str(r.model_answer),
                                "_file": str(f), "_line": line})
            label_rows.append({
                "label_set": label_set, "answer_run_id": run_id, "question_id": r.financebench_id,
                "metric": "correctness", "raw_score": LABEL_SCORES[r.label], "label": r.label,
                "annotator": "financebench", "_file": str(f), "_line": line,
            })
        run_rows.append({
            "run_id": run_id, "dataset": dataset, "retrieval_run_id": None, "model": first.model_name,
            "eval_mode": first.eval_mode, "prompt_template": None,
            "params": json.dumps({"temp": first.temp, "source_file": f.name, "sha256": file_sha256(f)}, sort_keys=True),
            "_file": str(f), "_line": first_line,
        })
    # a label set is one partition: keep its labels of runs not in this load, replace those of runs that are
    loaded = {r["run_id"] for r in run_rows}
    kept = lake.read_partition("human_labels", label_set).filter(~pl.col("answer_run_id").is_in(list(loaded)))
    labels = frame("human_labels", label_rows)
    if kept.height:
        labels = pl.concat([kept.drop("created_at").with_columns(pl.lit(None, pl.String).alias("_file"),
                                                                 pl.lit(None, pl.Int64).alias("_line")),
                            labels], how="diagonal_relaxed")
    frames = []
    for run in run_rows:
        rid = run["run_id"]
        frames.append(("generation_runs", rid, frame("generation_runs", [run])))
        frames.append(("answers", rid, frame("answers", [a for a in answer_rows if a["run_id"] == rid])))
    frames.append(("human_labels", label_set, labels))
    land(lake, frames)
    say(f"{len(run_rows)} answer runs, {len(answer_rows)} answers, {len(label_rows)} labels into {label_set!r}")

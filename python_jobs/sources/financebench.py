"""FinanceBench's own files: the open-source questions, the document list, the PDFs and the human-labelled
model answers (SPEC §8)."""

from __future__ import annotations

import csv
import json
from collections import Counter
from collections.abc import Iterable
from pathlib import Path
from typing import Literal

import polars as pl
from pydantic import Field, StrictFloat, StrictInt, StrictStr

from python_jobs.core.config import PROJECT_DIR
from python_jobs.core.console import say
from python_jobs.core.contracts import contract
from python_jobs.core.errors import InputError
from python_jobs.core.lake import Lake, check_id
from python_jobs.sources.landing import check_duplicates, existing_ids, file_digest, land
from python_jobs.sources.lines import Period, Record, read_jsonl


class FinanceBenchEvidence(Record):
    evidence_text: StrictStr
    doc_name: StrictStr = Field(min_length=1)
    evidence_page_num: StrictInt = Field(ge=0)  # 0-based, as FinanceBench writes it
    evidence_text_full_page: StrictStr | None = None


class FinanceBenchQuestion(Record):
    financebench_id: StrictStr = Field(min_length=1)
    company: StrictStr | None = None
    doc_name: StrictStr = Field(min_length=1)
    question_type: StrictStr | None = None
    question_reasoning: StrictStr | None = None
    domain_question_num: StrictStr | None = None
    question: StrictStr = Field(min_length=1)
    answer: StrictStr
    justification: StrictStr | None = None
    dataset_subset_label: StrictStr | None = None
    evidence: list[FinanceBenchEvidence]


class FinanceBenchDocument(Record):
    doc_name: StrictStr = Field(min_length=1)
    company: StrictStr | None = None
    gics_sector: StrictStr | None = None
    doc_type: StrictStr
    doc_period: Period | None = None
    doc_link: StrictStr | None = None


class FinanceBenchAnswer(Record):
    financebench_id: StrictStr = Field(min_length=1)
    model_name: StrictStr = Field(min_length=1)
    eval_mode: StrictStr
    temp: StrictFloat | StrictInt | None = None
    question: StrictStr | None = None
    # the real files mix types here (1577, 8.7, "…"); anything else (bool, list, object, null) is rejected
    gold_answer: StrictStr | StrictInt | StrictFloat
    # one real row holds a bare number as the model's answer; it is stored as text
    model_answer: StrictStr | StrictInt | StrictFloat
    label: Literal["Correct Answer", "Incorrect Answer", "Refusal"]


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


# how the files name the contract's columns (templates over the row): validation errors name the file's field
FINANCEBENCH_FIELDS = {
    "documents": {"doc_id": "doc_name", "doc_type": "doc_type", "sector": "gics_sector", "period": "doc_period"},
    "questions": {"question_id": "financebench_id", "question_type": "question_type"},
    "evidence": {"question_id": "financebench_id", "doc_id": "evidence[{evidence_ordinal}].doc_name",
                 "page_number": "evidence[{evidence_ordinal}].evidence_page_num",
                 "evidence_text": "evidence[{evidence_ordinal}].evidence_text"},
}
ANSWERS_FIELDS = {
    "answers": {"question_id": "financebench_id", "answer": "model_answer"},
    "human_labels": {"question_id": "financebench_id"},
    "generation_runs": {"model": "model_name", "eval_mode": "eval_mode"},
}


def ingest_financebench(lake: Lake, questions_path: Path, documents_path: Path, pdf_dir: Path | None, dataset: str,
                        workers: int) -> None:
    """FinanceBench questions, document metadata and PDFs → documents, pages, questions, evidence.

    Every evidence item must name a document of the list (the contract's reference of evidence.doc_id: checked when
    the load lands, after the pages are extracted — the extraction is cached per PDF); its page must exist in the PDF
    when the PDF is given (checked here, before the slow extraction)."""
    from python_jobs.corpus.pdf_pages import extract_pages, inspect, is_unreadable

    check_id(dataset, "dataset")
    docs = read_financebench_documents(documents_path)
    codes = doc_type_codes()

    # questions and their evidence; every named document must be in the document list
    qfile = str(questions_path)
    questions = read_jsonl(questions_path, FinanceBenchQuestion)
    seen: dict[str, int] = {}
    for line, q in questions:
        if q.financebench_id in seen:
            raise InputError(f"duplicate financebench_id {q.financebench_id!r} "
                             f"(first on line {seen[q.financebench_id]})",
                             file=qfile, line=line, field="financebench_id")
        seen[q.financebench_id] = line
        # the question's own doc_name goes to meta, not to a contract column: checked here (the evidence's doc
        # names are evidence.doc_id, a reference the landing's validation checks)
        if q.doc_name not in docs:
            raise InputError(f"unknown document {q.doc_name!r} (not in {documents_path.name})", file=qfile, line=line,
                             field="doc_name")

    # PDFs: exact file name doc_name + '.pdf' (names are case-sensitive: Pfizer_2023Q2_10Q.pdf vs PFIZER_2021_10K.pdf)
    pdf_paths: dict[str, Path] = {}
    if pdf_dir is not None:
        named_pdf = [p for p in sorted(pdf_dir.iterdir()) if p.suffix.lower() == ".pdf"]
        for p in named_pdf:
            if not p.is_file():  # a directory (e.g. an unzipped archive) would leave its document silently empty
                raise InputError("named like a PDF but is a directory, not a file", file=str(p), field="--pdfs")
        on_disk = {p.name: p for p in named_pdf}
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
    unreadable = {name: [i for i, t in enumerate(texts[info.path]) if is_unreadable(t)] for name, info in infos.items()}
    for name, pages in unreadable.items():
        if pages:
            shown = ", ".join(map(str, pages[:10])) + (", ..." if len(pages) > 10 else "")
            say(f"warning: {infos[name].path}: {len(pages)} of {infos[name].n_pages} pages extract as U+FFFD "
                f"replacement characters (no usable text layer; pages {shown}); documents.n_unreadable_pages marks "
                "the document" + (", and has_content is false: no page is readable" if len(pages) == infos[name].n_pages
                                  else ""))

    doc_rows = []
    for name, (line, d) in docs.items():
        info = infos.get(name)
        doc_rows.append({
            "doc_id": name, "dataset": dataset, "title": d.doc_name, "company": d.company,
            "doc_type": codes[d.doc_type],
            "period": None if d.doc_period is None else str(d.doc_period), "sector": d.gics_sector, "language": "en",
            "source_uri": d.doc_link, "n_pages": info.n_pages if info else None,
            "content_sha256": info.sha256 if info else None,
            "has_content": info is not None and len(unreadable[name]) < info.n_pages,
            "n_unreadable_pages": len(unreadable[name]) if info else None,
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
    frames = [(table, dataset, contract(table).frame(rows, fields=FINANCEBENCH_FIELDS[table]))
              for table, rows in (("documents", doc_rows), ("questions", q_rows), ("evidence", ev_rows))]
    if page_rows:
        frames.append(("pages", dataset, contract("pages").frame(page_rows)))
    land(lake, frames, fields=FINANCEBENCH_FIELDS)
    if not page_rows and lake.drop_partition("pages", dataset):
        say(f"dropped the pages of an earlier {dataset} load (no PDFs in this one)")


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


def ingest_financebench_answers(lake: Lake, paths: tuple[Path, ...], label_set: str, dataset: str) -> list[str]:
    """FinanceBench results/*.jsonl → generation_runs (one per file), answers, human_labels (correctness).

    An answer's question is checked here against the dataset's questions (answers carry no dataset, so the contract
    has no reference for it); answers → generation_runs is the landing's validation."""
    check_id(label_set, "label set")
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
                                     f"{getattr(first, fld)!r} (one file is one run)",
                                     file=str(f), line=line, field=fld)
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
            "params": json.dumps({"temp": first.temp, "source_file": f.name, "sha256": file_digest(f)[0]},
                                 sort_keys=True),
            "_file": str(f), "_line": first_line,
        })
    # a label set is one partition: keep its labels of runs not in this load, replace those of runs that are
    loaded = {r["run_id"] for r in run_rows}
    kept = lake.read_partition("human_labels", label_set).filter(~pl.col("answer_run_id").is_in(list(loaded)))
    labels = contract("human_labels").frame(label_rows, fields=ANSWERS_FIELDS["human_labels"])
    if kept.height:
        labels = pl.concat([kept.drop("created_at").with_columns(pl.lit(None, pl.String).alias("_file"),
                                                                 pl.lit(None, pl.Int64).alias("_line")),
                            labels], how="diagonal_relaxed")
    frames = []
    for run in run_rows:
        rid = run["run_id"]
        frames.append(("generation_runs", rid,
                       contract("generation_runs").frame([run], fields=ANSWERS_FIELDS["generation_runs"])))
        frames.append(("answers", rid, contract("answers").frame([a for a in answer_rows if a["run_id"] == rid],
                                                                 fields=ANSWERS_FIELDS["answers"])))
    frames.append(("human_labels", label_set, labels))
    land(lake, frames, fields=ANSWERS_FIELDS)
    say(f"{len(run_rows)} answer runs, {len(answer_rows)} answers, {len(label_rows)} labels into {label_set!r}")
    return [r["run_id"] for r in run_rows]

"""Bad input is rejected before anything lands (SPEC §7): exit 2, a message naming file, line and field, no partition
of the failed load, and the load landed before it untouched. Bad files are small edits of the real formats, written
into tmp_path."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import pytest

from python_jobs.core.lake import Lake

GOOD = "financerag_finqabench"  # a real BEIR set landed before every bad load


def snapshot(home: Path) -> dict[str, str]:
    lake = home / "lake"
    return {str(p.relative_to(lake)): hashlib.sha256(p.read_bytes()).hexdigest()
            for p in sorted(lake.glob("*/*/*.parquet")) if "__empty__" not in str(p)}


@pytest.fixture
def good(home: Path, finrag, shared_data: Path) -> dict[str, str]:
    finrag("ingest", "beir", "--dir", str(shared_data / "financerag_icaif24" / "FinQABench"), "--dataset", GOOD)
    snap = snapshot(home)
    assert {k.split("/")[0] for k in snap} == {"documents", "chunks", "questions", "evidence"}
    return snap


def rejected(finrag, home: Path, before: dict[str, str], args: list[str], file: Path, line: int, field: str) -> str:
    proc = finrag(*args, check=False)
    assert proc.returncode == 2, proc.stderr
    assert f"error: file {file}, line {line}, field '{field}'" in proc.stderr, proc.stderr
    assert "Traceback" not in proc.stderr
    assert snapshot(home) == before  # nothing of the failed load landed; the good load is as it was
    return proc.stderr


def lines(path: Path, n: int | None = None) -> list[str]:
    return path.read_text(encoding="utf-8").splitlines()[:n]


def write(path: Path, rows: list[str] | bytes) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    if isinstance(rows, bytes):
        path.write_bytes(rows)
    else:
        path.write_text("".join(r + "\n" for r in rows), encoding="utf-8")
    return path


def beir_dir(tmp_path: Path, shared: Path, *, queries=None, qrels=None, corpus=None) -> Path:
    """A small BEIR dir derived from the real FinQABench files: 5 queries, their qrels, the corpus."""
    src = shared / "financerag_icaif24" / "FinQABench"
    d = tmp_path / "beir"
    q = lines(src / "queries.jsonl")
    ids = {json.loads(x)["_id"] for x in q}
    qr = [lines(src / "qrels.tsv")[0]] + [x for x in lines(src / "qrels.tsv")[1:] if x.split("\t")[0] in ids]
    write(d / "queries.jsonl", queries if queries is not None else q)
    write(d / "qrels.tsv", qrels if qrels is not None else qr)
    write(d / "corpus.jsonl", corpus if corpus is not None else lines(src / "corpus.jsonl"))
    return d


def fb_args(questions: Path, documents: Path, pdfs: Path | None = None) -> list[str]:
    args = ["ingest", "financebench", "--questions", str(questions), "--documents", str(documents)]
    return args + (["--pdfs", str(pdfs)] if pdfs else [])


# ---- the eight cases the design names ----------------------------------------------------------------------------
def test_malformed_json_line(home, finrag, good, shared_data, tmp_path) -> None:
    real = lines(shared_data / "financebench" / "data" / "financebench_open_source.jsonl", 3)
    broken = real[1].replace('"question":', '"question" ', 1)  # a colon lost after the key
    q = write(tmp_path / "questions.jsonl", [real[0], broken, real[2]])
    docs = shared_data / "financebench" / "data" / "financebench_document_information.jsonl"
    err = rejected(finrag, home, good, fb_args(q, docs), q, 2, "question")
    assert "malformed JSON" in err
    assert Lake(home).partitions("questions") == [GOOD]


def test_missing_required_field(home, finrag, good, shared_data, tmp_path) -> None:
    src = shared_data / "financerag_icaif24" / "FinQABench" / "queries.jsonl"
    q = lines(src)
    third = json.loads(q[2])
    del third["text"]
    d = beir_dir(tmp_path, shared_data, queries=[*q[:2], json.dumps(third), *q[3:]])
    err = rejected(finrag, home, good, ["ingest", "beir", "--dir", str(d), "--dataset", GOOD], d / "queries.jsonl",
                   3, "text")
    assert "required field is missing" in err


def test_duplicate_id(home, finrag, good, shared_data, tmp_path) -> None:
    q = lines(shared_data / "financerag_icaif24" / "FinQABench" / "queries.jsonl")
    dup = json.loads(q[0]) | {"text": "a different question under the same id"}
    d = beir_dir(tmp_path, shared_data, queries=[*q[:5], json.dumps(dup), *q[5:]])
    err = rejected(finrag, home, good, ["ingest", "beir", "--dir", str(d), "--dataset", GOOD], d / "queries.jsonl",
                   6, "_id")
    assert "duplicate query _id" in err and "first on line 1" in err


def test_evidence_naming_unknown_document(home, finrag, good, shared_data, tmp_path) -> None:
    real = lines(shared_data / "financebench" / "data" / "financebench_open_source.jsonl", 3)
    rec = json.loads(real[2])
    rec["evidence"][0]["doc_name"] = "NOSUCHCO_2022_10K"
    q = write(tmp_path / "questions.jsonl", [real[0], real[1], json.dumps(rec)])
    docs = shared_data / "financebench" / "data" / "financebench_document_information.jsonl"
    err = rejected(finrag, home, good, fb_args(q, docs), q, 3, "evidence[0].doc_name")
    assert "NOSUCHCO_2022_10K" in err


def test_page_number_beyond_the_document(home, finrag, good, shared_data, tmp_path) -> None:
    """BESTBUY_2024Q2_10Q.pdf has 30 pages (0..29): page 30 does not exist. Checked before any text extraction."""
    pdfs = tmp_path / "pdfs"
    pdfs.mkdir()
    (pdfs / "BESTBUY_2024Q2_10Q.pdf").symlink_to(shared_data / "financebench" / "pdfs" / "BESTBUY_2024Q2_10Q.pdf")
    real = [json.loads(x) for x in lines(shared_data / "financebench" / "data" / "financebench_open_source.jsonl")]
    bby = [r for r in real if r["doc_name"] == "BESTBUY_2024Q2_10Q"]
    assert bby
    ok = json.dumps(bby[0])
    bad = bby[-1] | {"evidence": [*bby[-1]["evidence"], {**bby[-1]["evidence"][0], "evidence_page_num": 30}]}
    n = len(bad["evidence"]) - 1
    q = write(tmp_path / "questions.jsonl", [ok, json.dumps(bad)])
    docs = shared_data / "financebench" / "data" / "financebench_document_information.jsonl"
    err = rejected(finrag, home, good, fb_args(q, docs, pdfs), q, 2, f"evidence[{n}].evidence_page_num")
    assert "page 30 is beyond BESTBUY_2024Q2_10Q (30 pages" in err
    assert " PDFs (" not in err  # failed before the PDFs' summary note and the slow extraction after it


def test_a_run_id_of_another_dataset_is_not_replaced_silently(home, finrag, good, shared_data, tmp_path) -> None:
    fixtures = shared_data / "trec_eval_fixtures"
    finrag("ingest", "trec-qrels", str(fixtures / "qrels-302.test"), "--dataset", "trec_only")
    finrag("ingest", "trec-run", str(fixtures / "results-302.test"), "--dataset", "trec_only", "--run-id", "shared")
    before = snapshot(home)
    run = lines(shared_data / "financerag_icaif24" / "runs" / "fincolbert_combined_results.derived.trec")
    qids = {json.loads(x)["_id"] for x in lines(shared_data / "financerag_icaif24" / "FinQABench" / "queries.jsonl")}
    mine = write(tmp_path / "mine.trec", [x for x in run if x.split()[0] in qids][:20])
    args = ["ingest", "trec-run", str(mine), "--dataset", GOOD, "--run-id", "shared"]
    proc = finrag(*args, check=False)
    assert proc.returncode == 2 and "Traceback" not in proc.stderr
    assert ("field 'run_id': run_id 'shared' already holds retrieval_runs of dataset 'trec_only'; landing dataset "
            f"'{GOOD}' under it would replace them") in proc.stderr
    assert snapshot(home) == before  # trec_only's run is still there
    finrag(*args, "--replace")
    runs = Lake(home).read("retrieval_runs", where={"run_id": "shared"})
    assert runs["dataset"].to_list() == [GOOD]


def test_import_answers_for_a_dataset_without_questions(home, finrag, good, tmp_path) -> None:
    """The answers were landed, and could never be scored (a typo in --dataset looks like this)."""
    f = write(tmp_path / "answers.jsonl", [json.dumps(
        {"id": "q1", "question": "q?", "answer": "a", "passages": [], "final_prompt": "p"})])
    proc = finrag("import-answers", str(f), "--dataset", "financerag_finqabench_typo", check=False)
    assert proc.returncode == 2 and "Traceback" not in proc.stderr
    assert ("field '--dataset': dataset 'financerag_finqabench_typo' has no questions in the lake; ingest its "
            f"questions first (datasets with questions: {GOOD})") in proc.stderr
    assert snapshot(home) == good


def test_a_directory_named_like_a_pdf(home, finrag, good, shared_data, tmp_path) -> None:
    """It was skipped silently, and its document landed without pages."""
    pdfs = tmp_path / "pdfs"
    (pdfs / "BESTBUY_2024Q2_10Q.pdf").mkdir(parents=True)
    real = [json.loads(x) for x in lines(shared_data / "financebench" / "data" / "financebench_open_source.jsonl")]
    q = write(tmp_path / "questions.jsonl", [json.dumps(r) for r in real if r["doc_name"] == "BESTBUY_2024Q2_10Q"])
    docs = shared_data / "financebench" / "data" / "financebench_document_information.jsonl"
    proc = finrag(*fb_args(q, docs, pdfs), check=False)
    assert proc.returncode == 2 and "Traceback" not in proc.stderr
    assert f"error: file {pdfs / 'BESTBUY_2024Q2_10Q.pdf'}, field '--pdfs': named like a PDF but is a directory" \
        in proc.stderr
    assert snapshot(home) == good  # nothing landed


def test_empty_file(home, finrag, good, shared_data, tmp_path) -> None:
    d = beir_dir(tmp_path, shared_data, queries=b"")
    err = rejected(finrag, home, good, ["ingest", "beir", "--dir", str(d), "--dataset", GOOD], d / "queries.jsonl",
                   1, "_id")
    assert "file is empty" in err


def test_non_utf8_bytes(home, finrag, good, shared_data, tmp_path) -> None:
    q = lines(shared_data / "financerag_icaif24" / "FinQABench" / "queries.jsonl")
    raw = "\n".join(q[:3]).encode() + b'\n{"_id": "qbad", "title": "", "text": "Revenue in \xff\xfe 2023?"}\n'
    d = beir_dir(tmp_path, shared_data)
    write(d / "queries.jsonl", raw + "\n".join(q[3:]).encode() + b"\n")
    err = rejected(finrag, home, good, ["ingest", "beir", "--dir", str(d), "--dataset", GOOD], d / "queries.jsonl",
                   4, "text")
    assert "not valid UTF-8" in err


@pytest.mark.parametrize("grade", ["1.5", "high", ""])
def test_qrels_non_integer_grade_beir(home, finrag, good, shared_data, tmp_path, grade) -> None:
    src = shared_data / "financerag_icaif24" / "FinQABench" / "qrels.tsv"
    qr = lines(src)
    row = qr[2].split("\t")
    d = beir_dir(tmp_path, shared_data, qrels=[*qr[:2], "\t".join([*row[:2], grade]), *qr[3:]])
    rejected(finrag, home, good, ["ingest", "beir", "--dir", str(d), "--dataset", GOOD], d / "qrels.tsv", 3, "score")


def test_qrels_non_integer_grade_trec(home, finrag, good, shared_data, tmp_path) -> None:
    src = lines(shared_data / "trec_eval_fixtures" / "qrels.test", 20)
    t, it, doc, _ = src[9].split()
    f = write(tmp_path / "qrels.test", [*src[:9], f"{t} {it} {doc} 0.5", *src[10:]])
    # first a good TREC-only load of the same dataset, then the bad file must leave it alone
    finrag("ingest", "trec-qrels", str(shared_data / "trec_eval_fixtures" / "qrels-302.test"), "--dataset", "trec_only")
    before = snapshot(home)
    rejected(finrag, home, before, ["ingest", "trec-qrels", str(f), "--dataset", "trec_only"], f, 10, "rel")


# ---- more of the same rule ------------------------------------------------------------------------------------------
def test_qrels_naming_unknown_corpus_id(home, finrag, good, shared_data, tmp_path) -> None:
    src = shared_data / "financerag_icaif24" / "FinQABench"
    qr = lines(src / "qrels.tsv")
    row = qr[1].split("\t")
    d = beir_dir(tmp_path, shared_data, qrels=[qr[0], "\t".join([row[0], "dNOSUCHDOC", row[2]]), *qr[2:]])
    err = rejected(finrag, home, good, ["ingest", "beir", "--dir", str(d), "--dataset", GOOD], d / "qrels.tsv", 2,
                   "corpus_id")
    assert "dNOSUCHDOC" in err


def test_trec_run_duplicate_and_unknown_docs(home, finrag, good, shared_data, tmp_path) -> None:
    run = lines(shared_data / "financerag_icaif24" / "runs" / "fincolbert_combined_results.derived.trec")
    qids = {json.loads(x)["_id"] for x in lines(shared_data / "financerag_icaif24" / "FinQABench" / "queries.jsonl")}
    mine = [x for x in run if x.split()[0] in qids][:20]
    dup = write(tmp_path / "dup.trec", [*mine[:5], mine[2], *mine[5:]])
    args = ["ingest", "trec-run", str(dup), "--dataset", GOOD, "--run-id", "bad_run"]
    assert "duplicate (topic, docno)" in rejected(finrag, home, good, args, dup, 6, "docno")
    t, q0, _doc, rank, score, tag = mine[3].split()
    unknown = write(tmp_path / "unknown.trec", [*mine[:3], f"{t} {q0} dNOSUCH {rank} {score} {tag}", *mine[4:]])
    args = ["ingest", "trec-run", str(unknown), "--dataset", GOOD, "--run-id", "bad_run"]
    assert "unknown document 'dNOSUCH'" in rejected(finrag, home, good, args, unknown, 4, "docno")
    other = write(tmp_path / "other_q.trec", [*mine[:3], f"qNOSUCH {q0} {mine[3].split()[2]} 1 1.0 {tag}"])
    args = ["ingest", "trec-run", str(other), "--dataset", GOOD, "--run-id", "bad_run"]
    assert "unknown question 'qNOSUCH'" in rejected(finrag, home, good, args, other, 4, "topic")
    assert Lake(home).partitions("retrieval_runs") == []


def test_answers_unknown_label_and_bad_gold_answer(home, finrag, good, shared_data, tmp_path) -> None:
    real = lines(shared_data / "financebench" / "results" / "gpt-4_oracle.jsonl")
    fine = write(tmp_path / "ok" / "gpt-4_closedBook.jsonl",
                 lines(shared_data / "financebench" / "results" / "gpt-4_closedBook.jsonl"))
    finrag("ingest", "financebench-answers", str(fine))
    before = snapshot(home)
    label = write(tmp_path / "a" / "gpt-4_oracle.jsonl",
                  [*real[:4], json.dumps(json.loads(real[4]) | {"label": "Partially Correct"}), *real[5:]])
    err = rejected(finrag, home, before, ["ingest", "financebench-answers", str(label)], label, 5, "label")
    assert "Partially Correct" in err
    for i, value in enumerate([True, None, [1577], {"x": 1}]):
        gold = write(tmp_path / f"g{i}" / "gpt-4_oracle.jsonl",
                     [*real[:7], json.dumps(json.loads(real[7]) | {"gold_answer": value}), *real[8:]])
        rejected(finrag, home, before, ["ingest", "financebench-answers", str(gold)], gold, 8, "gold_answer")
    assert Lake(home).partitions("answers") == ["gpt-4_closedBook"]


def test_documents_duplicate_doc_name_for_another_document(home, finrag, good, shared_data, tmp_path) -> None:
    src = shared_data / "financebench" / "data"
    docs = lines(src / "financebench_document_information.jsonl")
    clash = json.loads(docs[0]) | {"doc_link": "https://example.com/another.pdf"}
    d = write(tmp_path / "docs.jsonl", [*docs[:10], json.dumps(clash), *docs[10:]])
    q = write(tmp_path / "q.jsonl", lines(src / "financebench_open_source.jsonl", 2))
    err = rejected(finrag, home, good, fb_args(q, d), d, 11, "doc_name")
    assert "first on line 1" in err

"""Bad input is rejected before anything lands (SPEC §7): exit 2, a message naming file, line and field, no partition
of the failed load, and the load landed before it untouched. Bad files are small edits of the real formats, written
into tmp_path. The good load (the real FinQABench BEIR set) is landed once per module into a template home; each test
gets its own copy of that home to write into."""

from __future__ import annotations

import hashlib
import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from python_jobs.core.lake import Lake
from support.cli import run_finrag
from support.paths import PROJECT
from support.shared_home import copy_home

GOOD = "financerag_finqabench"  # a real BEIR set landed before every bad load


def snapshot(home: Path) -> dict[str, str]:
    lake = home / "lake"
    return {str(p.relative_to(lake)): hashlib.sha256(p.read_bytes()).hexdigest()
            for p in sorted(lake.glob("*/*/*.parquet")) if "__empty__" not in str(p)}


@pytest.fixture(scope="module")
def good_template(tmp_path_factory: pytest.TempPathFactory, shared_data: Path) -> tuple[Path, dict[str, str]]:
    """A home with the real FinQABench BEIR set landed through `finrag ingest beir`, once per module; read-only."""
    template = tmp_path_factory.mktemp("good") / "warehouse"
    template.mkdir()
    run_finrag(template, "ingest", "beir", "--dir", str(shared_data / "financerag_icaif24" / "FinQABench"),
               "--dataset", GOOD)
    snap = snapshot(template)
    assert {k.split("/")[0] for k in snap} == {"documents", "chunks", "questions", "evidence"}
    return template, snap


@pytest.fixture
def good(home: Path, good_template: tuple[Path, dict[str, str]]) -> dict[str, str]:
    """The good load in this test's `home`: a copy of the template's lake (the test writes into its copy only)."""
    template, snap = good_template
    copy_home(template, home)
    assert snapshot(home) == snap
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


# ---- numbers beyond their column, a home that is a file, a period that is no year, TREC lines misread -------------
BIG = "99999999999999999999"  # beyond int64: Polars failed on it with a TypeError while building the frame


def test_a_grade_beyond_its_column_trec_qrels(home, finrag, good, shared_data, tmp_path) -> None:
    src = lines(shared_data / "trec_eval_fixtures" / "qrels-302.test", 20)
    for value in (BIG, str(2**31)):  # beyond int64, and beyond the evidence table's int32 only
        t, it, doc, _ = src[6].split()
        f = write(tmp_path / "qrels.test", [*src[:6], f"{t} {it} {doc} {value}", *src[7:]])
        err = rejected(finrag, home, good, ["ingest", "trec-qrels", str(f), "--dataset", "trec_only"], f, 7, "rel")
        assert f"out of range: a whole number from -2147483648 to 2147483647 is expected (got '{value}')" in err


def test_a_grade_beyond_its_column_beir_qrels(home, finrag, good, shared_data, tmp_path) -> None:
    qr = lines(shared_data / "financerag_icaif24" / "FinQABench" / "qrels.tsv")
    row = qr[2].split("\t")
    d = beir_dir(tmp_path, shared_data, qrels=[*qr[:2], "\t".join([*row[:2], BIG]), *qr[3:]])
    err = rejected(finrag, home, good, ["ingest", "beir", "--dir", str(d), "--dataset", GOOD], d / "qrels.tsv", 3,
                   "score")
    assert "out of range" in err


def test_a_page_number_beyond_its_column(home, finrag, good, shared_data, tmp_path) -> None:
    """The reader takes any whole number as a page; the evidence table's int32 cannot hold this one: the contract's
    cast names the row's file, line and field as the questions file names it."""
    real = lines(shared_data / "financebench" / "data" / "financebench_open_source.jsonl", 3)
    rec = json.loads(real[1])
    rec["evidence"][0]["evidence_page_num"] = int(BIG)
    q = write(tmp_path / "questions.jsonl", [real[0], json.dumps(rec), real[2]])
    docs = shared_data / "financebench" / "data" / "financebench_document_information.jsonl"
    err = rejected(finrag, home, good, fb_args(q, docs), q, 2, "evidence[0].evidence_page_num")
    assert f"evidence: {BIG} does not fit the column page_number, of type int32" in err


def test_a_trec_run_score_far_out_lands_as_the_float_it_is(home, finrag, good, shared_data, tmp_path) -> None:
    """A score is a double for trec_eval (atof): 1e20 is a score like any other; one beyond a double is refused."""
    src = lines(shared_data / "trec_eval_fixtures" / "results-302.test", 10)
    cells = src[4].split()
    f = write(tmp_path / "run.test", [*src[:4], " ".join([*cells[:4], BIG, cells[5]]), *src[5:]])
    finrag("ingest", "trec-run", str(f), "--dataset", "trec_only", "--run-id", "far")
    scores = Lake(home).read("retrieval_results", where={"run_id": "far"})["score"].to_list()
    assert scores[4] == 1e20 and len(scores) == 10
    before = snapshot(home)
    f = write(tmp_path / "run2.test", [*src[:4], " ".join([*cells[:4], "1e999", cells[5]]), *src[5:]])
    err = rejected(finrag, home, before, ["ingest", "trec-run", str(f), "--dataset", "trec_only", "--run-id", "inf"],
                   f, 5, "score")
    assert "finite number" in err


def test_a_home_that_is_a_file(home, shared_data, tmp_path) -> None:
    """--home FILE and FINRAG_HOME=FILE (or a path under a file): one line naming the file and where it was given."""
    a_file = write(tmp_path / "home.txt", ["not a directory"])
    qrels = str(shared_data / "trec_eval_fixtures" / "qrels-302.test")
    cases = [(["--home", str(a_file)], {}, "--home", f"{a_file} is a file"),
             ([], {"FINRAG_HOME": str(a_file)}, "FINRAG_HOME", f"{a_file} is a file"),
             ([], {"FINRAG_HOME": str(a_file / "sub")}, "FINRAG_HOME",
              f"{a_file / 'sub'} cannot be made: {a_file} is a file")]
    for flag, env, field, why in cases:
        proc = subprocess.run([sys.executable, "-m", "python_jobs.cli", *flag, "ingest", "trec-qrels", qrels,
                               "--dataset", "trec_only"], capture_output=True, text=True, cwd=PROJECT,
                              env={**os.environ, "FINRAG_HOME": str(home), **env}, timeout=300)
        assert proc.returncode == 2 and "Traceback" not in proc.stderr, proc.stderr
        assert proc.stderr.strip().splitlines() == [
            f"error: file {a_file}, field '{field}': the warehouse home must be a directory, and {why}"], proc.stderr
        assert a_file.read_text() == "not a directory\n"


def test_a_doc_period_that_is_no_year(home, finrag, good, shared_data, tmp_path) -> None:
    """Periods are years (2015) or quarters (2023Q1), as BEIR titles carry them and the marts slice by them."""
    src = shared_data / "financebench" / "data"
    docs = lines(src / "financebench_document_information.jsonl")
    q = write(tmp_path / "q.jsonl", lines(src / "financebench_open_source.jsonl", 2))
    for i, period in enumerate(["twenty-fifteen", "15", True, 2015.0, "2015Q5"]):
        bad = json.loads(docs[4]) | {"doc_period": period}
        d = write(tmp_path / f"docs{i}.jsonl", [*docs[:4], json.dumps(bad), *docs[5:]])
        err = rejected(finrag, home, good, fb_args(q, d), d, 5, "doc_period")
        assert "a period is a year (e.g. 2015) or a quarter (e.g. 2023Q1)" in err
    # a year as text and a quarter land as the numbers do
    fine = [json.dumps(json.loads(docs[4]) | {"doc_period": "2015"}), json.dumps(json.loads(docs[5]) | {
        "doc_period": "2023Q1"})]
    d = write(tmp_path / "docs_ok.jsonl", [*docs[:4], *fine, *docs[6:]])
    finrag(*fb_args(q, d))
    periods = dict(Lake(home).read("documents", where={"dataset": "financebench"}).select("doc_id", "period").rows())
    assert [periods[json.loads(x)["doc_name"]] for x in docs[3:6]] == [str(json.loads(docs[3])["doc_period"]),
                                                                      "2015", "2023Q1"]


@pytest.mark.parametrize(("verb", "header"), [("trec-run", "qid Q0 docno rank score tag"),
                                              ("trec-run", "query-id corpus-id score"),
                                              ("trec-qrels", "query-id\tcorpus-id\tscore"),
                                              ("trec-qrels", "topic iteration docno rel")])
def test_a_header_line_in_a_trec_file(home, finrag, good, shared_data, tmp_path, verb, header) -> None:
    name = "results-302.test" if verb == "trec-run" else "qrels-302.test"
    f = write(tmp_path / name, [header, *lines(shared_data / "trec_eval_fixtures" / name, 20)])
    args = ["ingest", verb, str(f), "--dataset", "trec_only"] + (["--run-id", "r"] if verb == "trec-run" else [])
    err = rejected(finrag, home, good, args, f, 1, "header")
    assert "a header line? this format has none: expected topic, " in err and repr(header) in err


@pytest.mark.parametrize("verb", ["trec-run", "trec-qrels"])
def test_a_docno_with_a_space(home, finrag, good, shared_data, tmp_path, verb) -> None:
    name = "results-302.test" if verb == "trec-run" else "qrels-302.test"
    src = lines(shared_data / "trec_eval_fixtures" / name, 20)
    cells = src[5].split()
    spaced = f"{cells[2][:4]} {cells[2][4:]}"
    f = write(tmp_path / name, [*src[:5], "\t".join([*cells[:2], spaced, *cells[3:]]), *src[6:]])
    args = ["ingest", verb, str(f), "--dataset", "trec_only"] + (["--run-id", "r"] if verb == "trec-run" else [])
    err = rejected(finrag, home, good, args, f, 6, "docno")
    n = 7 if verb == "trec-run" else 5
    assert (f"docno {spaced!r} contains a space: fields are separated by whitespace, so the fields after it shift "
            f"(the line has {n} where {n - 1} are expected") in err


# ---- generated corruptions of the real files -----------------------------------------------------------------------
def corruptions(data: bytes, json_lines: bool) -> dict[str, bytes]:
    """Generated corruptions of one file (its middle record line): numbers far out of range, a truncated line, a
    file cut mid-line, one field fewer or more, bytes that are not UTF-8, an empty file. Each a whole file."""
    rows = data.split(b"\n")
    i = len(rows) // 2
    line = rows[i]

    def at(new: bytes) -> bytes:
        return b"\n".join([*rows[:i], new, *rows[i + 1:]])

    out = {"empty file": b"", "blank lines only": b"\n\n", "line truncated": at(line[:len(line) // 2]),
           "file cut mid-line": data.rstrip(b"\n")[:-5], "not UTF-8": at(line[:len(line) // 2] + b"\xff\xfe"
                                                                          + line[len(line) // 2:])}
    numbers = list(re.finditer(rb"(?<![\w.\-])-?\d+(?:\.\d+)?(?![\w.\-])", line))
    for n, m in enumerate(numbers[:3]):
        for far in (b"99999999999999999999", b"1e999"):  # beyond an int64, beyond a double
            out[f"number {n + 1} of line {i + 1} -> {far.decode()}"] = at(line[:m.start()] + far + line[m.end():])
    if json_lines:
        record = json.loads(line)
        first = next(iter(record))
        out[f"key {first!r} dropped"] = at(json.dumps({k: v for k, v in record.items() if k != first}).encode())
        out["a key more"] = at(json.dumps({**record, "extra": 1}).encode())
    else:
        sep = b"\t" if b"\t" in line else b" "
        out["a field fewer"] = at(sep.join(line.split()[:-1]))
        out["a field more"] = at(line + sep + b"x")
    return out


def test_generated_corruptions_land_or_fail_in_one_line(home, good, shared_data, tmp_path, monkeypatch,
                                                        capsys) -> None:
    """Each corruption of each real file, through its ingest verb (the CLI's entry point, `main`, in this process: 66
    corruptions in about 20 s), either lands or exits 2 with one line naming the corrupted file and a line, and
    nothing lands then. What lands is what the formats allow: far numbers where the format has text (TREC topics and
    iterations, a question's text, a gold answer, stored as text), a run score of 1e20 (a double), an extra key, a run
    line's trailing field."""
    from python_jobs.cli import main

    fb, beir = shared_data / "financebench", shared_data / "financerag_icaif24" / "FinQABench"
    trec = shared_data / "trec_eval_fixtures"
    # (the file corrupted, the verb's arguments: {f} the corrupted file, {d} a BEIR dir holding it)
    cases = [
        (trec / "qrels-302.test", ["ingest", "trec-qrels", "{f}", "--dataset", "trec_only"]),
        (trec / "results-302.test", ["ingest", "trec-run", "{f}", "--dataset", "trec_only", "--run-id", "r"]),
        (beir / "qrels.tsv", ["ingest", "beir", "--dir", "{d}", "--dataset", GOOD]),
        (beir / "queries.jsonl", ["ingest", "beir", "--dir", "{d}", "--dataset", GOOD]),
        # the answers first: once FinanceBench questions are in the lake, answers must name them
        (fb / "results" / "gpt-4_closedBook.jsonl", ["ingest", "financebench-answers", "{f}"]),
        (fb / "data" / "financebench_document_information.jsonl",
         ["ingest", "financebench", "--questions", str(tmp_path / "questions.jsonl"), "--documents", "{f}"]),
    ]
    write(tmp_path / "questions.jsonl", lines(fb / "data" / "financebench_open_source.jsonl", 5))
    misbehaved, landed, refused = [], [], 0
    for n, (src, template) in enumerate(cases):
        for k, (what, data) in enumerate(corruptions(src.read_bytes(), src.suffix == ".jsonl").items()):
            d = tmp_path / f"case-{n}-{k}"
            if "{d}" in template:  # a BEIR dir: the real files beside the corrupted one
                d.mkdir()
                for other in beir.iterdir():
                    if other.name != src.name:
                        (d / other.name).symlink_to(other)
            f = write(d / src.name, data)
            before = snapshot(home)
            monkeypatch.setattr(sys, "argv", ["finrag", "--home", str(home), *(a.format(f=f, d=d) for a in template)])
            monkeypatch.setenv("FINRAG_HOME", str(home))
            try:
                main()
                code = 0
            except SystemExit as exc:
                code = exc.code
            except Exception as exc:  # what a traceback would have shown
                misbehaved.append(f"{src.name}: {what}: {type(exc).__name__}: {exc}")
                continue
            err = capsys.readouterr().err.strip().splitlines()
            if code == 0:
                landed.append(f"{src.name}: {what}")
            elif code == 2 and err[-1].startswith(f"error: file {f}, line ") and snapshot(home) == before:
                refused += 1
            else:
                misbehaved.append(f"{src.name}: {what}: exit {code}, landed {snapshot(home) != before}: {err[-1:]}")
    assert not misbehaved, "\n".join(misbehaved)
    far = ["99999999999999999999", "1e999"]
    assert landed == [
        *(f"qrels-302.test: number {i} of line 532 -> {x}" for i in (1, 2) for x in far),  # topic, iteration
        *(f"results-302.test: number 1 of line 251 -> {x}" for x in far),  # topic
        "results-302.test: number 3 of line 251 -> 99999999999999999999",  # a score of 1e20
        "results-302.test: a field more",
        *(f"queries.jsonl: number {i} of line 51 -> {x}" for i in (1, 2) for x in far),  # in the question's text
        "queries.jsonl: a key more",
        "gpt-4_closedBook.jsonl: number 2 of line 76 -> 99999999999999999999",  # a gold answer
        "gpt-4_closedBook.jsonl: a key more",
        "financebench_document_information.jsonl: a key more",
    ]
    assert refused == 50

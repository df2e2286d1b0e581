"""`finrag synth`: the synthetic demo corpus is in FinanceBench's formats, its PDFs hold the evidence on the gold
pages, its statements add up, answers follow from the numbers on the page, and a seed gives identical files."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
from pypdf import PdfReader

from support.paths import PROJECT

NUMBER = re.compile(r"-?\d[\d,]*(?:\.\d+)?")


def synth(out: Path, *args: str, check: bool = True) -> subprocess.CompletedProcess[str]:
    proc = subprocess.run([sys.executable, "-m", "python_jobs.cli", "synth", "--out", str(out), *args],
                          capture_output=True, text=True, cwd=PROJECT, env=os.environ.copy(), timeout=300)
    if check:
        assert proc.returncode == 0, proc.stderr
    return proc


def norm(text: str) -> str:
    return " ".join(text.split())


def num(s: str) -> float:
    return float(s.replace(",", "").replace("(", "-").replace(")", ""))


@pytest.fixture(scope="module")
def corpus(tmp_path_factory: pytest.TempPathFactory) -> dict:
    out = tmp_path_factory.mktemp("synth") / "s0"
    proc = synth(out)
    questions = [json.loads(line) for line in (out / "questions.jsonl").read_text().splitlines()]
    documents = [json.loads(line) for line in (out / "documents.jsonl").read_text().splitlines()]
    pages = {d["doc_name"]: [p.extract_text() for p in PdfReader(out / "pdfs" / f"{d['doc_name']}.pdf").pages]
             for d in documents}
    return {"out": out, "stdout": proc.stdout, "questions": questions, "documents": documents, "pages": pages}


def test_counts_and_formats_match_financebench(corpus: dict, shared_data: Path) -> None:
    qs, docs = corpus["questions"], corpus["documents"]
    assert len(docs) == 12 and len(qs) == 60
    assert "wrote 12 documents" in corpus["stdout"] and "60 questions" in corpus["stdout"]
    assert sorted(p.name for p in (corpus["out"] / "pdfs").iterdir()) == sorted(f"{d['doc_name']}.pdf" for d in docs)
    fb = shared_data / "financebench" / "data"
    real_q = json.loads((fb / "financebench_open_source.jsonl").read_text().splitlines()[0])
    real_d = json.loads((fb / "financebench_document_information.jsonl").read_text().splitlines()[0])
    assert all(list(q) == list(real_q) for q in qs)  # same keys, same order
    assert all(list(e) == list(real_q["evidence"][0]) for q in qs for e in q["evidence"])
    assert all(list(d) == list(real_d) for d in docs)
    assert {d["doc_type"] for d in docs} == {"10k", "10q"}
    assert len({d["gics_sector"] for d in docs}) >= 4 and len({d["company"] for d in docs}) == 6
    for d in docs:
        assert re.fullmatch(r"[A-Z0-9]+_(2023_10K|2024Q1_10Q)", d["doc_name"])
        assert isinstance(d["doc_period"], int)
        assert 8 <= len(corpus["pages"][d["doc_name"]]) <= 20
    assert len({q["financebench_id"] for q in qs}) == 60
    assert {q["question_type"] for q in qs} == {"metrics-generated", "domain-relevant", "novel-generated"}
    reasoning = {"Information extraction", "Numerical reasoning", "Logical reasoning"}
    assert {q["question_reasoning"] for q in qs} <= reasoning
    assert len({q["question_reasoning"] for q in qs}) == 3
    assert all((q["domain_question_num"] is not None) == (q["question_type"] == "domain-relevant") for q in qs)
    per_doc = {d["doc_name"]: sum(q["doc_name"] == d["doc_name"] for q in qs) for d in docs}
    assert set(per_doc.values()) == {5}
    assert sum(len(q["evidence"]) == 2 for q in qs) >= 6  # a few questions span two pages


def test_evidence_is_on_the_gold_pages(corpus: dict) -> None:
    for q in corpus["questions"]:
        pages = corpus["pages"][q["doc_name"]]
        for e in q["evidence"]:
            assert e["doc_name"] == q["doc_name"]
            page = pages[e["evidence_page_num"]]  # 0-based page of the PDF
            assert e["evidence_text_full_page"] == page
            for line in e["evidence_text"].splitlines():  # each cited row or sentence, as printed on the page
                assert norm(line) in norm(page), (q["financebench_id"], e["evidence_page_num"], line)
        gold_text = norm(" ".join(pages[e["evidence_page_num"]] for e in q["evidence"]))
        if q["question_reasoning"] == "Information extraction":
            # the answer's numbers are printed on a gold page
            for n in NUMBER.findall(q["answer"]):
                assert n in gold_text, (q["financebench_id"], n)


def test_numerical_answers_follow_from_the_page_numbers(corpus: dict) -> None:
    checked = 0
    for q in corpus["questions"]:
        if q["question_reasoning"] != "Numerical reasoning":
            continue
        # justification ends "... = <arithmetic on page numbers> = <answer>"
        *_, expr, result = q["justification"].split(" = ")
        assert result.strip() == q["answer"]
        gold_text = norm(" ".join(corpus["pages"][q["doc_name"]][e["evidence_page_num"]] for e in q["evidence"]))
        for operand in NUMBER.findall(expr):
            if operand not in ("100",):
                assert operand in gold_text, (q["financebench_id"], operand)
        assert re.fullmatch(r"[\d,.\s()*/+-]+", expr), expr
        value = eval(expr.replace(",", ""), {"__builtins__": {}})  # noqa: S307 - digits and operators only
        answer = num(NUMBER.findall(q["answer"])[0])
        decimals = len(NUMBER.findall(q["answer"])[0].partition(".")[2])
        assert round(value, decimals) == pytest.approx(answer), q["financebench_id"]
        checked += 1
    assert checked >= 15


def rows(page: str) -> dict[str, list[float]]:
    """Statement rows of a page's text: label -> numbers."""
    out = {}
    for line in page.splitlines():
        m = re.fullmatch(r"([A-Za-z][A-Za-z ,'()-]*?) ((?:\(?-?[\d,]+(?:\.\d+)?\)? ?)+)", line.strip())
        if m:
            out[m.group(1)] = [num(x) for x in m.group(2).split()]
    return out


def statement(pages: list[str], title: str) -> dict[str, list[float]]:
    [page] = [p for p in pages if title in p]
    return rows(page)


def test_statements_add_up(corpus: dict) -> None:
    for d in corpus["documents"]:
        pages = corpus["pages"][d["doc_name"]]
        ten_k = d["doc_type"] == "10k"
        ops = statement(pages, "Statements of Operations")
        bs = statement(pages, "Balance Sheets\n" if ten_k else "Condensed Consolidated Balance Sheets")
        cf = statement(pages, "Statements of Cash Flows")
        for i, revenue in enumerate(ops["Revenue"]):
            assert ops["Gross profit"][i] == revenue - ops["Cost of revenue"][i]
            assert ops["Operating income"][i] == ops["Gross profit"][i] - ops["Total operating expenses"][i]
            assert ops["Net income"][i] == ops["Income before income taxes"][i] - ops["Provision for income taxes"][i]
            assert cf["Net income"][i] == ops["Net income"][i]
            assert cf["Cash and cash equivalents at end of period"][i] == (
                cf["Cash and cash equivalents at beginning of period"][i]
                + cf["Net increase (decrease) in cash and cash equivalents"][i])
        for i, total in enumerate(bs["Total assets"]):
            assert total == bs["Total liabilities"][i] + bs["Total shareholders' equity"][i]
            assert total == bs["Total liabilities and shareholders' equity"][i]
            assert bs["Total shareholders' equity"][i] > 0
        # the period-end cash of the cash flow statement is the balance sheet's
        assert cf["Cash and cash equivalents at end of period"][0] == bs["Cash and cash equivalents"][0]
        if ten_k:
            q_pages = corpus["pages"][d["doc_name"].replace("2023_10K", "2024Q1_10Q")]
            q_bs = statement(q_pages, "Condensed Consolidated Balance Sheets")
            # the 10-Q's December 31 column repeats the 10-K's year-end balance sheet
            assert {k: v[1] for k, v in q_bs.items()} == {k: v[0] for k, v in bs.items()}


def test_each_filing_has_a_drawn_figure_with_caption(corpus: dict) -> None:
    for d in corpus["documents"]:
        reader = PdfReader(corpus["out"] / "pdfs" / f"{d['doc_name']}.pdf")
        [index] = [i for i, p in enumerate(corpus["pages"][d["doc_name"]]) if "Figure 1. Revenue" in p]
        content = reader.pages[index].get_contents().get_data()
        assert content.count(b" re") >= 2 and b"f" in content  # filled rectangles: the bars


def test_same_seed_same_bytes_other_seed_other_corpus(corpus: dict, tmp_path: Path) -> None:
    again = tmp_path / "again"
    synth(again)
    for f in sorted(p.relative_to(corpus["out"]) for p in corpus["out"].rglob("*") if p.is_file()):
        assert (again / f).read_bytes() == (corpus["out"] / f).read_bytes(), f
    other = tmp_path / "seed1"
    synth(other, "--seed", "1", "--companies", "2", "--questions-per-doc", "3")
    qs = [json.loads(line) for line in (other / "questions.jsonl").read_text().splitlines()]
    assert len(qs) == 12 and len(list((other / "pdfs").iterdir())) == 4
    assert {q["question"] for q in qs} - {q["question"] for q in corpus["questions"]}


def test_bad_arguments(tmp_path: Path) -> None:
    bad = synth(tmp_path / "x", "--companies", "0", check=False)
    assert bad.returncode == 2 and "companies" in bad.stderr
    assert not (tmp_path / "x").exists()


@pytest.mark.slow
def test_ingest_and_chunk_the_synthetic_set(corpus: dict, home: Path, finrag) -> None:
    """The synthetic set goes through the real FinanceBench ingest, then the chunker; every gold page is chunked."""
    from python_jobs.core.lake import Lake

    out = corpus["out"]
    finrag("ingest", "financebench", "--questions", str(out / "questions.jsonl"), "--documents",
           str(out / "documents.jsonl"), "--pdfs", str(out / "pdfs"), "--dataset", "synth")
    lake = Lake(home)
    docs = lake.read("documents", where={"dataset": "synth"})
    assert docs.height == 12 and docs["has_content"].all()
    assert sorted(docs["doc_type"].unique().to_list()) == ["10-K", "10-Q"]
    n_pages = dict(zip(docs["doc_id"].to_list(), docs["n_pages"].to_list(), strict=True))
    assert n_pages == {name: len(texts) for name, texts in corpus["pages"].items()}
    pages = lake.read("pages", where={"dataset": "synth"})
    assert pages.height == sum(n_pages.values())
    questions = lake.read("questions", where={"dataset": "synth"})
    assert questions.height == 60
    assert questions["source"].unique().to_list() == ["generated"]  # template-made, not human-written
    evidence = lake.read("evidence", where={"dataset": "synth"})
    assert evidence.height == sum(len(q["evidence"]) for q in corpus["questions"])
    # the ingested page text of every gold page holds the evidence
    page_text = {(r["doc_id"], r["page_number"]): r["text"] for r in pages.iter_rows(named=True)}
    for r in evidence.iter_rows(named=True):
        for line in r["evidence_text"].splitlines():
            assert norm(line) in norm(page_text[(r["doc_id"], r["page_number"])])

    finrag("chunk", "--dataset", "synth", "--preset", "256/32")
    chunks = lake.read("chunks", where={"dataset": "synth"})
    assert set(chunks["doc_id"].unique().to_list()) == set(n_pages)
    covered = {(r["doc_id"], p) for r in chunks.iter_rows(named=True)
               for p in range(r["page_start"], r["page_end"] + 1)}
    assert {(r["doc_id"], r["page_number"]) for r in evidence.iter_rows(named=True)} <= covered
    assert covered == set(page_text)  # every page of every filing lands in some chunk

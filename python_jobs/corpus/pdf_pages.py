"""Page texts of PDF files with pypdf, in at most two worker processes, with a page-level progress bar.

pypdf is pure Python and slow (~1,500 pages of FinanceBench filings take minutes on one core), so pages are cut
into spans and spread over a process pool; a span is the unit of progress. Extracted texts are cached per PDF
content hash and pypdf version ($FINRAG_CACHE_DIR, default ~/.cache/finrag), so re-ingesting the same file into
another home costs nothing: the text is a pure function of those two. Shared (non-verb) module.
"""

from __future__ import annotations

import hashlib
import json
import logging
import multiprocessing as mp
import os
import signal
import sys
from concurrent.futures import ProcessPoolExecutor, as_completed
from dataclasses import dataclass
from pathlib import Path

from tqdm import tqdm

from python_jobs.core.config import cache_dir
from python_jobs.core.console import progress
from python_jobs.core.errors import InputError

SPAN = 16  # pages per task: small enough to balance two workers, large enough to amortise opening the PDF

_readers: dict[str, object] = {}  # per worker process: path -> open PdfReader


@dataclass(frozen=True)
class PdfInfo:
    path: Path
    n_pages: int
    sha256: str


def _quiet_pypdf() -> None:
    # pypdf logs a warning per odd object in real filings; they are noise for an ingest
    logging.getLogger("pypdf").setLevel(logging.ERROR)


def _reader(path: str):
    from pypdf import PdfReader

    r = _readers.get(path)
    if r is None:
        _quiet_pypdf()
        r = _readers[path] = PdfReader(path)
    return r


def inspect(path: Path) -> PdfInfo:
    """Page count and content hash (cheap: no text extraction). Unreadable PDFs are input errors."""
    from pypdf import PdfReader
    from pypdf.errors import PdfReadError

    _quiet_pypdf()
    data = path.read_bytes()
    try:
        n = len(PdfReader(path).pages)
    except (PdfReadError, OSError, ValueError) as exc:
        raise InputError(f"not a readable PDF: {exc}", file=str(path), field="<pdf>") from None
    return PdfInfo(path, n, hashlib.sha256(data).hexdigest())


def _die_with_parent(parent: int) -> None:
    """Worker initializer: end this worker when the job's process dies, however it dies. A pool's workers wait on
    a queue whose write end they hold themselves, so a SIGKILLed parent would leave them extracting (and then
    waiting) forever. Linux's parent-death signal covers every death but exec; elsewhere nothing changes."""
    if sys.platform != "linux":
        return
    import ctypes

    pr_set_pdeathsig = 1
    ctypes.CDLL(None, use_errno=True).prctl(pr_set_pdeathsig, signal.SIGTERM, 0, 0, 0)
    if os.getppid() != parent:  # the parent died before the signal was armed
        os._exit(1)


def _extract_span(path: str, start: int, stop: int) -> tuple[str, int, list[str]]:
    r = _reader(path)
    texts = []
    for i in range(start, stop):
        try:
            texts.append(r.pages[i].extract_text() or "")
        except Exception as exc:  # noqa: BLE001 - any pypdf failure is bad input; plain type so it pickles back
            raise RuntimeError(f"{path} page {i}: {type(exc).__name__}: {exc}") from None
    return path, start, texts


def _cache_file(info: PdfInfo) -> Path:
    from pypdf import __version__ as pypdf_version

    return cache_dir() / "pdf_pages" / f"{info.sha256}-pypdf{pypdf_version}.json"


def _cached(info: PdfInfo) -> list[str] | None:
    try:
        texts = json.loads(_cache_file(info).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    return texts if isinstance(texts, list) and len(texts) == info.n_pages else None


def _store(info: PdfInfo, texts: list[str]) -> None:
    path = _cache_file(info)
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = path.with_suffix(f".{os.getpid()}.tmp")
        tmp.write_text(json.dumps(texts), encoding="utf-8")
        os.replace(tmp, path)
    except OSError:  # a read-only cache only costs speed
        pass


def is_unreadable(text: str) -> bool:
    """A page whose text is mostly U+FFFD: pypdf found glyphs but no way to map them to characters (a broken
    ToUnicode map). Such text looks present but holds no words a retriever or a reader could use."""
    chars = len(text) - sum(c.isspace() for c in text)
    return chars > 0 and 2 * text.count("\ufffd") >= chars


def extract_pages(pdfs: list[PdfInfo], workers: int = 2) -> dict[Path, list[str]]:
    """Text of every page of every PDF, in page order."""
    done = {p.path: t for p in pdfs if (t := _cached(p)) is not None}
    todo = [p for p in pdfs if p.path not in done]
    tasks = [(str(p.path), s, min(s + SPAN, p.n_pages)) for p in todo for s in range(0, p.n_pages, SPAN)]
    out: dict[str, list[str | None]] = {str(p.path): [None] * p.n_pages for p in todo}
    workers = max(1, min(workers, 2, os.cpu_count() or 1, len(tasks) or 1))
    with progress(total=sum(p.n_pages for p in pdfs), unit="page", desc="pdf pages") as bar:
        bar.update(sum(len(t) for t in done.values()))  # cached pages count as done
        try:
            fresh = _run(tasks, out, bar, workers) if tasks else {}
        except RuntimeError as exc:
            raise InputError(f"pypdf could not extract text: {exc}", field="<pdf>") from None
    for p in todo:
        _store(p, fresh[p.path])
    return {**done, **fresh}


def _run(tasks, out, bar: tqdm, workers: int) -> dict[Path, list[str]]:
    if workers == 1:
        for t in tasks:
            path, start, texts = _extract_span(*t)
            out[path][start : start + len(texts)] = texts
            bar.update(len(texts))
    else:
        # spawn, not fork: the parent has polars' thread pool running
        with ProcessPoolExecutor(workers, mp_context=mp.get_context("spawn"), initializer=_die_with_parent,
                                 initargs=(os.getpid(),)) as pool:
            futures = [pool.submit(_extract_span, *t) for t in tasks]
            for fut in as_completed(futures):
                path, start, texts = fut.result()
                out[path][start : start + len(texts)] = texts
                bar.update(len(texts))
    return {Path(k): [t or "" for t in v] for k, v in out.items()}

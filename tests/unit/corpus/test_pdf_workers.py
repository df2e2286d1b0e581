"""A job killed with SIGKILL while PDF pages are being extracted leaves no worker process behind."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

pytestmark = pytest.mark.skipif(sys.platform != "linux", reason="the parent-death signal is Linux's")

EXTRACT = """
import sys
from pathlib import Path
from python_jobs.corpus.pdf_pages import extract_pages, inspect
extract_pages([inspect(Path(p)) for p in sys.argv[1:]], workers=2)
"""


def children(pid: int) -> set[int]:
    out = set()
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        if int(fields[1]) == pid:
            out.add(int(stat.parent.name))
    return out


def alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except OSError:
        return False
    return state != "Z"


def test_killing_the_job_ends_its_pdf_workers(shared_data: Path, tmp_path: Path) -> None:
    pdfs = sorted((shared_data / "financebench" / "pdfs").glob("*.pdf"))[:3]  # minutes of pypdf work: still busy
    env = {**os.environ, "FINRAG_CACHE_DIR": str(tmp_path / "cache"), "TQDM_DISABLE": "1"}
    job = subprocess.Popen([sys.executable, "-c", EXTRACT, *map(str, pdfs)], env=env)
    try:
        deadline = time.monotonic() + 60
        workers: set[int] = set()
        while time.monotonic() < deadline and len(workers) < 2:  # two pool workers (and spawn's resource tracker)
            workers = {c for c in children(job.pid) if "spawn_main" in Path(f"/proc/{c}/cmdline").read_text()}
            time.sleep(0.2)
        assert len(workers) >= 2, "the job never started its PDF workers"
        time.sleep(1.0)  # the workers are past their initializer and extracting
        job.send_signal(signal.SIGKILL)
        job.wait()
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline and any(alive(w) for w in workers):
            time.sleep(0.2)
        assert not [w for w in workers if alive(w)], "PDF workers outlived the killed job"
    finally:
        job.kill()
        for w in workers:
            try:
                os.kill(w, signal.SIGKILL)
            except (ProcessLookupError, PermissionError):
                pass

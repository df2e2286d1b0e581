"""`finrag retrieve` on the toy corpus (support/toy_corpus.py): bad input is reported with exit 2 and the field, a good
run prints its counts, and a progress bar only where a person watches: on a terminal, unless TQDM_DISABLE is set; the
options make the library's config (RetrievalConfig), and an option the retriever does not have is ignored with a
note."""

from __future__ import annotations

import fcntl
import os
import pty
import struct
import subprocess
import sys
import termios
from pathlib import Path

from python_jobs.core.lake import Lake
from python_jobs.retrieval.runs import RetrievalConfig, identity
from support.paths import PROJECT
from support.toy_corpus import DATASET, FLAT


def stderr_on_a_terminal(home: Path, *args: str, env: dict[str, str] | None = None) -> str:
    """Run `finrag ARGS` with stderr on a pseudo-terminal (as in an interactive shell); what it wrote there."""
    leader, follower = pty.openpty()
    # a terminal's size, as a real one has (a fresh pty is 0 x 0, where tqdm draws a bar of width 0)
    fcntl.ioctl(follower, termios.TIOCSWINSZ, struct.pack("HHHH", 24, 120, 0, 0))
    try:
        proc = subprocess.Popen([sys.executable, "-m", "python_jobs.cli", "--home", str(home), *args], cwd=PROJECT,
                                stdout=subprocess.DEVNULL, stderr=follower,
                                env={**os.environ, "FINRAG_HOME": str(home), **(env or {})})
        os.close(follower)
        out = b""
        while True:
            try:
                chunk = os.read(leader, 65536)
            except OSError:  # EIO: the process closed the terminal
                break
            if not chunk:
                break
            out += chunk
        assert proc.wait(timeout=300) == 0, out.decode(errors="replace")
        return out.decode(errors="replace")
    finally:
        os.close(leader)


def test_cli_retrieve_reports_bad_input_with_exit_2(toy: Lake, finrag):
    proc = finrag("retrieve", "--retriever", "bm25", "--dataset", DATASET, "--k", "3", check=False)
    assert proc.returncode == 2 and "field 'chunker_id'" in proc.stderr and "several chunkers" in proc.stderr
    ok = finrag("retrieve", "--retriever", "bm25", "--dataset", DATASET, "--k", "3", "--chunker-id", FLAT)
    # stdout: the run id alone; the summary is a note on stderr
    assert ok.stdout.strip().startswith(f"{DATASET}-bm25-full-") and "\n" not in ok.stdout.strip()
    assert "questions=5" in ok.stderr and "rows=" in ok.stderr
    assert "retrieve bm25/full" not in ok.stderr  # stderr is a pipe: no bar, only the notes

    args = ("retrieve", "--retriever", "bm25", "--dataset", DATASET, "--k", "3", "--chunker-id", FLAT, "--run-id")
    assert "retrieve bm25/full" in stderr_on_a_terminal(toy.home, *args, "on_a_tty", env={"TQDM_DISABLE": ""})
    assert "retrieve bm25/full" not in stderr_on_a_terminal(toy.home, *args, "tqdm_off", env={"TQDM_DISABLE": "1"})


def test_cli_builds_the_config_of_the_library_and_names_a_bad_setting(toy: Lake, finrag):
    base = ("retrieve", "--dataset", DATASET, "--k", "3", "--chunker-id", FLAT)
    plain = finrag(*base, "--retriever", "keywords", "--n-keywords", "3")
    cfg = RetrievalConfig.from_dict({"dataset": DATASET, "k": 3, "chunker_id": FLAT, "retriever": "keywords",
                                     "n_keywords": 3})
    assert plain.stdout.strip() == identity(cfg, FLAT)[0]  # the options make the library's config, id and all
    # an option of another retriever's setting changes nothing (the same run id) and is named in a note
    noted = finrag(*base, "--retriever", "keywords", "--n-keywords", "3", "--rrf-k", "10", "--top-pages", "5")
    assert noted.stdout == plain.stdout
    assert "note: keywords has no setting --rrf-k, --top-pages: ignored" in noted.stderr
    # a bad value of one of its own: exit 2 naming the field, nothing landed
    bad = finrag(*base, "--retriever", "keywords", "--feedback-docs", "-1", check=False)
    assert bad.returncode == 2 and "field 'feedback_docs'" in bad.stderr and "Traceback" not in bad.stderr
    assert Lake(toy.home).partitions("retrieval_runs") == [plain.stdout.strip()]

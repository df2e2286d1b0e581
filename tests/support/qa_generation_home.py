"""The QA generation tests' synthetic corpus and helpers: the corpus made by `finrag synth`, ingested and chunked
into a base home once per test session (shared by the QA generation modules through support/shared_home.py, and
copied per run), the instruction line of each agent's prompt and scripted replies keyed on them, and
`finrag generate-qa` against the scripted OpenAI-compatible server (support/fake_llm.py)."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import polars as pl
import pytest

from python_jobs.core.lake import Lake
from support.cli import run_finrag
from support.fake_llm import FakeLLM
from support.paths import PROJECT
from support.shared_home import copy_home, shared_home

DS = "demo_synthetic"
CHARS = 1500  # --passage-chars default: what the prompts hold of each chunk
# the instruction line of each agent's prompt (tests key the scripted replies on it)
CLASSIFY = "\n\nWhich topic from the list fits the passage best?"
EXTRACT = "\n\nWrite one question this passage answers"
CALC = "needs a calculation"
CHAIN = "needs both passages"
CONTRAST = "compares the two passages"
LONG = "needs an explanation"
CONV = "Write a conversation of four lines"
INSPECT = "Should this question be kept?"

LONG_ANSWER = ("The company describes how its segments operate, how they sell to customers and how revenue is "
               "recognised over the term of each contract, with most contracts renewing every year.")
# the options of the suites' standard generation run
ARGS = ("--per-cell", "2", "--sample", "12", "--seed", "7", "--rounds", "2")


def _land_corpus(base: Path) -> dict:
    """The synthetic corpus made by `finrag synth` beside BASE, ingested and chunked 256/32 into BASE."""
    out = base.parent / "synth"
    shutil.rmtree(out, ignore_errors=True)  # an interrupted build's
    subprocess.run([os.sys.executable, "-m", "python_jobs.cli", "synth", "--out", str(out), "--companies", "2",
                    "--questions-per-doc", "1"], check=True, cwd=PROJECT, capture_output=True)
    run_finrag(base, "ingest", "financebench", "--questions", str(out / "questions.jsonl"), "--documents",
               str(out / "documents.jsonl"), "--pdfs", str(out / "pdfs"), "--dataset", DS)
    run_finrag(base, "chunk", "--dataset", DS, "--preset", "256/32")
    return {}


def synth_corpus(tmp_path_factory: pytest.TempPathFactory) -> dict:
    """The synthetic corpus (2 companies, 4 filings) made by `finrag synth`, ingested and chunked 256/32 into a base
    home once per test session (`base`: shared, read it, never write it); `root` a directory of the caller's for the
    copies `fresh_home` makes; with the chunks long enough to generate from."""
    base, _ = shared_home(tmp_path_factory, "qa_generation_corpus", _land_corpus)
    chunks = Lake(base).read("chunks").filter(pl.col("text").str.strip_chars().str.len_chars() >= 200)
    return {"root": tmp_path_factory.mktemp("qagen"), "base": base, "chunks": chunks}


def fresh_home(corpus: dict, name: str) -> Path:
    home = corpus["root"] / name
    if home.exists():
        shutil.rmtree(home)
    copy_home(corpus["base"], home)
    return home


def tail(text: str) -> str:
    """The end of a chunk as the prompts hold it (a key unique to that chunk's prompt)."""
    return text.strip()[:CHARS][-60:]


def script_for(chunks: pl.DataFrame, bad_classification: str | None = None) -> dict[str, str]:
    """Replies: ILEXIA's chunks are 'Stock analysis', the other company's 'Corporate bonds' (one chunk's reply
    names no topic); extractive answers are each chunk's last words (so they are in the passage); contrast and
    chain replies are malformed; the inspector drops long-form answers and keeps the rest."""
    script: dict[str, str] = {}
    for r in chunks.iter_rows(named=True):
        t = tail(r["text"])
        topic = "Stock analysis" if r["doc_id"].startswith("ILEXIA") else "Corporate bonds"
        script[t + CLASSIFY] = "I am not sure." if r["chunk_id"] == bad_classification else f"Topic: {topic}"
        words = r["text"].strip()[:CHARS].split()
        # the question quotes the chunk's closing words (so bm25 can find it), the answer its last four
        script[t + EXTRACT] = (f"Question: Which words close the passage about {' '.join(words[-12:-4])}?\n"
                               f"Answer: {' '.join(words[-4:])}")
    script.update({
        CALC: ("Question: What is the total of the two amounts in the passages?\nAnswer: 1,250\n"
               "Calculation: 1,000 + 250"),
        CHAIN: "Question: Which segment links the two companies?\nReasoning: both passages name it.",  # no Answer line
        CONTRAST: "I cannot compare these passages.",  # no labelled lines at all
        LONG: f"Question: How does the company run its business and recognise revenue?\nAnswer: {LONG_ANSWER}",
        CONV: ("User: How many reportable segments does the company have?\nAssistant: Two.\n"
               "User: Which of them sells through distributors?\nAssistant: Subscriptions."),
        f"Answer: {LONG_ANSWER}\n\n{INSPECT}": "Verdict: drop\nScore: 2\nReason: the answer is vague.",
        INSPECT: "Verdict: keep\nScore: 4\nReason: the passage supports the answer.",
    })
    return script


def generate(home: Path, fake: FakeLLM, *args: str, check: bool = True) -> subprocess.CompletedProcess[str]:
    os.environ["FINRAG_LLM_BASE_URL"] = fake.base_url
    try:
        return run_finrag(home, "generate-qa", "--dataset", DS, "--timeout", "5", "--max-attempts", "2", *args,
                          check=check)
    finally:
        del os.environ["FINRAG_LLM_BASE_URL"]


def run_id_of(proc: subprocess.CompletedProcess[str]) -> str:
    (line,) = proc.stdout.splitlines()  # a producing verb prints its id alone
    return line

"""The judge tests' FinanceBench home and helpers: FinanceBench's real questions and its 16 human-labelled answer
runs ingested once (a base home, copied per test), the scripted-reply key of a rubric's question block, and
`finrag judge` against the scripted OpenAI-compatible server (support/fake_llm.py)."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

from python_jobs.core.lake import Lake
from support.cli import run_finrag
from support.fake_llm import FakeLLM

ORACLE = "gpt-4_oracle"
# the line that opens each rubric's question block (prompts/judge_<metric>_v1.txt): scripted replies key on
# "<label>\nQuestion: <question text>"
LABELS = {"correctness": "Metric: correctness", "faithfulness": "Metric: faithfulness", "acc": "Metric: accuracy",
          "com": "Metric: completeness", "utl": "Metric: utilization", "hal": "Metric: hallucination",
          "nac": "Metric: numerical accuracy"}


def ingest_base(home: Path, shared_data: Path) -> dict:
    """FinanceBench questions (no PDFs: the judge takes oracle evidence pages from the questions) and the 16
    human-labelled answer runs, ingested into HOME; with each question's text and first reference answer."""
    d = shared_data / "financebench"
    run_finrag(home, "ingest", "financebench", "--questions", str(d / "data" / "financebench_open_source.jsonl"),
               "--documents", str(d / "data" / "financebench_document_information.jsonl"))
    run_finrag(home, "ingest", "financebench-answers", str(d / "results"))
    qs = Lake(home).read("questions")
    return {"home": home, "text": dict(zip(qs["question_id"], qs["question"], strict=True)),
            "ref": {q: r[0] for q, r in zip(qs["question_id"], qs["reference_answers"].to_list(), strict=True)}}


def copy_home(base: dict, home: Path) -> Path:
    """A private copy of the base home at HOME, for a test that writes."""
    shutil.copytree(base["home"], home)
    return home


def key(base: dict, metric: str, qid: str) -> str:
    return f"{LABELS[metric]}\nQuestion: {base['text'][qid]}"


def judge(home: Path, fake: FakeLLM, *args: str, check: bool = True) -> subprocess.CompletedProcess[str]:
    env = {"FINRAG_LLM_BASE_URL": fake.base_url, "FINRAG_LLM_MODEL": "fake-model"}
    return run_finrag(home, "judge", "--timeout", "5", "--max-attempts", "2", *args, check=check, env=env)


def run_id_of(proc: subprocess.CompletedProcess[str]) -> str:
    (line,) = proc.stdout.splitlines()  # a producing verb prints its id alone
    return line


def oracle_qids(home: Path, n: int) -> list[str]:
    return sorted(Lake(home).read("answers", where={"run_id": ORACLE})["question_id"].to_list())[:n]

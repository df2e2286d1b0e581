"""The judge tests' FinanceBench home and helpers: FinanceBench's real questions and its 16 human-labelled answer
runs ingested once per test session (a base home shared by the judge suites through support/shared_home.py, made
from the shared FinanceBench questions home of support/answers_homes.py, and copied per test that writes), the
scripted-reply key of a rubric's question block, and `finrag judge` against the scripted OpenAI-compatible server
(support/fake_llm.py)."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from python_jobs.core.lake import Lake
from support.answers_homes import questions_home
from support.cli import run_finrag
from support.fake_llm import FakeLLM
from support.shared_home import copy_home as shared_copy
from support.shared_home import shared_home

ORACLE = "gpt-4_oracle"
# the line that opens each rubric's question block (prompts/judge_<metric>_v1.txt): scripted replies key on
# "<label>\nQuestion: <question text>"
LABELS = {"correctness": "Metric: correctness", "faithfulness": "Metric: faithfulness", "acc": "Metric: accuracy",
          "com": "Metric: completeness", "utl": "Metric: utilization", "hal": "Metric: hallucination",
          "nac": "Metric: numerical accuracy"}


def ingest_base(home: Path, questions: Path, shared_data: Path) -> dict:
    """FinanceBench questions (no PDFs: the judge takes oracle evidence pages from the questions; a copy of the
    QUESTIONS home, support/answers_homes.py) and the 16 human-labelled answer runs, ingested into HOME; with each
    question's text and first reference answer."""
    shared_copy(questions, home)
    run_finrag(home, "ingest", "financebench-answers", str(shared_data / "financebench" / "results"))
    qs = Lake(home).read("questions")
    return {"text": dict(zip(qs["question_id"], qs["question"], strict=True)),
            "ref": {q: r[0] for q, r in zip(qs["question_id"], qs["reference_answers"].to_list(), strict=True)}}


def shared_base(tmp_path_factory: pytest.TempPathFactory, shared_data: Path) -> dict:
    """`ingest_base` once per test session (every judge module and xdist worker reads the same home): {"home": the
    shared home (read it, never write it; `copy_home` for a test that writes), "text", "ref"}."""
    questions = questions_home(tmp_path_factory)
    home, facts = shared_home(tmp_path_factory, "judge_financebench",
                              lambda h: ingest_base(h, questions, shared_data))
    return {"home": home, **facts}


def copy_home(base: dict, home: Path) -> Path:
    """A private copy of the base home at HOME, for a test that writes."""
    return shared_copy(base["home"], home)


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

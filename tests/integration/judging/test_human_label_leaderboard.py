"""Human labels as a rater: FinanceBench's 16 labelled result files land through the real CLI (the judge suites'
shared base home: questions and answer runs ingested once per session, support/judge_home.py), a copy of it is built
(`finrag build`, every model and data test), and mart_human_label_leaderboard (read with `finrag sql`, as the
README's table is) gives exactly the label counts of the raw files; by question type the shares add up to the run's."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

import pytest

from support.cli import run_finrag

pytestmark = pytest.mark.slow


def test_the_leaderboard_counts_what_the_raw_files_say(wh: Path, shared_data: Path) -> None:
    fb = shared_data / "financebench"
    files = sorted((fb / "results").glob("*.jsonl"))
    assert len(files) == 16
    run_finrag(wh, "build")

    raw = {(f.stem, label): n for f in files
           for label, n in Counter(json.loads(line)["label"] for line in f.open()).items()}
    out = run_finrag(wh, "sql", "select answer_run_id, label, n from mart_human_label_leaderboard", "--format", "json")
    mart = {(r["answer_run_id"], r["label"]): r["n"] for r in json.loads(out.stdout)}
    assert mart == raw
    assert mart[("gpt-4-1106-preview_sharedStore", "Refusal")] == 101  # the paper's 68 % refusals of GPT-4-Turbo

    out = run_finrag(wh, "sql", "select answer_run_id, label, cast(sum(n) as bigint) as n from "
                                "mart_human_label_by_slice where dimension = 'question_type' group by all",
                     "--format", "json")
    assert {(r["answer_run_id"], r["label"]): r["n"] for r in json.loads(out.stdout)} == raw

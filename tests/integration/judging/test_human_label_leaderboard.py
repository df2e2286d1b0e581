"""Human labels as a rater: FinanceBench's 16 labelled result files land through the real CLI, and
mart_human_label_leaderboard (read with `finrag sql`, as the README's table is) gives exactly the label counts of
the raw files; by question type the shares add up to the run's."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

import pytest

pytestmark = pytest.mark.slow


def test_the_leaderboard_counts_what_the_raw_files_say(home: Path, finrag, shared_data: Path, tmp_path: Path) -> None:
    fb = shared_data / "financebench"
    files = sorted((fb / "results").glob("*.jsonl"))
    assert len(files) == 16
    (tmp_path / "no_pdfs").mkdir()
    finrag("ingest", "financebench", "--questions", str(fb / "data" / "financebench_open_source.jsonl"),
           "--documents", str(fb / "data" / "financebench_document_information.jsonl"), "--pdfs",
           str(tmp_path / "no_pdfs"))
    finrag("ingest", "financebench-answers", str(fb / "results"))
    finrag("build")

    raw = {(f.stem, label): n for f in files
           for label, n in Counter(json.loads(line)["label"] for line in f.open()).items()}
    out = finrag("sql", "select answer_run_id, label, n from mart_human_label_leaderboard", "--format", "json")
    mart = {(r["answer_run_id"], r["label"]): r["n"] for r in json.loads(out.stdout)}
    assert mart == raw
    assert mart[("gpt-4-1106-preview_sharedStore", "Refusal")] == 101  # the paper's 68 % refusals of GPT-4-Turbo

    out = finrag("sql", "select answer_run_id, label, cast(sum(n) as bigint) as n from mart_human_label_by_slice "
                        "where dimension = 'question_type' group by all", "--format", "json")
    assert {(r["answer_run_id"], r["label"]): r["n"] for r in json.loads(out.stdout)} == raw

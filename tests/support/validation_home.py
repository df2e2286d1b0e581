"""A home with one good load and one malformed one, landed through the real CLI: the tests of the stored validation
results and of the Data Docs (tests/integration/test_landing_validation.py, the dashboard's browser test) read it.

- good: FinanceRAG's FinQABench (BEIR: 100 queries, qrels, a 92-entry corpus) as dataset financerag_finqabench;
- bad: 20 lines of the real FinColBERT run for those queries, line 4's topic replaced by `qNOSUCH` — the line parses,
  its docno is in the corpus, but the dataset has questions and this is not one of them: the landing's validation
  (GX, retrieval_results.question_id → questions) rejects it and nothing of the run lands.
"""

from __future__ import annotations

import json
import subprocess
from dataclasses import dataclass
from pathlib import Path

from support.cli import run_finrag
from support.paths import SHARED_DATA

GOOD = "financerag_finqabench"
BAD_RUN = "bad_run"
UNKNOWN_TOPIC = "qNOSUCH"


@dataclass(frozen=True)
class ValidationHome:
    home: Path
    bad_file: Path
    failed: subprocess.CompletedProcess[str]  # the rejected ingest

    @property
    def expected_error(self) -> str:
        return (f"error: file {self.bad_file}, line 4, field 'topic': retrieval_results: unknown question "
                f"'{UNKNOWN_TOPIC}': dataset '{GOOD}' has questions and this is not one of them")


def bad_run_file(path: Path) -> Path:
    root = SHARED_DATA / "financerag_icaif24"
    qids = {json.loads(x)["_id"] for x in (root / "FinQABench" / "queries.jsonl").read_text().splitlines()}
    run = (root / "runs" / "fincolbert_combined_results.derived.trec").read_text().splitlines()
    mine = [x for x in run if x.split()[0] in qids][:20]
    _topic, q0, doc, rank, score, tag = mine[3].split()
    path.write_text("\n".join([*mine[:3], f"{UNKNOWN_TOPIC} {q0} {doc} {rank} {score} {tag}", *mine[4:]]) + "\n")
    return path


def land_good_and_bad(home: Path, tmp: Path) -> ValidationHome:
    run_finrag(home, "ingest", "beir", "--dir", str(SHARED_DATA / "financerag_icaif24" / "FinQABench"),
               "--dataset", GOOD)
    bad = bad_run_file(tmp / "bad_run.trec")
    failed = run_finrag(home, "ingest", "trec-run", str(bad), "--dataset", GOOD, "--run-id", BAD_RUN, check=False)
    return ValidationHome(home, bad, failed)

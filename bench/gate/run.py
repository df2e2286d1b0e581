"""Benchmark: `finrag gate` of 10 metrics x 20 slices on two 5,000-question runs, against `finrag compare` of the
same pair on one metric, both timed in the same run (the ratio is what this bench reports).

    .venv/bin/python bench/gate/run.py                    # 5,000 questions, the figure in bench/gate/README.md
    .venv/bin/python bench/gate/run.py --questions 500    # a quick check

1. A FinanceBench-format question file (`--questions` questions over 400 documents of 4 types and 13 companies, 3
   question types: 3 + 4 + 13 = 20 slices) and its document list are written, with each question's gold document
   and page as evidence; no PDFs (the documents are recorded without content, as the test suite's questions home).
2. Two TREC runs of 10 documents per question (docnos are document ids): `base` puts the gold document at a random
   rank 1-10 or leaves it out, `cand` moves it by -1..+1 places.
3. They go in through the CLI (`finrag ingest financebench`, `finrag ingest trec-run`) and `finrag build` builds and
   publishes the marts (not timed).
4. Timed, each as a subprocess (`--repeats` times, the median): `finrag gate` of a gate file with 10 doc-level
   metrics (nDCG, MAP, MRR, P, recall at several k) x (the whole set + 20 slices), and `finrag compare --run-a base
   --run-b cand --metric ndcg --granularity doc --k 10` (the pair is in mart_run_comparison: the build computed it;
   `--on-demand` times it on a home built with var run_comparison_max_runs 1, computed on demand as the gate is).
   Both pay the interpreter's start-up and imports; the floor printed is `finrag compare --help`'s.

Not run in CI.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

PROJECT = Path(__file__).resolve().parents[2]
FINRAG = str(PROJECT / ".venv" / "bin" / "finrag")
DOC_TYPES = ("10k", "10q", "8k", "Earnings")
COMPANIES = tuple(f"Company {c}" for c in "ABCDEFGHIJKLM")
QUESTION_TYPES = ("metrics-generated", "domain-relevant", "novel-generated")
METRICS = [("ndcg", 5), ("ndcg", 10), ("ndcg", 0), ("map", 10), ("map", 0), ("mrr", 10), ("precision", 5),
           ("precision", 10), ("recall", 5), ("recall", 10)]


def finrag(home: Path, *args: str, check: bool = True) -> tuple[float, subprocess.CompletedProcess[str]]:
    env = {**os.environ, "FINRAG_HOME": str(home), "TQDM_DISABLE": "1"}
    start = time.perf_counter()
    proc = subprocess.run([FINRAG, *args], env=env, capture_output=True, text=True, cwd=PROJECT)
    elapsed = time.perf_counter() - start
    if check and (proc.returncode not in (0, 1) or (proc.returncode == 1 and not proc.stdout)):
        sys.exit(f"finrag {' '.join(args)} exited {proc.returncode}:\n{proc.stdout}\n{proc.stderr}")
    return elapsed, proc


def write_inputs(root: Path, n: int, seed: int) -> dict[str, Path]:
    rng = random.Random(seed)
    docs = [{"doc_name": f"DOC_{i:04d}", "company": COMPANIES[i % len(COMPANIES)], "gics_sector": "Industrials",
             "doc_type": DOC_TYPES[i % len(DOC_TYPES)], "doc_period": 2020 + i % 4, "doc_link": "https://example.com"}
            for i in range(400)]
    questions, base, cand = [], [], []
    for i in range(n):
        doc = docs[rng.randrange(len(docs))]
        qid = f"bench_q{i:06d}"
        questions.append({"financebench_id": qid, "company": doc["company"], "doc_name": doc["doc_name"],
                          "question_type": QUESTION_TYPES[i % 3], "question_reasoning": None,
                          "domain_question_num": None, "question": f"Question {i} about {doc['doc_name']}?",
                          "answer": "1", "justification": "", "dataset_subset_label": "OPEN_SOURCE",
                          "evidence": [{"evidence_text": "x", "doc_name": doc["doc_name"], "evidence_page_num": 1,
                                        "evidence_text_full_page": "x"}]})
        others = [d["doc_name"] for d in rng.sample(docs, 11) if d["doc_name"] != doc["doc_name"]][:10]
        rank = rng.randrange(11)  # 10: not retrieved
        moved = max(0, min(10, rank + rng.choice((-1, 0, 1))))
        for lines, r in ((base, rank), (cand, moved)):
            ranking = [*others[:r], doc["doc_name"], *others[r:]][:10]
            lines += [f"{qid} Q0 {d} {j + 1} {10 - j} run" for j, d in enumerate(ranking)]
    out = {name: root / f"{name}" for name in ("questions.jsonl", "documents.jsonl", "base.trec", "cand.trec")}
    out["questions.jsonl"].write_text("\n".join(json.dumps(q) for q in questions) + "\n")
    out["documents.jsonl"].write_text("\n".join(json.dumps(d) for d in docs) + "\n")
    out["base.trec"].write_text("\n".join(base) + "\n")
    out["cand.trec"].write_text("\n".join(cand) + "\n")
    gate = root / "gate.yaml"
    gate.write_text("min_questions: 10\nslices: [question_type, doc_type, company]\nmetrics:\n" + "".join(
        f"  - {{metric: {m}, granularity: doc, k: {k}, margin: 0.02}}\n" for m, k in METRICS))
    out["gate"] = gate
    return out


def median_time(home: Path, args: list[str], repeats: int) -> tuple[float, subprocess.CompletedProcess[str]]:
    runs = [finrag(home, *args) for _ in range(repeats)]
    return statistics.median(t for t, _ in runs), runs[-1][1]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--questions", type=int, default=5000)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--seed", type=int, default=47)
    parser.add_argument("--on-demand", action="store_true",
                        help="build with var run_comparison_max_runs 1 so `finrag compare` computes the pair too")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="bench_gate_") as tmp:
        root = Path(tmp)
        home = root / "warehouse"
        home.mkdir()
        files = write_inputs(root, args.questions, args.seed)
        finrag(home, "ingest", "financebench", "--questions", str(files["questions.jsonl"]), "--documents",
               str(files["documents.jsonl"]), "--dataset", "bench")
        for name in ("base", "cand"):
            finrag(home, "ingest", "trec-run", str(files[f"{name}.trec"]), "--dataset", "bench", "--run-id", name)
        build = ["build", *(["--vars", "{run_comparison_max_runs: 1}"] if args.on_demand else [])]
        built, proc = finrag(home, *build)
        if proc.returncode:
            sys.exit(proc.stdout[-3000:] + proc.stderr[-3000:])
        print(f"load average {os.getloadavg()[0]:.2f}; {args.questions} questions; build {built:.1f} s (not timed "
              "below)")
        floor, _ = median_time(home, ["compare", "--help"], args.repeats)
        compare, proc = median_time(home, ["compare", "--run-a", "base", "--run-b", "cand", "--metric", "ndcg",
                                           "--granularity", "doc", "--k", "10", "--format", "json"], args.repeats)
        source = json.loads(proc.stdout)[0]["source"]
        gate, proc = median_time(home, ["gate", str(files["gate"]), "--candidate", "cand", "--baseline", "base",
                                        "--format", "json"], args.repeats)
        result = json.loads(proc.stdout)
        tested = sum(r["verdict"] != "not tested" for r in result["rows"])
        print(f"finrag compare, 1 metric ({source}): {compare:.2f} s")
        print(f"finrag gate, {len(METRICS)} metrics x {len(result['rows']) // len(METRICS)} slices "
              f"({tested} tested, verdict {result['verdict']}): {gate:.2f} s")
        print(f"floor (finrag compare --help): {floor:.2f} s")
        above = f" (above the floor: {(gate - floor) / (compare - floor):.2f})" if compare > floor else ""
        print(f"ratio gate / compare: {gate / compare:.2f}{above}")
        print(f"load average {os.getloadavg()[0]:.2f}")


if __name__ == "__main__":
    main()

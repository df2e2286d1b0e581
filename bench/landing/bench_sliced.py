"""Benchmark: `finrag ingest trec-qrels` and `finrag ingest trec-run` of bench/retrieval_metrics' files, wall time and
peak RSS, for a run too large to land whole (landed in question-aligned slices, python_jobs/sources/trec.py).

    .venv/bin/python -m bench.landing.bench_sliced --questions 1000000 --workdir /tmp/land1m   # 100M lines
    .venv/bin/python -m bench.landing.bench_sliced --questions 100000 --tree /tmp/wt-before     # another checkout

From the checkout, run as a module: `bench` imports as a namespace package there, so a bench can import another's code.

1. Writes (once, kept in --workdir) the qrels and the run of bench/retrieval_metrics/run.py (`write_qrels`,
   `write_run`: same seeds, --results per question, lines grouped by question as that bench writes them).
2. Lands them into a fresh home (--workdir/home-<questions>, replaced) with the CLI of --tree (default: this
   checkout) as subprocesses under `/usr/bin/time -v`, and prints each verb's wall time and peak RSS, the slice
   size (FINRAG_LANDING_SLICE_ROWS, or the default) and the load average before and after.

The home is left in place (a landed home for the build bench). Not run in CI.
"""

from __future__ import annotations

import argparse
import os
import re
import shutil
import subprocess
import sys
import time
from pathlib import Path

from bench.retrieval_metrics.run import write_qrels, write_run  # the same files as that bench

PROJECT = Path(__file__).resolve().parents[2]

DATASET = "bench"
TIME = Path("/usr/bin/time")


def log(msg: str) -> None:
    print(msg, file=sys.stderr, flush=True)


def load() -> str:
    return subprocess.run(["uptime"], capture_output=True, text=True).stdout.strip()


def finrag(tree: Path, home: Path, *args: str) -> tuple[float, float]:
    """(wall seconds, peak RSS in MiB) of `finrag ARGS` run from `tree`."""
    env = {**os.environ, "FINRAG_HOME": str(home), "PYTHONPATH": str(tree)}
    cmd = [str(TIME), "-v", sys.executable, "-m", "python_jobs.cli", "--home", str(home), *args]
    t0 = time.perf_counter()
    proc = subprocess.run(cmd, cwd=tree, env=env, capture_output=True, text=True)
    wall = time.perf_counter() - t0
    if proc.returncode:
        sys.exit(f"finrag {' '.join(args)} failed:\n{proc.stdout[-3000:]}\n{proc.stderr[-3000:]}")
    peak = re.search(r"Maximum resident set size \(kbytes\): (\d+)", proc.stderr)
    return wall, int(peak[1]) / 1024 if peak else float("nan")


def lines(path: Path) -> int:
    with open(path, "rb") as fh:
        return sum(block.count(b"\n") for block in iter(lambda: fh.read(1 << 24), b""))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--questions", type=int, default=1_000_000)
    ap.add_argument("--results", type=int, default=100)
    ap.add_argument("--workdir", type=Path, default=Path("/tmp/land1m"))
    ap.add_argument("--tree", type=Path, default=PROJECT, help="the checkout whose CLI lands the files")
    ap.add_argument("--home", type=Path, help="default: <workdir>/home-<questions>")
    args = ap.parse_args()

    args.workdir.mkdir(parents=True, exist_ok=True)
    qrels = args.workdir / f"qrels_{args.questions}.txt"
    run = args.workdir / f"run_{args.questions}x{args.results}.trec"
    if not (qrels.exists() and run.exists()):
        t0 = time.perf_counter()
        write_qrels(qrels, args.questions, seed=1)
        write_run(run, args.questions, args.results, seed=100, tag="run_000")
        log(f"wrote {qrels} and {run} in {time.perf_counter() - t0:.1f}s")
    home = args.home or args.workdir / f"home-{args.questions}"
    shutil.rmtree(home, ignore_errors=True)
    home.mkdir(parents=True)

    print(f"tree {args.tree}, slice rows {os.environ.get('FINRAG_LANDING_SLICE_ROWS', 'default')}")
    print(f"before: {load()}")
    for verb, extra in (("trec-qrels", []), ("trec-run", ["--run-id", "run_000"])):
        path = qrels if verb == "trec-qrels" else run
        wall, peak = finrag(args.tree, home, "ingest", verb, str(path), "--dataset", DATASET, *extra)
        print(f"ingest {verb} ({lines(path):,} lines): {wall:.1f} s, peak RSS {peak:,.0f} MiB")
    print(f"after: {load()}")


if __name__ == "__main__":
    main()

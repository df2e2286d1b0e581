"""Benchmark: landing a 10-million-row TREC run through the CLI, this checkout against a baseline commit.

    .venv/bin/python bench/landing/bench_landing.py                       # 100k questions x 100 results (10M lines)
    .venv/bin/python bench/landing/bench_landing.py --questions 10000     # a quick 1M-line check
    .venv/bin/python bench/landing/bench_landing.py --baseline b7cf39b --repeat 2

1. Generates (once, cached in --workdir) a TREC run of --questions x --results lines (`topic Q0 docno rank score tag`,
   scores rounded to 2 decimals so many results tie within a question, as trec_eval runs do) and qrels (3 judged docs
   per question, one of them non-relevant).
2. Checks the baseline commit out with `git worktree add --detach` at a temp path (default: the merge-base of HEAD
   and main, i.e. the commit before this branch's change), so "today" is measured in the same run, on the same load.
3. For each side, in a fresh warehouse home: `finrag ingest trec-qrels` then `finrag ingest trec-run` as
   subprocesses (`python -m python_jobs.cli` with PYTHONPATH=<tree>, cwd=<tree>), each under `/usr/bin/time -v`
   for wall time and peak RSS. With --repeat N the sides alternate (baseline, this, baseline, this, ...) and the
   fastest run of each counts (the machine is shared: the minimum is the least disturbed).
4. Prints both wall times, the ratio this/baseline, peak RSS, the load average before and after (`uptime`), and the
   cost of importing Great Expectations + creating the validation contexts in a fresh process.

Not run in CI: minutes, and about 19 GB of RAM per side at 10M lines (today's TREC reader keeps every line as Python
objects: ~1.9 GB per million lines). On a shared machine the script refuses to start a side when MemAvailable is
below that estimate (--force to try anyway). Exit status 1 when the trec-run ratio exceeds --max-ratio.
"""

from __future__ import annotations

import argparse
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
import polars as pl

PROJECT = Path(__file__).resolve().parents[2]
DATASET = "bench_landing"
RUN_ID = "bench_run"


def log(msg: str) -> None:
    print(msg, file=sys.stderr, flush=True)


def generate(workdir: Path, n_questions: int, n_results: int, seed: int) -> tuple[Path, Path]:
    """The run and qrels files (reused when already generated with the same shape)."""
    run = workdir / f"run_{n_questions}x{n_results}.trec"
    qrels = workdir / f"qrels_{n_questions}.trec"
    if run.exists() and qrels.exists():
        return run, qrels
    workdir.mkdir(parents=True, exist_ok=True)
    rng = np.random.default_rng(seed)
    n = n_questions * n_results
    t0 = time.perf_counter()
    q = np.repeat(np.arange(n_questions), n_results)
    rank = np.tile(np.arange(1, n_results + 1), n_questions)
    # distinct docnos within a question: a random offset per question plus a stride over a 10M-doc space
    doc = (np.repeat(rng.integers(0, 10_000_000, n_questions), n_results) + rank * 7919) % 10_000_000
    # descending in rank, rounded to 2 decimals: more than half of the results tie with a neighbour
    score = np.round(np.repeat(rng.uniform(20, 30, n_questions), n_results) - rank * 0.004, 2)
    frame = pl.DataFrame({"topic": q, "rank": rank, "doc": doc, "score": score}).select(
        pl.format("q{} Q0 d{} {} {} bench", "topic", "doc", "rank", pl.col("score").round(2)).alias("line"))
    tmp = run.with_suffix(".tmp")
    frame.write_csv(tmp, include_header=False, quote_style="never")
    os.replace(tmp, run)
    # qrels: the first two results of each question relevant (grades 2, 1), the 50th judged non-relevant
    pick = np.concatenate([np.arange(n_questions) * n_results + i for i in (0, 1, 49 if n_results > 49 else 2)])
    pick.sort()
    rel = np.select([rank[pick] == 1, rank[pick] == 2], [2, 1], 0)
    pl.DataFrame({"topic": q[pick], "doc": doc[pick], "rel": rel}).select(
        pl.format("q{} 0 d{} {}", "topic", "doc", "rel").alias("line")).write_csv(
        qrels, include_header=False, quote_style="never")
    ties = int((np.diff(score).reshape(-1)[np.diff(q) == 0] == 0).sum())
    log(f"generated {run} ({n:,} lines, {ties:,} tied neighbours, {run.stat().st_size / 1e6:.0f} MB) and {qrels} "
        f"in {time.perf_counter() - t0:.1f} s")
    return run, qrels


GB_PER_MILLION_LINES = 1.9  # peak RSS of `ingest trec-run` today (measured at 1M and 3M lines), plus 0.4 GB


def mem_available_gb() -> float:
    for line in Path("/proc/meminfo").read_text().splitlines():
        if line.startswith("MemAvailable:"):
            return int(line.split()[1]) / 2**20
    return float("inf")


def check_memory(n_lines: int, force: bool) -> None:
    need = 0.4 + GB_PER_MILLION_LINES * n_lines / 1e6
    have = mem_available_gb()
    if have < need and not force:
        raise SystemExit(f"about {need:.1f} GB needed for {n_lines:,} lines, {have:.1f} GB available: not starting "
                         f"(the machine is shared; --force to try anyway, or fewer --questions)")


def git(*args: str) -> str:
    return subprocess.run(["git", *args], cwd=PROJECT, check=True, capture_output=True, text=True).stdout.strip()


def uptime() -> str:
    return subprocess.run(["uptime"], capture_output=True, text=True).stdout.strip()


def timed(cmd: list[str], tree: Path, home: Path) -> tuple[float, float, str]:
    """(wall seconds, peak RSS in MB, stderr) of a command under /usr/bin/time -v."""
    env = {**os.environ, "PYTHONPATH": str(tree), "FINRAG_HOME": str(home), "HF_HUB_OFFLINE": "1"}
    with tempfile.NamedTemporaryFile("r", suffix=".time") as tf:
        t0 = time.perf_counter()
        proc = subprocess.run(["/usr/bin/time", "-v", "-o", tf.name, *cmd], cwd=tree, env=env, capture_output=True,
                              text=True)
        wall = time.perf_counter() - t0
        stats = tf.read()
    if proc.returncode != 0:
        raise SystemExit(f"{' '.join(cmd)} failed ({proc.returncode}) in {tree}:\n{proc.stderr[-3000:]}")
    rss_kb = int(re.search(r"Maximum resident set size \(kbytes\): (\d+)", stats)[1])
    return wall, rss_kb / 1024, proc.stderr


def land_both(tree: Path, python: str, run: Path, qrels: Path, scratch: Path) -> dict[str, tuple[float, float]]:
    home = Path(tempfile.mkdtemp(prefix="home-", dir=scratch))
    try:
        cli = [python, "-m", "python_jobs.cli", "--home", str(home), "ingest"]
        out = {"trec-qrels": timed([*cli, "trec-qrels", str(qrels), "--dataset", DATASET], tree, home)[:2],
               "trec-run": timed([*cli, "trec-run", str(run), "--dataset", DATASET, "--run-id", RUN_ID],
                                 tree, home)[:2]}
        return out
    finally:
        shutil.rmtree(home, ignore_errors=True)


GX_COST = """
import tempfile, time
import polars as pl
from python_jobs.validation import expectations as validation
from python_jobs.core.lake import Lake
lake = Lake(tempfile.mkdtemp())
def docs(i):
    return pl.DataFrame({"doc_id": [f"d{i}"], "dataset": ["ds"], "doc_type": ["10-K"], "has_content": [True]})
t0 = time.perf_counter()
validation.gx()
t1 = time.perf_counter()
lake.land_one("documents", "a", docs(1))
t2 = time.perf_counter()
lake.land_one("documents", "b", docs(2))
t3 = time.perf_counter()
print(f"{t1 - t0:.3f} {t2 - t1:.3f} {t3 - t2:.3f}")
"""


def gx_cost(python: str) -> tuple[float, float, float] | None:
    """In a fresh process: (import great_expectations, the first 1-row landing after it — contexts, suite, validation,
    stored result, Data Docs —, the next landing), seconds. None on a tree without GX validation."""
    if not (PROJECT / "python_jobs" / "validation" / "expectations.py").exists():
        return None
    proc = subprocess.run([python, "-c", GX_COST], cwd=PROJECT, capture_output=True, text=True,
                          env={**os.environ, "PYTHONPATH": str(PROJECT)})
    if proc.returncode != 0:
        log(proc.stderr[-2000:])
        return None
    a, b, c = map(float, proc.stdout.split())
    return a, b, c


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--questions", type=int, default=100_000)
    ap.add_argument("--results", type=int, default=100)
    ap.add_argument("--seed", type=int, default=7)
    ap.add_argument("--baseline", default=None, help="commit to compare with (default: merge-base of HEAD and main)")
    ap.add_argument("--repeat", type=int, default=1, help="runs per side, alternating; the fastest counts")
    ap.add_argument("--workdir", type=Path, default=Path(tempfile.gettempdir()) / "finrag-bench-landing")
    ap.add_argument("--python", default=sys.executable)
    ap.add_argument("--max-ratio", type=float, default=1.5)
    ap.add_argument("--force", action="store_true", help="start even when MemAvailable looks too small")
    args = ap.parse_args()

    run, qrels = generate(args.workdir, args.questions, args.results, args.seed)
    baseline = args.baseline or git("merge-base", "HEAD", "main")
    baseline = git("rev-parse", "--short", baseline)
    head = git("rev-parse", "--short", "HEAD") + ("+dirty" if git("status", "--porcelain", "--", "python_jobs") else "")
    scratch = Path(tempfile.mkdtemp(prefix="bench-", dir=args.workdir))
    base_tree = scratch / f"baseline-{baseline}"
    git("worktree", "add", "--detach", str(base_tree), baseline)
    load_before = uptime()
    times: dict[str, dict[str, list[tuple[float, float]]]] = {"baseline": {}, "this": {}}
    try:
        for i in range(args.repeat):
            for side, tree in (("baseline", base_tree), ("this", PROJECT)):
                check_memory(args.questions * args.results, args.force)
                log(f"[{i + 1}/{args.repeat}] {side} ({tree}) ...")
                for verb, (wall, rss) in land_both(tree, args.python, run, qrels, scratch).items():
                    times[side].setdefault(verb, []).append((wall, rss))
                    log(f"    {verb}: {wall:.1f} s, peak RSS {rss:,.0f} MB")
    finally:
        git("worktree", "remove", "--force", str(base_tree))
        shutil.rmtree(scratch, ignore_errors=True)
    load_after = uptime()
    cost = gx_cost(args.python)

    n = args.questions * args.results
    print(f"landing benchmark, {time.strftime('%Y-%m-%d %H:%M')}: {args.questions:,} questions x {args.results} "
          f"results = {n:,} run lines; baseline {baseline} vs this {head}; best of {args.repeat}")
    print(f"load before: {load_before}")
    print(f"load after:  {load_after}")
    print(f"{'verb':<12} {'baseline s':>11} {'this s':>9} {'ratio':>7} {'baseline RSS MB':>16} {'this RSS MB':>12}")
    ratio_run = None
    for verb in ("trec-qrels", "trec-run"):
        b = min(times["baseline"][verb])
        t = min(times["this"][verb])
        ratio = t[0] / b[0]
        if verb == "trec-run":
            ratio_run = ratio
        print(f"{verb:<12} {b[0]:>11.1f} {t[0]:>9.1f} {ratio:>7.2f} "
              f"{max(r for _, r in times['baseline'][verb]):>16,.0f}"
              f" {max(r for _, r in times['this'][verb]):>12,.0f}")
        if args.repeat > 1:
            median_ratio = (statistics.median(w for w, _ in times['this'][verb])
                            / statistics.median(w for w, _ in times['baseline'][verb]))
            print(f"{'':<12} all runs: baseline {[round(w, 1) for w, _ in times['baseline'][verb]]}, "
                  f"this {[round(w, 1) for w, _ in times['this'][verb]]} (median this/baseline "
                  f"{median_ratio:.2f})")
    if cost:
        print(f"GX per process: import great_expectations {cost[0]:.2f} s; first landing (contexts, suite, "
              f"validation, stored result, Data Docs) {cost[1]:.2f} s; each later landing {cost[2]:.2f} s")
    verdict = "OK" if ratio_run is not None and ratio_run <= args.max_ratio else "TOO SLOW"
    print(f"trec-run ratio {ratio_run:.2f} (limit {args.max_ratio}): {verdict}")
    sys.exit(0 if verdict == "OK" else 1)


if __name__ == "__main__":
    main()

"""Benchmark (issue 32): is adding a run to the warehouse flat in the warehouse's size? Through the public CLI only.

    .venv/bin/python bench/sweeps/run.py                                  # 5,000 questions x 100 results, 100 runs
    .venv/bin/python bench/sweeps/run.py --questions 500 --runs 25        # a quick try

1. A synthetic TREC dataset: `--questions` questions whose qrels name 1-5 relevant docs (graded 1-3) and 2 judged
   non-relevant ones out of a corpus of doc ids; each question has a fixed pool of candidate docs from that corpus
   (its judged docs among them), so runs retrieve overlapping docs as real retrievers do.
2. Runs of `--results` docs per question, seeded: each a noisy ranking of the pool whose quality (how far relevant
   docs rise above the noise) varies by run. A few runs share the top quality (one of them is the best, the others
   should be tied with it); the others spread below a clear gap; the 20th and the last are of middling quality.
3. Runs 1-19 land (`finrag ingest trec-run`, one process per run, two at a time) and one `finrag build` follows.
   Then "add a run": `finrag ingest trec-run` of run 20 and `finrag build`, timed (wall, dbt's own elapsed from
   run_results.json, the slowest models, peak RSS). A no-op `finrag build`. `finrag compare` of the new run against
   the family's best (a pair the mart holds) and of a pair no model compares (computed on demand). The group tied
   with the best (`finrag sql` over mart_run_vs_best).
4. Runs 21..`--runs` land, one build; then run `--runs`+1 is added the same way and timed. The ratio of the two
   "add a run" walls (ingest + build) is printed against the target 1.25.

Peak RSS comes from /usr/bin/time -v. --home (default /tmp/finrag-sweepbench, emptied first) holds the warehouse
and files/, where each timed build's run_results.json is kept (run_results.add_run_020.json, ...): dbt's per-node
times are what explain a ratio. Not run in CI.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import subprocess
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import numpy as np

PROJECT = Path(__file__).resolve().parents[2]
DATASET = "sweepbench"
TIME = Path("/usr/bin/time")
CORPUS = 200_000  # doc ids of the collection; each question's pool is drawn from it
POOL = 150  # candidate docs per question a run ranks (the judged ones among them)
TOP_QUALITY = 1.6
# of top quality: the best is one of them, the others should tie with it. All among the first 19: a later one would
# become some families' new best, and the build then compares every run of those families with it again
TIED_RUNS = (3, 7, 12, 17)
MIDDLING = 0.8  # the quality of the added runs (the 20th and the last)
METRIC, K = "ndcg", 0  # the family the tie group and the comparisons are read from (k 0 = the whole ranking)


def log(msg: str) -> None:
    print(msg, file=sys.stderr, flush=True)


def load() -> str:
    one, five, fifteen = os.getloadavg()
    return f"load {one:.2f} {five:.2f} {fifteen:.2f}"


def ordinal(n: int) -> str:
    return f"{n}{'th' if 10 <= n % 100 <= 20 else {1: 'st', 2: 'nd', 3: 'rd'}.get(n % 10, 'th')}"


def run_id(i: int) -> str:
    return f"run_{i:03d}"


def quality(i: int, last: int) -> float:
    """A run's quality: the tied tier, the middling added runs, or a seeded spread well below the top."""
    if i in TIED_RUNS:
        return TOP_QUALITY
    if i in (20, last):
        return MIDDLING
    return float(np.random.default_rng(1000 + i).uniform(0.2, 1.2))


class Dataset:
    """Each question's candidate pool (doc ids), the grade of each (0 for unjudged and non-relevant), its difficulty."""

    def __init__(self, n_questions: int, seed: int = 1) -> None:
        rng = np.random.default_rng(seed)
        self.n = n_questions
        self.pool = np.stack([rng.choice(CORPUS, POOL, replace=False) for _ in range(n_questions)])
        self.n_rel = rng.integers(1, 6, n_questions)
        self.grade = np.zeros((n_questions, POOL), dtype=np.int64)
        for q, n_rel in enumerate(self.n_rel):
            self.grade[q, :n_rel] = rng.integers(1, 4, n_rel)  # the first n_rel of the pool are relevant
        # shared by every run, as real questions are easy or hard for all systems: what pairs the comparisons
        self.ease = rng.lognormal(0.0, 0.5, n_questions)

    def write_qrels(self, path: Path) -> None:
        with open(path, "w") as fh:
            for q in range(self.n):
                n_rel = self.n_rel[q]
                fh.writelines(f"q{q} 0 D{self.pool[q, j]:06d} {self.grade[q, j]}\n" for j in range(n_rel + 2))

    def write_run(self, path: Path, i: int, quality_: float, n_results: int) -> None:
        rng = np.random.default_rng(10_000 + i)
        scores = quality_ * self.grade * self.ease[:, None] + rng.normal(0.0, 1.0, (self.n, POOL))
        order = np.argsort(-scores, axis=1, kind="stable")[:, :n_results]
        tag = run_id(i)
        with open(path, "w") as fh:
            for q in range(self.n):
                docs, sc = self.pool[q, order[q]], scores[q, order[q]]
                fh.write("".join(f"q{q} Q0 D{d:06d} {r + 1} {s:.4f} {tag}\n"
                                 for r, (d, s) in enumerate(zip(docs, sc, strict=True))))


def finrag(home: Path, *args: str) -> tuple[float, float | None, str]:
    """(wall seconds, peak RSS in MiB or None, stdout) of `finrag ARGS` as a subprocess."""
    env = {**os.environ, "PYTHONPATH": str(PROJECT), "HF_HUB_OFFLINE": "1", "DBT_SEND_ANONYMOUS_USAGE_STATS": "False",
           "TQDM_DISABLE": "1"}
    cmd = [sys.executable, "-m", "python_jobs.cli", "--home", str(home), *args]
    if TIME.exists():
        cmd = [str(TIME), "-v", *cmd]
    t0 = time.perf_counter()
    proc = subprocess.run(cmd, cwd=PROJECT, env=env, capture_output=True, text=True)
    wall = time.perf_counter() - t0
    if proc.returncode:
        sys.exit(f"finrag {' '.join(args)} failed:\n{proc.stdout[-3000:]}\n{proc.stderr[-3000:]}")
    peak = re.search(r"Maximum resident set size \(kbytes\): (\d+)", proc.stderr)
    return wall, int(peak[1]) / 1024 if peak else None, proc.stdout


def sql(home: Path, query: str) -> list[dict]:
    return json.loads(finrag(home, "sql", "--format", "json", query)[2])


def build_figures(home: Path) -> dict:
    """dbt's own elapsed seconds, its node count and slowest nodes in the last build (run_results.json)."""
    path = home / "dbt_target" / "run_results.json"
    results = json.loads(path.read_text())
    nodes = sorted(results["results"], key=lambda r: -r["execution_time"])
    return {"dbt": results["elapsed_time"], "nodes": len(nodes),
            "top": [(r["unique_id"].split(".")[-1] if r["unique_id"].startswith("model.") else r["unique_id"]
                     .split(".")[2][:60], r["execution_time"]) for r in nodes[:8]]}


def land(home: Path, work: Path, data: Dataset, runs: range, last: int, n_results: int, jobs: int) -> float:
    """Write and ingest each run (one `finrag ingest trec-run` each, `jobs` at a time); wall seconds."""
    t0 = time.perf_counter()

    def one(i: int) -> None:
        path = work / f"{run_id(i)}.trec"
        data.write_run(path, i, quality(i, last), n_results)
        finrag(home, "ingest", "trec-run", str(path), "--dataset", DATASET, "--run-id", run_id(i))
        path.unlink()  # 100 runs of 500k lines would keep ~2 GB on disk for nothing
        log(f"  landed {run_id(i)} ({time.perf_counter() - t0:.0f}s)")

    # the lake's writer lock serialises the landings; two processes overlap one's start-up with the other's work
    with ThreadPoolExecutor(jobs) as pool:
        list(pool.map(one, runs))
    return time.perf_counter() - t0


def timed_build(home: Path, label: str) -> dict:
    results = home / "dbt_target" / "run_results.json"
    before = results.stat().st_mtime_ns if results.exists() else None
    wall, peak, _ = finrag(home, "build")
    if not results.exists() or results.stat().st_mtime_ns == before:
        # a no-op build does not start dbt: the run_results.json there is an earlier build's, not this one's
        print(f"{label}: finrag build {wall:.2f}s (a no-op: dbt did not run)  [{load()}]", flush=True)
        return {"wall": wall, "peak": peak, "dbt": 0.0, "nodes": 0, "top": []}
    figures = {"wall": wall, "peak": peak, **build_figures(home)}
    # kept beside the work files: the next build overwrites it, and per-node times are what explain a ratio
    kept = home.parent / "files" / f"run_results.{label.replace(' ', '_')}.json"
    shutil.copy(results, kept)
    print(f"{label}: finrag build {wall:.2f}s (dbt {figures['dbt']:.2f}s, {figures['nodes']} nodes, peak "
          f"{peak or float('nan'):.0f} MiB)  [{load()}]", flush=True)
    return figures


def add_run(home: Path, work: Path, data: Dataset, i: int, last: int, n_results: int) -> dict:
    """The measured step: ingest run i, then `finrag build`."""
    path = work / f"{run_id(i)}.trec"
    data.write_run(path, i, quality(i, last), n_results)
    w_ingest, m_ingest, _ = finrag(home, "ingest", "trec-run", str(path), "--dataset", DATASET, "--run-id", run_id(i))
    built = timed_build(home, f"add {run_id(i)}")
    out = {"ingest": w_ingest, "ingest_peak": m_ingest, **built, "total": w_ingest + built["wall"]}
    print(f"  add a run ({i - 1} -> {i} runs): ingest {w_ingest:.2f}s + build {built['wall']:.2f}s = "
          f"{out['total']:.2f}s; slowest nodes: " + ", ".join(f"{n} {s:.2f}s" for n, s in built["top"]), flush=True)
    return out


def comparisons(home: Path, new: int, other: int) -> dict:
    """The figures below, or NaNs and the error printed: a failed query should not lose the add-a-run figures."""
    try:
        return _comparisons(home, new, other)
    except (Exception, SystemExit) as exc:  # noqa: BLE001 - finrag() exits on a failed command
        print(f"  comparisons failed: {str(exc)[-2000:]}", flush=True)
        return {"compare_best": float("nan"), "compare_pair": float("nan"), "tied": -1, "best": None}


def _comparisons(home: Path, new: int, other: int) -> dict:
    """`finrag compare` of the new run against the best (the mart's row) and of an uncompared pair (on demand);
    the tie group of the family, and its spread over every family of the dataset."""
    family = sql(home, f"select granularity, best_run_id, n_runs_in_family from mart_run_vs_best where dataset = "
                       f"'{DATASET}' and metric = '{METRIC}' and k = {K} and run_id = '{run_id(new)}' "
                       "order by granularity limit 1")[0]
    best, granularity = family["best_run_id"], family["granularity"]
    args = ("--metric", METRIC, "--granularity", granularity, "--k", str(K), "--format", "json")
    w_best, _, out_best = finrag(home, "compare", "--run-a", best, "--run-b", run_id(new), *args)
    w_pair, _, out_pair = finrag(home, "compare", "--run-a", run_id(other), "--run-b", run_id(new), *args)
    row_best, row_pair = json.loads(out_best)[0], json.loads(out_pair)[0]
    tied = sql(home, f"select run_id, mean from mart_run_vs_best where dataset = '{DATASET}' and metric = "
                     f"'{METRIC}' and k = {K} and granularity = '{granularity}' and tied_with_best order by mean desc")
    spread = sql(home, "select count(*) as families, min(n) as min_tied, median(n) as median_tied, max(n) as max_tied "
                       "from (select metric, granularity, k, count(*) filter (where tied_with_best) as n "
                       f"from mart_run_vs_best where dataset = '{DATASET}' group by all)")[0]
    print(f"  {METRIC}@{granularity} k={K}: best {best} of {family['n_runs_in_family']} runs; tied with it "
          f"({len(tied)}): " + ", ".join(f"{r['run_id']} {r['mean']:.4f}" for r in tied), flush=True)
    print(f"  tie group over all {spread['families']} families: min {spread['min_tied']}, median "
          f"{spread['median_tied']}, max {spread['max_tied']}", flush=True)
    print(f"  finrag compare {run_id(new)} vs best {best}: {w_best:.2f}s (source {row_best.get('source')}, delta "
          f"{row_best['delta']:.4f}, p_tukey {row_best.get('p_tukey')}); vs {run_id(other)} (uncompared pair): "
          f"{w_pair:.2f}s (source {row_pair.get('source')}, delta {row_pair['delta']:.4f})", flush=True)
    return {"compare_best": w_best, "compare_pair": w_pair, "tied": len(tied), "best": best}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--questions", type=int, default=5000)
    ap.add_argument("--results", type=int, default=100)
    ap.add_argument("--runs", type=int, default=100, help="runs before the second measured add (the default 100)")
    ap.add_argument("--home", type=Path, default=Path("/tmp/finrag-sweepbench"),
                    help="the warehouse (emptied first) and the work files")
    ap.add_argument("--jobs", type=int, default=2, help="ingest processes at once while landing the bulk")
    args = ap.parse_args()
    if args.runs < 21:
        sys.exit("--runs must be at least 21 (the first measured add is the 20th run)")
    last = args.runs + 1
    shutil.rmtree(args.home, ignore_errors=True)
    home, work = args.home / "warehouse", args.home / "files"
    work.mkdir(parents=True)
    print(f"date {time.strftime('%Y-%m-%d %H:%M')}  {load()}  cores {os.cpu_count()}  {args.questions:,} questions x "
          f"{args.results} results, runs 19 + 1 and {args.runs} + 1", flush=True)
    t0 = time.perf_counter()
    data = Dataset(args.questions)
    data.write_qrels(work / "qrels.txt")
    w_q, _, _ = finrag(home, "ingest", "trec-qrels", str(work / "qrels.txt"), "--dataset", DATASET)
    print(f"dataset written in {time.perf_counter() - t0:.1f}s; qrels ingested in {w_q:.1f}s", flush=True)

    w_land = land(home, work, data, range(1, 20), last, args.results, args.jobs)
    print(f"landed runs 1-19 in {w_land:.1f}s  [{load()}]", flush=True)
    timed_build(home, "19 runs")
    small = add_run(home, work, data, 20, last, args.results)
    noop_small, _, _ = finrag(home, "build")
    print(f"  no-op finrag build at 20 runs: {noop_small:.2f}s", flush=True)
    cmp_small = comparisons(home, 20, 1)

    w_land = land(home, work, data, range(21, args.runs + 1), last, args.results, args.jobs)
    print(f"landed runs 21-{args.runs} in {w_land:.1f}s  [{load()}]", flush=True)
    timed_build(home, f"{args.runs} runs")
    large = add_run(home, work, data, last, last, args.results)
    noop_large, _, _ = finrag(home, "build")
    print(f"  no-op finrag build at {last} runs: {noop_large:.2f}s", flush=True)
    cmp_large = comparisons(home, last, 21)

    print(f"\nadd a run: 20th {small['total']:.2f}s (ingest {small['ingest']:.2f} + build {small['wall']:.2f}, dbt "
          f"{small['dbt']:.2f}, peak {small['peak'] or float('nan'):.0f} MiB); {ordinal(last)} {large['total']:.2f}s "
          f"(ingest {large['ingest']:.2f} + build {large['wall']:.2f}, dbt {large['dbt']:.2f}, peak "
          f"{large['peak'] or float('nan'):.0f} MiB)")
    print(f"ratio {large['total'] / small['total']:.3f} (target <= 1.25); build only "
          f"{large['wall'] / small['wall']:.3f}, dbt only {large['dbt'] / small['dbt']:.3f}")
    print(f"no-op build {noop_small:.2f}s -> {noop_large:.2f}s; compare vs best {cmp_small['compare_best']:.2f}s -> "
          f"{cmp_large['compare_best']:.2f}s, uncompared pair {cmp_small['compare_pair']:.2f}s -> "
          f"{cmp_large['compare_pair']:.2f}s; tied with the best {cmp_small['tied']} of 20 -> {cmp_large['tied']} "
          f"of {last}")
    print(f"total {time.perf_counter() - t0:.0f}s  [{load()}]")


if __name__ == "__main__":
    main()

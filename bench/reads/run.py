"""Benchmark: every read of a warehouse that holds a sweep, and adding a run to it at 20 and at 100 runs (issue 58).

    .venv/bin/python -m bench.reads.run                               # 5,000 x 100, the figures in README.md
    .venv/bin/python -m bench.reads.run --questions 500 --runs 25     # a quick check

It runs from the checkout as a module: the data and the landing steps are bench/sweeps/run.py's (its synthetic TREC
dataset, seeded runs of `--results` docs per question, the timed add); the bulk lands in this process (`land`).

1. The qrels and runs 1-19 land, one `finrag build`; then run 20 is added and timed: its `finrag ingest trec-run`
   plus `finrag build` (wall), dbt's own elapsed time, the slowest nodes and publishing (the on-run-end hook) from
   run_results.json.
2. Runs 21..`--runs` land, one build; then run `--runs`+1 is added and timed the same way. The ratio of the two adds
   (ingest + build) is printed against the target 1.25, and each add against the target 15 s.
3. On that home (`--runs`+1 runs), each read is the wall time of the whole process as a user starts it
   (`.venv/bin/finrag ...`), median of `--repeats`: `finrag --help`, `finrag sql` over the leaderboard, run vs best
   and one question's drill-down, `finrag report` of a run, `finrag compare` of a pair mart_run_comparison holds and
   of one it does not (computed on demand), `finrag gate` of 3 metrics x 3 slices, `finrag ls`, and a no-op
   `finrag build`. Target: each <= 1 s (the no-op build <= 0.5 s).

The dashboard's pages are not timed here (see README.md). --home (default /tmp/finrag-readsbench, emptied first)
holds the warehouse and files/, where each timed build's run_results.json is kept. Not run in CI.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import shutil
import statistics
import subprocess
import sys
import time
from pathlib import Path

from bench.sweeps import run as sweeps  # the dataset, the landing and the timed add of the sweeps bench

PROJECT = sweeps.PROJECT
FINRAG = PROJECT / ".venv" / "bin" / "finrag"
DATASET = sweeps.DATASET
GATE = """\
dataset: {dataset}
kind: retrieval
baseline: best
min_questions: 10
slices: [dataset, question_type, doc_type]
metrics:
  - {{metric: ndcg, granularity: chunk, k: 10, margin: 0.02}}
  - {{metric: map, granularity: chunk, k: 0, margin: 0.02}}
  - {{metric: recall, granularity: chunk, k: 100, margin: 0.02}}
"""
READ_TARGET, NOOP_TARGET, ADD_TARGET, RATIO_TARGET = 1.0, 0.5, 15.0, 1.25


def user_finrag(home: Path, *args: str) -> tuple[float, subprocess.CompletedProcess[str]]:
    """`finrag ARGS` as a user starts it (the venv's entry point); its wall seconds (its CPU seconds, user + system,
    in `proc.cpu`: what a loaded machine does not inflate). Exit 0, or 1 with an answer printed (a gate that fails),
    is a read that worked. Without PYTHONDONTWRITEBYTECODE, as a user's shell: with it, every process compiles
    every module it imports (some machines set it; the Makefile unsets it too)."""
    env = {**{k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}, "FINRAG_HOME": str(home),
           "HF_HUB_OFFLINE": "1", "TQDM_DISABLE": "1", "DBT_SEND_ANONYMOUS_USAGE_STATS": "False"}
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.perf_counter()
    proc = subprocess.run([str(FINRAG), *args], cwd=PROJECT, env=env, capture_output=True, text=True)
    wall = time.perf_counter() - t0
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    proc.cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)  # type: ignore[attr-defined]
    if proc.returncode not in (0, 1) or (proc.returncode == 1 and not proc.stdout):
        raise RuntimeError(f"finrag {' '.join(args)} exited {proc.returncode}:\n{proc.stdout[-2000:]}\n"
                           f"{proc.stderr[-2000:]}")
    return wall, proc


def land(home: Path, work: Path, data: sweeps.Dataset, runs: range, last: int, n_results: int) -> float:
    """The bulk (not timed as a step): bench/sweeps' runs, written by its generator and landed by the function
    `finrag ingest trec-run` calls, one after the other in this process. The same rows land, without an
    interpreter's start-up and imports per run (7 CPU-seconds each here: 12 CPU-minutes over 100 runs)."""
    from python_jobs.core.lake import Lake
    from python_jobs.sources.trec import ingest_trec_run

    t0 = time.perf_counter()
    for i in runs:
        path = work / f"{sweeps.run_id(i)}.trec"
        data.write_run(path, i, sweeps.quality(i, last), n_results)
        ingest_trec_run(Lake(home), path=path, dataset=DATASET, run_id=sweeps.run_id(i), fmt="trec",
                        only_known_questions=False)
        path.unlink()
        sweeps.log(f"  landed {sweeps.run_id(i)} ({time.perf_counter() - t0:.0f}s)")
    return time.perf_counter() - t0


def publishing_seconds(run_results: dict) -> float:
    """The on-run-end hook's time (publishing the marts) in a build's run_results.json."""
    return sum(r["execution_time"] for r in run_results["results"]
               if r["unique_id"].startswith("operation.") and "on-run-end" in r["unique_id"])


def add_a_run(home: Path, work: Path, data: sweeps.Dataset, i: int, last: int, n_results: int) -> dict:
    out = sweeps.add_run(home, work, data, i, last, n_results)
    results = json.loads((home / "dbt_target" / "run_results.json").read_text())
    out["publishing"] = publishing_seconds(results)
    out["models"] = sum(r["execution_time"] for r in results["results"] if r["unique_id"].startswith("model."))
    out["tests"] = sum(r["execution_time"] for r in results["results"] if r["unique_id"].startswith("test."))
    out["fixed"] = out["wall"] - out["dbt"]  # the process, dbt's start-up and parsing, outside its node clock
    print(f"  publishing (on-run-end) {out['publishing']:.2f}s; models {out['models']:.2f}s, tests "
          f"{out['tests']:.2f}s (node times, two threads); outside dbt's elapsed {out['fixed']:.2f}s", flush=True)
    return out


def sql_rows(home: Path, query: str) -> list[dict]:
    return json.loads(user_finrag(home, "sql", "--format", "json", query)[1].stdout)


def reads(home: Path, work: Path, last: int, repeats: int) -> list[tuple[str, float, float, str]]:
    """Each read's median wall and CPU seconds over `repeats`, with what it answered."""
    new, other = sweeps.run_id(last), sweeps.run_id(21 if last > 21 else 1)  # a pair no model compares
    family = sql_rows(home, f"select granularity, best_run_id from mart_run_vs_best where dataset = '{DATASET}' "
                            f"and metric = '{sweeps.METRIC}' and k = {sweeps.K} and run_id = '{new}' "
                            "order by granularity limit 1")[0]
    gate = work / "gate.yaml"
    gate.write_text(GATE.format(dataset=DATASET))
    compare = ("--metric", sweeps.METRIC, "--granularity", family["granularity"], "--k", str(sweeps.K),
               "--format", "json")
    cases = [
        ("finrag --help", ("--help",)),
        ("finrag sql: leaderboard (nDCG@10, chunk)",
         ("sql", "--format", "json", "select run_id, mean, n_questions from mart_retrieval_leaderboard where "
          f"dataset = '{DATASET}' and metric = 'ndcg' and k = 10 and granularity = 'chunk' order by mean desc")),
        ("finrag sql: run vs best (one run)",
         ("sql", "--format", "json", f"select * from mart_run_vs_best where run_id = '{new}'")),
        ("finrag sql: one question's drill-down (every run)",
         ("sql", "--format", "json", "select run_id, rank, doc_id, chunk_hit, chunk_rank from "
          "mart_drilldown_results where question_id = 'q42' order by run_id, rank")),
        ("finrag report (one run, table)", ("report", "--run-id", new)),
        ("finrag compare: new run vs best (mart row)",
         ("compare", "--run-a", family["best_run_id"], "--run-b", new, *compare)),
        (f"finrag compare: {other} vs new run (on demand)", ("compare", "--run-a", other, "--run-b", new, *compare)),
        ("finrag gate: 3 metrics x 3 slices", ("gate", str(gate), "--candidate", new, "--format", "json")),
        ("finrag ls", ("ls",)),
        ("finrag build (no-op)", ("build",)),
    ]
    rows = []
    for label, args in cases:
        try:
            walls, cpus, proc = [], [], None
            for _ in range(repeats):
                wall, proc = user_finrag(home, *args)
                walls.append(wall)
                cpus.append(proc.cpu)  # type: ignore[attr-defined]
            answer = describe(args, proc)
            rows.append((label, statistics.median(walls), statistics.median(cpus), answer))
            print(f"  {label}: {statistics.median(walls):.2f}s (each {', '.join(f'{w:.2f}' for w in walls)}; CPU "
                  f"{statistics.median(cpus):.2f}s) {answer}  [{sweeps.load()}]", flush=True)
        except (RuntimeError, ValueError, KeyError, IndexError) as exc:  # a failed read keeps the other figures
            rows.append((label, float("nan"), float("nan"), str(exc).splitlines()[0]))
            print(f"  {label}: FAILED {str(exc)[-1500:]}", flush=True)
    return rows


def describe(args: tuple[str, ...], proc: subprocess.CompletedProcess[str]) -> str:
    """A few words on what a read answered, so a fast wrong answer shows."""
    verb = args[0]
    if verb == "sql":
        return f"({len(json.loads(proc.stdout))} rows)"
    if verb == "compare":
        row = json.loads(proc.stdout)[0]
        return f"(source {row.get('source')}, delta {row['delta']:.4f})"
    if verb == "gate":
        result = json.loads(proc.stdout)
        tested = sum(r["verdict"] != "not tested" for r in result["rows"])
        return f"({len(result['rows'])} rows, {tested} tested, verdict {result['verdict']})"
    return f"({len(proc.stdout.splitlines())} lines)"


def ratio(a: float, b: float) -> str:
    return f"{b / a:.3f}" if a else "-"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--questions", type=int, default=5000)
    ap.add_argument("--results", type=int, default=100)
    ap.add_argument("--runs", type=int, default=100, help="runs before the second measured add (the default 100)")
    ap.add_argument("--repeats", type=int, default=3, help="each read's runs (the median is reported)")
    ap.add_argument("--home", type=Path, default=Path("/tmp/finrag-readsbench"),
                    help="the warehouse (emptied first) and the work files")
    ap.add_argument("--reuse", type=int, metavar="N",
                    help="keep --home as an earlier run of this bench left it (same --questions and --results), "
                         "build it (timed: the first build after a code change), add run N and time it, then the "
                         "reads at N runs: the same warehouse before and after a change")
    ap.add_argument("--reads-only", type=int, metavar="N",
                    help="only the reads, on the warehouse of --home as an earlier run left it (N runs, the newest "
                         "run N)")
    ap.add_argument("--no-pages", dest="pages", action="store_false",
                    help="leave out the dashboard's pages (timed in headless Chromium otherwise)")
    args = ap.parse_args()
    if args.reads_only is not None:
        print(f"date {time.strftime('%Y-%m-%d %H:%M')}  {sweeps.load()}  reads at {args.reads_only} runs (wall of "
              f"the whole process, median of {args.repeats})", flush=True)
        home, work = args.home / "warehouse", args.home / "files"
        print_reads(reads(home, work, args.reads_only, args.repeats)
                    + (pages(home, work, args.repeats) if args.pages else []), args.reads_only)
        print(f"[{sweeps.load()}]")
        return
    if args.reuse is None and args.runs < 21:
        sys.exit("--runs must be at least 21 (the first measured add is the 20th run)")
    home, work = args.home / "warehouse", args.home / "files"
    commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=PROJECT, capture_output=True,
                            text=True).stdout.strip()
    t0 = time.perf_counter()
    data = sweeps.Dataset(args.questions)
    if args.reuse is not None:
        last = args.reuse
        print(f"date {time.strftime('%Y-%m-%d %H:%M')}  commit {commit}  {sweeps.load()}  cores {os.cpu_count()}  "
              f"{args.questions:,} questions x {args.results} results, the warehouse of --home, adding "
              f"{sweeps.run_id(last)}", flush=True)
        sweeps.timed_build(home, "catch-up")
        large = add_a_run(home, work, data, last, last, args.results)
        print(f"\nreads at {last} runs (wall of the whole process, median of {args.repeats}):", flush=True)
        print_reads(reads(home, work, last, args.repeats) + (pages(home, work, args.repeats) if args.pages else []),
                    last)
        print(f"add {sweeps.ordinal(last)}: {large['total']:.2f}s (ingest {large['ingest']:.2f} + build "
              f"{large['wall']:.2f}; dbt {large['dbt']:.2f}, publishing {large['publishing']:.2f}, outside dbt's "
              f"elapsed {large['fixed']:.2f})")
        print(f"slowest nodes adding {sweeps.run_id(last)}: " + ", ".join(f"{n} {s:.2f}s" for n, s in large["top"]))
        print(f"total {time.perf_counter() - t0:.0f}s  [{sweeps.load()}]")
        return

    last = args.runs + 1
    shutil.rmtree(args.home, ignore_errors=True)
    work.mkdir(parents=True)
    print(f"date {time.strftime('%Y-%m-%d %H:%M')}  commit {commit}  {sweeps.load()}  cores {os.cpu_count()}  "
          f"{args.questions:,} questions x {args.results} results, runs 19 + 1 and {args.runs} + 1", flush=True)
    data.write_qrels(work / "qrels.txt")
    sweeps.finrag(home, "ingest", "trec-qrels", str(work / "qrels.txt"), "--dataset", DATASET)

    w_land = land(home, work, data, range(1, 20), last, args.results)
    print(f"landed runs 1-19 in {w_land:.1f}s  [{sweeps.load()}]", flush=True)
    sweeps.timed_build(home, "19 runs")
    small = add_a_run(home, work, data, 20, last, args.results)

    w_land = land(home, work, data, range(21, args.runs + 1), last, args.results)
    print(f"landed runs 21-{args.runs} in {w_land:.1f}s  [{sweeps.load()}]", flush=True)
    sweeps.timed_build(home, f"{args.runs} runs")
    large = add_a_run(home, work, data, last, last, args.results)

    print(f"\nreads at {last} runs (wall of the whole process, median of {args.repeats}):", flush=True)
    print_reads(reads(home, work, last, args.repeats) + (pages(home, work, args.repeats) if args.pages else []),
                last)
    print(f"\n| add a run | 20th | {sweeps.ordinal(last)} | ratio |\n|---|---|---|---|")
    for key, name in (("total", "ingest + build"), ("ingest", "ingest"), ("wall", "build"), ("dbt", "dbt elapsed"),
                      ("fixed", "build outside dbt's elapsed"), ("publishing", "publishing (on-run-end)"),
                      ("models", "models (node sum)"), ("tests", "tests (node sum)")):
        print(f"| {name} | {small[key]:.2f} | {large[key]:.2f} | {ratio(small[key], large[key])} |")
    print(f"ratio {ratio(small['total'], large['total'])} (target <= {RATIO_TARGET}); add {sweeps.ordinal(last)} "
          f"{large['total']:.2f}s (target <= {ADD_TARGET:g}s)")
    for label, fig in ((sweeps.run_id(20), small), (sweeps.run_id(last), large)):
        print(f"slowest nodes adding {label}: " + ", ".join(f"{n} {s:.2f}s" for n, s in fig["top"]))
    print(f"total {time.perf_counter() - t0:.0f}s  [{sweeps.load()}]")


def pages(home: Path, work: Path, repeats: int) -> list[tuple[str, float, float, str]]:
    """Each dashboard page's time to content in headless Chromium, median of `repeats`: from `driver.get` of its url
    to its script run finished (Streamlit's `stApp` says `data-test-script-state="notRunning"`) with the page's main
    block drawn and no exception; the dashboard is `finrag dashboard` on --home, as the browser tests start it
    (tests/support/browser.py). [] without Debian's chromium and chromium-driver."""
    sys.path.insert(0, str(PROJECT / "tests"))
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support.ui import WebDriverWait

    from dashboards.pages import PAGES
    from support.browser import CHROMEDRIVER, CHROMIUM, Dashboard, chrome

    if not (CHROMIUM.exists() and CHROMEDRIVER.exists()):
        print("  dashboard pages: not timed (no chromium / chromium-driver)", flush=True)
        return []
    os.environ.pop("PYTHONDONTWRITEBYTECODE", None)  # the dashboard as a user starts it (see user_finrag)

    def drawn(driver) -> str | bool:
        state = driver.execute_script(
            "const a = document.querySelector('[data-testid=stApp]');"
            "return a ? a.getAttribute('data-test-script-state') : null")
        main = driver.find_elements(By.CSS_SELECTOR, '[data-testid="stMain"]')
        text = main[0].text if main else ""
        return text if state == "notRunning" and text.strip() else False

    rows = []
    server = Dashboard(home, work / "dashboard.log")
    driver = chrome(work / "chromium")
    try:
        for page in PAGES:
            url = f"{server.url}/{page.url_path}"
            driver.get(url)  # a first visit: the server's caches of this published state are warm for the timed ones
            WebDriverWait(driver, 300, poll_frequency=0.05).until(drawn)
            walls = []
            for _ in range(repeats):
                t0 = time.perf_counter()
                driver.get(url)
                text = WebDriverWait(driver, 300, poll_frequency=0.05).until(drawn)
                walls.append(time.perf_counter() - t0)
            failed = driver.find_elements(By.CSS_SELECTOR, '[data-testid="stException"]')
            answer = "(EXCEPTION)" if failed else f"({len(text.splitlines())} lines)"
            rows.append((f"dashboard: {page.title}", statistics.median(walls), float("nan"), answer))
            print(f"  dashboard {page.title}: {statistics.median(walls):.2f}s (each "
                  f"{', '.join(f'{w:.2f}' for w in walls)}) {answer}  [{sweeps.load()}]", flush=True)
    finally:
        driver.quit()
        server.stop()
    return rows


def print_reads(rows: list[tuple[str, float, float, str]], last: int) -> None:
    print(f"\n| read at {last} runs | median wall s | median CPU s | target |\n|---|---|---|---|")
    for label, wall, cpu, answer in rows:
        target = NOOP_TARGET if "no-op" in label else READ_TARGET
        print(f"| {label} {answer} | {wall:.2f} | {cpu:.2f} | {'ok' if wall <= target else f'> {target:g}'} |")


if __name__ == "__main__":
    main()

"""Benchmark: `finrag build` of the retrieval metrics against pytrec_eval, both from the same TREC files.

    .venv/bin/python bench/retrieval_metrics/run.py --questions 100000                       # the speed ratios
    .venv/bin/python bench/retrieval_metrics/run.py --questions 10000 --incremental-runs 20  # incremental vs full
    .venv/bin/python bench/retrieval_metrics/run.py --questions 1000000 --skip-references     # the scale figure
    .venv/bin/python bench/retrieval_metrics/run.py --questions 100000 --model-peaks         # each model's peak
    .venv/bin/python bench/retrieval_metrics/run.py --questions 1000000 --skip-references --shape pooled  # pooled

1. A TREC qrels file (1-5 relevant docs per question graded 1-3, plus 2 judged non-relevant) and a TREC run file of
   `--results` (100) docs per question are written. Scores carry ties: many are equal, and some differ only below
   float32 precision (1.00000001 vs 1.0), which trec_eval and pytrec_eval read as ties broken by docno descending.
   `--shape pooled` writes another tool's output instead: each question's lines in no order, scores apart from the
   rank column in twentieths (ties everywhere), and qrels judged over pools of 400 docs per question.
2. They go in as users put them in, through the CLI: `finrag ingest trec-qrels`, `finrag ingest trec-run`.
3. `finrag build` (dbt start-up, every model and data test, publishing) is timed as a subprocess, and the
   retrieval-metric models' own execution times are summed from run_results.json (every model tagged
   `retrieval_metrics`: ranking, judgments, per-question scores at chunk, page and doc granularity, leaderboard,
   slices), and so are those of every model of the retrieval chain (every model downstream of the lake's
   retrieval_results in dbt's graph: drill-down, judged results, run comparison and the rest; the issue-46 count).
   With --model-peaks each chain model is then rebuilt alone (--full-refresh, no tests) for its own peak RSS.
4. pytrec_eval parses the same two files (`parse_qrel`, `parse_run`) and evaluates the same measures (map,
   recip_rank, ndcg, and P / recall / ndcg_cut / map_cut at 1, 3, 5, 10, 20, 100); its time includes the parsing.
   The leaderboard's chunk-level means are checked against it (max abs difference printed).
5. With --incremental-runs N: N more runs are ingested and built; then one more is ingested and `finrag build` is
   timed against `finrag build --full-refresh` of the same N + 2 runs (wall, tests and publishing included). The
   plain build builds what the new run reaches (the models downstream of retrieval_results and retrieval_runs, their
   data tests on the new run's rows); the full refresh recomputes every model and tests every row.
6. Each ratio is printed with its floor, measured in the same run: a first `finrag build` of an empty lake (dbt
   start-up and parse, every model and data test on no rows, publishing) against pytrec_eval, and a `finrag build`
   of one view of the built home (no data test, no publishing) against the full refresh. A ratio cannot go below
   its floor whatever the models do.

With --skip-references (a size pytrec_eval cannot hold in memory), `--sample N` (default 10,000) still checks the
built warehouse: the first N questions of the same files go to pytrec_eval, and their per-question scores
(fct_question_metric_scores, chunk granularity) are averaged over the same questions and compared.

Peak memory and CPU seconds (user + system) of each subprocess are read from /usr/bin/time -v when present. Not run
in CI.
"""

from __future__ import annotations

import argparse
import json
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

from python_jobs.warehouse.build_failures import profile_memory_limit

PROJECT = Path(__file__).resolve().parents[2]
KS = (1, 3, 5, 10, 20, 100)
DATASET = "bench"
TIME = Path("/usr/bin/time")
DUCKDB_THREADS: int | None = None  # --duckdb-threads (default: the profile's, FINRAG_DUCKDB_THREADS or 1)


def log(msg: str) -> None:
    print(msg, file=sys.stderr, flush=True)


# the run files' shapes (--shape): `ranked` is a run as a ranker writes it; `pooled` is another tool's TREC output as
# users bring it - lines in no order, scores unrelated to the rank column and coarse (ties everywhere), and qrels
# judged over pools of 400 documents per question (a TREC-style pooled assessment: most judgments are 0)
SHAPES = ("ranked", "pooled")
POOL = 400
POOLED_DOCS = 1000  # each question's candidate documents in the pooled shape (the pool and the run draw from them)


def write_qrels(path: Path, n_questions: int, seed: int, shape: str = "ranked") -> None:
    rng = np.random.default_rng(seed)
    with open(path, "w") as fh:
        for q in range(n_questions):
            n_rel = int(rng.integers(1, 6))
            if shape == "pooled":
                slots = rng.choice(POOLED_DOCS, POOL, replace=False)
                grades = [*rng.integers(1, 4, n_rel), *([0] * (POOL - n_rel))]
            else:
                slots = rng.choice(300, n_rel + 2, replace=False)
                grades = list(rng.integers(1, 4, n_rel)) + [0, 0]
            fh.writelines(f"q{q} 0 q{q}_d{s} {g}\n" for s, g in zip(slots, grades, strict=True))


def write_run(path: Path, n_questions: int, n_results: int, seed: int, tag: str, shape: str = "ranked") -> None:
    """`ranked`: docs 0..299 of each question in a random order; scores fall with the position in coarse steps (so
    many are tied) and every tenth question has a pair that differs only below float32 precision. `pooled`: docs of
    0..999, each question's lines shuffled, the rank column 1..n in file order and the scores drawn apart from it in
    twentieths (ties at every score; trec_eval ranks by score, then docno descending, and ignores the rank column)."""
    rng = np.random.default_rng(seed)
    with open(path, "w") as fh:
        for q in range(n_questions):
            if shape == "pooled":
                slots = rng.choice(POOLED_DOCS, n_results, replace=False)
                scores = rng.integers(0, 21, n_results) / 20
                fh.writelines(f"q{q} Q0 q{q}_d{s} {i + 1} {sc:.2f} {tag}\n"
                              for i, (s, sc) in enumerate(zip(slots, scores, strict=True)))
                continue
            slots = rng.choice(300, n_results, replace=False)
            scores = np.round(np.linspace(n_results, 1, n_results) / 7) * 7 / n_results
            lines = [f"q{q} Q0 q{q}_d{s} {i + 1} {sc:.8f} {tag}\n" for i, (s, sc) in enumerate(zip(slots, scores,
                                                                                                  strict=True))]
            if q % 10 == 0:
                lines[0] = f"q{q} Q0 q{q}_d{slots[0]} 1 1.00000001 {tag}\n"
                lines[1] = f"q{q} Q0 q{q}_d{slots[1]} 2 1.00000000 {tag}\n"
            fh.writelines(lines)


CPU_SECONDS: dict[str, float] = {}  # CPU seconds (user + system, /usr/bin/time -v) of the last run of each verb


def finrag(home: Path, *args: str) -> tuple[float, float | None, str]:
    """(wall seconds, peak RSS in MiB or None, stderr) of `finrag ARGS` as a subprocess; its CPU seconds (user +
    system) go to CPU_SECONDS under its first two arguments ("ingest trec-qrels", "build ...")."""
    env = {**os.environ, "FINRAG_HOME": str(home), "DBT_SEND_ANONYMOUS_USAGE_STATS": "False", "TQDM_DISABLE": "1",
           **({"FINRAG_DUCKDB_THREADS": str(DUCKDB_THREADS)} if DUCKDB_THREADS else {})}
    cmd = [sys.executable, "-m", "python_jobs.cli", "--home", str(home), *args]
    if TIME.exists():
        cmd = [str(TIME), "-v", *cmd]
    t0 = time.perf_counter()
    proc = subprocess.run(cmd, cwd=PROJECT, env=env, capture_output=True, text=True)
    wall = time.perf_counter() - t0
    if proc.returncode:
        sys.exit(f"finrag {' '.join(args)} failed:\n{proc.stdout[-3000:]}\n{proc.stderr[-3000:]}")
    peak = re.search(r"Maximum resident set size \(kbytes\): (\d+)", proc.stderr)
    cpu = re.findall(r"(?:User|System) time \(seconds\): ([\d.]+)", proc.stderr)
    CPU_SECONDS[" ".join(args[:2])] = sum(map(float, cpu)) if cpu else float("nan")
    return wall, int(peak[1]) / 1024 if peak else None, proc.stderr


def metric_model_times(home: Path) -> dict[str, float]:
    """Execution seconds of each model tagged `retrieval_metrics` in the last build (run_results.json)."""
    manifest = json.loads((home / "dbt_target" / "manifest.json").read_text())
    tagged = {uid for uid, n in manifest["nodes"].items() if "retrieval_metrics" in n.get("tags", [])}
    results = json.loads((home / "dbt_target" / "run_results.json").read_text())["results"]
    return {r["unique_id"].split(".")[-1]: r["execution_time"] for r in results if r["unique_id"] in tagged}


def chain_models(home: Path) -> list[str]:
    """The retrieval chain: every model downstream of the lake's retrieval_results (dbt's child map), in dbt's
    order: what a build runs for a new run."""
    manifest = json.loads((home / "dbt_target" / "manifest.json").read_text())
    children, seen = manifest["child_map"], set()
    todo = [uid for uid in children if uid.startswith("source.") and uid.endswith(".retrieval_results")]
    while todo:
        uid = todo.pop()
        for child in children.get(uid, []):
            if child not in seen and child.startswith("model."):
                seen.add(child)
                todo.append(child)
    return sorted(uid.split(".")[-1] for uid in seen)


def chain_model_times(home: Path) -> dict[str, float]:
    """Execution seconds of each model of the retrieval chain in the last build."""
    chain = set(chain_models(home))
    results = json.loads((home / "dbt_target" / "run_results.json").read_text())["results"]
    return {r["unique_id"].split(".")[-1]: r["execution_time"] for r in results
            if r["unique_id"].startswith("model.") and r["unique_id"].split(".")[-1] in chain}


def model_peaks(home: Path) -> None:
    """Each chain model rebuilt alone (--full-refresh, no test, no publishing) in its own `finrag build`: its
    execution time and the process's peak RSS, beside a build of one view (dbt and DuckDB with nothing to hold)."""
    _, base, _ = finrag(home, "build", "--select", "stg_lake__retrieval_runs", "--exclude-resource-type", "test",
                        "--no-publish")
    print(f"per-model peaks (each model alone; a one-view build peaks at {base or float('nan'):.0f} MiB):")
    for model in chain_models(home):
        _, peak, _ = finrag(home, "build", "--select", model, "--full-refresh", "--exclude-resource-type", "test",
                            "--no-publish")
        seconds = sum(chain_model_times(home).values())
        print(f"  {model:45s} {seconds:7.2f} s  peak {peak or float('nan'):6.0f} MiB")


def write_floor(home: Path, work: Path) -> tuple[float, float]:
    """What the retrieval chain cannot do without, timed on one DuckDB thread as the build runs each model: writing
    the rows its table models hold (each copied alone into a scratch DuckDB file), and one scan of the lake's
    results. No model design computes its rows in less than it takes to store them."""
    import duckdb

    scratch = work / "write-floor.duckdb"
    scratch.unlink(missing_ok=True)
    con = duckdb.connect()
    try:
        con.execute("set threads = 1")
        # the warehouse under its own name, which its views spell
        con.execute(f"attach '{home / 'finrag.duckdb'}' as finrag (read_only)")
        con.execute("use finrag")
        con.execute(f"attach '{scratch}' as scratch")
        tables = {name for (name,) in con.execute(
            "select table_name from duckdb_tables() where database_name = 'finrag'").fetchall()}
        written = 0.0
        for model in chain_models(home):
            if model in tables:
                t0 = time.perf_counter()
                con.execute(f"create table scratch.{model} as select * from main.{model}")
                con.execute("checkpoint scratch")
                written += time.perf_counter() - t0
        t0 = time.perf_counter()
        con.execute("select count(*), sum(hash(question_id, chunk_id, doc_id, rank, score, page_start, page_end)) "
                    "from main.stg_lake__retrieval_results").fetchall()
        scanned = time.perf_counter() - t0
    finally:
        con.close()
        scratch.unlink(missing_ok=True)
    return written, scanned


def metric_model_seconds(home: Path) -> float:
    return sum(metric_model_times(home).values())


def built_nodes(home: Path) -> int:
    """How many dbt nodes (models, tests, ...) the last build ran."""
    return len(json.loads((home / "dbt_target" / "run_results.json").read_text())["results"])


def pytrec(qrels: Path, run: Path) -> tuple[float, dict[str, float]]:
    import pytrec_eval

    measures = {"map", "recip_rank", "ndcg", *(f"{m}.{','.join(map(str, KS))}" for m in ("P", "recall", "ndcg_cut",
                                                                                        "map_cut"))}
    t0 = time.perf_counter()
    with open(qrels) as fq, open(run) as fr:
        q, r = pytrec_eval.parse_qrel(fq), pytrec_eval.parse_run(fr)
    per_query = pytrec_eval.RelevanceEvaluator(q, measures).evaluate(r)
    seconds = time.perf_counter() - t0
    names = next(iter(per_query.values())).keys()
    return seconds, {name: statistics.fmean(v[name] for v in per_query.values()) for name in names}


def head_questions(source: Path, dest: Path, n_questions: int) -> None:
    """The lines of questions q0..q<n-1> of a qrels or run file (the bench writes them question by question)."""
    wanted = {f"q{q}" for q in range(n_questions)}
    with open(source) as fin, open(dest, "w") as fout:
        fout.writelines(line for line in fin if line.split(maxsplit=1)[0] in wanted)


def warehouse_means(home: Path, sql: str, params: list) -> dict[str, float]:
    """(metric, k, mean) rows of the warehouse's chunk-level scores, named as pytrec_eval names its measures."""
    import duckdb

    names = {"map": "map_cut", "mrr": "recip_rank", "ndcg": "ndcg_cut", "precision": "P", "recall": "recall"}
    con = duckdb.connect(str(home / "finrag.duckdb"), read_only=True)
    try:
        rows = con.execute(sql, params).fetchall()
    finally:
        con.close()
    out = {}
    for metric, k, mean in rows:
        if metric in names:
            name = names[metric]
            out[{"map_cut": "map", "ndcg_cut": "ndcg"}.get(name, name) if k == 0 else f"{name}_{k}"] = mean
    return out


def sample_means(home: Path, run_id: str, n_questions: int) -> dict[str, float]:
    """The means of questions q0..q<n-1>, averaged from their per-question scores."""
    return warehouse_means(home, "select metric, k, avg(value) from fct_question_metric_scores where run_id = ? and "
                                 "granularity = 'chunk' and question_id in (select 'q' || range from range(?)) "
                                 "group by metric, k", [run_id, n_questions])


def sample_check(home: Path, qrels: Path, run: Path, n_questions: int) -> None:
    """pytrec_eval on the first n questions of the files against the warehouse's scores of the same questions."""
    work = home.parent
    q_sample, r_sample = work / "qrels.sample.txt", work / "run.sample.trec"
    head_questions(qrels, q_sample, n_questions)
    head_questions(run, r_sample, n_questions)
    _, means = pytrec(q_sample, r_sample)
    ours = sample_means(home, "run_000", n_questions)
    diff = max(abs(ours[name] - value) for name, value in means.items())
    print(f"sample of {n_questions:,} questions: max |dbt - pytrec_eval| over {len(means)} measures: {diff:.2e}")


def dbt_means(home: Path, run_id: str) -> dict[str, float]:
    return warehouse_means(home, "select metric, k, mean from mart_retrieval_leaderboard "
                                 "where run_id = ? and granularity = 'chunk'", [run_id])


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--questions", type=int, default=100_000)
    ap.add_argument("--results", type=int, default=100)
    ap.add_argument("--incremental-runs", type=int, default=0)
    ap.add_argument("--skip-references", action="store_true", help="no pytrec_eval (the scale figure)")
    ap.add_argument("--model-peaks", action="store_true",
                    help="after the build, rebuild each retrieval-chain model alone: its time and peak RSS")
    ap.add_argument("--sample", type=int, default=10_000,
                    help="with --skip-references: pytrec_eval on this many questions of the same files")
    ap.add_argument("--workdir", type=Path, default=None, help="keep files and home here (default: a temp dir)")
    ap.add_argument("--duckdb-threads", type=int, default=None,
                    help="DuckDB threads of the builds (FINRAG_DUCKDB_THREADS; default the profile's, 1)")
    ap.add_argument("--shape", choices=SHAPES, default="ranked",
                    help="the run files' shape: ranked (a ranker's output) or pooled (lines in no order, scores apart "
                         "from the ranks with ties everywhere, qrels judged over pools of 400 documents)")
    ap.add_argument("--no-floor", action="store_true",
                    help="skip the chain's floor (each chain table's rows written again alone: minutes at 1M pooled)")
    ap.add_argument("--reuse", action="store_true",
                    help="with --workdir: build the home a previous run landed there again, whole (--full-refresh; "
                         "its files and lake kept), e.g. after a build that ran out of memory, under another "
                         "FINRAG_DUCKDB_MEMORY_LIMIT")
    args = ap.parse_args()
    if args.reuse and not (args.workdir and (args.workdir / "warehouse" / "lake").is_dir()
                           and (args.workdir / "qrels.txt").exists() and (args.workdir / "run_000.trec").exists()):
        ap.error("--reuse needs a --workdir where a previous run wrote and landed its files (qrels.txt, run_000.trec, "
                 "warehouse/lake)")
    global DUCKDB_THREADS
    DUCKDB_THREADS = args.duckdb_threads
    work = args.workdir or Path(tempfile.mkdtemp(prefix="finrag-bench-"))
    work.mkdir(parents=True, exist_ok=True)
    home = work / "warehouse"
    try:
        print(f"date {time.strftime('%Y-%m-%d %H:%M')}  load {os.getloadavg()[0]:.2f} {os.getloadavg()[1]:.2f} "
              f"{os.getloadavg()[2]:.2f}  cores {os.cpu_count()}  duckdb threads {DUCKDB_THREADS or 'profile'}  "
              f"shape {args.shape}  memory limit {profile_memory_limit()}")
        qrels, run = work / "qrels.txt", work / "run_000.trec"
        if args.reuse:
            log(f"reusing the files and the lake under {work}: no writing, no landing")
        else:
            t0 = time.perf_counter()
            write_qrels(qrels, args.questions, seed=1, shape=args.shape)
            write_run(run, args.questions, args.results, seed=100, tag="run_000", shape=args.shape)
            log(f"wrote {args.questions:,} questions x {args.results} results in {time.perf_counter() - t0:.1f}s")
            w_q, _, _ = finrag(home, "ingest", "trec-qrels", str(qrels), "--dataset", DATASET)
            w_r, m_r, _ = finrag(home, "ingest", "trec-run", str(run), "--dataset", DATASET, "--run-id", "run_000")
            print(f"ingest: qrels {w_q:.1f}s ({CPU_SECONDS['ingest trec-qrels']:.1f} CPU-s), run {w_r:.1f}s "
                  f"({CPU_SECONDS['ingest trec-run']:.1f} CPU-s, peak {m_r or float('nan'):.0f} MiB)")
        # a reused home is built whole again (a plain build of an unchanged lake would build nothing)
        build = ["build", "--full-refresh"] if args.reuse else ["build"]
        wall, peak, _ = finrag(home, *build)
        build_cpu = CPU_SECONDS[" ".join(build)]
        models = metric_model_seconds(home)
        chain = chain_model_times(home)
        print(f"finrag build: wall {wall:.2f}s ({build_cpu:.1f} CPU-s), retrieval-metric models {models:.2f}s, "
              f"retrieval chain ({len(chain)} models) {sum(chain.values()):.2f}s, "
              f"peak {peak or float('nan'):.0f} MiB"
              f"  ({args.questions:,} x {args.results} = {args.questions * args.results:,} rows)")
        print("  " + ", ".join(f"{name} {seconds:.2f}s" for name, seconds in
                               sorted(metric_model_times(home).items(), key=lambda item: -item[1])))
        floor = None if args.no_floor else write_floor(home, work)  # (rows written alone, one scan of the results)
        if floor:
            print(f"the chain's floor: writing its tables' rows alone {floor[0]:.2f}s, one scan of the lake's results "
                  f"{floor[1]:.2f}s")
        if args.model_peaks:
            model_peaks(home)
        if args.skip_references and args.sample:
            sample_check(home, qrels, run, min(args.sample, args.questions))
        if not args.skip_references:
            t_ref, means = pytrec(qrels, run)
            ours = dbt_means(home, "run_000")
            diff = max(abs(ours[name] - value) for name, value in means.items())
            print(f"pytrec_eval (parse + evaluate): {t_ref:.2f}s; max |dbt - pytrec_eval| over {len(means)} "
                  f"measures: {diff:.2e}")
            print(f"ratio metric models / pytrec_eval = {models / t_ref:.2f}; retrieval chain / pytrec_eval = "
                  f"{sum(chain.values()) / t_ref:.2f}   (target <= 1.0)")
            print("  chain: " + ", ".join(f"{name} {seconds:.2f}s" for name, seconds in
                                          sorted(chain.items(), key=lambda item: -item[1])))
            if floor:
                print(f"floor under the chain: {sum(floor):.2f}s = {sum(floor) / t_ref:.2f} x pytrec_eval")
            print(f"ratio finrag build / pytrec_eval = {wall / t_ref:.2f}")
            # the floor under that ratio: the same first build with no rows at all (dbt start-up and parse, every
            # model and data test, publishing), which no model design can go below
            empty = work / "empty-home"
            shutil.rmtree(empty, ignore_errors=True)
            w_empty, _, _ = finrag(empty, "build")
            print(f"floor: finrag build of an empty lake {w_empty:.2f}s ({built_nodes(empty)} dbt nodes) = "
                  f"{w_empty / t_ref:.2f} x pytrec_eval")
            # dbt's own cost of each chain model (compile, its statements, the incremental hooks) on no rows
            empty_chain = sum(chain_model_times(empty).values())
            print(f"floor: the retrieval chain on that empty lake {empty_chain:.2f}s" + (
                f"; with writing and scanning the rows {empty_chain + sum(floor):.2f}s = "
                f"{(empty_chain + sum(floor)) / t_ref:.2f} x pytrec_eval" if floor else ""))
            print(f"load average now {os.getloadavg()[0]:.2f} {os.getloadavg()[1]:.2f}")
        if args.incremental_runs:
            for i in range(1, args.incremental_runs + 1):
                path = work / f"run_{i:03d}.trec"
                write_run(path, args.questions, args.results, seed=100 + i, tag=f"run_{i:03d}", shape=args.shape)
                finrag(home, "ingest", "trec-run", str(path), "--dataset", DATASET, "--run-id", f"run_{i:03d}")
            w_n, _, _ = finrag(home, "build")
            print(f"build after ingesting {args.incremental_runs} more runs: {w_n:.2f}s")
            last = args.incremental_runs + 1
            path = work / f"run_{last:03d}.trec"
            write_run(path, args.questions, args.results, seed=100 + last, tag=f"run_{last:03d}",
                      shape=args.shape)
            finrag(home, "ingest", "trec-run", str(path), "--dataset", DATASET, "--run-id", f"run_{last:03d}")
            w_inc, m_inc, _ = finrag(home, "build")
            inc_nodes, inc_models = built_nodes(home), metric_model_seconds(home)
            w_full, m_full, _ = finrag(home, "build", "--full-refresh")
            full_nodes, full_models = built_nodes(home), metric_model_seconds(home)
            print(f"one run added to {last}: finrag build {w_inc:.2f}s ({inc_nodes} dbt nodes, metric models "
                  f"{inc_models:.2f}s, peak {m_inc or float('nan'):.0f} MiB); finrag build --full-refresh of "
                  f"{last + 1} runs {w_full:.2f}s ({full_nodes} dbt nodes, metric models {full_models:.2f}s, peak "
                  f"{m_full or float('nan'):.0f} MiB); ratio {w_inc / w_full:.3f} (target <= 0.10)")
            # the floor under that ratio: dbt building one view of this home (no data test, no publishing)
            w_one, _, _ = finrag(home, "build", "--select", "stg_lake__retrieval_runs", "--exclude-resource-type",
                                 "test", "--no-publish")
            print(f"floor: finrag build of one view {w_one:.2f}s ({built_nodes(home)} dbt nodes) = "
                  f"{w_one / w_full:.3f} of the full refresh")
    finally:
        if args.workdir is None:
            shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()

"""Benchmark: `finrag build --target spark` on a 2-worker Spark standalone cluster, as the work grows.

    .venv/bin/python -m bench.spark_cluster.run                          # 1,000, 10,000 and 100,000 questions
    .venv/bin/python -m bench.spark_cluster.run --questions 1000 10000

From the checkout, run as a module: `bench` imports as a namespace package there, so a bench can import another's code.

The cluster is ../shared/ENVIRONMENT.md's recipe on this machine: pyspark's own `spark-class` starts a master and two
workers of 1 core and 2 GB each; `FINRAG_SPARK_MASTER=spark://127.0.0.1:<port>` sends the build's executors there
(PYSPARK_PYTHON: this interpreter, for the project's UDFs). For each size:

1. bench/retrieval_metrics's TREC qrels and run (`--results` per question, ties and float32 near-ties included) go in
   through `finrag ingest trec-qrels` / `trec-run`, into a home of their own.
2. `finrag build` on DuckDB, then `finrag build --target spark` (every model and data test; no unit tests), each
   timed as a subprocess. While Spark builds, the resident memory of every executor JVM
   (CoarseGrainedExecutorBackend) and of the driver's JVM is sampled every 0.5 s; their peaks are printed.
3. The Spark leaderboard's means (every run, metric, granularity and k of mart_retrieval_leaderboard, read with
   `finrag sql --target spark`) are compared with DuckDB's (`finrag sql`): the largest absolute difference.

Not run in CI.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

from bench.retrieval_metrics import run as retrieval_bench  # the TREC file writers of the retrieval-metrics bench

PROJECT = Path(__file__).resolve().parents[2]

DATASET = "bench"
LEADERBOARD = ("select run_id, metric, granularity, k, mean from mart_retrieval_leaderboard "
               "order by run_id, metric, granularity, k")


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def spark_class() -> Path:
    import pyspark

    return Path(pyspark.__file__).parent / "bin" / "spark-class"


class Cluster:
    """A standalone master and `workers` workers of 1 core and `memory` each, on loopback; stopped on exit."""

    def __init__(self, workdir: Path, workers: int, memory: str) -> None:
        self.port, self.procs = free_port(), []
        self.url = f"spark://127.0.0.1:{self.port}"
        env = {**os.environ, "SPARK_LOG_DIR": str(workdir / "logs"), "SPARK_WORKER_DIR": str(workdir / "work"),
               "SPARK_LOCAL_DIRS": str(workdir / "local")}
        logs = workdir / "logs"
        logs.mkdir(parents=True, exist_ok=True)
        master = [str(spark_class()), "org.apache.spark.deploy.master.Master", "--host", "127.0.0.1", "--port",
                  str(self.port), "--webui-port", str(free_port())]
        self.procs.append(subprocess.Popen(master, env=env, stdout=open(logs / "master.log", "w"),
                                           stderr=subprocess.STDOUT, start_new_session=True))
        self._wait_for_port()
        for i in range(workers):
            worker = [str(spark_class()), "org.apache.spark.deploy.worker.Worker", self.url, "--cores", "1",
                      "--memory", memory, "--webui-port", str(free_port())]
            self.procs.append(subprocess.Popen(worker, env=env, stdout=open(logs / f"worker{i}.log", "w"),
                                               stderr=subprocess.STDOUT, start_new_session=True))
        time.sleep(8)  # the workers register with the master

    def _wait_for_port(self) -> None:
        for _ in range(120):
            with socket.socket() as s:
                if s.connect_ex(("127.0.0.1", self.port)) == 0:
                    return
            time.sleep(0.5)
        sys.exit("the Spark master did not start (bench/spark_cluster logs)")

    def stop(self) -> None:
        for proc in reversed(self.procs):
            os.killpg(proc.pid, signal.SIGTERM)
        for proc in self.procs:
            proc.wait(timeout=60)


class PeakRss:
    """The largest resident set (MiB) seen of the executor JVMs together, and of the driver's JVM, while running."""

    def __init__(self) -> None:
        self.executors = self.driver = 0.0
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._sample, daemon=True)

    def __enter__(self) -> PeakRss:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join()

    def _sample(self) -> None:
        while not self._stop.wait(0.5):
            executors = driver = 0.0
            for pid in filter(str.isdigit, os.listdir("/proc")):
                try:
                    cmdline = Path(f"/proc/{pid}/cmdline").read_bytes()
                    status = Path(f"/proc/{pid}/status").read_text()
                except OSError:
                    continue
                rss = next((int(line.split()[1]) / 1024 for line in status.splitlines()
                            if line.startswith("VmRSS:")), 0.0)
                if b"CoarseGrainedExecutorBackend" in cmdline:
                    executors += rss
                elif b"org.apache.spark.deploy.SparkSubmit" in cmdline or b"pyspark-shell" in cmdline:
                    driver = max(driver, rss)
            self.executors, self.driver = max(self.executors, executors), max(self.driver, driver)


def finrag(home: Path, *args: str, env: dict[str, str] | None = None) -> tuple[float, str]:
    """(wall seconds, stdout) of `finrag ARGS` as a subprocess; exits with its output when it fails."""
    full = {**os.environ, "FINRAG_HOME": str(home), "TQDM_DISABLE": "1", **(env or {})}
    t0 = time.perf_counter()
    proc = subprocess.run([sys.executable, "-m", "python_jobs.cli", "--home", str(home), *args], cwd=PROJECT,
                          env=full, capture_output=True, text=True)
    wall = time.perf_counter() - t0
    if proc.returncode:
        sys.exit(f"finrag {' '.join(args)} failed:\n{proc.stdout[-3000:]}\n{proc.stderr[-3000:]}")
    return wall, proc.stdout


def one_size(work: Path, n_questions: int, n_results: int, cluster: Cluster) -> dict[str, float]:
    home = work / f"q{n_questions}" / "warehouse"
    shutil.rmtree(home.parent, ignore_errors=True)
    home.mkdir(parents=True)
    qrels, trec = home.parent / "qrels.txt", home.parent / "run_000.trec"
    retrieval_bench.write_qrels(qrels, n_questions, seed=1)
    retrieval_bench.write_run(trec, n_questions, n_results, seed=100, tag="run_000")
    finrag(home, "ingest", "trec-qrels", str(qrels), "--dataset", DATASET)
    finrag(home, "ingest", "trec-run", str(trec), "--dataset", DATASET, "--run-id", "run_000")
    duck, _ = finrag(home, "build")
    spark_env = {"FINRAG_SPARK_MASTER": cluster.url, "PYSPARK_PYTHON": sys.executable,
                 # one shuffle partition per executor core: the profile's 1 fits local[2]'s small marts
                 "FINRAG_SPARK_SHUFFLE_PARTITIONS": "2"}
    with PeakRss() as peak:
        spark, _ = finrag(home, "build", "--target", "spark", env=spark_env)
    _, on_duckdb = finrag(home, "sql", LEADERBOARD, "--format", "json")
    _, on_spark = finrag(home, "sql", "--target", "spark", LEADERBOARD, "--format", "json")
    a, b = json.loads(on_duckdb), json.loads(on_spark)
    keys = [{k: v for k, v in row.items() if k != "mean"} for row in a]
    if keys != [{k: v for k, v in row.items() if k != "mean"} for row in b] or not a:
        sys.exit(f"the leaderboards differ in their rows at {n_questions} questions")
    diff = max(abs(x["mean"] - y["mean"]) for x, y in zip(a, b, strict=True))
    return {"questions": n_questions, "rows": n_questions * n_results, "duckdb_s": duck, "spark_s": spark,
            "executors_peak_mib": peak.executors, "driver_peak_mib": peak.driver, "leaderboard_rows": len(a),
            "max_abs_diff": diff}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--questions", type=int, nargs="+", default=[1_000, 10_000, 100_000])
    ap.add_argument("--results", type=int, default=100)
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--worker-memory", default="2g")
    ap.add_argument("--workdir", type=Path, default=None, help="keep files and homes here (default: a temp dir)")
    args = ap.parse_args()
    work = args.workdir or Path(tempfile.mkdtemp(prefix="finrag-spark-bench-"))
    work.mkdir(parents=True, exist_ok=True)
    print(f"date {time.strftime('%Y-%m-%d %H:%M')}  load {os.getloadavg()[0]:.2f}  cores {os.cpu_count()}  "
          f"cluster: {args.workers} workers x 1 core, {args.worker_memory}", flush=True)
    cluster = Cluster(work / "cluster", args.workers, args.worker_memory)
    try:
        rows = []
        for n in args.questions:
            r = one_size(work, n, args.results, cluster)
            rows.append(r)
            print(f"{n:>9,} questions ({r['rows']:,} results): DuckDB build {r['duckdb_s']:.1f}s, Spark build "
                  f"{r['spark_s']:.1f}s ({r['spark_s'] / r['duckdb_s']:.1f}x), executors' peak "
                  f"{r['executors_peak_mib']:.0f} MiB together, driver {r['driver_peak_mib']:.0f} MiB; leaderboard "
                  f"{r['leaderboard_rows']} rows, max |Spark - DuckDB| {r['max_abs_diff']:.2e}", flush=True)
        for before, after in zip(rows, rows[1:], strict=False):
            print(f"{before['questions']:,} -> {after['questions']:,} questions: Spark x"
                  f"{after['spark_s'] / before['spark_s']:.2f}, DuckDB x{after['duckdb_s'] / before['duckdb_s']:.2f}")
        print(f"load average now {os.getloadavg()[0]:.2f}")
    finally:
        cluster.stop()
        if args.workdir is None:
            shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()

"""Benchmark: embedding a corpus with `finrag index` in one process against two `--shard` processes at once.

    .venv/bin/python bench/shards/run.py                      # FinanceRAG's FinanceBench corpus, 3 repeats
    .venv/bin/python bench/shards/run.py --repeats 1 --long-text truncate

1. A real corpus goes in as users put it in: `finrag ingest beir` of ../shared/data/financerag_icaif24/FinanceBench
   (its corpus entries are the chunks, chunker id `corpus`), into a home copied once per timed case.
2. Timed as subprocesses, wall clock from launch to the last exit (model loading included: it is what a user waits
   for), each case in a fresh copy of the home:
   - `whole`: `finrag index` unsharded, torch's default threads (one per core);
   - `whole_1t`: the same with `--threads 1` (what one core does);
   - `shards`: `finrag index --shard 1/2 --threads 1` and `--shard 2/2 --threads 1` launched together (one core
     each: two processes of two threads on two cores would only preempt each other).
   Each job's own embedding seconds (its --json `seconds`) are printed beside the wall times.
3. The sharded table is checked against the unsharded one: the same rows, vectors equal within 1e-6.
4. Printed per case over --repeats: the median and the best wall time, and the median and best of the embedding
   seconds (the slowest shard's for `shards`: what the run waits for); then the speed-ups whole / shards and
   whole_1t / shards of each, with the load average (another job on the machine changes every figure: the best of
   the repeats is the least disturbed).

Not run in CI.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from python_jobs.corpus.encoders import DEFAULT_LONG_TEXT, LONG_TEXT_MODES

PROJECT = Path(__file__).resolve().parents[2]
SHARED = Path(os.environ.get("FINRAG_SHARED_DATA", PROJECT.parent / "shared" / "data"))
CORPUS = SHARED / "financerag_icaif24" / "FinanceBench"
DATASET = "bench_shards"


def log(msg: str) -> None:
    print(msg, file=sys.stderr, flush=True)


def finrag(home: Path, *args: str) -> list[str]:
    return [sys.executable, "-m", "python_jobs.cli", "--home", str(home), *args]


def run_case(base: Path, work: Path, commands: list[list[str]], name: str) -> tuple[float, list[float], Path]:
    """Copy the base home, launch the commands (given the home) together; wall seconds to the last exit and each
    job's own embedding seconds."""
    home = work / name
    shutil.rmtree(home, ignore_errors=True)
    shutil.copytree(base, home)
    env = {**os.environ, "FINRAG_HOME": str(home), "HF_HUB_OFFLINE": "1"}
    t0 = time.perf_counter()
    procs = [subprocess.Popen(finrag(home, *cmd), cwd=PROJECT, env=env, stdout=subprocess.PIPE,
                              stderr=subprocess.PIPE, text=True) for cmd in commands]
    outs = [p.communicate() for p in procs]
    wall = time.perf_counter() - t0
    for p, (_, err) in zip(procs, outs, strict=True):
        if p.returncode:
            sys.exit(f"{name}: exit {p.returncode}\n{err}")
    return wall, [float(json.loads(out)["seconds"]) for out, _ in outs], home


def same_index(a: Path, b: Path) -> int:
    import lancedb
    import numpy as np
    import polars as pl

    def rows(home: Path) -> pl.DataFrame:
        db = lancedb.connect(str(home / "lance"))
        (name,) = db.list_tables().tables  # the shards' piece tables are gone once merged
        return pl.from_arrow(db.open_table(name).to_arrow()).sort("chunk_id")

    x, y = rows(a), rows(b)
    assert x.drop("vector").equals(y.drop("vector")), "the sharded table's rows differ"
    assert np.allclose(np.stack(x["vector"].to_list()), np.stack(y["vector"].to_list()), atol=1e-6)
    return x.height


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--long-text", choices=LONG_TEXT_MODES, default=DEFAULT_LONG_TEXT)
    ap.add_argument("--keep", action="store_true", help="Keep the temporary homes.")
    args = ap.parse_args()
    work = Path(tempfile.mkdtemp(prefix="bench_shards_"))
    base = work / "base"
    log(f"load average at the start: {os.getloadavg()}, cores: {os.cpu_count()}")
    subprocess.run(finrag(base, "ingest", "beir", "--dir", str(CORPUS), "--dataset", DATASET), cwd=PROJECT,
                   check=True, env={**os.environ, "FINRAG_HOME": str(base)}, stdout=subprocess.DEVNULL)
    index = ["index", "--dataset", DATASET, "--long-text", args.long_text, "--json"]
    cases = {
        "whole": [index],
        "whole_1t": [[*index, "--threads", "1"]],
        "shards": [[*index, "--shard", f"{i}/2", "--threads", "1"] for i in (1, 2)],
    }
    walls: dict[str, list[float]] = {name: [] for name in cases}
    embeds: dict[str, list[float]] = {name: [] for name in cases}
    for r in range(args.repeats):
        homes = {}
        for name, commands in cases.items():
            wall, seconds, homes[name] = run_case(base, work, commands, name)
            walls[name].append(wall)
            embeds[name].append(max(seconds))
            log(f"repeat {r + 1}: {name:<9} wall {wall:6.1f} s, embedding {' + '.join(f'{s:.1f}' for s in seconds)} s")
        n = same_index(homes["whole"], homes["shards"])
    print(f"corpus: {CORPUS.name} ({n} chunks, --long-text {args.long_text}), {args.repeats} repeats, "
          f"load average now {os.getloadavg()[0]:.2f}")
    for name in cases:
        print(f"  {name:<9} wall median {statistics.median(walls[name]):6.1f} s, best {min(walls[name]):6.1f} s; "
              f"embedding median {statistics.median(embeds[name]):6.1f} s, best {min(embeds[name]):6.1f} s")
    for what, figures in (("wall", walls), ("embedding", embeds)):
        for stat, f in (("median", statistics.median), ("best", min)):
            print(f"speed-up of 2 shards on 2 cores, {what} {stat}: "
                  f"whole / shards = {f(figures['whole']) / f(figures['shards']):.2f}x, "
                  f"whole_1t / shards = {f(figures['whole_1t']) / f(figures['shards']):.2f}x")
    if not args.keep:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()

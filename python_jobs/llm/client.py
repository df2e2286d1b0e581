"""The ONE LLM client every job uses (SPEC §6): any OpenAI-compatible endpoint through the `openai` package.

    with LLMClient.open(job_run_id="answer-rag-ab12") as llm:
        results = llm.complete_many([ChatRequest(messages=[...], purpose="answer"), ...])

Every call is
- cached by the SHA-256 of the full request (model, messages, temperature, max_tokens, seed, stop — canonical JSON;
  the endpoint URL and key are not part of it), so a re-run makes no repeated call and an interrupted job resumes;
- retried with backoff (tenacity) on 429 (honouring Retry-After), 5xx, timeouts, dropped connections and malformed
  responses; other errors (400, 401, ...) fail at once;
- run concurrently under a limit (asyncio + a semaphore);
- recorded in the `llm_calls` lake table with purpose, tokens, latency and cost (prices per 1k tokens from
  seeds/llm_prices.csv, read at call time; a model not listed there gets a null cost).

The ledger lands progressively: every `batch_size` finished calls (and at the end) one partition
batch_id = f"{job_run_id}-{seq:05d}" lands, so a killed job loses at most its in-flight batch. Job run ids carry a
random suffix, so a re-run never overwrites an earlier run's batches.

Failures and retries (the lake's key rules): llm_calls' key is (request_hash, batch_id). A call that finally fails
lands as a row with `error` set and no response, and is never returned as an answer (the caller gets
`LLMResult.error`). The cache reads only rows with `error is null` (the earliest per request_hash); a failed request
is tried again by the next job, and its success lands as another row of the same request_hash in that job's batch.
So the ledger keeps every failure and every success; within one batch a request_hash appears once. A request served
from the cache makes no call; the batch records it as a cache row of its request_hash (no response, tokens, latency
or cost; `cache_hits` counts how many such requests the batch had), which the cache never reads.

The API key is read from the environment (FINRAG_LLM_API_KEY, else OPENAI_API_KEY) or passed in, held only by the
`openai` client, and scrubbed from every error message before it is stored or raised.

With no endpoint configured (no FINRAG_LLM_BASE_URL / base_url), the client starts the embedded default
(python_jobs/llm/server.py: SmolLM2-135M-Instruct on loopback) as a subprocess, waits until it is ready and stops it
when the job ends.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import os
import re
import subprocess
import time
import uuid
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from datetime import UTC, datetime
from typing import Any

import polars as pl

from python_jobs.core.console import progress, say
from python_jobs.core.contracts import contract
from python_jobs.core.errors import JobError
from python_jobs.core.lake import Lake
from python_jobs.llm.config import BASE_URL_ENV, MODEL_ENV, LLMConfig
from python_jobs.llm.prices import call_cost, load_prices
from python_jobs.llm.server import EMBEDDED_MODEL, start_embedded_server


# ---- requests and results ------------------------------------------------------------------------------------
@dataclass(frozen=True)
class ChatRequest:
    messages: tuple[tuple[str, str], ...] | list[dict[str, str]]
    purpose: str  # what the call is for (answer, answer_part, fuse, judge, hyde, ...): a column of llm_calls
    temperature: float = 0.0
    max_tokens: int | None = 256
    seed: int | None = None
    stop: tuple[str, ...] | None = None
    model: str | None = None  # None = the client's model
    # e.g. a JSON schema the reply must follow ({"type": "json_schema", ...}); sent where the endpoint accepts it,
    # dropped for the rest of the job where it refuses it (the prompt still asks for the format)
    response_format: Mapping[str, Any] | None = None

    def message_list(self) -> list[dict[str, str]]:
        return [dict(m) if isinstance(m, dict) else {"role": m[0], "content": m[1]} for m in self.messages]

    def body(self, model: str) -> dict[str, Any]:
        """The request as sent (and hashed): only what changes the completion."""
        body: dict[str, Any] = {"model": self.model or model, "messages": self.message_list(),
                                "temperature": float(self.temperature)}
        if self.max_tokens is not None:
            body["max_tokens"] = int(self.max_tokens)
        if self.seed is not None:
            body["seed"] = int(self.seed)
        if self.stop:
            body["stop"] = list(self.stop)
        if self.response_format is not None:
            body["response_format"] = dict(self.response_format)
        return body


def request_hash(body: dict[str, Any]) -> str:
    return hashlib.sha256(
        json.dumps(body, sort_keys=True, ensure_ascii=False, separators=(",", ":")).encode()
    ).hexdigest()


@dataclass(frozen=True)
class LLMResult:
    request_hash: str
    text: str | None  # None when the call failed
    error: str | None
    prompt_tokens: int | None = None
    completion_tokens: int | None = None
    latency_ms: float | None = None
    cost_usd: float | None = None
    cached: bool = False
    attempts: int = 0

    @property
    def ok(self) -> bool:
        return self.error is None


# ---- errors ----------------------------------------------------------------------------------------------------
def raise_if_all_failed(what: str, errors: Sequence[str | None]) -> None:
    """After a run has landed with its errors: when every one of them failed (a wrong endpoint, model or key looks
    like this), a JobError with the first error, so a script does not go on as if the run had results."""
    failed = [e for e in errors if e]
    if errors and len(failed) == len(errors):
        raise JobError(f"every {what} failed ({len(failed)} of {len(errors)}); the first error: {failed[0]}. The run "
                       "landed with its errors; check the LLM endpoint and model (docs/llm.md) and run it again")


class MalformedResponse(Exception):
    """A 2xx response the client could not read as a chat completion."""


def _retryable(exc: BaseException) -> bool:
    import openai

    if isinstance(exc, (openai.RateLimitError, openai.InternalServerError, openai.APITimeoutError,
                        openai.APIConnectionError, openai.APIResponseValidationError, MalformedResponse,
                        asyncio.TimeoutError)):
        return True
    if isinstance(exc, openai.APIStatusError):
        return exc.status_code == 429 or exc.status_code >= 500 or exc.status_code == 408
    return isinstance(exc, (json.JSONDecodeError,))


def _refuses_response_format(exc: BaseException) -> bool:
    """A 400 / 422 that names response_format: an endpoint (or model) without structured output."""
    import openai

    text = str(exc).lower()
    return (isinstance(exc, openai.APIStatusError) and exc.status_code in (400, 422)
            and ("response_format" in text or "json_schema" in text))


def _retry_after(exc: BaseException | None) -> float | None:
    response = getattr(exc, "response", None)
    headers = getattr(response, "headers", None)
    if not headers:
        return None
    raw = headers.get("retry-after-ms")
    if raw:
        try:
            return float(raw) / 1000
        except ValueError:
            pass
    raw = headers.get("retry-after")
    if raw:
        try:
            return float(raw)
        except ValueError:
            return None
    return None


def model_name(config: LLMConfig) -> str:
    """The model a client of `config` calls (what run ids hash): the configured one, else the embedded default; an
    endpoint without a model is refused."""
    if config.model:
        return config.model
    if config.embedded:
        return EMBEDDED_MODEL
    from python_jobs.core.errors import InputError

    raise InputError(f"an endpoint is configured ({BASE_URL_ENV}) but no model: set {MODEL_ENV} or --llm-model")


class LLMClient:
    """Cached, retried, concurrent chat completions with a lake ledger. Use as a context manager (or call close())."""

    def __init__(self, home: str | os.PathLike[str] | None = None, config: LLMConfig | None = None,
                 job_run_id: str = "llm", batch_size: int = 16, progress: bool = True):
        self.config = config or LLMConfig.from_env()
        if self.config.embedded:
            # the embedded server generates one answer at a time: more concurrency would only queue requests there
            # (and inflate every call's latency_ms by the queueing)
            self.config = replace(self.config, concurrency=1)
        self.lake = Lake(home)
        # a random suffix: a re-run with the same job name never replaces an earlier run's ledger batches
        self.job_run_id = (f"{re.sub(r'[^A-Za-z0-9_.-]+', '-', job_run_id)[:120]}"
                           f"-{datetime.now(UTC):%Y%m%dT%H%M%S}-{uuid.uuid4().hex[:6]}")
        self.batch_size = batch_size
        self.progress = progress
        self.prices = load_prices()
        self._server: subprocess.Popen[str] | None = None
        self._base_url = self.config.base_url or self.config.embedded_url
        self._model = self.config.model
        self._cache = self._load_cache()
        self._pending: list[dict[str, Any]] = []
        self._pending_hits: dict[str, dict[str, Any]] = {}  # request hash -> its cache row in the pending batch
        self._seq = 0
        self.calls_made = 0  # HTTP completions attempted to completion (success or final failure), this client
        self.cache_hits = 0
        self._secrets = [s for s in [self.config.api_key] if s]
        self._response_format_refused = False  # set when the endpoint refuses response_format once

    # -- lifecycle -------------------------------------------------------------------------------------------------
    @classmethod
    def open(cls, home: str | os.PathLike[str] | None = None, **kw: Any) -> LLMClient:
        return cls(home, **kw)

    def __enter__(self) -> LLMClient:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        try:
            self.flush()
        finally:
            self._stop_server()

    @property
    def model(self) -> str:
        if self._model is None:
            self._model = model_name(self.config)
        return self._model

    @property
    def base_url(self) -> str:
        if self._base_url is None:
            self._start_server()
        assert self._base_url is not None
        return self._base_url

    def _start_server(self) -> None:
        self._server, self._base_url = start_embedded_server()

    def _stop_server(self) -> None:
        if self._server is not None:
            self._server.terminate()
            try:
                self._server.wait(10)
            except subprocess.TimeoutExpired:
                self._server.kill()
            self._server = None

    # -- cache and ledger --------------------------------------------------------------------------------------------
    def _load_cache(self) -> dict[str, dict[str, Any]]:
        calls = self.lake.read("llm_calls", columns=["request_hash", "response", "prompt_tokens", "completion_tokens",
                                                     "latency_ms", "cost_usd", "error", "created_at"])
        # cache rows (response null) count reuses; only a call's row holds an answer
        ok = calls.filter(pl.col("error").is_null() & pl.col("response").is_not_null()).sort("created_at")
        ok = ok.unique(subset="request_hash", keep="first")
        return {r["request_hash"]: r for r in ok.iter_rows(named=True)}

    def cached(self, req: ChatRequest) -> LLMResult | None:
        h = request_hash(req.body(self.model))
        row = self._cache.get(h)
        if row is None:
            return None
        return LLMResult(h, json.loads(row["response"])["text"], None, row["prompt_tokens"], row["completion_tokens"],
                         row["latency_ms"], row["cost_usd"], cached=True)

    def _record(self, body: dict[str, Any], purpose: str, result: LLMResult, response: dict[str, Any] | None) -> None:
        self._pending.append({
            "request_hash": result.request_hash, "model": body["model"], "purpose": purpose,
            "request": json.dumps(body, ensure_ascii=False, sort_keys=True),
            "response": json.dumps(response, ensure_ascii=False) if response is not None else None,
            "prompt_tokens": result.prompt_tokens, "completion_tokens": result.completion_tokens,
            "latency_ms": result.latency_ms, "cost_usd": result.cost_usd, "error": result.error,
            "attempts": result.attempts, "cache_hits": 0,
        })
        if len(self._pending) >= self.batch_size:
            self.flush()

    def _record_cache_hit(self, req: ChatRequest, request_hash: str) -> None:
        """Count a request served from the cache: one cache row per request hash and batch (the ledger's key), no
        tokens, latency or cost (nothing was called); mart_llm_costs counts them as cached calls."""
        # the columns it leaves out land as nulls (contract frame + lake)
        row = self._pending_hits.setdefault(request_hash, {
            "request_hash": request_hash, "model": self.model, "purpose": req.purpose, "attempts": 0, "cache_hits": 0})
        row["cache_hits"] += 1

    def flush(self) -> None:
        """Land the pending ledger rows (calls and cache rows) as one new batch partition."""
        if not self._pending and not self._pending_hits:
            return
        batch_id = f"{self.job_run_id}-{self._seq:05d}"
        calls, hits = self._pending, list(self._pending_hits.values())
        self._pending, self._pending_hits = [], {}
        frame = contract("llm_calls").frame(calls + hits)
        self.lake.land_one("llm_calls", batch_id, frame)
        self._seq += 1
        for r in calls:  # cache rows answer nothing: only calls that succeeded fill the cache
            if r["error"] is None and r["response"] is not None:
                self._cache.setdefault(r["request_hash"], {**r, "created_at": None})

    # -- calls ---------------------------------------------------------------------------------------------------
    def _scrub(self, text: str) -> str:
        for s in self._secrets:
            text = text.replace(s, "***")
        return text

    def _describe(self, exc: BaseException) -> str:
        status = getattr(exc, "status_code", None)
        msg = str(exc).splitlines()[0] if str(exc) else ""
        return self._scrub(f"{type(exc).__name__}{f' {status}' if status else ''}: {msg}"[:500])

    async def _call_once(self, client: Any, body: dict[str, Any]) -> tuple[str, int | None, int | None, dict[str, Any]]:
        resp = await client.chat.completions.create(**body)
        if isinstance(resp, (str, bytes)) or not getattr(resp, "choices", None):
            raise MalformedResponse("the endpoint's reply is not a chat completion")
        text = resp.choices[0].message.content
        if text is None:
            raise MalformedResponse("the completion has no message content")
        usage = getattr(resp, "usage", None)
        pt = getattr(usage, "prompt_tokens", None) if usage else None
        ct = getattr(usage, "completion_tokens", None) if usage else None
        return text, pt, ct, {"text": text, "finish_reason": resp.choices[0].finish_reason, "id": resp.id}

    async def _call(self, client: Any, sem: asyncio.Semaphore, req: ChatRequest) -> LLMResult:
        from tenacity import (
            AsyncRetrying,
            retry_if_exception,
            stop_after_attempt,
            wait_exponential_jitter,
        )

        body = req.body(self.model)
        h = request_hash(body)  # the request as asked for: a rerun finds it in the cache whatever was sent
        backoff = wait_exponential_jitter(multiplier=self.config.backoff_initial, max=self.config.backoff_max)

        def wait(state: Any) -> float:
            # a server's Retry-After wins over our own backoff (capped, so a bad header cannot stall a job)
            after = _retry_after(state.outcome.exception() if state.outcome else None)
            return min(after, self.config.backoff_max) if after is not None else backoff(state)

        attempts = 0
        async with sem:
            if self._response_format_refused:  # checked when the call starts, not when it was queued
                body.pop("response_format", None)
            started = time.perf_counter()
            try:
                async for attempt in AsyncRetrying(stop=stop_after_attempt(self.config.max_attempts), wait=wait,
                                                   retry=retry_if_exception(_retryable), reraise=True):
                    with attempt:
                        attempts += 1
                        t0 = time.perf_counter()
                        try:
                            text, pt, ct, response = await self._call_once(client, body)
                        except Exception as exc:
                            if "response_format" not in body or not _refuses_response_format(exc):
                                raise
                            # no structured output here: the same request without it, and none after it
                            if not self._response_format_refused:
                                say("note: the LLM endpoint refuses response_format; the prompt alone asks for "
                                    "the reply's format from here on")
                            self._response_format_refused = True
                            body = {k: v for k, v in body.items() if k != "response_format"}
                            text, pt, ct, response = await self._call_once(client, body)
                        latency = (time.perf_counter() - t0) * 1000
            except Exception as exc:  # noqa: BLE001 - every final failure is recorded, never returned as an answer
                result = LLMResult(h, None, self._describe(exc), latency_ms=(time.perf_counter() - started) * 1000,
                                   attempts=attempts)
                self._record(body, req.purpose, result, None)
                self.calls_made += 1
                return result
        cost = call_cost(self.prices, body["model"], pt, ct)
        result = LLMResult(h, text, None, pt, ct, latency, cost, attempts=attempts)
        self._record(body, req.purpose, result, response)
        self.calls_made += 1
        return result

    async def acomplete_many(self, requests: Sequence[ChatRequest], desc: str = "llm calls") -> list[LLMResult]:
        from openai import AsyncOpenAI

        out: list[LLMResult | None] = [None] * len(requests)
        todo: dict[str, list[int]] = {}
        bodies: dict[str, ChatRequest] = {}
        for i, req in enumerate(requests):
            hit = self.cached(req)
            if hit is not None:
                out[i] = hit
                self.cache_hits += 1
                self._record_cache_hit(req, hit.request_hash)
                continue
            h = request_hash(req.body(self.model))
            todo.setdefault(h, []).append(i)  # identical requests in one job: one call
            bodies.setdefault(h, req)
        if todo:
            client = AsyncOpenAI(base_url=self.base_url, api_key=self.config.api_key or "not-needed",
                                 timeout=self.config.timeout, max_retries=0)  # tenacity retries, not the SDK
            sem = asyncio.Semaphore(max(1, self.config.concurrency))
            bar = progress(total=len(todo), desc=desc, unit="call", enabled=self.progress)
            try:
                async def one(h: str) -> None:
                    res = await self._call(client, sem, bodies[h])
                    for i in todo[h]:
                        out[i] = res
                    bar.update(1)
                    if res.error:
                        bar.set_postfix_str("failures recorded", refresh=False)

                await asyncio.gather(*(one(h) for h in todo))
            finally:
                bar.close()
                await client.close()
        return [r for r in out if r is not None]

    def complete_many(self, requests: Sequence[ChatRequest], desc: str = "llm calls") -> list[LLMResult]:
        """Run the requests (cache first, then concurrently under the limit); results in request order."""
        return asyncio.run(self.acomplete_many(requests, desc))

    def complete(self, request: ChatRequest) -> LLMResult:
        return self.complete_many([request], desc=request.purpose)[0]







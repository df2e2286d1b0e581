"""A local Arize Phoenix server fed with real SDKs, for the Phoenix ingest's test.

The server is arize-phoenix 20.26.1 from a venv of its own (.venv-phoenix, made by the Makefile's test-deps: its pins
differ from the project's), started on free ports with its working directory (SQLite) in a temp dir. The traces go
to its OTLP endpoint /v1/traces through arize-phoenix-otel 0.17.2 (`phoenix.otel.register`: opentelemetry-sdk 1.45.2,
the OTLP HTTP exporter), with OpenInference attributes (openinference-semantic-conventions 0.1.42); the annotations
through arize-phoenix-client 3.5.0 (`Client.spans.log_span_annotations`, annotator_kind LLM / CODE / HUMAN).
`send_traces` returns what it sent (support/otlp_traces.Sent), so a test compares the lake with it.
"""

from __future__ import annotations

import os
import random
import signal
import subprocess
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

from support.browser import free_port, wait_for_url
from support.otlp_traces import T0, Sent, openinference_rag
from support.paths import PROJECT

SERVER = PROJECT / ".venv-phoenix" / "bin" / "phoenix"
VERSIONS = "arize-phoenix 20.26.1 (server), arize-phoenix-otel 0.17.2, opentelemetry-sdk 1.45.2, " \
           "arize-phoenix-client 3.5.0, openinference-semantic-conventions 0.1.42"
PROJECT_NAME = "finrag-app"
APP_VERSION = "3.1"


@contextmanager
def phoenix_server(workdir: Path) -> Iterator[str]:
    """A running Phoenix (its base URL), killed on exit."""
    if not SERVER.exists():
        pytest.fail(f"{SERVER} is missing: `make test-deps` installs the Phoenix server in its own venv")
    port, grpc_port = free_port(), free_port()
    workdir.mkdir(parents=True, exist_ok=True)
    log = workdir / "phoenix.log"
    env = {**os.environ, "PHOENIX_WORKING_DIR": str(workdir), "PHOENIX_PORT": str(port), "PHOENIX_HOST": "127.0.0.1",
           "PHOENIX_GRPC_PORT": str(grpc_port), "PHOENIX_TELEMETRY_ENABLED": "false"}
    with log.open("w") as out:
        proc = subprocess.Popen([str(SERVER), "serve"], env=env, stdout=out, stderr=subprocess.STDOUT,
                                start_new_session=True)
    try:
        url = f"http://127.0.0.1:{port}"
        wait_for_url(f"{url}/healthz", proc, log, timeout=240)
        yield url
    finally:
        os.killpg(proc.pid, signal.SIGTERM)
        try:
            proc.wait(timeout=20)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()


def send_traces(url: str, n: int = 12, labelled: int = 6, repeated: int = 4, seed: int = 11) -> list[Sent]:
    """`n` RAG traces of application version APP_VERSION (root span with the question, a retriever, an LLM span),
    spaced within 2026-11-02 UTC; then span annotations on each LLM span: the LLM judge's correctness (twice on
    `repeated` traces: Phoenix keeps one annotation per name and identifier), a CODE check (`cites_sources`) and,
    on `labelled` traces, a person's correctness (HUMAN)."""
    from phoenix.client import Client
    from phoenix.otel import register

    rng = random.Random(seed)
    provider = register(endpoint=f"{url}/v1/traces", project_name=PROJECT_NAME, batch=False,
                        set_global_tracer_provider=False, verbose=False)
    tracer = provider.get_tracer("finrag-app")
    sent, llm_spans = [], []
    for i in range(n):
        start = T0 + i * 3_600 * 10**9
        question = f"What was the net revenue of company {i} in fiscal {2021 + i % 4}?"
        docs = [(f"doc-{rng.randrange(100)}-{k}", round(0.9 - 0.1 * k - rng.random() / 20, 6), f"passage {k} of {i}")
                for k in range(3)]
        answer = f"Net revenue was ${rng.randrange(10, 900)} million."
        pt, ct = rng.randrange(200, 900), rng.randrange(10, 80)
        latency_ns = rng.randrange(300, 2000) * 10**6
        correct = rng.random() < 0.65
        judge = round(min(1.0, max(0.0, (0.8 if correct else 0.25) + rng.uniform(-0.2, 0.2))), 6)
        s = Sent("", APP_VERSION, question, docs, answer, pt, ct, latency_ns / 1e6, [judge],
                 check=float(i % 3 != 0))
        with tracer.start_as_current_span("rag", start_time=start, end_on_exit=False) as root:
            root.set_attribute("service.version", APP_VERSION)
            llm = openinference_rag(tracer, root, start, question, docs, answer, pt, ct, latency_ns)
            root.end(end_time=start + 80 * 10**6 + latency_ns)
        s.trace_id = format(root.get_span_context().trace_id, "032x")
        if i < repeated:
            s.judge.append(round(min(1.0, max(0.0, judge + rng.uniform(-0.15, 0.15))), 6))
        if i % (n // labelled) == 0:
            s.human = 1.0 if correct else 0.0
        sent.append(s)
        llm_spans.append(format(llm.get_span_context().span_id, "016x"))
    provider.force_flush()
    provider.shutdown()

    client = Client(base_url=url)
    _wait_for_spans(client, PROJECT_NAME, 3 * n)

    def annotation(span_id: str, name: str, kind: str, score: float, **more) -> dict:
        return {"span_id": span_id, "name": name, "annotator_kind": kind,
                "result": {"score": score, "label": "correct" if score >= 0.5 else "incorrect",
                           "explanation": f"{kind.lower()} verdict"}, **more}

    first = [annotation(sp, "correctness", "LLM", s.judge[0], metadata={"model": "gpt-4o"})
             for s, sp in zip(sent, llm_spans)]
    first += [annotation(sp, "cites_sources", "CODE", s.check) for s, sp in zip(sent, llm_spans)]
    first += [annotation(sp, "correctness", "HUMAN", s.human, identifier="reviewer", metadata={"annotator": "ann-1"})
              for s, sp in zip(sent, llm_spans) if s.human is not None]
    client.spans.log_span_annotations(span_annotations=first, sync=True)
    # the judge run again: a second annotation of the same name (its own identifier), made after the first
    client.spans.log_span_annotations(span_annotations=[
        annotation(sp, "correctness", "LLM", s.judge[1], identifier="repeat-2", metadata={"model": "gpt-4o"})
        for s, sp in zip(sent, llm_spans) if len(s.judge) > 1], sync=True)
    return sent


def _wait_for_spans(client, project: str, count: int, timeout: float = 60) -> None:
    """Until Phoenix holds `count` spans in `project`. Phoenix writes spans from a queue after the OTLP request has
    returned and creates the project with its first span, so on a busy machine a poll can find no project yet (404)
    though every span was accepted."""
    import httpx

    deadline = time.monotonic() + timeout
    while True:
        try:
            if len(client.spans.get_spans(project_identifier=project, limit=10 * count)) >= count:
                return
        except httpx.HTTPStatusError as err:
            if err.response.status_code != 404:
                raise
        if time.monotonic() > deadline:
            pytest.fail(f"Phoenix holds fewer than the {count} spans sent to project {project}")
        time.sleep(0.3)


def send_bad_trace(url: str, project: str) -> str:
    """One trace into `project` whose LLM span has a token count that is text; returns that span's id, once Phoenix
    holds the trace."""
    from phoenix.client import Client
    from phoenix.otel import register

    provider = register(endpoint=f"{url}/v1/traces", project_name=project, batch=False,
                        set_global_tracer_provider=False, verbose=False)
    tracer = provider.get_tracer("finrag-app")
    with tracer.start_as_current_span("rag", start_time=T0, end_on_exit=False) as root:
        # the prompt's token count as text ("many"): an attribute of the wrong type
        llm = openinference_rag(tracer, root, T0, "What was the margin?", [("doc-1", 0.5, "passage")], "12%.",
                                "many", 2, 10**8)  # type: ignore[arg-type]
        root.end(end_time=T0 + 2 * 10**8)
    provider.force_flush()
    provider.shutdown()
    _wait_for_spans(Client(base_url=url), project, 3)
    return format(llm.get_span_context().span_id, "016x")

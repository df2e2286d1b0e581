"""Langfuse blob-storage export files in the schema of Langfuse's export field reference (enriched observations
`observations_v2/` as Parquet, the default format since 2026-07, with typed timestamps and usage / cost maps; `scores/`
as JSONL, timestamps `YYYY-MM-DD HH:MM:SS.ffffff` UTC). No Langfuse server runs here, and the `langfuse` SDK writes
to a server, not to blob storage, so the files are written with pyarrow in the documented columns.

`make_export` records the same kind of traffic as support/otlp_traces.py: two releases (1.0, 2.0) of one project,
per trace a root SPAN with the question, a RETRIEVER with its documents and a GENERATION with the answer; EVAL scores
(an LLM judge's correctness, twice on some traces), API scores (a code check, has_citation) and ANNOTATION scores (a
person's correctness) on some. It returns what it sent.
"""

from __future__ import annotations

import json
import random
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq

from support.otlp_traces import Sent

T0 = datetime(2026, 11, 2, tzinfo=UTC)
MODEL = "gpt-4o-mini"
PROJECT = "cm-finrag-prod"
OBSERVATION_SCHEMA = pa.schema([
    ("id", pa.string()), ("trace_id", pa.string()), ("project_id", pa.string()), ("environment", pa.string()),
    ("parent_observation_id", pa.string()), ("type", pa.string()), ("name", pa.string()), ("level", pa.string()),
    ("status_message", pa.string()), ("version", pa.string()), ("start_time", pa.timestamp("us", tz="UTC")),
    ("end_time", pa.timestamp("us", tz="UTC")), ("input", pa.string()), ("output", pa.string()),
    ("metadata", pa.string()), ("provided_model_name", pa.string()),
    ("usage_details", pa.map_(pa.string(), pa.int64())), ("cost_details", pa.map_(pa.string(), pa.float64())),
    ("total_cost", pa.float64()), ("trace_name", pa.string()), ("release", pa.string()), ("user_id", pa.string()),
    ("session_id", pa.string()),
])


def stamp(t: datetime) -> str:
    return t.strftime("%Y-%m-%d %H:%M:%S.%f")


def make_export(out: Path, n_per_version: int = 30, labelled: int = 12, repeated: int = 6,
                seed: int = 11) -> tuple[Path, list[Sent]]:
    """An export folder `out` (observations_v2/<date>.parquet, scores/<date>.jsonl) and what it holds."""
    rng = random.Random(seed)
    observations, scores, sent = [], [], []
    for version in ("1.0", "2.0"):
        n_labelled = 0
        for i in range(n_per_version):
            trace_id = f"{rng.getrandbits(128):032x}"
            start = T0 + timedelta(seconds=i * 1000 + (0 if version == "1.0" else 500))
            question = f"How much did segment {i} of company {i % 7} earn in fiscal {2021 + i % 3} (r{version})?"
            docs = [(f"filing-{rng.randrange(300)}-{k}", round(0.9 - 0.1 * k - rng.random() / 50, 6),
                     f"passage {k} for {i}") for k in range(3)]
            answer = f"It earned ${rng.randrange(1, 90)} million."
            pt, ct = rng.randrange(300, 1200), rng.randrange(10, 90)
            latency = timedelta(milliseconds=rng.randrange(400, 2500))
            cost = round(pt / 1000 * 0.00015 + ct / 1000 * 0.0006, 9)
            correct = rng.random() < (0.75 if version == "1.0" else 0.6)
            judge = round(min(1.0, max(0.0, (0.85 if correct else 0.3) + rng.uniform(-0.2, 0.2))), 6)
            s = Sent(trace_id, version, question, docs, answer, pt, ct, latency.total_seconds() * 1000, [judge],
                     cost=cost, check=float(rng.random() < 0.8))
            root, ret, gen = (f"{rng.getrandbits(64):016x}" for _ in range(3))
            common = {"trace_id": trace_id, "project_id": PROJECT, "environment": "production", "version": None,
                      "level": "DEFAULT", "status_message": None, "metadata": json.dumps({"app": "finrag"}),
                      "provided_model_name": None, "usage_details": None, "cost_details": None, "total_cost": None,
                      "trace_name": "rag-answer", "release": version, "user_id": f"user-{i % 5}",
                      "session_id": f"session-{i}"}
            observations += [
                common | {"id": root, "parent_observation_id": None, "type": "SPAN", "name": "rag-answer",
                          "start_time": start, "end_time": start + latency + timedelta(milliseconds=80),
                          "input": json.dumps({"question": question}), "output": json.dumps({"answer": answer})},
                common | {"id": ret, "parent_observation_id": root, "type": "RETRIEVER", "name": "filings-index",
                          "start_time": start + timedelta(milliseconds=1), "end_time": start + timedelta(
                              milliseconds=50), "input": json.dumps({"query": question}),
                          "output": json.dumps([{"id": d, "score": sc, "content": c} for d, sc, c in docs])},
                common | {"id": gen, "parent_observation_id": root, "type": "GENERATION", "name": "answer",
                          "start_time": start + timedelta(milliseconds=60),
                          "end_time": start + timedelta(milliseconds=60) + latency,
                          "input": json.dumps([{"role": "system", "content": "Answer from the passages."},
                                               {"role": "user", "content": question}]),
                          "output": json.dumps({"role": "assistant", "content": answer}),
                          "provided_model_name": MODEL, "usage_details": {"input": pt, "output": ct, "total": pt + ct},
                          "cost_details": {"input": round(pt / 1000 * 0.00015, 9),
                                           "output": round(ct / 1000 * 0.0006, 9), "total": cost},
                          "total_cost": cost},
            ]
            at = start + timedelta(seconds=5)

            def score(name: str, value: float, source: str, when: datetime, author: str | None = None,
                      observation: str | None = gen, trace_id: str = trace_id) -> dict:
                return {"id": f"{rng.getrandbits(64):016x}", "timestamp": stamp(when), "project_id": PROJECT,
                        "environment": "production", "trace_id": trace_id, "observation_id": observation,
                        "session_id": None, "name": name, "value": value, "source": source,
                        "comment": f"{source.lower()} says {value}", "author_user_id": author,
                        "config_id": None, "data_type": "NUMERIC", "string_value": None, "queue_id": None}

            scores.append(score("correctness", judge, "EVAL", at))
            if i < repeated:
                s.judge.append(round(min(1.0, max(0.0, judge + rng.uniform(-0.15, 0.15))), 6))
                scores.append(score("correctness", s.judge[1], "EVAL", at + timedelta(seconds=1)))
            scores.append(score("has_citation", s.check, "API", at, observation=None) | {"data_type": "BOOLEAN",
                                                                                          "string_value": "True" if
                                                                                          s.check else "False"})
            if i % 2 == 0 and n_labelled < labelled:
                n_labelled += 1
                s.human = 1.0 if correct else 0.0
                scores.append(score("correctness", s.human, "ANNOTATION", at + timedelta(hours=2),
                                    author=f"annotator-{i % 3}"))
            sent.append(s)
    (out / "observations_v2").mkdir(parents=True, exist_ok=True)
    (out / "scores").mkdir(parents=True, exist_ok=True)
    pq.write_table(pa.Table.from_pylist(observations, schema=OBSERVATION_SCHEMA),
                   out / "observations_v2" / "2026-11-02.parquet", row_group_size=64)
    (out / "scores" / "2026-11-02.jsonl").write_text("".join(json.dumps(x) + "\n" for x in scores))
    return out, sent

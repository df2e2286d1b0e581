"""What the LLM query-rewriting retriever tests (hyde, multi_hyde, llm_expand; library and CLI) share: the API key
they pass, the toy questions' texts, the scripted passage for q4, and a retrieval run's params."""

from __future__ import annotations

import json

from python_jobs.core.lake import Lake
from support.toy_corpus import QUESTIONS

KEY = "sk-hyde-test-SECRET-5c1f0a"
TEXT = {q: t for q, t, _ in QUESTIONS}
# q4 asks for Globex's cash and quick ratio; the scripted passage reads like the page that holds the cash figure
Q4_PASSAGE = "Globex repurchased shares and paid a dividend in the quarter; cash and equivalents totaled $95 million."


def params(lake: Lake, run_id: str) -> dict:
    return json.loads(lake.read_partition("retrieval_runs", run_id)["params"][0])

"""`run_retrieval` over a config of flat settings, as the tests write them: `retrieve(home, DATASET, "hybrid", k=5,
rrf_k=10)` builds RetrievalConfig.from_dict({"dataset": DATASET, "retriever": "hybrid", "k": 5, "rrf_k": 10}) (an
InputError for a bad setting, as for any dict) and runs it without progress bars."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from python_jobs.core.lake import Lake
from python_jobs.core.shards import Shard
from python_jobs.llm.config import LLMConfig
from python_jobs.retrieval.runs import RetrievalConfig, run_retrieval


def retrieve(home: Path | str, dataset: str, retriever: str, *, llm_config: LLMConfig | None = None,
             shard: Shard | None = None, **settings: Any) -> dict[str, object]:
    cfg = RetrievalConfig.from_dict({"dataset": dataset, "retriever": retriever, **settings})
    return run_retrieval(Lake(home), cfg, llm_config=llm_config, progress=False, shard=shard)

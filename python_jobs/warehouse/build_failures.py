"""What a failed `finrag build` says beyond dbt's own log: a model that ran out of memory under the DuckDB profile's
limit is named with the limit, how to raise it and how to spread the work, instead of DuckDB's generic advice.

dbt has already refused to publish (macros/publishing/publish_marts.sql publishes only a build in which every node
succeeded), so the readers keep the previous build's marts.
"""

from __future__ import annotations

import json
import os
import re
from pathlib import Path

from python_jobs.core.config import PROJECT_DIR

MEMORY_LIMIT_ENV = "FINRAG_DUCKDB_MEMORY_LIMIT"
# DuckDB's OutOfMemoryException, as dbt records the failed node's message in run_results.json
_OUT_OF_MEMORY = re.compile(r"Out of Memory Error", re.IGNORECASE)


def profile_memory_limit() -> str:
    """The DuckDB memory limit a build runs under: the variable when set, else profiles.yml's default (its one home)."""
    if os.environ.get(MEMORY_LIMIT_ENV):
        return os.environ[MEMORY_LIMIT_ENV]
    text = (PROJECT_DIR / "profiles.yml").read_text()
    found = re.search(rf"env_var\('{MEMORY_LIMIT_ENV}',\s*'([^']+)'\)", text)
    return found.group(1) if found else "DuckDB's default (80 % of RAM)"


def out_of_memory_nodes(target_dir: Path) -> list[str]:
    """The nodes of the last dbt invocation under target_dir that failed for want of memory, as 'model <name>' or
    'data test <name>'."""
    results = target_dir / "run_results.json"
    if not results.exists():
        return []
    nodes = json.loads(results.read_text()).get("results", [])
    kinds = {"model": "model", "test": "data test", "unit_test": "unit test", "seed": "seed"}
    return [f"{kinds.get(kind, kind)} {name}" for node in nodes
            if node.get("status") in ("error", "fail") and _OUT_OF_MEMORY.search(node.get("message") or "")
            for kind, _, name in [node["unique_id"].split(".", 2)]]


def out_of_memory_advice(nodes: list[str]) -> str:
    limit = profile_memory_limit()
    return (f"{', '.join(nodes)} ran out of memory under the DuckDB memory limit of {limit} (profiles.yml, "
            f"{MEMORY_LIMIT_ENV}); nothing was published: the readers keep the previous build. Raise the limit, e.g. "
            f"`{MEMORY_LIMIT_ENV}=16GB finrag build`, with free disk beside the warehouse for what DuckDB spills; "
            "or build on Spark, where the same models spread over a cluster's executors: `finrag build --target "
            "spark` (README, Scaling); or land a large benchmark as several runs of question shards (`--shard I/N` "
            "on retrieve, answer and judge) and build after each: the retrieval models compute only the runs a "
            "build has not seen.")

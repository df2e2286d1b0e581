"""dbt-duckdb plugin: makes sure the lake exists (typed empty placeholders, so every source binds on a fresh
home) and registers the project's scalar text metrics (python_jobs/warehouse/text_metrics.py) and the run comparison's
statistics (python_jobs/warehouse/paired_tests.py) on every connection dbt opens."""

from __future__ import annotations

from typing import Any

from dbt.adapters.duckdb.plugins import BasePlugin

from python_jobs.core.lake import ensure_lake
from python_jobs.warehouse import paired_tests
from python_jobs.warehouse.text_metrics import register_duckdb_functions, register_duckdb_macros


class Plugin(BasePlugin):
    def initialize(self, plugin_config: dict[str, Any]) -> None:
        ensure_lake()

    def configure_connection(self, conn: Any) -> None:
        # rouge_l_f, token_f1, exact_match, bleu, numeric_match, numeric_gold, first_words
        register_duckdb_functions(conn)
        # paired_tests: the run comparison's bootstrap interval, paired t-test and randomization test
        paired_tests.register_duckdb_functions(conn)

    def configure_cursor(self, cursor: Any) -> None:
        register_duckdb_macros(cursor)

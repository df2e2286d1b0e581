"""dbt-duckdb plugin: makes sure the lake exists (typed empty placeholders, so every source binds on a fresh
home), holds it still for the run (Lake.reading), prepares the published state's directory (and deletes exports no
manifest names any more: python_jobs/warehouse/publishing.py), and registers the project's scalar text metrics
(python_jobs/stats/text_metrics.py), the run comparison's statistics (python_jobs/stats/paired_tests.py)
and the t quantile (python_jobs/stats/student_t.py) on every connection dbt opens."""

from __future__ import annotations

from typing import Any

from dbt.adapters.duckdb.plugins import BasePlugin

from python_jobs.core.lake import Lake
from python_jobs.stats import paired_tests, sql_functions, student_t, unpaired_tests
from python_jobs.stats.text_metrics import register_duckdb_functions, register_duckdb_macros
from python_jobs.warehouse import publishing


class Plugin(BasePlugin):
    def initialize(self, plugin_config: dict[str, Any]) -> None:
        # the lake as one view for the whole dbt run: landings wait for the build (and the build for a landing's
        # swap), so no model reads one table of a load new and another old; released when dbt exits
        self._lake_view = Lake().reading()
        self._lake_view.__enter__()
        publishing.prepare()

    def configure_connection(self, conn: Any) -> None:
        existing = sql_functions.scalar_functions(conn)  # read once for the four modules below
        # rouge_l_f, token_f1, exact_match, bleu, numeric_match, numeric_gold, first_words
        register_duckdb_functions(conn, existing)
        # paired_tests: the run comparison's bootstrap interval, paired t-test and randomization test
        paired_tests.register_duckdb_functions(conn, existing)
        # welch_tests, comparison_test: the unpaired comparison of runs that share no questions, and which test
        unpaired_tests.register_duckdb_functions(conn, existing)
        # student_t_quantile: the t-intervals of mart_sweep_parameter_effects
        student_t.register_duckdb_functions(conn, existing)
        # sql_function_version: what the registered functions compute with (the models' run versions include it)
        sql_functions.register_duckdb_version_function(conn, existing)

    def configure_cursor(self, cursor: Any) -> None:
        register_duckdb_macros(cursor)

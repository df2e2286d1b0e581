"""dbt-duckdb plugin: makes sure the lake exists (typed empty placeholders, so every source binds on a fresh
home). Later issues register the text-metric functions here too."""

from __future__ import annotations

from typing import Any

from dbt.adapters.duckdb.plugins import BasePlugin

from .lake import ensure_lake


class Plugin(BasePlugin):
    def initialize(self, plugin_config: dict[str, Any]) -> None:
        ensure_lake()

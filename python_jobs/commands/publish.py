"""`finrag publish`: publish every mart and seed of the warehouse again (a build publishes what it built by itself:
macros/publishing/publish_marts.sql), e.g. after a build run with FINRAG_PUBLISH=0."""

from __future__ import annotations

import click

from python_jobs.core.console import say
from python_jobs.warehouse.publishing import exports_dir, publish


@click.command("publish")
def command() -> None:
    """Export every mart and seed to <home>/exports/marts (Parquet files and _manifest.json)."""
    manifest = publish()
    for model in manifest.models.values():
        click.echo(f"{model.name}\t{model.rows}")
    say(f"published {len(manifest.models)} marts and seeds to {exports_dir()}")

"""`finrag publish`: write every mart to Parquet under <home>/exports/marts (`finrag build` does it after a build)."""

from __future__ import annotations

import click

from python_jobs.core.console import say
from python_jobs.warehouse.publishing import PublishError, exports_dir, publish


@click.command("publish")
def command() -> None:
    """Export every mart (dim_*, fct_*, mart_*) and seed to <home>/exports/marts/<name>.parquet and _manifest.json."""
    try:
        published = publish()
    except PublishError as exc:
        raise click.ClickException(str(exc)) from None
    for p in published:
        click.echo(f"{p.name}\t{p.rows}")
    say(f"published {len(published)} marts to {exports_dir()}")

"""`finrag contracts generate|check`: the dbt sources and staging models, generated from the lake's contracts."""

from __future__ import annotations

import sys

import click

from python_jobs.core.console import say
from python_jobs.warehouse.dbt_codegen import stale_files, write_generated


@click.group("contracts")
def command() -> None:
    """The lake's table contracts (python_jobs/core/contracts.yml) and the dbt files generated from them."""


@command.command("generate")
def generate_cmd() -> None:
    """Write models/staging/ (sources, docs blocks, stg_lake__* models and their tests) from the contracts."""
    changed = write_generated()
    for path in changed:
        click.echo(f"wrote {path}")
    say(f"{len(changed)} generated file(s) changed")


@command.command("check")
def check_cmd() -> None:
    """Exit 1 when a generated file differs from what the contracts generate (a hand edit, or a stale file)."""
    stale = stale_files()
    for path in stale:
        click.echo(f"differs from the contract: {path}", err=True)
    if stale:
        click.echo("run `finrag contracts generate` (and edit python_jobs/core/contracts.yml, not the files)", err=True)
        sys.exit(1)
    say("generated files match the contracts")

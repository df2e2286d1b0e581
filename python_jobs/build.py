"""`finrag build`: `dbt build` over the lake into the warehouse file (refreshes every metric)."""

from __future__ import annotations

import sys

import click

from .dbt_runner import run_dbt


@click.command("build", context_settings={"ignore_unknown_options": True, "allow_extra_args": True})
@click.option("--quiet", is_flag=True, help="Only dbt's errors.")
@click.pass_context
def command(ctx: click.Context, quiet: bool) -> None:
    """Run `dbt build` (extra arguments go to dbt, e.g. `--select marts`)."""
    code = run_dbt(["build", *ctx.args], quiet=quiet)
    if code:
        sys.exit(code)

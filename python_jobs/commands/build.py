"""`finrag build`: `dbt build` over the lake into the warehouse file (refreshes every metric), then publishes the
marts as Parquet under <home>/exports/marts for the dashboard and BI tools (skip with --no-publish)."""

from __future__ import annotations

import sys

import click

from python_jobs.warehouse.dbt_runner import run_dbt
from python_jobs.warehouse.publishing import PublishError, exports_dir, publish


@click.command("build", context_settings={"ignore_unknown_options": True, "allow_extra_args": True})
@click.option("--quiet", is_flag=True, help="Only dbt's errors.")
@click.option("--no-publish", is_flag=True, help="Do not export the marts to Parquet after the build.")
@click.pass_context
def command(ctx: click.Context, quiet: bool, no_publish: bool) -> None:
    """Run `dbt build` (extra arguments go to dbt, e.g. `--select marts`), then publish the marts."""
    code = run_dbt(["build", *ctx.args], quiet=quiet)
    if code:
        sys.exit(code)
    if not no_publish:
        # only after a successful build: a failed one leaves the previous exports in place
        try:
            published = publish()
        except PublishError as exc:
            raise click.ClickException(f"dbt build succeeded, but publishing the marts failed: {exc}") from None
        click.echo(f"published {len(published)} marts to {exports_dir()}", err=True)

"""`finrag build`: `dbt build` over the lake into the warehouse file (refreshes every metric). dbt itself publishes the
marts as Parquet under <home>/exports/marts for the readers (macros/publishing/publish_marts.sql; --no-publish sets
FINRAG_PUBLISH=0), so this is a convenience over a plain `dbt build`, never a second path: the same build, planned.

Without dbt arguments it builds only what the lake's changes since the last build reach (build_plan.py): the
models downstream of each changed lake table and their data tests; dbt republishes the marts it rebuilt.
dbt unit tests check the project's SQL, not the data, so a build leaves them out unless asked (--unit-tests), as
dbt recommends for production builds."""

from __future__ import annotations

import sys

import click

from python_jobs.commands._options import target_option
from python_jobs.core.config import warehouse_home
from python_jobs.core.console import QUIET, VERBOSE, say, verbosity
from python_jobs.warehouse import build_plan
from python_jobs.warehouse.build_failures import out_of_memory_advice, out_of_memory_nodes
from python_jobs.warehouse.dbt_runner import run_dbt, target_path
from python_jobs.warehouse.publishing import exports_dir


@click.command("build", context_settings={"ignore_unknown_options": True, "allow_extra_args": True})
@click.option("--no-publish", is_flag=True,
              help="Do not publish the marts (readers then say the published state is stale until `finrag publish`).")
@click.option("--all", "build_all", is_flag=True,
              help="Build every model, not only those downstream of the lake tables that changed.")
@click.option("--unit-tests", is_flag=True, help="Also run dbt's unit tests (the hand-worked cases of the SQL).")
@target_option
@click.pass_context
def command(ctx: click.Context, no_publish: bool, build_all: bool, unit_tests: bool, target: str) -> None:
    """Run `dbt build` (extra arguments go to dbt, e.g. `--select marts`), which publishes the marts."""
    home = warehouse_home()
    quiet = verbosity() <= QUIET  # --quiet: dbt's errors only (--verbose: dbt's debug log too)
    args = list(ctx.args)
    excluded = [] if unit_tests else ["--exclude-resource-type", "unit_test"]
    debug = ["--debug"] if verbosity() >= VERBOSE else []
    if target != "dev":
        # Spark rebuilds every model whole (macros/cross_db/incremental_materialization.sql), so there is no plan
        # to make; its tables are Parquet already (<home>/spark/warehouse), read by `finrag sql/report --target`
        code = run_dbt([*debug, "build", *args, *excluded], quiet=quiet, target=target)
        if code:
            sys.exit(code)
        say(f"built the warehouse on {target} under {home / 'spark'}")
        return
    whole = all(a == "--full-refresh" for a in args)  # a build of everything, with the project's own vars
    snapshot = build_plan.lake_snapshot(home) if whole else None
    select: list[str] = []
    if whole and not build_all and "--full-refresh" not in args:
        p = build_plan.plan(home)
        if p.select == []:
            say(f"nothing to build: {p.reason}")
            return
        if p.select is not None:
            select = ["--select", *p.select]
        if not quiet:
            what = "the models downstream of " + ", ".join(p.changed_tables) if select else "every model"
            say(f"building {what}: {p.reason}")
    if not whole:
        build_plan.forget(home)  # a subset, or other vars: the next plain build must not trust the record
    # same code as the last recorded build, only lake changes: data tests read the rows this build touched
    env = {"FINRAG_TEST_SCOPE": "touched" if select else "all", "FINRAG_PUBLISH": "0" if no_publish else "1"}
    code = run_dbt([*debug, "build", *args, *select, *excluded], quiet=quiet, env=env)
    if code:
        starved = out_of_memory_nodes(target_path(home))
        if starved:
            click.echo(f"error: {out_of_memory_advice(starved)}", err=True)
        sys.exit(code)
    if snapshot is not None:
        build_plan.record(home, snapshot)
    if not no_publish:
        say(f"published the marts to {exports_dir()}")

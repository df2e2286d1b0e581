"""`finrag sweep <grid.yaml>`: run a grid of retrieval (or answer) configurations over a dataset, resumably.

The grid file is documented in python_jobs/sweeps/grid.py, the rules and decisions in python_jobs/sweeps/runs.py.
"""

from __future__ import annotations

import click

from python_jobs.commands._options import Produced, llm_options, produces, shard_option, sigterm_as_interrupt
from python_jobs.core.console import say
from python_jobs.core.lake import Lake
from python_jobs.core.shards import Shard
from python_jobs.llm.config import LLMConfig
from python_jobs.sweeps.grid import read_grid
from python_jobs.sweeps.runs import plan_sweep, run_sweep


@click.command("sweep")
@produces
@click.argument("grid_file", metavar="GRID.yaml")
@click.option("--dry-run", is_flag=True,
              help="Check the grid and list its configurations (landed, to run, another shard's); run nothing.")
@llm_options()
@shard_option("configurations", help=(
    "Run shard I of N (1 <= I <= N): configurations I, I+N, I+2N, ... of the grid's order, each a whole run (run "
    "every shard with the same grid; the sweep's rows are the same from any shard)."))
def command(grid_file: str, dry_run: bool, llm_config: LLMConfig, shard: Shard | None) -> Produced:
    """Run a grid of configurations over a dataset (skipping the runs already landed); print the sweep id."""
    lake = Lake()
    plan = plan_sweep(lake, read_grid(grid_file), llm_config)
    # SIGTERM like Ctrl-C: an LLM run's finally lands the calls already made and stops the embedded server
    sigterm_as_interrupt()
    summary = run_sweep(lake, plan, llm_config, shard=shard, dry_run=dry_run)
    if dry_run and not click.get_current_context().params.get("as_json"):
        for row in summary.pop("plan"):
            values = ", ".join(f"{k}={v}" for k, v in row["parameters"].items())
            say(f"{row['status']:>11}  {row['run_id']}  {values}")
    return plan.sweep_id, summary

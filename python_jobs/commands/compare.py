"""`finrag compare --run-a A --run-b B`: is run B better than run A, metric by metric, with the bootstrap interval
of the difference, the paired t-test and randomization p-values (or, for runs that share no questions - two
versions' production traffic - Welch's t-test and a bootstrap of the difference of means), the Holm-adjusted p and
Tukey's HSD p (mart_run_comparison, or computed on demand for a pair the build does not compare).

    --format table   the pair, where its numbers come from (source: mart / on demand) and the tests used, then a row
                     per metric (granularity, k): role (best / baseline / pair; '-' when run A is no reference),
                     stat_test (paired_t on the shared questions, welch_t on each run's own where the runs share
                     no or too few), n_questions (shared), n_a and n_b (the questions each side's mean is over),
                     mean_a, mean_b, delta (B - A), wins / ties / losses (B's), ci_low, ci_high, p_ttest,
                     p_randomization, p_holm ('-' outside a family of comparisons), p_tukey, tied_with_best ('yes'
                     when A is the best and B not distinguishable from it) (judge runs: n_not_ok_a / n_not_ok_b, the
                     judgments left out)
    --format json    a list of objects with every column of the mart and `source`

The rules and decisions are documented in python_jobs/marts/comparisons.py, paired_tests.py and unpaired_tests.py.
"""

from __future__ import annotations

import json
import sys

import click
import polars as pl

from python_jobs.core.rules import GRANULARITIES
from python_jobs.marts.comparisons import WHOLE_RANKING, run_comparison

P_VALUES = ("p_ttest", "p_randomization", "p_holm", "p_tukey")
TABLE_COLUMNS = ("metric", "granularity", "k", "role", "stat_test", "n_questions", "n_a", "n_b", "mean_a", "mean_b",
                 "delta", "wins", "ties", "losses", "ci_low", "ci_high", "p_ttest", "p_randomization", "p_holm",
                 "p_tukey", "tied_with_best")
TESTS = ("paired: on the n_questions both runs were scored on; unpaired (the runs share no or too few questions): "
         "each run's own n_a and n_b questions, Welch's t and a bootstrap of the difference of means")
SOURCES = {"mart": "mart_run_comparison",
           "on demand": "on demand: the build does not compare this pair; computed now from the published scores"}


@click.command("compare")
@click.option("--run-a", required=True, help="Run A, the baseline (retrieval, answer or judge run id).")
@click.option("--run-b", required=True, help="Run B, compared with A (same kind and dataset); differences are B - A.")
@click.option("--metric", "metrics", multiple=True, help="Only these metrics (e.g. ndcg, rouge_l); repeatable.")
@click.option("--granularity", type=click.Choice(GRANULARITIES), default=None, help="Retrieval: only this granularity.")
@click.option("--k", "ks", type=int, multiple=True,
              help=f"Retrieval cut-offs (repeatable; default {WHOLE_RANKING} = the whole ranking).")
@click.option("--format", "fmt", type=click.Choice(["table", "json"]), default="table", show_default=True)
def command(run_a: str, run_b: str, metrics: tuple[str, ...], granularity: str | None, ks: tuple[int, ...],
            fmt: str) -> None:
    """Compare two runs on the questions both were scored on (unpaired when they share none): difference, 95 %
    interval, p-values."""
    frame = run_comparison(run_a, run_b, metrics, granularity, ks or (WHOLE_RANKING,))
    if fmt == "json":
        sys.stdout.write(json.dumps(frame.to_dicts(), ensure_ascii=False, indent=1) + "\n")
        return
    first = frame.row(0, named=True)
    click.echo(f"A = {run_a}  B = {run_b}  ({first['run_kind']}, dataset {first['dataset']}; delta = B - A, "
               "wins / losses = questions where B is better / worse)")
    click.echo(f"source: {SOURCES.get(first['source'], first['source'])}")
    tests = [t for t in frame["stat_test"].unique(maintain_order=True).to_list() if t is not None]
    click.echo(f"test: {', '.join(tests) or '-'} ({TESTS})")
    columns = [*TABLE_COLUMNS, *(["n_not_ok_a", "n_not_ok_b"] if first["run_kind"] == "judge" else [])]
    # p-values with 3 significant digits (a fixed 4 decimals would print 0.0000 for a p of 2e-06); '-' where a row
    # has none (no role: no Holm family; no statistics)
    shown = frame.select(columns).with_columns(
        *(pl.col(p).map_elements(lambda v: f"{v:.3g}", return_dtype=pl.String).fill_null("-") for p in P_VALUES),
        pl.col("role").fill_null("-"), pl.col("stat_test").fill_null("-"),
        pl.when(pl.col("tied_with_best")).then(pl.lit("yes")).otherwise(pl.lit("")).alias("tied_with_best"))
    with pl.Config(tbl_rows=-1, tbl_cols=-1, tbl_width_chars=250, float_precision=4, tbl_hide_dataframe_shape=True,
                   tbl_hide_column_data_types=True):
        click.echo(shown)

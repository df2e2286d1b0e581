"""`finrag report --run-id ID`: a retrieval run's metrics, read from the marts the last `dbt build` published.

    --format trec    trec_eval's layout, `measure<TAB>all<TAB>value` (num_q, num_ret, num_rel, num_rel_ret, and
                     the trec_eval measures the metric registry names - map, map_cut_k, recip_rank, ndcg,
                     ndcg_cut_k, P_k, recall_k for every k of var retrieval_ks), at full precision (12 decimals
                     instead of trec_eval's 4)
    --format table   the leaderboard rows (or, with --slice, the by-slice rows) as a table
    --format json    the same rows as JSON

`finrag report --judged [--run-id JUDGE_OR_ANSWER_RUN]`: every judged mean with how far it can be trusted
(calibrated, uncalibrated, or no better than chance against humans: mart_judge_trust); with `--slice DIMENSION`,
each calibrated judged mean per stratum of the dimension and the strata combined (stratified PPI++:
mart_judge_calibrated_by_slice).

The rules and decisions are documented in python_jobs/marts/reports.py.
"""

from __future__ import annotations

import json
import sys

import click
import polars as pl

from python_jobs.commands._options import target_option
from python_jobs.core.errors import InputError
from python_jobs.core.rules import GRANULARITIES, SLICE_CROSSINGS, SLICE_DIMENSIONS
from python_jobs.marts.reports import judged_means, judged_means_by_slice, leaderboard, slices, trec_lines


@click.command("report")
@click.option("--run-id", default=None, help="The retrieval run to report (with --judged: a judge run, or an answer "
              "run whose judge runs to report; default all).")
@click.option("--judged", is_flag=True, help="Judged means with how far each can be trusted (calibrated, "
              "uncalibrated, no better than chance against humans) instead of a retrieval run's metrics.")
@click.option("--format", "fmt", type=click.Choice(["trec", "table", "json"]), default="table", show_default=True)
@click.option("--granularity", type=click.Choice(GRANULARITIES), default=None,
              help="Granularity (trec format: default chunk, the docno of TREC runs; table/json: all).")
@click.option("--complete", is_flag=True, help="trec: count qrels questions missing from the run as 0 (trec_eval -c).")
@click.option("--slice", "dimensions", multiple=True,
              help=f"table/json: means by this slice dimension ({', '.join(SLICE_DIMENSIONS + SLICE_CROSSINGS)}); "
                   "repeatable. With --judged: calibrated means per stratum of it and the strata combined.")
@click.option("--metric", "metrics", multiple=True, help="table/json: only these metrics (e.g. doc_rec, map).")
@click.option("--k", "ks", type=int, multiple=True, help="table/json: only these cut-offs (0 = whole ranking).")
@target_option
def command(run_id: str | None, judged: bool, fmt: str, granularity: str | None, complete: bool,
            dimensions: tuple[str, ...], metrics: tuple[str, ...], ks: tuple[int, ...], target: str) -> None:
    """Print a retrieval run's metrics (trec_eval format, a table, or JSON), or the judged means, from the marts."""
    if judged:
        if fmt == "trec" or ks or granularity or complete:
            raise InputError("--judged takes --run-id, --metric, --slice and --format table or json", field="judged")
        unsliced = [d for d in dimensions if d not in SLICE_DIMENSIONS]
        if unsliced:
            raise InputError(f"--judged --slice takes a slice dimension ({', '.join(SLICE_DIMENSIONS)}), not "
                             f"{', '.join(unsliced)}", field="slice")
        frame = judged_means_by_slice(run_id, dimensions, target) if dimensions else judged_means(run_id, target)
        metric = "predictor" if dimensions else "metric"
        if metrics:
            frame = frame.filter(pl.col(metric).is_in(list(metrics)))
        if fmt == "json":
            sys.stdout.write(json.dumps(frame.to_dicts(), ensure_ascii=False, indent=1) + "\n")
            return
        shown = (("predictor_run_id", "predictor", "predictor_mean", "trust") if dimensions else
                 ("judge_run_id", "metric", "mean", "n_ok", "n_not_applicable", "n_failed", "trust"))
        with pl.Config(tbl_rows=-1, fmt_str_lengths=400, tbl_width_chars=600, float_precision=4,
                       tbl_hide_dataframe_shape=True, tbl_hide_column_data_types=True):
            click.echo(frame.select(*shown))
        return
    if run_id is None:
        raise InputError("--run-id is required (or --judged)", field="run_id")
    if fmt == "trec":
        if dimensions or metrics or ks:
            raise InputError("--slice / --metric / --k apply to --format table or json", field="format")
        for measure, value in trec_lines(run_id, granularity or "chunk", complete, target):
            click.echo(f"{measure:<22}\tall\t{value}")
        return
    frame = slices(run_id, dimensions, target) if dimensions else leaderboard(run_id, target)
    if granularity:
        frame = frame.filter(pl.col("granularity") == granularity)
    if metrics:
        frame = frame.filter(pl.col("metric").is_in(list(metrics)))
    if ks:
        frame = frame.filter(pl.col("k").is_in(list(ks)))
    if fmt == "json":
        sys.stdout.write(json.dumps(frame.to_dicts(), ensure_ascii=False, indent=1) + "\n")
    else:
        with pl.Config(tbl_rows=-1, tbl_cols=20, fmt_str_lengths=60, tbl_width_chars=200, float_precision=6):
            click.echo(frame)

"""`finrag calibrate`: declare which automated metrics predict a human label set's metric.

    finrag calibrate --label-set financebench_human --human-metric correctness --predictor numeric_match

The rules and decisions are documented in python_jobs/judge/calibration.py.
"""

from __future__ import annotations

import click

from python_jobs.commands._options import Produced, produces
from python_jobs.core.console import say
from python_jobs.core.lake import Lake, check_id
from python_jobs.judge.calibration import declare_pairings


@click.command("calibrate")
@produces
@click.option("--label-set", required=True, help="The human label set (a `human_labels` partition).")
@click.option("--human-metric", required=True, help="The metric the label set labels (e.g. correctness).")
@click.option("--predictor", "predictors", multiple=True, required=True,
              help="A per-answer metric that predicts the human label: lexical (numeric_match, rouge_l, token_f1, "
                   "...) or judged (each judge run's over the labelled answer runs); repeatable.")
def command(label_set: str, human_metric: str, predictors: tuple[str, ...]) -> Produced:
    """Declare the predictors prediction-powered inference calibrates a human label set's metric with."""
    check_id(label_set, "label set")
    frame = declare_pairings(Lake(), label_set, human_metric, predictors)
    say(f"landed calibration_pairings label_set={label_set}: {human_metric} predicted by "
        + ", ".join(frame.filter(frame["human_metric"] == human_metric)["predictor"].to_list())
        + " (mart_judge_calibrated after `finrag build`)")
    return label_set, {"label_set": label_set, "human_metric": human_metric, "predictors": list(predictors)}

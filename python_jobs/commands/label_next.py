"""`finrag label-next --answer-run RUN --n N [--label-set L]`: which answers people should label next.

    finrag label-next --answer-run gpt-4_oracle --n 20 --label-set fb_active --predictor correctness --out next.jsonl
    # a person fills in each line's "score" (and annotator), then:
    finrag import-human-labels next.jsonl --label-set fb_active

Writes the N unlabelled answers whose labels would narrow the calibrated interval most, drawn with probabilities from
the predictor's uncertainty (active statistical inference, Zrnic and Candès 2024), and lands each candidate's
probability in `label_requests`, which mart_judge_calibrated's active_* mean weights the labels by. The rules and
decisions are documented in python_jobs/labelling/requests.py and python_jobs/labelling/design.py.
"""

from __future__ import annotations

from pathlib import Path

import click

from python_jobs.commands._options import Produced, produces
from python_jobs.core.console import say
from python_jobs.core.errors import InputError
from python_jobs.core.lake import Lake, check_id
from python_jobs.labelling.requests import choose

DEFAULT_LABEL_SET = "label_next"


@click.command("label-next")
@produces
@click.option("--answer-run", required=True, help="The answer run to choose answers from.")
@click.option("--n", "n", type=int, required=True, help="How many answers to label (at most its unlabelled ones).")
@click.option("--label-set", default=DEFAULT_LABEL_SET, show_default=True,
              help="The human label set the labels will land in (its labels of the run are not asked for again).")
@click.option("--metric", default="correctness", show_default=True, help="The judged metric people will label.")
@click.option("--predictor", default=None,
              help="The per-answer metric whose uncertainty chooses (lexical, or judged: every judge run's repeats); "
                   "default: the one the label set pairs with --metric (`finrag calibrate`), when it pairs one.")
@click.option("--seed", type=int, default=0, show_default=True, help="The draw's seed (same seed, same answers).")
@click.option("--out", type=click.Path(dir_okay=False, path_type=Path), default=None,
              help="The label file to write (default: <label-set>-<answer-run>.jsonl here).")
def command(answer_run: str, n: int, label_set: str, metric: str, predictor: str | None, seed: int,
            out: Path | None) -> Produced:
    """Choose the unlabelled answers whose human labels would narrow the calibrated interval most."""
    check_id(label_set, "label set")
    lake = Lake()
    if predictor is None:
        pairings = lake.read("calibration_pairings", where={"label_set": label_set}, columns=["human_metric",
                                                                                              "predictor"])
        declared = sorted(set(pairings.filter(pairings["human_metric"] == metric)["predictor"].to_list()))
        if len(declared) != 1:
            raise InputError(f"name the --predictor: label set {label_set!r} pairs {metric} with "
                             f"{', '.join(declared) if declared else 'no predictor'}", field="predictor")
        predictor = declared[0]
    out = out or Path(f"{label_set}-{answer_run}.jsonl")
    got = choose(lake, answer_run=answer_run, n=n, label_set=label_set, metric=metric, predictor=predictor,
                 seed=seed, out=out)
    say(f"wrote {out}: {got['chosen']} of run {answer_run}'s {got['candidates']} unlabelled answers to label with "
        f"{metric} ({got['labelled']} already labelled in {label_set}; chosen by {predictor}'s uncertainty"
        + (f", {got['unscored']} answers it did not score counted as uncertain as any" if got["unscored"] else "")
        + f"); landed label_requests label_set={label_set}. Fill in each line's score, then "
        f"`finrag import-human-labels {out} --label-set {label_set}`")
    return got["request_id"], {"request_id": got["request_id"], "label_set": label_set, "answer_run": answer_run,
                               "metric": metric, "predictor": predictor, "n": got["chosen"], "out": str(out)}

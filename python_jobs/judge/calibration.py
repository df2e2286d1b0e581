"""`finrag calibrate`: declare which automated per-answer metrics predict a human label set's metric.

    finrag calibrate --label-set financebench_human --human-metric correctness \\
        --predictor numeric_match --predictor correctness

A judged or automated score is a prediction of what a person would say (SPEC §10). Where some answers of an answer
run carry human labels, prediction-powered inference combines the labelled answers with the predictions for all of
them into a mean of the HUMAN metric with a valid interval (mart_judge_calibrated: PPI++ with its power-tuning λ
estimated, classic PPI with λ = 1, and the human-only interval beside them). Which predictor stands for which human
label is declared here, once per label set, and lands in the lake table `calibration_pairings`; the marts pair every
answer run the label set labels with every predictor it has:

- a lexical predictor (numeric_match, rouge_l, token_f1, ...: the registry's `lexical` family) is the answer run's own
  score;
- a judged predictor (an LLM judge's metric, a Ragas or DeepEval score: the `judged` family, the seed's or one an
  external run declared) is each judge run's over that answer run, one calibration per judge run, with each answer's
  mean over its repeats.

Both sides are compared on the registry's normalised [0, 1] scale, the one the agreement marts use.

Checked before anything lands (InputError naming the field): the label set has labels in the lake; the human metric
is one the set labels; every predictor is a lexical or judged metric of the registry (a retrieval metric scores a
question's ranking, not an answer); no predictor twice. Declaring again replaces the set's pairings of that human
metric and keeps its others, so a re-run is idempotent.
"""

from __future__ import annotations

import csv
from collections.abc import Sequence

import polars as pl

from python_jobs.core.contracts import contract
from python_jobs.core.errors import InputError
from python_jobs.core.lake import Lake
from python_jobs.core.metrics import SEED

TABLE = "calibration_pairings"
FAMILIES = ("lexical", "judged")  # per-answer scores; contracts.yml's accepted predictor_family


def predictor_families(lake: Lake) -> dict[str, str]:
    """metric -> registry family, for every metric that scores an answer: the seed's lexical and judged rows and the
    judged metrics external runs declared in the lake."""
    with open(SEED, newline="") as fh:
        families = {r["metric"]: r["family"] for r in csv.DictReader(fh) if r["family"] in FAMILIES}
    declared = lake.read("metric_declarations", columns=["metric"])["metric"].to_list()
    return {**families, **{m: "judged" for m in declared}}


def declare_pairings(lake: Lake, label_set: str, human_metric: str, predictors: Sequence[str]) -> pl.DataFrame:
    """Validate and land the pairings of `label_set`'s `human_metric` with `predictors`; returns the landed frame."""
    if not predictors:
        raise InputError("name at least one --predictor", field="predictor")
    labels = lake.read("human_labels", where={"label_set": label_set}, columns=["metric"])
    if labels.height == 0:
        known = sorted(set(lake.read("human_labels", columns=["label_set"])["label_set"].to_list()))
        raise InputError(f"unknown label set {label_set!r} (the lake's label sets: {', '.join(known) or 'none'})",
                         field="label_set")
    labelled = sorted(set(labels["metric"].to_list()))
    if human_metric not in labelled:
        raise InputError(f"label set {label_set!r} labels no metric {human_metric!r} (it labels: "
                         f"{', '.join(labelled)})", field="human_metric")
    families = predictor_families(lake)
    seen: set[str] = set()
    rows = []
    for predictor in predictors:
        if predictor not in families:
            raise InputError(f"unknown predictor metric {predictor!r}: a predictor is a per-answer score of the "
                             f"metric registry, lexical ({', '.join(m for m, f in families.items() if f == 'lexical')})"
                             " or judged (seeds/metrics.csv, or declared by an external run)", field="predictor")
        if predictor in seen:
            raise InputError(f"predictor {predictor!r} is named twice", field="predictor")
        seen.add(predictor)
        rows.append({"label_set": label_set, "human_metric": human_metric, "predictor": predictor,
                     "predictor_family": families[predictor]})
    frame = contract(TABLE).frame(rows)
    kept = lake.read_partition(TABLE, label_set).filter(pl.col("human_metric") != human_metric)
    if kept.height:
        frame = pl.concat([kept.drop("created_at", strict=False), frame], how="diagonal_relaxed")
    lake.land([(TABLE, label_set, frame)])
    return frame

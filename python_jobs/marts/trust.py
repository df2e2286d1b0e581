"""How far a judged mean can be trusted, in words: the one wording `finrag report --judged`, the demo's printout and
the dashboard's pages put beside a judged mean. The state itself is mart_judge_trust's (calibrated, uncalibrated,
no_better_than_chance: decided in SQL, never here), per slice mart_judge_calibrated_by_slice's; this only writes a row
of it out, with the numbers formatted by the caller's `number` (the dashboard's own decimals, the report's)."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from python_jobs.core.rules import RULES

# mart_judge_trust's columns a reader shows beside a judged mean (the report's table, the dashboard's trust boxes):
# what trust_note writes out, and the judge run's identity
TRUST_COLUMNS = ("judge_run_id", "answer_run_id", "judge_model", "dataset", "metric", "mean", "n_ok",
                 "n_not_applicable", "n_failed", "trust_state", "label_set", "human_metric", "calibration_method",
                 "n_labelled", "n_unlabelled", "ppi_lambda", "calibrated_mean", "calibrated_lower", "calibrated_upper",
                 "agreement_label_set", "kappa", "kappa_lower", "kappa_upper")


def four_decimals(value: float | None) -> str:
    return "—" if value is None else f"{value:.4f}"


def interval(low: float | None, high: float | None, number: Callable[[float | None], str] = four_decimals) -> str:
    return f"[{number(low)}, {number(high)}]" if low is not None and high is not None else "(no interval)"


def trust_note(row: Mapping[str, Any], number: Callable[[float | None], str] = four_decimals) -> str:
    """A mart_judge_trust row's state in words: the warning of a judge no better than chance against humans (its
    kappa and interval), the calibrated mean and interval of the human metric it predicts, or "uncalibrated"."""
    parts = []
    if row["trust_state"] == "no_better_than_chance":
        parts.append(f"no better than chance against humans ({row['agreement_label_set']} {row['metric']}): "
                     f"Cohen's kappa {number(row['kappa'])} {interval(row['kappa_lower'], row['kappa_upper'], number)}")
    if row["calibrated_mean"] is not None:
        method = RULES.calibration_method(row["calibration_method"]).label  # the rules' calibration_methods
        parts.append(f"calibrated against {row['label_set']} {row['human_metric']} ({method}, {row['n_labelled']} "
                     f"labelled of {row['n_labelled'] + row['n_unlabelled']}): {number(row['calibrated_mean'])} "
                     f"{interval(row['calibrated_lower'], row['calibrated_upper'], number)}")
    elif row["trust_state"] == "uncalibrated":
        parts.append("uncalibrated: no human labels say what it is worth")
    return "; ".join(parts)


# mart_judge_calibrated_by_slice's columns a reader shows per slice (`finrag report --judged --slice`, the judged
# page's trust boxes): the calibration, the stratum (or the strata combined) and what slice_trust_note writes out
SLICE_TRUST_COLUMNS = ("predictor_run_id", "answer_run_id", "dataset", "predictor", "label_set", "human_metric",
                       "dimension", "grain", "value", "n_labelled", "n_unlabelled", "n_strata", "n_strata_excluded",
                       "share", "weight", "not_calibrated_reason", "predictor_mean", "calibration_method",
                       "calibrated_mean", "calibrated_lower", "calibrated_upper")


def slice_trust_note(row: Mapping[str, Any], number: Callable[[float | None], str] = four_decimals) -> str:
    """A mart_judge_calibrated_by_slice row in words: a stratum's calibrated mean and interval (or why it has none),
    or the strata's stratified combination with the strata and the share of the answers it covers."""
    where = (f"{row['dimension']} = {row['value']}" if row["grain"] == "stratum"
             else f"stratified over {row['dimension']}")
    answers = row["n_labelled"] + row["n_unlabelled"]
    if row["calibrated_mean"] is None:
        return f"{where}: not calibrated ({row['not_calibrated_reason']}; {row['n_labelled']} labelled of {answers})"
    method = RULES.calibration_method(row["calibration_method"]).label  # the rules' calibration_methods
    text = (f"{where}: calibrated against {row['label_set']} {row['human_metric']} ({method}, {row['n_labelled']} "
            f"labelled of {answers}): {number(row['calibrated_mean'])} "
            f"{interval(row['calibrated_lower'], row['calibrated_upper'], number)}")
    if row["grain"] == "stratified":
        combined = row["n_strata"] - row["n_strata_excluded"]
        text += f"; {combined} of {row['n_strata']} strata, {row['share']:.1%} of the answers"
        if row["n_strata_excluded"]:
            text += f" ({row['n_strata_excluded']} with fewer than 2 labelled answers left out)"
    return text

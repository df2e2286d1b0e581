"""The per-slice trust wording (python_jobs/marts/trust.py slice_trust_note), what `finrag report --judged --slice`
and the judged page's trust boxes say of a mart_judge_calibrated_by_slice row: a stratum under 2 labels is named
with its reason, and the stratified row says how many strata it combines, the share of the answers it covers and
how many it left out."""

from __future__ import annotations

from python_jobs.marts.trust import SLICE_TRUST_COLUMNS, slice_trust_note


def row(**values: object) -> dict:
    return {**dict.fromkeys(SLICE_TRUST_COLUMNS), "dimension": "company", "label_set": "h",
            "human_metric": "correctness", **values}


def test_a_stratum_under_two_labels_and_a_stratified_mean_that_left_it_out() -> None:
    stratum = row(grain="stratum", value="3M", n_labelled=1, n_unlabelled=4,
                  not_calibrated_reason="fewer than 2 labelled answers")
    assert slice_trust_note(stratum) == "company = 3M: not calibrated (fewer than 2 labelled answers; 1 labelled of 5)"
    stratified = row(grain="stratified", n_labelled=30, n_unlabelled=90, n_strata=5, n_strata_excluded=2,
                     share=0.8, calibration_method="ppi++", calibrated_mean=0.61234, calibrated_lower=0.5,
                     calibrated_upper=0.72)
    assert slice_trust_note(stratified) == (
        "stratified over company: calibrated against h correctness (PPI++, 30 labelled of 120): 0.6123 "
        "[0.5000, 0.7200]; 3 of 5 strata, 80.0% of the answers (2 with fewer than 2 labelled answers left out)")
    calibrated = row(grain="stratum", value="AMD", n_labelled=12, n_unlabelled=0, calibration_method="human_only",
                     calibrated_mean=0.5, calibrated_lower=0.2, calibrated_upper=0.8)
    assert slice_trust_note(calibrated, lambda v: f"{v:.2f}") == (
        "company = AMD: calibrated against h correctness (human labels only, 12 labelled of 12): 0.50 [0.20, 0.80]")

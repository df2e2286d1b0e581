"""mart_judge_reliability's hand-worked alphas against the reference: the `krippendorff` package, recomputed from
the very rows of the model's dbt unit test (models/marts/judge/mart_judge_reliability.yml), so neither the matrices
nor the expected values can drift from it."""

from __future__ import annotations

import math

import krippendorff
import numpy as np
import pytest
import yaml

from support.paths import PROJECT

YML = PROJECT / "models" / "marts" / "judge" / "mart_judge_reliability.yml"


def unit_test(name: str) -> dict:
    return next(t for t in yaml.safe_load(YML.read_text())["unit_tests"] if t["name"] == name)


def reliability_data(rows: list[dict], judge_run_id: str, metric: str) -> np.ndarray:
    """Repeats (raters) x answers (units) of the ok scores; NaN where a repeat is not ok or missing."""
    mine = [r for r in rows if r["judge_run_id"] == judge_run_id and r["metric"] == metric]
    answers = sorted({r["question_id"] for r in mine})
    repeats = sorted({r["repeat"] for r in mine})
    data = np.full((len(repeats), len(answers)), np.nan)
    for r in mine:
        if r["status"] == "ok":
            data[repeats.index(r["repeat"]), answers.index(r["question_id"])] = r["raw_score"]
    return data


def test_alpha_at_each_level_equals_the_krippendorff_package() -> None:
    test = unit_test("krippendorff_alpha_at_each_level")
    [scores] = [g["rows"] for g in test["given"] if g["input"] == "ref('fct_judge_scores')"]
    expected = test["expect"]["rows"]
    assert {e["level_of_measurement"] for e in expected if e["alpha"] is not None} == {"nominal", "ordinal",
                                                                                       "interval"}
    for e in expected:
        data = reliability_data(scores, e["judge_run_id"], e["metric"])
        pairable = data[:, (~np.isnan(data)).sum(axis=0) >= 2]
        assert e["n_values"] == int((~np.isnan(pairable)).sum()), e
        if e["alpha"] is None:  # undefined: no pairable value, or no variation (the package divides 0 by 0)
            assert pairable.size == 0 or np.unique(pairable[~np.isnan(pairable)]).size == 1, e
            continue
        reference = krippendorff.alpha(reliability_data=data, level_of_measurement=e["level_of_measurement"])
        assert e["alpha"] == pytest.approx(float(reference), abs=1e-12, rel=0), e
        assert not math.isclose(e["alpha"], 1.0)  # a case with disagreement, not a trivial one

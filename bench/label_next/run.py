"""Does `finrag label-next`'s choice narrow the calibrated interval more than the same number of labels drawn at
random, and does the interval stay valid? A simulation on FinanceBench's human labels: 16 configurations x 150
answers, each with a person's label (Correct 2 / Incorrect -1 / Refusal 0 on correctness' -1..2 scale, normalised to
[0, 1] as the warehouse does). The target is the mean of all 150 human labels of a configuration.

For each configuration, label budget n in 10, 20, 40 and 1,000 draws of each design:

- label-next: inclusion probabilities from the predictor's uncertainty (python_jobs/labelling/design.py, the rule
  label-next runs: active statistical inference, Zrnic and Candès 2024), n answers drawn with exactly those
  probabilities, the inverse-probability-weighted PPI mean and interval (what mart_judge_calibrated publishes as
  active_*);
- random: n answers drawn uniformly, the same estimator (every pi = n / 150);
- PPI++: n answers drawn uniformly, ppi_py's ppi_mean_ci (what mart_judge_calibrated publishes as ppi_* today).

Intervals at alpha 0.05, cut to [0, 1] as the mart cuts them. Printed: mean width and coverage per design.

Predictors:
- `judge x3`: a simulated judge with 3 repeats, each repeat the human label with probability 0.75 and otherwise a
  uniform guess among the four scale points (the noise tests/integration/judge/test_human_label_leaderboard.py
  uses); its score is the repeats' mean and its uncertainty their spread and the mean's nearness to the pass
  threshold. Its repeats are drawn once per configuration (seeded) and kept for every draw: the labels are what is
  random.
- `rouge_l`, `token_f1`: the warehouse's lexical scores of the answer against the gold answer (as
  bench/calibration scores them), one score each, no repeats.

    .venv/bin/python -m bench.label_next.run [--draws 1000] [--out DIR]
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

import numpy as np
from ppi_py import ppi_mean_ci

from bench.calibration.run import RESULTS, load
from python_jobs.labelling.design import active_mean, inclusion_probabilities, systematic_sample, uncertainty
from python_jobs.stats.student_t import normal_quantiles

SIZES = (10, 20, 40)
ALPHA = 0.05  # dbt_project.yml var run_comparison_alpha
THRESHOLD = 0.5  # correctness' pass_threshold (seeds/metrics.csv)
JUDGE_AGREES = 0.75
REPEATS = 3
LEVELS = np.array([0.0, 1 / 3, 2 / 3, 1.0])  # correctness -1, 0, 1, 2 normalised
DESIGNS = ("label_next", "random", "ppi++")


def simulated_judge(human: np.ndarray, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
    """Repeats that equal the human label with probability JUDGE_AGREES and guess otherwise: (mean, variance)."""
    agree = rng.random((len(human), REPEATS)) < JUDGE_AGREES
    reps = np.where(agree, human[:, None], LEVELS[rng.integers(0, len(LEVELS), (len(human), REPEATS))])
    return reps.mean(axis=1), reps.var(axis=1)


def cut(lo: float, hi: float) -> tuple[float, float]:
    return min(max(lo, 0.0), 1.0), min(max(hi, 0.0), 1.0)


def one_draw(design: str, human: np.ndarray, pred: np.ndarray, pi: np.ndarray, n: int, z: float,
             rng: np.random.Generator) -> tuple[float, float]:
    m = len(human)
    if design == "ppi++":
        mask = np.zeros(m, dtype=bool)
        mask[rng.choice(m, n, replace=False)] = True
        lo, hi = (float(np.ravel(end)[0]) for end in ppi_mean_ci(human[mask], pred[mask], pred[~mask], alpha=ALPHA))
        return cut(lo, hi)
    labelled = np.zeros(m, dtype=bool)
    labelled[systematic_sample(pi, rng)] = True
    est = active_mean(pred, human, pi, labelled, np.zeros(m, dtype=bool), n, z)
    return cut(est["lower"], est["upper"])


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--draws", type=int, default=1000)
    ap.add_argument("--out", type=Path, default=Path(__file__).parents[1] / "out" / "label_next")
    args = ap.parse_args()
    files = sorted(RESULTS.glob("*.jsonl"))
    assert len(files) == 16, f"expected FinanceBench's 16 result files in {RESULTS}"
    z = float(normal_quantiles(np.array([1 - ALPHA / 2]))[0])
    rng = np.random.default_rng(57)
    started = time.time()
    rows = []
    for index, f in enumerate(files):
        human, lexical = load(f)
        mean, spread = simulated_judge(human, np.random.default_rng(1000 + index))
        predictors = {"judge x3": (mean, spread), **{k: (v, np.zeros(len(v))) for k, v in lexical.items()}}
        target = float(human.mean())
        for name, (pred, repeat_var) in predictors.items():
            u = uncertainty(pred, repeat_var, THRESHOLD)
            for n in SIZES:
                pis = {"label_next": inclusion_probabilities(u, n), "random": np.full(len(human), n / len(human)),
                       "ppi++": None}
                for design in DESIGNS:
                    ends = np.array([one_draw(design, human, pred, pis[design], n, z, rng)
                                     for _ in range(args.draws)])
                    rows.append({"config": f.stem, "predictor": name, "n": n, "design": design, "target": target,
                                 "width": float((ends[:, 1] - ends[:, 0]).mean()),
                                 "cover": float(((ends[:, 0] <= target) & (target <= ends[:, 1])).mean())})
        print(f"{f.stem}: done ({time.time() - started:.0f} s)", file=sys.stderr)
    args.out.mkdir(parents=True, exist_ok=True)
    (args.out / "results.json").write_text(json.dumps(rows, indent=1))

    print(f"FinanceBench, 16 configurations x 150 human-labelled answers, {args.draws} draws per design and size, "
          f"alpha {ALPHA}")
    print("width: mean interval width over configurations and draws; cover: share of draws whose interval holds the "
          "mean of all 150 human labels (nominal 0.95); next/random: label-next's width over random labels' (same "
          "estimator), next/PPI++: over PPI++ on random labels\n")
    print(f"{'predictor':<9} {'n':>3} | {'width next':>10} {'width random':>12} {'width PPI++':>11} | "
          f"{'next/random':>11} {'next/PPI++':>10} | {'cover next':>10} {'cover random':>12} {'cover PPI++':>11}")
    for name in ("judge x3", "rouge_l", "token_f1"):
        for n in SIZES:
            figure = {(d, k): float(np.mean([r[k] for r in rows if (r["predictor"], r["n"], r["design"]) ==
                                             (name, n, d)])) for d in DESIGNS for k in ("width", "cover")}
            print(f"{name:<9} {n:>3} | {figure['label_next', 'width']:>10.4f} {figure['random', 'width']:>12.4f} "
                  f"{figure['ppi++', 'width']:>11.4f} | "
                  f"{figure['label_next', 'width'] / figure['random', 'width']:>11.3f} "
                  f"{figure['label_next', 'width'] / figure['ppi++', 'width']:>10.3f} | "
                  f"{figure['label_next', 'cover']:>10.3f} {figure['random', 'cover']:>12.3f} "
                  f"{figure['ppi++', 'cover']:>11.3f}")
    print(f"\n{time.time() - started:.0f} s", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())

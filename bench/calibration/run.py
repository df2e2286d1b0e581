"""How well prediction-powered inference calibrates on real human labels: FinanceBench's 16 configurations, 150
answers each with a human label (Correct 2 / Incorrect -1 / Refusal 0 on correctness' -1..2 scale, normalised to
[0, 1] as the warehouse does). For each configuration and n in 10, 20, 40, 80: 1,000 random draws of n labelled
answers; the other 150 - n are unlabelled. The target is the mean of all 150 human labels (what a fully labelled
run would say). For each draw, the human-only interval (ppi_py classical_mean_ci), PPI++ (ppi_mean_ci, lambda
estimated) and classic PPI (lambda = 1) at alpha 0.05, each cut to [0, 1] as mart_judge_calibrated cuts them (the
mart equals ppi_py: tests/integration/judge/test_human_label_leaderboard.py). Printed: how often each interval
holds the target, and its mean width against the human-only interval's.

Predictors, scored for every answer with the warehouse's own text metrics (python_jobs/stats/text_metrics.py,
the functions dbt registers): ROUGE-L F and token F1 of the model answer against FinanceBench's gold answer. (Numeric
match scores only the 53 answers with a numeric gold answer, so its PPI estimates another mean; the embedded LLM
judge would take hours on 2,400 answers.)

    .venv/bin/python bench/calibration/run.py [--draws 1000] [--out DIR]   (default: the bench output folder)
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

import numpy as np
from ppi_py import classical_mean_ci, ppi_mean_ci

from python_jobs.core.metrics import load_metrics
from python_jobs.core.rules import RULES, CalibrationMethod
from python_jobs.sources.financebench import LABEL_SCORES
from python_jobs.stats.text_metrics import rouge_l_f, token_f1

RESULTS = Path(__file__).resolve().parents[2].parent / "shared" / "data" / "financebench" / "results"
SIZES = (10, 20, 40, 80)
ALPHA = 0.05  # dbt_project.yml var run_comparison_alpha
PREDICTORS = {"rouge_l": rouge_l_f, "token_f1": token_f1}
# the methods are the warehouse's own (python_jobs/core/rules.yml calibration_methods), under the names
# mart_judge_trust.calibration_method uses: ppi++ (lambda estimated), classic_ppi (lambda 1), human_only
METHODS = RULES.calibration_methods
HUMAN, PPI_PLUS_PLUS, CLASSIC = (next(m.name for m in METHODS if test(m)) for test in (
    lambda m: m.lam is None, lambda m: m.lam == "estimated", lambda m: isinstance(m.lam, (int, float))))


def load(path: Path) -> tuple[np.ndarray, dict[str, np.ndarray]]:
    rows = [json.loads(line) for line in path.open()]
    # FinanceBench's labels on correctness' raw scale, normalised by the registry's scale as the warehouse does
    correctness = load_metrics()["correctness"]
    human = np.array([correctness.normalize(LABEL_SCORES[r["label"]]) for r in rows])
    preds = {name: np.array([fn(r["model_answer"] or "", str(r["gold_answer"])) or 0.0 for r in rows])
             for name, fn in PREDICTORS.items()}
    return human, preds


def method_interval(method: CalibrationMethod, y: np.ndarray, yhat: np.ndarray, yhat_u: np.ndarray):
    """The method's interval as ppi_py computes it: the human labels alone, or PPI with its lambda (None: PPI++'s
    estimate)."""
    if method.lam is None:
        return classical_mean_ci(y, alpha=ALPHA)
    return ppi_mean_ci(y, yhat, yhat_u, alpha=ALPHA, lam=None if method.lam == "estimated" else float(method.lam))


def cut(interval) -> tuple[float, float]:
    lo, hi = (float(np.ravel(end)[0]) for end in interval)
    return min(max(lo, 0.0), 1.0), min(max(hi, 0.0), 1.0)


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--draws", type=int, default=1000)
    ap.add_argument("--out", type=Path, default=Path(__file__).parents[1] / "out" / "calibration")
    args = ap.parse_args()
    files = sorted(RESULTS.glob("*.jsonl"))
    assert len(files) == 16, f"expected FinanceBench's 16 result files in {RESULTS}"
    rng = np.random.default_rng(45)
    started = time.time()
    rows = []
    for f in files:
        human, preds = load(f)
        target, n_all = human.mean(), len(human)
        for name, pred in preds.items():
            corr = float(np.corrcoef(human, pred)[0, 1]) if pred.std() > 0 else 0.0
            for n in SIZES:
                hits = {m.name: 0 for m in METHODS}
                widths: dict[str, list[float]] = {m.name: [] for m in METHODS}
                for _ in range(args.draws):
                    mask = np.zeros(n_all, dtype=bool)
                    mask[rng.choice(n_all, n, replace=False)] = True
                    y, yhat, yhat_u = human[mask], pred[mask], pred[~mask]
                    for method in METHODS:
                        lo, hi = cut(method_interval(method, y, yhat, yhat_u))
                        hits[method.name] += lo <= target <= hi
                        widths[method.name].append(hi - lo)
                rows.append({"config": f.stem, "predictor": name, "corr": corr, "n": n, "target": target,
                             **{f"cover_{k}": hits[k] / args.draws for k in hits},
                             **{f"width_{k}": float(np.mean(widths[k])) for k in widths}})
        print(f"{f.stem}: done ({time.time() - started:.0f} s)", file=sys.stderr)
    args.out.mkdir(parents=True, exist_ok=True)
    (args.out / "results.json").write_text(json.dumps(rows, indent=1))

    print(f"FinanceBench, 16 configurations x 150 human-labelled answers, {args.draws} draws per size, alpha {ALPHA}")
    print("coverage: share of draws whose interval holds the mean of all 150 human labels (nominal 0.95);")
    print("width: mean interval width, and PPI++'s as a share of the human-only one (<1: narrower)\n")
    print(f"{'predictor':<9} {'n':>3} | {'cover human':>11} {'cover PPI++':>11} {'cover PPI':>9} | "
          f"{'width human':>11} {'width PPI++':>11} {'PPI++/human':>11} {'PPI/human':>9}")
    for name in PREDICTORS:
        for n in SIZES:
            sel = [r for r in rows if r["predictor"] == name and r["n"] == n]
            mean = {k: float(np.mean([r[k] for r in sel])) for k in sel[0] if k.startswith(("cover", "width"))}
            h, pp, c = (f"_{m}" for m in (HUMAN, PPI_PLUS_PLUS, CLASSIC))
            print(f"{name:<9} {n:>3} | {mean['cover' + h]:>11.3f} {mean['cover' + pp]:>11.3f} "
                  f"{mean['cover' + c]:>9.3f} | {mean['width' + h]:>11.3f} {mean['width' + pp]:>11.3f} "
                  f"{mean['width' + pp] / mean['width' + h]:>11.3f} {mean['width' + c] / mean['width' + h]:>9.3f}")
    print("\nper configuration, n = 40 (corr: Pearson correlation of the predictor with the human label):")
    print(f"{'configuration':<42} {'predictor':<9} {'corr':>5} {'target':>6} | {'cover human':>11} "
          f"{'cover PPI++':>11} | {'PPI++/human width':>17}")
    for r in rows:
        if r["n"] == 40:
            print(f"{r['config']:<42} {r['predictor']:<9} {r['corr']:>5.2f} {r['target']:>6.3f} | "
                  f"{r['cover_' + HUMAN]:>11.3f} {r['cover_' + PPI_PLUS_PLUS]:>11.3f} | "
                  f"{r['width_' + PPI_PLUS_PLUS] / r['width_' + HUMAN]:>17.3f}")
    print(f"\n{time.time() - started:.0f} s", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())

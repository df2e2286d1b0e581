"""Reading a home's published marts in tests as readers do: the Parquet files the published manifest names
(python_jobs/warehouse/publishing.py; a file's name changes with every build that publishes it)."""

from __future__ import annotations

from pathlib import Path

import polars as pl

from python_jobs.warehouse.publishing import published_tables


def read_mart(home: Path, name: str) -> pl.DataFrame:
    """A published mart or seed, whole."""
    return pl.concat([pl.read_parquet(f) for f in published_tables(home)[name]], how="diagonal_relaxed")


def slice_calibration_texts(home: Path, judge_run_id: str, dimension: str, metric_label: str) -> list[dict]:
    """What the judged page's trust boxes by slice say for a judge run (mart_judge_calibrated_by_slice's rows, in the
    page's order: each stratum by value, then the strata combined): [{"calibrated": bool, "text": ...}], written
    out here from the mart's numbers (4 decimals), not by the page's own function."""
    rows = read_mart(home, "mart_judge_calibrated_by_slice").filter(
        (pl.col("predictor_run_id") == judge_run_id) & (pl.col("dimension") == dimension)
    ).sort("predictor", "label_set", "human_metric", pl.col("grain") == "stratified", "value")
    methods = {"ppi++": "PPI++", "human_only": "human labels only", "classic_ppi": "classic PPI"}
    out = []
    for r in rows.iter_rows(named=True):
        where = f"{dimension} = {r['value']}" if r["grain"] == "stratum" else f"stratified over {dimension}"
        n = r["n_labelled"] + r["n_unlabelled"]
        if r["calibrated_mean"] is None:
            text = f"{where}: not calibrated ({r['not_calibrated_reason']}; {r['n_labelled']} labelled of {n})"
        else:
            text = (f"{where}: calibrated against {r['label_set']} {r['human_metric']} "
                    f"({methods[r['calibration_method']]}, {r['n_labelled']} labelled of {n}): "
                    f"{r['calibrated_mean']:.4f} [{r['calibrated_lower']:.4f}, {r['calibrated_upper']:.4f}]")
            if r["grain"] == "stratified":
                text += (f"; {r['n_strata'] - r['n_strata_excluded']} of {r['n_strata']} strata, "
                         f"{r['share']:.1%} of the answers")
                if r["n_strata_excluded"]:
                    text += f" ({r['n_strata_excluded']} with fewer than 2 labelled answers left out)"
        out.append({"calibrated": r["calibrated_mean"] is not None, "text": f"{metric_label} — {text}"})
    return out

"""TREC files and the pytrec_eval reference the retrieval metric tests compare the warehouse with: qrels (TREC or
BEIR tsv) and run readers, and pytrec_eval's means over the measures the marts compute."""

from __future__ import annotations

import statistics
from pathlib import Path

import pytrec_eval

from support.warehouse import retrieval_ks

KS = tuple(k for k in retrieval_ks() if k > 0)  # dbt_project.yml var retrieval_ks without 0 (the whole ranking)
PYTREC_MEASURES = {
    "map", "recip_rank", "ndcg",
    *(f"{m}.{','.join(map(str, KS))}" for m in ("P", "recall", "ndcg_cut", "map_cut")),
}


def read_qrels(path: Path, sep: str | None = None, skip_header: bool = False) -> dict[str, dict[str, int]]:
    qrels: dict[str, dict[str, int]] = {}
    with open(path) as fh:
        if skip_header:
            next(fh)
        for line in fh:
            parts = line.split(sep)
            if len(parts) == 4:  # TREC: topic iter docno rel
                topic, _, doc, rel = parts
            else:  # BEIR tsv: query_id corpus_id score
                topic, doc, rel = parts
            qrels.setdefault(topic, {})[doc] = int(rel)
    return qrels


def read_trec_run(path: Path) -> dict[str, dict[str, float]]:
    run: dict[str, dict[str, float]] = {}
    with open(path) as fh:
        for line in fh:
            topic, _, doc, _rank, score, _tag = line.split()
            run.setdefault(topic, {})[doc] = float(score)
    return run


def read_financerag_csv(path: Path) -> dict[str, dict[str, float]]:
    """query_id,corpus_id rows in rank order; score 10 - index, as the derived TREC file and pytrec reference do."""
    run: dict[str, dict[str, float]] = {}
    with open(path) as fh:
        next(fh)
        for line in fh:
            topic, doc = line.strip().split(",")
            ranked = run.setdefault(topic, {})
            ranked[doc] = float(10 - len(ranked))
    return run


def pytrec_means(qrels: dict, run: dict) -> dict[str, float]:
    """pytrec_eval's per-query measures averaged over the queries in both qrels and run (trec_eval's `all`)."""
    per_query = pytrec_eval.RelevanceEvaluator(qrels, PYTREC_MEASURES).evaluate(run)
    names = next(iter(per_query.values())).keys()
    means = {name: statistics.fmean(q[name] for q in per_query.values()) for name in names}
    means["num_q"] = float(len(per_query))
    return means

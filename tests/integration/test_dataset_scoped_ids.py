"""Two TREC collections that use the same topic and doc ids live side by side and score independently: ids are
unique within a dataset, not across the lake (a second collection reusing "301" or "Q000" was refused)."""

from __future__ import annotations

from pathlib import Path

import pytest

from support.cli import MODELS_ONLY, dbt_build
from support.trec import pytrec_means, read_qrels, read_trec_run
from support.warehouse import warehouse_query


def test_two_collections_with_the_same_ids_score_independently(home: Path, finrag, shared_data: Path,
                                                               tmp_path: Path) -> None:
    fixtures = shared_data / "trec_eval_fixtures"
    # collection b: the same topics and docnos, other judgments (every other relevant doc judged not relevant)
    lines = (fixtures / "qrels.test").read_text().splitlines()
    relevant = [i for i, line in enumerate(lines) if int(line.split()[3]) > 0]
    flipped = set(relevant[::2])
    qrels_b = tmp_path / "qrels.b"
    qrels_b.write_text("".join(
        (" ".join(line.split()[:3] + ["0"]) if i in flipped else line) + "\n" for i, line in enumerate(lines)))
    for ds, qrels in (("col_a", fixtures / "qrels.test"), ("col_b", qrels_b)):
        finrag("ingest", "trec-qrels", str(qrels), "--dataset", ds)
        finrag("ingest", "trec-run", str(fixtures / "results.test"), "--dataset", ds, "--run-id", f"run_{ds}")
    dbt_build(home, *MODELS_ONLY)

    run = read_trec_run(fixtures / "results.test")
    for ds, qrels in (("col_a", fixtures / "qrels.test"), ("col_b", qrels_b)):
        expected = pytrec_means(read_qrels(qrels), run)
        got = dict(warehouse_query(home, f"""
            select case metric when 'map' then 'map' when 'mrr' then 'recip_rank' else 'ndcg' end, mean
            from mart_retrieval_leaderboard
            where run_id = 'run_{ds}' and granularity = 'chunk' and k = 0 and metric in ('map', 'mrr', 'ndcg')"""))
        assert got == {m: pytest.approx(expected[m], abs=1e-9) for m in ("map", "recip_rank", "ndcg")}, ds
    a, b = (dict(warehouse_query(home, f"select metric, mean from mart_retrieval_leaderboard where run_id = "
                                       f"'run_{ds}' and granularity = 'chunk' and k = 0")) for ds in ("col_a", "col_b"))
    assert a["map"] != b["map"]  # the same run, judged by each collection's own qrels
    # the qrels of each collection, keyed by (dataset, question_id, evidence_ordinal): the shared topic ids twice
    counts = warehouse_query(home, "select dataset, count(distinct question_id), count(*) from fct_evidence "
                                   "group by 1 order by 1")
    assert [c[0] for c in counts] == ["col_a", "col_b"] and counts[0][1:] == counts[1][1:] == (3, len(lines))
    assert warehouse_query(home, "select count(distinct question_id) from fct_evidence")[0][0] == 3

"""`finrag train-page-scorer` and `finrag retrieve --retriever page_scorer` through the CLI on the small page corpus
(support/page_corpus.py), then `finrag build` (of the marts the checks read and what they read): the run lands like
every run, and the marts (leaderboard, slices, oracle gap) and the staged `model_trainings` show it."""

from __future__ import annotations

import json

import pytest

from python_jobs.core.lake import Lake
from python_jobs.corpus.indexing import index_chunks
from support.page_corpus import CHUNKER, DATASET, land_page_corpus
from support.warehouse import warehouse_query

pytestmark = pytest.mark.slow


def result(stdout: str) -> dict[str, object]:
    (line,) = stdout.strip().splitlines()  # one JSON object (--json): the trainer's logs stay off stdout
    return json.loads(line)


def test_cli_train_retrieve_build(home, finrag):
    land_page_corpus(home)
    index_chunks(Lake(home), DATASET, CHUNKER, progress=False)
    bad = finrag("train-page-scorer", "--dataset", DATASET, "--folds", "9", check=False)
    assert bad.returncode == 2 and "fewer than --folds 9" in bad.stderr

    train = finrag("train-page-scorer", "--dataset", DATASET, "--folds", "2", "--epochs", "1", "--batch-size", "4",
                   "--learning-rate", "1e-4", "--json")
    out = result(train.stdout)
    tid = out["training_id"]
    assert out["folds"] == 2 and out["pairs"] == 16
    # a note per fold on stderr; no progress bar, since stderr is a pipe here
    assert "fold 1: " in train.stderr and "step/s" not in train.stderr

    no_model = finrag("retrieve", "--retriever", "page_scorer", "--dataset", DATASET, check=False)
    assert no_model.returncode == 2 and "--model-training" in no_model.stderr
    runs = {}
    for condition in ("full", "oracle_doc"):
        proc = finrag("retrieve", "--retriever", "page_scorer", "--model-training", tid, "--top-pages", "3",
                      "--dataset", DATASET, "--k", "3", "--condition", condition)
        runs[condition] = proc.stdout.strip()  # the run id alone
        vectors = json.loads(Lake(home).read_partition("retrieval_runs", runs[condition])["params"][0])
        cached = {t["cached"] for t in vectors["page_scorer"]["page_vectors"].values()}
        assert cached == {condition == "oracle_doc"}  # the first run embeds the pages, the second reads them
    runs["dense"] = finrag("retrieve", "--retriever", "dense", "--dataset", DATASET, "--k", "3").stdout.strip()

    finrag("build", "--select", "+mart_retrieval_leaderboard", "+mart_oracle_gap", "+mart_retrieval_by_slice",
           "+stg_lake__model_trainings", "--indirect-selection", "cautious")
    board = dict(warehouse_query(home, (
        "select retriever || '/' || condition, count(*) from mart_retrieval_leaderboard "
        "where granularity = 'page' and metric = 'page_rec' and k = 3 group by 1")))
    assert board == {"page_scorer/full": 1, "page_scorer/oracle_doc": 1, "dense/full": 1}
    gap = warehouse_query(home, (
        "select oracle_doc_run_id, oracle_doc_mean >= 0 from mart_oracle_gap "
        f"where run_id = '{runs['full']}' and granularity = 'page' and metric = 'page_rec' and k = 3"))
    assert gap == [(runs["oracle_doc"], True)]
    slices = warehouse_query(home, (
        "select dimension_value, n_questions, n_questions_without_content from mart_retrieval_by_slice "
        f"where run_id = '{runs['full']}' and dimension = 'question_type' and granularity = 'page' "
        "and metric = 'page_rec' and k = 3 order by 1"))
    # qnone has no qrels: not evaluated; qabsent's filing has no content: counted apart from PageRec's mean
    assert slices == [("made-up word", 12, 0), ("other", 2, 1)]
    trainings = warehouse_query(home, (
        "select fold, len(train_doc_ids), len(test_doc_ids), len(epoch_losses) from stg_lake__model_trainings "
        f"where training_id = '{tid}' order by fold"))
    assert [r[0] for r in trainings] == [0, 1] and all(r[3] == 1 and r[1] + r[2] == 6 for r in trainings)

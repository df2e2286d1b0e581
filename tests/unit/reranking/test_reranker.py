"""The trained reranker on the small corpus of support/page_corpus.py (one chunk per page), with the packaged MiniLM
under a fresh head: a real two-fold training (head only, one epoch, BM25's hard negatives: no vectors to build), the
rerank retriever with `trained:<id>` (each question scored by the fold that held its documents out, checked against
the fold models' own scores), reproducibility under one seed, the two backends' agreement, the bad inputs, and a
cascade sweep whose second sweep is answered by the score cache alone. Real models, lake and sweeps; nothing
mocked."""

from __future__ import annotations

import json

import numpy as np
import pytest

from python_jobs.core.errors import InputError
from python_jobs.core.lake import Lake
from python_jobs.corpus.encoders import load_reranker
from python_jobs.page_scoring.folds import gold_documents
from python_jobs.page_scoring.pages import read_page_texts
from python_jobs.page_scoring.rerankers import load_trained
from python_jobs.page_scoring.training import TrainingConfig, train_page_scorer
from python_jobs.page_scoring.windows import PageWindows, load_tokenizer
from python_jobs.reranking.training import RerankerTrainingConfig, train_reranker
from python_jobs.retrieval.runs import RetrievalConfig
from python_jobs.sweeps.grid import parse_grid
from python_jobs.sweeps.runs import plan_sweep, run_sweep
from support.page_corpus import CHUNKER, DATASET, land_page_corpus
from support.retrieval_runs import retrieve

pytestmark = pytest.mark.slow

CFG = RerankerTrainingConfig(DATASET, first_stage="bm25", negatives=3, negatives_depth=10, folds=2, epochs=1,
                             batch_size=8, learning_rate=1e-3, head_only=True)
PAIRS = [("What was Acme's zorblat?", "Capital expenditures for property were 111 million."),
         ("How much vartosh did Hooli have?", "The board declared dividends of 200 million."),
         ("Describe the grelkin of Globex.", "Inventories rose to 300 million while receivables fell.")]


@pytest.fixture(scope="module")
def trained(tmp_path_factory) -> tuple[Lake, str]:
    home = tmp_path_factory.mktemp("rerank") / "warehouse"
    lake = land_page_corpus(home)
    return lake, str(train_reranker(Lake(home), CFG, progress=False)["training_id"])


def run_params(lake: Lake, run_id: str) -> dict:
    return json.loads(lake.read_partition("retrieval_runs", run_id)["params"][0])


def test_two_folds_and_no_question_is_scored_by_a_model_that_saw_it(trained):
    lake, tid = trained
    rows = lake.read_partition("model_trainings", tid).sort("fold")
    assert rows["fold"].to_list() == [0, 1] and set(rows["kind"]) == {"reranker"}
    assert tid.startswith(f"{DATASET}-reranker-")
    for r in rows.iter_rows(named=True):
        assert r["model_path"] == f"models/reranker/{tid}/fold-{r['fold']}"
        params = json.loads(r["params"])
        assert params["passage"] == "chunk" and params["head_only"] is True and params["chunker_id"] == CHUNKER
        # head only: BERT's pooler and the one-label classifier, 384 x 384 + 384 + 384 + 1
        assert params["n_trainable_weights"] == 148_225 and params["n_train_negatives"] > 0
    out = retrieve(lake.home, DATASET, "rerank", first_stage="bm25", reranker=f"trained:{tid}", k=3)
    stage = run_params(lake, str(out["run_id"]))["rerank"][0]
    gold = gold_documents(lake.read("evidence"))
    train_docs = {r["fold"]: set(r["train_doc_ids"]) for r in rows.iter_rows(named=True)}
    results = lake.read_partition("retrieval_results", str(out["run_id"]))
    texts = dict(lake.read("chunks").select("chunk_id", "text").iter_rows())
    question = dict(lake.read("questions").select("question_id", "question").iter_rows())
    models = {f: load_reranker(str(lake.home / f"models/reranker/{tid}/fold-{f}")) for f in (0, 1)}
    assert set(stage["fold_of_question"]) == set(question)
    for qid, fold in stage["fold_of_question"].items():
        # its fold trained on none of its gold documents (so on none of its pairs or negatives)
        assert not gold.get(qid, frozenset()) & train_docs[fold], qid
        got = results.filter(results["question_id"] == qid).sort("rank")
        if got.height == 0:
            continue
        pairs = [(question[qid], texts[c]) for c in got["chunk_id"]]
        # the landed scores are that fold model's (to float32 batching), not the other's
        np.testing.assert_allclose(got["score"].to_numpy(), models[fold].score(pairs), rtol=0, atol=1e-6)
        assert not np.allclose(got["score"].to_numpy(), models[1 - fold].score(pairs), rtol=0, atol=1e-4)
    assert set(stage["questions_by_fold"]) == {"0", "1"} and stage["pairs"] > 0


def test_the_same_seed_gives_the_same_scores_and_both_backends_agree(trained):
    lake, tid = trained
    again = train_reranker(lake, CFG, training_id_override=f"{tid}-again", progress=False)["training_id"]
    first = lake.read_partition("model_trainings", tid).sort("fold")
    second = lake.read_partition("model_trainings", again).sort("fold")
    assert first["test_doc_ids"].to_list() == second["test_doc_ids"].to_list()
    for f in (0, 1):
        path = str(lake.home / f"models/reranker/{tid}/fold-{f}")
        a = load_reranker(path).score(PAIRS)
        assert np.array_equal(a, load_reranker(str(lake.home / f"models/reranker/{again}/fold-{f}")).score(PAIRS))
        flag = load_reranker(f"flag:{path}")
        assert flag.backend == "flagembedding"
        np.testing.assert_allclose(flag.score(PAIRS), a, rtol=0, atol=1e-5)
        assert len(set(np.round(a, 6))) == len(PAIRS)  # the scores tell the pairs apart: the check means something


def test_page_passages_score_the_pages_a_chunk_covers(trained):
    lake, tid = trained
    model = str(lake.home / f"models/reranker/{tid}/fold-0")  # a plain path: no training, no passage check
    out = retrieve(lake.home, DATASET, "rerank", first_stage="bm25", reranker=model, rerank_passage="page", k=3)
    results = lake.read_partition("retrieval_results", str(out["run_id"])).sort("question_id", "rank")
    page = {(d, p): t for d, p, t in read_page_texts(lake, DATASET).iter_rows()}
    question = dict(lake.read("questions").select("question_id", "question").iter_rows())
    # one chunk per page here: each chunk's score is its page's, the page as the page scorer reads it
    keys = results.select("question_id", "doc_id", "page_start").iter_rows()
    pairs = [(question[q], page[(d, p)]) for q, d, p in keys]
    assert len(pairs) > 10 and all(" | " in text for _, text in pairs)  # the filing's label in front
    np.testing.assert_allclose(results["score"].to_numpy(), load_reranker(model).score(pairs), rtol=0, atol=1e-6)
    assert run_params(lake, str(out["run_id"]))["rerank"][0]["passage"] == "page"


def recall_at(results, qid: str, gold: set[str], k: int) -> float:
    top = results.filter(results["question_id"] == qid).sort("rank")["chunk_id"].to_list()[:k]
    return len(set(top) & gold) / len(gold)


def test_the_fusion_weight_is_chosen_on_each_folds_training_questions_and_the_fused_run_uses_it(trained):
    lake, tid = trained
    rows = lake.read_partition("model_trainings", tid).sort("fold")
    fusion = {r["fold"]: json.loads(r["params"])["fusion"] for r in rows.iter_rows(named=True)}
    assert {f["top_n"] for f in fusion.values()} == {CFG.fusion_top_n} and {f["k"] for f in fusion.values()} == {5}
    # the first stage alone and the reranker alone, each at the training's depth (fusion_top_n = 20 candidates)
    runs = {name: str(retrieve(lake.home, DATASET, retriever, k=CFG.fusion_top_n, **settings)["run_id"])
            for name, retriever, settings in [
                ("first", "bm25", {}), ("alone", "rerank", {"first_stage": "bm25", "reranker": f"trained:{tid}"}),
                ("fused", "rerank", {"first_stage": "bm25", "reranker": f"trained:{tid}", "rerank_fusion": "trained"})]}
    results = {name: lake.read_partition("retrieval_results", r) for name, r in runs.items()}
    fold_of = run_params(lake, runs["alone"])["rerank"][0]["fold_of_question"]
    # gold chunks (one chunk per page here): the chunks of the questions' gold pages
    chunk_of = {(d, p): c for c, d, p in lake.read("chunks").select("chunk_id", "doc_id", "page_start").iter_rows()}
    gold: dict[str, set[str]] = {}
    for q, d, p in lake.read("evidence").select("question_id", "doc_id", "page_number").iter_rows():
        if (d, p) in chunk_of:
            gold.setdefault(q, set()).add(chunk_of[(d, p)])
    for f, chosen in fusion.items():
        train_q = sorted(q for q in gold if fold_of[q] != f)
        assert chosen["n_questions"] == len(train_q) > 0
        # weight 1 is the first stage's order, weight 0 the reranker's: their recall@5 on the fold's training
        # questions, from the landed runs
        for name, w in (("first", "1.0"), ("alone", "0.0")):
            want = np.mean([recall_at(results[name], q, gold[q], 5) for q in train_q])
            assert chosen["recall_by_weight"][w] == pytest.approx(want, abs=1e-6), (f, name)
        by_weight = chosen["recall_by_weight"]
        assert chosen["weight"] == max(float(w) for w, m in by_weight.items() if m == max(by_weight.values()))
    # the fused run: each question's scores are (1 - w) z(reranker) + w z(bm25) over its candidates, w its fold's
    stage = run_params(lake, runs["fused"])["rerank"][0]
    assert stage["fusion"] == "trained"
    assert stage["fusion_weight_of_fold"] == {str(f): c["weight"] for f, c in fusion.items()}
    z = lambda x: (x - x.mean()) / x.std()  # noqa: E731
    for qid, f in fold_of.items():
        first = results["first"].filter(results["first"]["question_id"] == qid).sort("rank")
        if first.height == 0:
            continue
        alone = dict(results["alone"].filter(results["alone"]["question_id"] == qid).select("chunk_id", "score")
                     .iter_rows())
        w = fusion[f]["weight"]
        want = (1 - w) * z(np.array([alone[c] for c in first["chunk_id"]])) + w * z(first["score"].to_numpy())
        got = results["fused"].filter(results["fused"]["question_id"] == qid).sort("rank")
        expected = dict(zip(first["chunk_id"], want, strict=True))
        np.testing.assert_allclose(got["score"].to_numpy(), [expected[c] for c in got["chunk_id"]], atol=1e-9)
        assert list(np.diff(got["score"].to_numpy()) <= 0) == [True] * (got.height - 1)


def test_bad_input_names_the_option_and_lands_nothing(trained):
    lake, tid = trained
    before = set(lake.partitions("retrieval_runs"))
    page_scorer = train_page_scorer(lake, TrainingConfig(DATASET, folds=2, epochs=0), progress=False)["training_id"]
    cases = [
        ({"reranker": "trained:nosuch"}, "reranker", "no model training 'nosuch'"),
        ({"reranker": f"trained:{page_scorer}"}, "reranker", "is a page_scorer training, not a reranker one"),
        ({"reranker": f"trained:{tid}", "rerank_passage": "page"}, "rerank_passage", "trained on chunk passages"),
        ({"reranker": "a-cross-encoder", "rerank_fusion": "trained"}, "rerank_fusion", "needs a trained reranker"),
    ]
    for settings, field, words in cases:
        with pytest.raises(InputError) as err:
            retrieve(lake.home, DATASET, "rerank", first_stage="bm25", k=3, **settings)
        assert err.value.field == field and words in str(err.value)
    with pytest.raises(InputError, match="trained on dataset 'pagefin', not 'other'") as err:
        load_trained(lake, f"trained:{tid}", "other", "chunk")
    assert err.value.field == "reranker"
    with pytest.raises(InputError, match="keeps its top 5 .* reads 8") as err:
        RetrievalConfig.from_dict({"dataset": DATASET, "retriever": "rerank", "reranker": "a", "top_n": 8,
                                   "first_stage": "rerank", "first_stage.reranker": "b", "first_stage.top_n": 5})
    assert err.value.field == "first_stage.top_n"
    with pytest.raises(InputError) as err:
        RetrievalConfig.from_dict({"dataset": DATASET, "retriever": "rerank", "reranker": "a",
                                   "first_stage.reranker": "b"})  # dense is no cascade: nothing takes it
    assert err.value.field == "first_stage.reranker"
    assert set(lake.partitions("retrieval_runs")) == before


def cascade_grid(tid: str, parameters: str) -> str:
    return f"""\
dataset: {DATASET}
fixed:
  k: 3
  retriever: rerank
  reranker: trained:{tid}
  first_stage: rerank
  first_stage.first_stage: bm25
  first_stage.reranker: trained:{tid}
parameters:
{parameters}"""


def test_a_cascade_sweep_lands_every_configuration_and_a_second_sweep_is_all_cache_hits(trained):
    lake, tid = trained
    first = plan_sweep(lake, parse_grid(cascade_grid(tid, "  top_n: [3, 5]\n  first_stage.top_n: [5, 8]\n"),
                                        "grid.yaml"))
    assert run_sweep(lake, first, progress=False)["ran"] == 4
    runs = [c.run_id for c in first.configurations]
    assert len(set(runs)) == 4 and set(runs) <= set(lake.partitions("retrieval_runs"))
    stages = [run_params(lake, r)["rerank"] for r in runs]
    assert all([s["top_n"] for s in st] == [c.config.retriever.stages[0].top_n,
                                            c.config.retriever.stages[1].top_n]
               for st, c in zip(stages, first.configurations, strict=True))
    # the second sweep over the same reranker: other depths, every pair already scored
    second = plan_sweep(lake, parse_grid(cascade_grid(tid, "  top_n: [4]\n  first_stage.top_n: [6, 7]\n"),
                                         "grid.yaml"))
    assert run_sweep(lake, second, progress=False)["ran"] == 2
    for c in second.configurations:
        for stage in run_params(lake, c.run_id)["rerank"]:
            assert stage["scored"] == 0 and stage["cache_hits"] == stage["pairs"] > 0, stage


def test_page_windows_train_on_the_evidence_window_and_score_a_page_by_its_best_window(trained):
    lake, _ = trained
    # a 40-piece window: the corpus's pages are longer than one window with their question and label
    cfg = RerankerTrainingConfig(DATASET, passage="page", page_windows=True, max_length=40, first_stage="bm25",
                                 negatives=2, negatives_depth=10, folds=2, epochs=1, batch_size=8,
                                 learning_rate=1e-3, head_only=True)
    tid = str(train_reranker(lake, cfg, progress=False)["training_id"])
    rows = lake.read_partition("model_trainings", tid).sort("fold")
    params = json.loads(rows["params"][0])
    found = params["page_windows_found"]
    assert params["page_windows"] is True and params["window_stride"] == 0.5 and found["max_length"] == 40
    # this corpus's evidence names pages, not texts: each gold page's positive is its first window (test_windows.py
    # covers finding the evidence text)
    assert found["evidence_found"] == {"match": 0, "overlap": 0, "first": params["n_pairs"]}
    assert found["n_positive_windows"] == params["n_pairs"] > 0
    out = retrieve(lake.home, DATASET, "rerank", first_stage="bm25", reranker=f"trained:{tid}",
                   rerank_passage="page", k=3)
    stage = run_params(lake, str(out["run_id"]))["rerank"][0]
    assert stage["page_windows"]["max_length"] == 40 and stage["page_windows"]["stride"] == 0.5
    # MaxP by hand: each landed score is the best window's score by the fold model that scored the question
    results = lake.read_partition("retrieval_results", str(out["run_id"])).sort("question_id", "rank")
    page = {(d, p): t for d, p, t in read_page_texts(lake, DATASET).iter_rows()}
    question = dict(lake.read("questions").select("question_id", "question").iter_rows())
    model = {f: str(lake.home / f"models/reranker/{tid}/fold-{f}") for f in (0, 1)}
    split = PageWindows(load_tokenizer(model[0]), 40)
    want, n_windows = [], []
    for q, d, p in results.select("question_id", "doc_id", "page_start").iter_rows():
        wins = split.windows(question[q], page[(d, p)])
        n_windows.append(len(wins))
        scores = load_reranker(model[stage["fold_of_question"][q]]).score([(question[q], w.text) for w in wins])
        want.append(max(scores))
    assert max(n_windows) > 1  # the check means something: pages of several windows
    np.testing.assert_allclose(results["score"].to_numpy(), want, rtol=0, atol=1e-6)
    # the same model on whole pages: its own scores (and cache entries), not the windows'
    whole = retrieve(lake.home, DATASET, "rerank", first_stage="bm25", reranker=f"trained:{tid}",
                     rerank_passage="page", page_windows=False, k=3)
    assert run_params(lake, str(whole["run_id"]))["rerank"][0]["page_windows"] is None
    assert whole["run_id"] != out["run_id"]

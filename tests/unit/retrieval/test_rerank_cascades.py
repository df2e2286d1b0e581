"""Cascades of rerank stages as configs (no model is loaded): the `first_stage.<setting>` routing of flat settings
(the CLI's `--first-stage-<setting>`, a sweep grid's keys), the stages a cascade runs, its config hash, and its
depth check."""

from __future__ import annotations

import pytest

from python_jobs.core.errors import InputError
from python_jobs.retrieval import RetrieverTree
from python_jobs.retrieval.runs import RetrievalConfig, config_fields, identity

CASCADE = {"retriever": "rerank", "reranker": "strong", "top_n": 20, "first_stage": "rerank",
           "first_stage.reranker": "light", "first_stage.top_n": 200}


def test_each_stage_of_a_cascade_takes_its_own_settings():
    tree = RetrieverTree.of("rerank", {k: v for k, v in CASCADE.items() if k != "retriever"})
    assert tree.names == ["rerank", "rerank", "dense"] and tree.depths() == [0, 1, None]
    outer, inner, _ = tree.stages
    assert (outer.reranker, outer.top_n, outer.first_stage) == ("strong", 20, "rerank")
    assert (inner.reranker, inner.top_n, inner.first_stage) == ("light", 200, "dense")
    assert {"reranker", "first_stage.reranker", "first_stage.top_n", "embedder"} <= tree.keys()
    three = RetrieverTree.of("rerank", {"reranker": "c", "top_n": 10, "first_stage": "rerank",
                                        "first_stage.reranker": "b", "first_stage.top_n": 20,
                                        "first_stage.first_stage": "rerank",
                                        "first_stage.first_stage.reranker": "a",
                                        "first_stage.first_stage.top_n": 100,
                                        "first_stage.first_stage.first_stage": "bm25"})
    assert three.names == ["rerank", "rerank", "rerank", "bm25"]
    assert [s.reranker for s in three.stages[:3]] == ["c", "b", "a"]
    assert [s.top_n for s in three.stages[:3]] == [10, 20, 100]


def test_the_inner_stage_enters_the_config_hash():
    cfg = RetrievalConfig.from_dict({"dataset": "d", "k": 5, **CASCADE})
    fields = config_fields(cfg.retriever, 5)
    assert (fields["reranker"], fields["top_n"]) == ("strong", 20)
    assert (fields["first_stage.reranker"], fields["first_stage.top_n"], fields["first_stage.first_stage"]) == (
        "light", 200, "dense")
    other = RetrievalConfig.from_dict({"dataset": "d", "k": 5, **CASCADE, "first_stage.reranker": "other"})
    deeper = RetrievalConfig.from_dict({"dataset": "d", "k": 5, **CASCADE, "first_stage.top_n": 300})
    ids = {identity(c, "c1")[0] for c in (cfg, other, deeper)}
    assert len(ids) == 3
    # a plain rerank has no inner keys, and page passages are another run than chunk passages
    plain = RetrievalConfig.from_dict({"dataset": "d", "retriever": "rerank", "reranker": "m", "k": 5})
    pages = RetrievalConfig.from_dict({"dataset": "d", "retriever": "rerank", "reranker": "m", "k": 5,
                                       "rerank_passage": "page"})
    assert not any(k.startswith("first_stage.") for k in config_fields(plain.retriever, 5))
    assert identity(plain, "c1")[0] != identity(pages, "c1")[0]


@pytest.mark.parametrize(("settings", "field"), [
    ({"first_stage.top_n": 10}, "first_stage.top_n"),  # keeps 10, the outer stage reads 20
    ({"top_n": None, "first_stage.top_n": None, "k": 30}, None),  # both default to max(20, k): fine
    ({"first_stage.nosuch": 1}, "first_stage.nosuch"),
    ({"first_stage.first_stage": "page_scorer"}, "first_stage"),  # not a first stage
])
def test_a_cascade_is_checked_before_it_runs(settings, field):
    values = {"dataset": "d", "k": 5, **CASCADE, **settings}
    if field is None:
        RetrievalConfig.from_dict(values)
        return
    with pytest.raises(InputError) as err:
        RetrievalConfig.from_dict(values)
    assert err.value.field == field

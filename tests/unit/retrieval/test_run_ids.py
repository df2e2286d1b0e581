"""Run ids stay as they were: the run id, config hash and config id of representative retrieval configs, computed
with the config classes, equal what main computed before the configs were typed (commit 99b8d65, with its
`normalise(RetrieverConfig(...))` and its CLI's defaults). Runs already in users' lakes keep their ids: a re-run of
the same config replaces its partition. The LLM retrievers' ids go through the settings their Rewriter hashes (the
prompt, the model, the endpoint host); no call is made. The answer, judge and generation ids, which need a lake and
the scripted LLM server: tests/integration/test_job_run_ids.py."""

from __future__ import annotations

from pathlib import Path

import pytest

from python_jobs.llm.config import LLMConfig
from python_jobs.retrieval.hyde import LLMRetrieverConfig, Rewriter
from python_jobs.retrieval.runs import RetrievalConfig, identity

BASE = {"dataset": "financebench", "chunker_id": "tok1024o128-minilm", "condition": "full"}
# the LLM retrievers' endpoint: the hash holds its model and host (the port and key do not enter it)
ENDPOINT = LLMConfig(base_url="http://127.0.0.1:9/v1", model="fake-model")

# name: (settings beside BASE, run id, config hash, config id), the ids as main computed them (commit 99b8d65)
CASES = {
    "bm25": ({"retriever": "bm25", "k": 10},
        "financebench-bm25-full-11b36b73d6",
        "11b36b73d6074ec691a33b6bb084cd006823dd89bf42a06a5863b6bc584c138b",
        "0153f31ae12bc98ca6a10860d88b14682dbd1113befb9305e771fe9c0076cf60"),
    "bm25_oracle_page_splits": ({"retriever": "bm25", "k": 5, "condition": "oracle_page", "splits": ["test", "dev"]},
        "financebench-bm25-oracle_page-fa666a4bc8",
        "fa666a4bc8a07442c5c47066110562cafb529c6c26d7732b8e8c481f17f18253",
        "ff3ea8924a35f13cf5f560bc852d589435508ebd3744b1409ee57fc880b6e690"),
    "dense": ({"retriever": "dense", "k": 5},
        "financebench-dense-full-9e5e960978",
        "9e5e960978e406e8c6999294cf17fd573d3eef9e1f2a638c3a2ae23a59c16cc2",
        "0b088f79549a64ad2be6bc0448d4c0c8232e0da9f8a6feb2c16a14922ebd890b"),
    "dense_truncate_ann": ({"retriever": "dense", "long_text": "truncate", "dense_search": "ann", "k": 10,
        "condition": "oracle_doc"},
        "financebench-dense-oracle_doc-5d0bcff0bc",
        "5d0bcff0bc0cbd30ef404d18d15c282f5a15f42f469a2fae0439f1dd81759a64",
        "d3d009b8d409b7fb2cc35c1498aa089ae152503eee2f2e8f998d677a39a98086"),
    "hybrid_rrf10": ({"retriever": "hybrid", "rrf_k": 10, "k": 5},
        "financebench-hybrid-full-69da546775",
        "69da546775cfc7b93718e978b296100b8627ca591d0857dd55c14369fca7c266",
        "bf356a96926eac1fa1a4424b1ea5c6906f2c599fea14d6836f4a5777e12ca0b1"),
    "hybrid_top_n_50": ({"retriever": "hybrid", "top_n": 50, "k": 10},
        "financebench-hybrid-full-059856dce7",
        "059856dce7257f121de063ca80c07ba2e2070c7eaa974cce0d66ba073c1f258d",
        "08a8bb5e73345dc4e4df2ec9c457e917adb880dc5e7fa4f4b245d74b934b879f"),
    "rerank_bm25_200": ({"retriever": "rerank", "first_stage": "bm25", "top_n": 200,
        "reranker": "BAAI/bge-reranker-v2-m3", "k": 10},
        "financebench-rerank-full-c635ea3fe8",
        "c635ea3fe814e5a81cb0125d87a7e33d75fb08b6b6305fd968fc24cdd468ef5c",
        "68f628b91da96af92d88afbbd3e7a30e572f8b4c6b53ec602b2e0e28285d2b22"),
    "rerank_default_oracle_page": ({"retriever": "rerank", "reranker": "/m/ce", "k": 10, "condition": "oracle_page"},
        "financebench-rerank-oracle_page-57e44e7758",
        "57e44e775869344112e35424733d2814543783d03f3ea21661437c3b8ef45195",
        "f5bde32d6f3f00c0e64edb04fd5c81bac2dd048f056aa9f6b0b493f2e1df4399"),
    "rerank_hybrid_rrf30": ({"retriever": "rerank", "first_stage": "hybrid", "rrf_k": 30,
        "reranker": "flag:BAAI/bge-reranker-v2-m3", "k": 10},
        "financebench-rerank-full-c6255a3efc",
        "c6255a3efc7eaf5d5a96208a6aae3f8142fd564c6df5496ffb88f9bd2415bbc9",
        "965bd04f817d907506497138054859a8db25fc2282f13f2a4c8a042bce61095b"),
    "parent_child": ({"retriever": "parent_child", "k": 3, "chunker_id": "tok512-parent"},
        "financebench-parent_child-full-dec2b23935",
        "dec2b239356e29ac53b557e36b658aa45d32ef8e65341f6cbd6b064b829c7cd4",
        "b08b6b20c98785fb63e06ca71eb7857463e063e0fed9cfe651d4b3bcf78dbb9e"),
    "parent_child_bm25": ({"retriever": "parent_child", "first_stage": "bm25", "k": 30, "chunker_id": "tok512-parent"},
        "financebench-parent_child-full-a840b4ec76",
        "a840b4ec769d6f894d212b47d11e133cd094a866a252b20dfae587f3539c1272",
        "030c145652957cd1527a4d368b0e92bc393db71b4b62d1d356db495edbfdf3a5"),
    "keywords": ({"retriever": "keywords", "n_keywords": 3, "feedback_docs": 1, "feedback_terms": 2, "k": 10},
        "financebench-keywords-full-bef7ee4902",
        "bef7ee4902611a42ee70fc3585ad3834265d6ff643dea87d51b1c8fbf21356d5",
        "a15d6a114594e321eba001d849a7aeef5b49e8386dee7926896caa47829a182d"),
    "keywords_dense": ({"retriever": "keywords", "first_stage": "dense", "k": 10},
        "financebench-keywords-full-8d91b00e57",
        "8d91b00e571d78bbfdd5a98aa8078b373eabd187c1df02eda37e1a8e3b3c6c33",
        "8784ef101807ca6c45838ec5d723bc9de388e80a9ab90f4d7b78f1d844dfaf6f"),
    "keywords_rerank": ({"retriever": "keywords", "first_stage": "rerank", "reranker": "x/ce", "k": 10},
        "financebench-keywords-full-d502d691fb",
        "d502d691fb47246b7f669a7362722a7686b24f348e6f844fdbe534b740d3858b",
        "b729203bc086f45eeb0126833cf76ce413dda4380bc94337d0c3b257cf604069"),
    "page_scorer": ({"retriever": "page_scorer", "model_training": "financebench-ps-1", "k": 5},
        "financebench-page_scorer-full-c23657cc90",
        "c23657cc90f56abb3561fcdf8ecbc3486ac505d6f6036c048659425d0f8d1199",
        "fc88e379575832e1d325e5c82db71138881b5e091cfa5e38b6ea7a03e830cffa"),
    "page_scorer_top5": ({"retriever": "page_scorer", "model_training": "t", "top_pages": 5, "k": 5,
        "condition": "oracle_doc"},
        "financebench-page_scorer-oracle_doc-e9e314b550",
        "e9e314b550dac4d7bd84ec7c03726c41ba5c5458ea3625025e729776b1beee39",
        "d8caaf9478fae65d40469eaed9e3e85ec3d258c2f357516af318ad8e36a59d0e"),
    "hyde": ({"retriever": "hyde", "k": 10},
        "financebench-hyde-full-ca15292b7e",
        "ca15292b7ee066151a45c8a11f36dae14d3c2731cc0864dd7222c31711831b97",
        "7a6b5ef4090b282882556e7b88ec13a738d4ec7a2eb1b3752678b3ce89907573"),
    "hyde_t03": ({"retriever": "hyde", "llm_temperature": 0.3, "k": 10},
        "financebench-hyde-full-5bae43e388",
        "5bae43e388d812edc698d16691f287dc991e39a1967cb1f2e6503985ce2df6df",
        "1c43d3a47ac093e969622d2dea26183e68e7a8f174c888869f4f13f0184a98ea"),
    "multi_hyde": ({"retriever": "multi_hyde", "k": 10},
        "financebench-multi_hyde-full-5c22ecbf9b",
        "5c22ecbf9ba0f096dc72e87fe51701ce1f9ee7f4c77c7680bbf1941ac86db01e",
        "cf9d6366fe44c8b663b0356b6e64e22bb7ed451871ca5e0442ac29a334b4fc27"),
    "multi_hyde_rrf": ({"retriever": "multi_hyde", "hyde_n": 2, "hyde_fusion": "rrf", "rrf_k": 30, "k": 10},
        "financebench-multi_hyde-full-50cdea945c",
        "50cdea945cebc237207d8f8444673d5910aaaedd0e6d6e45bbdfde886fab4218",
        "d562004a1d355646549de8540722438e30c1f7ae9a6721be6fbf238dcb5a4cce"),
    "llm_expand": ({"retriever": "llm_expand", "k": 10},
        "financebench-llm_expand-full-867dcae5ca",
        "867dcae5ca713cb7586f957d8d027d4ba1c8bcdaa5b78335232f8efb776e0a68",
        "047bdafe3828fec92223efc0b5dea8f61e7279133a6cad96a0ef7202115cb419"),
    "llm_expand_dense": ({"retriever": "llm_expand", "first_stage": "dense", "k": 10, "condition": "oracle_doc"},
        "financebench-llm_expand-oracle_doc-21c724e080",
        "21c724e08016aee92b89b657632565c243f23eaa922ae762f46a3ed38c669f43",
        "127f97a720a282f34e9dc6a0d62d101f23621ee9920810e6bf535173d8de1c1e"),
}


@pytest.mark.parametrize("name", CASES)
def test_run_ids_of_existing_configs_are_unchanged(name: str, tmp_path: Path) -> None:
    settings, run_id, config_hash, config_id = CASES[name]
    values = {**BASE, **settings}
    cfg = RetrievalConfig.from_dict(values)
    llm = None
    stage = next((s for s in cfg.retriever.stages if isinstance(s, LLMRetrieverConfig)), None)
    if stage is not None:
        rewriter = Rewriter.open(tmp_path, stage, ENDPOINT, progress=False)
        llm = rewriter.settings()
        rewriter.close()
    assert identity(cfg, values["chunker_id"], llm) == (run_id, config_hash, config_id)

"""Derived ids stay byte-for-byte as they were (python_jobs/core/run_ids.py). The table was written by the code before
the rule became one function: the retrieval and training ids through `identity` / `training_id`, the generation,
sweep, answer and judge ids by evaluating those jobs' own id lines (the f-strings of run_generation, plan,
answer_identity and run_judge) with the digest below. Its names: the demo's datasets and retrievals (commands/demo.py,
demo/pipeline.py RETRIEVALS and sweep_grid), the test homes' (tests/support, test_job_run_ids.py, the judge tests'
answer runs), and names the sanitising changes (spaces, slashes, non-ASCII, more than 60 characters). Answer and judge
ids were not sanitised then: only names they accepted (lake-safe, short) are in the table, and every one of them keeps
its id under the sanitising rule they now share."""

from __future__ import annotations

from pathlib import Path

import pytest

from python_jobs.core.run_ids import derived_id, id_name
from python_jobs.page_scoring.training import TrainingConfig, training_id
from python_jobs.retrieval.runs import RetrievalConfig, identity

DIGEST = "dd56de4137951d9c92681b03416ec15f886b4482a27e3a517d32f085244cbe5d"
CHUNKER = "tok1024o128-minilm"
LONG, SLASHED = "a" * 70, "x" * 59 + "/yz"

# (job, name, kind, id the old code made); a retrieval kind is `<retriever>-<condition>` of a k=10 config
GOLDEN = [
    ('retrieval', 'demo_synthetic', 'bm25-full', 'demo_synthetic-bm25-full-4ea1bb24f5'),
    ('retrieval', 'demo_synthetic', 'dense-oracle_page', 'demo_synthetic-dense-oracle_page-68749dea45'),
    ('retrieval', 'demo_synthetic', 'hybrid-full', 'demo_synthetic-hybrid-full-520302c829'),
    ('training', 'demo_synthetic', 'page_scorer', 'demo_synthetic-page_scorer-83e259fc03'),
    ('retrieval', 'financebench', 'bm25-full', 'financebench-bm25-full-11b36b73d6'),
    ('retrieval', 'financebench', 'dense-oracle_page', 'financebench-dense-oracle_page-46ce11b576'),
    ('retrieval', 'financebench', 'hybrid-full', 'financebench-hybrid-full-bbd9a400c9'),
    ('training', 'financebench', 'page_scorer', 'financebench-page_scorer-5d24b66317'),
    ('retrieval', 'toyfin', 'bm25-full', 'toyfin-bm25-full-59c2ad3b74'),
    ('retrieval', 'toyfin', 'dense-oracle_page', 'toyfin-dense-oracle_page-16e8b8bc69'),
    ('retrieval', 'toyfin', 'hybrid-full', 'toyfin-hybrid-full-1fea6ca38a'),
    ('training', 'toyfin', 'page_scorer', 'toyfin-page_scorer-0da5d871ad'),
    ('retrieval', 'genfin', 'bm25-full', 'genfin-bm25-full-d5387a68e5'),
    ('retrieval', 'genfin', 'dense-oracle_page', 'genfin-dense-oracle_page-c43bc5771f'),
    ('retrieval', 'genfin', 'hybrid-full', 'genfin-hybrid-full-163807cd9d'),
    ('training', 'genfin', 'page_scorer', 'genfin-page_scorer-5a80f44e36'),
    ('retrieval', 'pagefin', 'bm25-full', 'pagefin-bm25-full-0040c4f0be'),
    ('retrieval', 'pagefin', 'dense-oracle_page', 'pagefin-dense-oracle_page-529ca6833c'),
    ('retrieval', 'pagefin', 'hybrid-full', 'pagefin-hybrid-full-7e98fb5171'),
    ('training', 'pagefin', 'page_scorer', 'pagefin-page_scorer-36d8592b27'),
    ('retrieval', 'synth', 'bm25-full', 'synth-bm25-full-d5b57b75d6'),
    ('retrieval', 'synth', 'dense-oracle_page', 'synth-dense-oracle_page-991dc31129'),
    ('retrieval', 'synth', 'hybrid-full', 'synth-hybrid-full-ae9c6a3dca'),
    ('training', 'synth', 'page_scorer', 'synth-page_scorer-32b2535ef3'),
    ('retrieval', 'toy', 'bm25-full', 'toy-bm25-full-5f23b01281'),
    ('retrieval', 'toy', 'dense-oracle_page', 'toy-dense-oracle_page-f1a2531d22'),
    ('retrieval', 'toy', 'hybrid-full', 'toy-hybrid-full-a844da031e'),
    ('training', 'toy', 'page_scorer', 'toy-page_scorer-7fc97994a5'),
    ('retrieval', 'trec_test', 'bm25-full', 'trec_test-bm25-full-24aea206c7'),
    ('retrieval', 'trec_test', 'dense-oracle_page', 'trec_test-dense-oracle_page-b96e6a99e0'),
    ('retrieval', 'trec_test', 'hybrid-full', 'trec_test-hybrid-full-89e197fd4a'),
    ('training', 'trec_test', 'page_scorer', 'trec_test-page_scorer-1d67e1f498'),
    ('retrieval', 'financerag_financebench', 'bm25-full', 'financerag_financebench-bm25-full-58c1686be6'),
    ('retrieval', 'financerag_financebench', 'dense-oracle_page',
     'financerag_financebench-dense-oracle_page-576dccda2f'),
    ('retrieval', 'financerag_financebench', 'hybrid-full', 'financerag_financebench-hybrid-full-648ea34cb7'),
    ('training', 'financerag_financebench', 'page_scorer', 'financerag_financebench-page_scorer-0d8d1d270b'),
    ('retrieval', 'finqabench', 'bm25-full', 'finqabench-bm25-full-d70e06b6b6'),
    ('retrieval', 'finqabench', 'dense-oracle_page', 'finqabench-dense-oracle_page-831fbfb9b1'),
    ('retrieval', 'finqabench', 'hybrid-full', 'finqabench-hybrid-full-ec9f08d290'),
    ('training', 'finqabench', 'page_scorer', 'finqabench-page_scorer-319fd5ace6'),
    ('retrieval', 'sweepbench', 'bm25-full', 'sweepbench-bm25-full-ab7976dbdc'),
    ('retrieval', 'sweepbench', 'dense-oracle_page', 'sweepbench-dense-oracle_page-0a2e89e8a8'),
    ('retrieval', 'sweepbench', 'hybrid-full', 'sweepbench-hybrid-full-85247bebee'),
    ('training', 'sweepbench', 'page_scorer', 'sweepbench-page_scorer-9f018d6370'),
    ('retrieval', 'bench_shards', 'bm25-full', 'bench_shards-bm25-full-851dad3bd1'),
    ('retrieval', 'bench_shards', 'dense-oracle_page', 'bench_shards-dense-oracle_page-8fd359d191'),
    ('retrieval', 'bench_shards', 'hybrid-full', 'bench_shards-hybrid-full-6f8d6fdeb7'),
    ('training', 'bench_shards', 'page_scorer', 'bench_shards-page_scorer-e9e0c59677'),
    ('retrieval', 'FinanceBench', 'bm25-full', 'FinanceBench-bm25-full-d2bc8016f1'),
    ('retrieval', 'FinanceBench', 'dense-oracle_page', 'FinanceBench-dense-oracle_page-7446235074'),
    ('retrieval', 'FinanceBench', 'hybrid-full', 'FinanceBench-hybrid-full-fd1bea136e'),
    ('training', 'FinanceBench', 'page_scorer', 'FinanceBench-page_scorer-4a29cddc20'),
    ('retrieval', 'My Filings/2024', 'bm25-full', 'My_Filings_2024-bm25-full-0ed6039b16'),
    ('retrieval', 'My Filings/2024', 'dense-oracle_page', 'My_Filings_2024-dense-oracle_page-70353b973e'),
    ('retrieval', 'My Filings/2024', 'hybrid-full', 'My_Filings_2024-hybrid-full-5a8efc3aad'),
    ('training', 'My Filings/2024', 'page_scorer', 'My_Filings_2024-page_scorer-5199309347'),
    ('retrieval', '10-K filings (FY23)', 'bm25-full', '10-K_filings__FY23_-bm25-full-b3fce94a31'),
    ('retrieval', '10-K filings (FY23)', 'dense-oracle_page', '10-K_filings__FY23_-dense-oracle_page-32e00ed22d'),
    ('retrieval', '10-K filings (FY23)', 'hybrid-full', '10-K_filings__FY23_-hybrid-full-25fb05fa67'),
    ('training', '10-K filings (FY23)', 'page_scorer', '10-K_filings__FY23_-page_scorer-6d3f49eb67'),
    ('retrieval', LONG, 'bm25-full',
     'aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa-bm25-full-e40b3a15c3'),
    ('retrieval', LONG, 'dense-oracle_page',
     'aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa-dense-oracle_page-e8759d19a6'),
    ('retrieval', LONG, 'hybrid-full',
     'aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa-hybrid-full-c93e482a81'),
    ('training', LONG, 'page_scorer',
     'aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa-page_scorer-aed8b3af9b'),
    ('retrieval', 'Q&A set: über', 'bm25-full', 'Q_A_set___ber-bm25-full-271a9adc27'),
    ('retrieval', 'Q&A set: über', 'dense-oracle_page', 'Q_A_set___ber-dense-oracle_page-1a8bcb02da'),
    ('retrieval', 'Q&A set: über', 'hybrid-full', 'Q_A_set___ber-hybrid-full-62fdf3275d'),
    ('training', 'Q&A set: über', 'page_scorer', 'Q_A_set___ber-page_scorer-e49b8e1b23'),
    ('retrieval', SLASHED, 'bm25-full',
     'xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx_-bm25-full-88bffc0b94'),
    ('retrieval', SLASHED, 'dense-oracle_page',
     'xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx_-dense-oracle_page-98e9b427ce'),
    ('retrieval', SLASHED, 'hybrid-full',
     'xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx_-hybrid-full-0dba1d37ef'),
    ('training', SLASHED, 'page_scorer',
     'xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx_-page_scorer-40573a92f6'),
    ('generation', 'demo_synthetic', 'qagen', 'qagen-demo_synthetic-dd56de4137'),
    ('sweep', 'demo_synthetic', 'sweep', 'demo_synthetic-sweep-dd56de4137'),
    ('answers', 'demo_synthetic', 'rag', 'demo_synthetic-rag-dd56de4137'),
    ('answers', 'demo_synthetic', 'closed_book', 'demo_synthetic-closed_book-dd56de4137'),
    ('generation', 'financebench', 'qagen', 'qagen-financebench-dd56de4137'),
    ('sweep', 'financebench', 'sweep', 'financebench-sweep-dd56de4137'),
    ('answers', 'financebench', 'rag', 'financebench-rag-dd56de4137'),
    ('answers', 'financebench', 'closed_book', 'financebench-closed_book-dd56de4137'),
    ('generation', 'toyfin', 'qagen', 'qagen-toyfin-dd56de4137'),
    ('sweep', 'toyfin', 'sweep', 'toyfin-sweep-dd56de4137'),
    ('answers', 'toyfin', 'rag', 'toyfin-rag-dd56de4137'),
    ('answers', 'toyfin', 'closed_book', 'toyfin-closed_book-dd56de4137'),
    ('generation', 'genfin', 'qagen', 'qagen-genfin-dd56de4137'),
    ('sweep', 'genfin', 'sweep', 'genfin-sweep-dd56de4137'),
    ('answers', 'genfin', 'rag', 'genfin-rag-dd56de4137'),
    ('answers', 'genfin', 'closed_book', 'genfin-closed_book-dd56de4137'),
    ('generation', 'pagefin', 'qagen', 'qagen-pagefin-dd56de4137'),
    ('sweep', 'pagefin', 'sweep', 'pagefin-sweep-dd56de4137'),
    ('answers', 'pagefin', 'rag', 'pagefin-rag-dd56de4137'),
    ('answers', 'pagefin', 'closed_book', 'pagefin-closed_book-dd56de4137'),
    ('generation', 'synth', 'qagen', 'qagen-synth-dd56de4137'),
    ('sweep', 'synth', 'sweep', 'synth-sweep-dd56de4137'),
    ('answers', 'synth', 'rag', 'synth-rag-dd56de4137'),
    ('answers', 'synth', 'closed_book', 'synth-closed_book-dd56de4137'),
    ('generation', 'toy', 'qagen', 'qagen-toy-dd56de4137'),
    ('sweep', 'toy', 'sweep', 'toy-sweep-dd56de4137'),
    ('answers', 'toy', 'rag', 'toy-rag-dd56de4137'),
    ('answers', 'toy', 'closed_book', 'toy-closed_book-dd56de4137'),
    ('generation', 'trec_test', 'qagen', 'qagen-trec_test-dd56de4137'),
    ('sweep', 'trec_test', 'sweep', 'trec_test-sweep-dd56de4137'),
    ('answers', 'trec_test', 'rag', 'trec_test-rag-dd56de4137'),
    ('answers', 'trec_test', 'closed_book', 'trec_test-closed_book-dd56de4137'),
    ('generation', 'financerag_financebench', 'qagen', 'qagen-financerag_financebench-dd56de4137'),
    ('sweep', 'financerag_financebench', 'sweep', 'financerag_financebench-sweep-dd56de4137'),
    ('answers', 'financerag_financebench', 'rag', 'financerag_financebench-rag-dd56de4137'),
    ('answers', 'financerag_financebench', 'closed_book', 'financerag_financebench-closed_book-dd56de4137'),
    ('generation', 'finqabench', 'qagen', 'qagen-finqabench-dd56de4137'),
    ('sweep', 'finqabench', 'sweep', 'finqabench-sweep-dd56de4137'),
    ('answers', 'finqabench', 'rag', 'finqabench-rag-dd56de4137'),
    ('answers', 'finqabench', 'closed_book', 'finqabench-closed_book-dd56de4137'),
    ('generation', 'sweepbench', 'qagen', 'qagen-sweepbench-dd56de4137'),
    ('sweep', 'sweepbench', 'sweep', 'sweepbench-sweep-dd56de4137'),
    ('answers', 'sweepbench', 'rag', 'sweepbench-rag-dd56de4137'),
    ('answers', 'sweepbench', 'closed_book', 'sweepbench-closed_book-dd56de4137'),
    ('generation', 'bench_shards', 'qagen', 'qagen-bench_shards-dd56de4137'),
    ('sweep', 'bench_shards', 'sweep', 'bench_shards-sweep-dd56de4137'),
    ('answers', 'bench_shards', 'rag', 'bench_shards-rag-dd56de4137'),
    ('answers', 'bench_shards', 'closed_book', 'bench_shards-closed_book-dd56de4137'),
    ('generation', 'FinanceBench', 'qagen', 'qagen-FinanceBench-dd56de4137'),
    ('sweep', 'FinanceBench', 'sweep', 'FinanceBench-sweep-dd56de4137'),
    ('answers', 'FinanceBench', 'rag', 'FinanceBench-rag-dd56de4137'),
    ('answers', 'FinanceBench', 'closed_book', 'FinanceBench-closed_book-dd56de4137'),
    ('generation', 'My Filings/2024', 'qagen', 'qagen-My_Filings_2024-dd56de4137'),
    ('sweep', 'My Filings/2024', 'sweep', 'My_Filings_2024-sweep-dd56de4137'),
    ('generation', '10-K filings (FY23)', 'qagen', 'qagen-10-K_filings__FY23_-dd56de4137'),
    ('sweep', '10-K filings (FY23)', 'sweep', '10-K_filings__FY23_-sweep-dd56de4137'),
    ('generation', LONG, 'qagen', 'qagen-aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa-dd56de4137'),
    ('sweep', LONG, 'sweep', 'aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa-sweep-dd56de4137'),
    ('generation', 'Q&A set: über', 'qagen', 'qagen-Q_A_set___ber-dd56de4137'),
    ('sweep', 'Q&A set: über', 'sweep', 'Q_A_set___ber-sweep-dd56de4137'),
    ('generation', SLASHED, 'qagen', 'qagen-xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx_-dd56de4137'),
    ('sweep', SLASHED, 'sweep', 'xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx_-sweep-dd56de4137'),
    ('judging', 'demo_synthetic-rag-00b32fefe0', 'judge', 'demo_synthetic-rag-00b32fefe0-judge-dd56de4137'),
    ('judging', 'gpt-4_oracle', 'judge', 'gpt-4_oracle-judge-dd56de4137'),
    ('judging', 'gpt-4_closedBook', 'judge', 'gpt-4_closedBook-judge-dd56de4137'),
    ('judging', 'long_run', 'judge', 'long_run-judge-dd56de4137'),
    ('judging', 'toyfin-rag-00b32fefe0', 'judge', 'toyfin-rag-00b32fefe0-judge-dd56de4137'),
    ('judging', 'toyfin-closed_book-43f46e52cd', 'judge', 'toyfin-closed_book-43f46e52cd-judge-dd56de4137'),
    ('judging', 'financerag_financebench-closed_book-1234567890', 'judge',
     'financerag_financebench-closed_book-1234567890-judge-dd56de4137'),
]


@pytest.mark.parametrize(("job", "name", "kind", "expected"), GOLDEN)
def test_derived_ids_are_unchanged(job: str, name: str, kind: str, expected: str) -> None:
    if job == "retrieval":
        retriever, condition = kind.split("-")
        cfg = RetrievalConfig.from_dict({"dataset": name, "retriever": retriever, "k": 10, "condition": condition})
        made, config_hash, _ = identity(cfg, CHUNKER)
        assert made == expected
        assert derived_id(name, kind, config_hash) == expected
    elif job == "training":
        assert training_id(TrainingConfig(dataset=name), DIGEST) == expected
    else:
        assert derived_id(name, kind, DIGEST, kind_first=job == "generation") == expected


def test_the_name_is_made_lake_safe_and_cut() -> None:
    assert id_name("My Filings/2024") == "My_Filings_2024"
    assert id_name(LONG) == "a" * 60
    # the answer ids the old rule made from such names: refused (unsafe characters) or cut now (over 60)
    assert derived_id("Q&A set: über", "rag", DIGEST) == "Q_A_set___ber-rag-dd56de4137"
    assert derived_id(LONG, "closed_book", DIGEST) == f"{'a' * 60}-closed_book-dd56de4137"


def test_an_external_files_default_run_id_is_its_whole_name_made_lake_safe() -> None:
    from python_jobs.sources.external_runs import default_run_id

    # the same characters as every derived id; non-ASCII letters (refused by check_id before) become `_`, never cut
    assert default_run_id(Path(".latest_run_full.json")) == "latest_run_full"
    assert default_run_id(Path("résumé run.json")) == "r_sum__run"
    assert default_run_id(Path("x" * 90 + ".csv")) == "x" * 90

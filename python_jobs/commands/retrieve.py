"""`finrag retrieve`: run a retriever over a dataset's questions and land the run (SPEC §4).

The rules and decisions are documented in python_jobs/retrieval/runs.py.
"""

from __future__ import annotations

import click

from python_jobs.commands._options import Produced, llm_options, produces, shard_option
from python_jobs.core.config import warehouse_home
from python_jobs.core.question_sets import parse_splits
from python_jobs.core.shards import Shard
from python_jobs.corpus.encoders import DEFAULT_EMBEDDER, LONG_TEXT_MODES
from python_jobs.corpus.vectors import SEARCH_MODES
from python_jobs.llm.config import LLMConfig
from python_jobs.retrieval import FIRST_STAGES, RETRIEVERS
from python_jobs.retrieval.conditions import CONDITIONS
from python_jobs.retrieval.hyde import HYDE_FUSIONS, LLM_RETRIEVERS
from python_jobs.retrieval.page_scorer import DEFAULT_TOP_PAGES
from python_jobs.retrieval.runs import run_retrieval


@click.command("retrieve")
@produces
@click.option("--retriever", type=click.Choice(RETRIEVERS), required=True)
@click.option("--dataset", required=True, help="Dataset whose questions are the queries and chunks the corpus.")
@click.option("--k", "k", type=int, default=10, show_default=True, help="Results per question.")
@click.option("--condition", type=click.Choice(CONDITIONS), default="full", show_default=True)
@click.option("--chunker-id", default=None, help="Chunks partition to search (default: the dataset's only one).")
@click.option("--embedder", default=DEFAULT_EMBEDDER, show_default=True, help="Embedder of the LanceDB vectors.")
@click.option("--long-text", type=click.Choice(LONG_TEXT_MODES), default="window", show_default=True,
              help="Which vectors of that embedder (as indexed).")
@click.option("--dense-search", type=click.Choice(SEARCH_MODES), default="flat", show_default=True,
              help="Exact scan, or the IVF_PQ index built by `finrag index --ann`.")
@click.option("--first-stage", type=click.Choice(FIRST_STAGES), default=None,
              help="Inner retriever of rerank / keywords / parent_child (default dense; bm25 for keywords).")
@click.option("--reranker", default=None, help="Cross-encoder name or local path (flag: prefix = FlagReranker).")
@click.option("--top-n", type=int, default=None,
              help="First-stage depth: rerank 20 (200 for two-stage), hybrid 100, parent_child max(100, 10k) children.")
@click.option("--rrf-k", type=int, default=60, show_default=True, help="Reciprocal rank fusion constant.")
@click.option("--n-keywords", type=int, default=8, show_default=True, help="keywords: query terms kept.")
@click.option("--feedback-docs", type=int, default=3, show_default=True, help="keywords: feedback documents.")
@click.option("--feedback-terms", type=int, default=5, show_default=True, help="keywords: feedback terms added.")
@click.option("--run-id", default=None, help="Run id (default: derived from the config hash).")
@click.option("--batch-size", type=int, default=64, show_default=True, help="Query encoding / search batch size.")
@click.option("--hyde-n", type=int, default=3, show_default=True,
              help="multi_hyde: hypothetical passages per question.")
@click.option("--hyde-fusion", type=click.Choice(HYDE_FUSIONS), default="mean", show_default=True,
              help="multi_hyde: average the vectors (question's included) or search each and fuse by RRF (--rrf-k).")
@click.option("--llm-temperature", type=float, default=None,
              help="LLM retrievers' sampling temperature (default: hyde 0, multi_hyde 0.7, llm_expand 0).")
@click.option("--model-training", default=None,
              help="page_scorer: the `finrag train-page-scorer` training whose fold models score the pages.")
@click.option("--top-pages", type=int, default=DEFAULT_TOP_PAGES, show_default=True,
              help="page_scorer: pages kept per question; chunks are ranked within them.")
@llm_options()
@click.option("--split", "split", default=None,
              help="Comma list of question splits to query (default: every split except 'dropped').")
@shard_option("question ids")
def command(retriever: str, dataset: str, k: int, condition: str, chunker_id: str | None, embedder: str,
            long_text: str, dense_search: str, first_stage: str | None, reranker: str | None, top_n: int | None,
            rrf_k: int, n_keywords: int, feedback_docs: int, feedback_terms: int, run_id: str | None,
            batch_size: int, hyde_n: int, hyde_fusion: str, llm_temperature: float | None,
            model_training: str | None, top_pages: int, llm_config: LLMConfig, split: str | None,
            shard: Shard | None) -> Produced:
    """Run a retriever over a dataset's questions; land retrieval_runs + retrieval_results."""
    out = run_retrieval(warehouse_home(), dataset, retriever, k, condition, chunker_id, embedder, long_text,
                        dense_search, reranker, first_stage, rrf_k, top_n, n_keywords, feedback_docs, feedback_terms,
                        run_id, batch_size, llm_config=llm_config if retriever in LLM_RETRIEVERS else None,
                        hyde_n=hyde_n, hyde_fusion=hyde_fusion, llm_temperature=llm_temperature,
                        splits=parse_splits(split), model_training=model_training, top_pages=top_pages,
                        shard=shard)
    return str(out["run_id"]), out

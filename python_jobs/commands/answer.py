"""`finrag answer`: an answer run over a retrieval run (RAG) or closed-book, through the one LLM client.

    finrag answer --retrieval-run R [--k 5] [--template rag_answer_v1] [--max-words 300] [--limit N]
    finrag answer --closed-book --dataset D [--template closed_book_v1] [--limit N]

The rules and decisions are documented in python_jobs/answers/runs.py.
"""

from __future__ import annotations

import click

from python_jobs.answers.runs import DEFAULT_CLOSED_TEMPLATE, DEFAULT_FUSE_TEMPLATE, DEFAULT_RAG_TEMPLATE, run_answers
from python_jobs.commands._options import Produced, llm_options, produces, shard_option, sigterm_as_interrupt
from python_jobs.core.question_sets import parse_splits
from python_jobs.core.shards import Shard
from python_jobs.llm.config import LLMConfig


@click.command("answer")
@produces
@click.option("--retrieval-run", "retrieval_run_id", default=None, help="Answer over this retrieval run (RAG).")
@click.option("--closed-book", is_flag=True, help="Answer without retrieved context (needs --dataset).")
@click.option("--dataset", default=None, help="Dataset of the questions (closed book; checked for RAG).")
@click.option("--k", type=int, default=5, show_default=True, help="Top-k chunks into the prompt.")
@click.option("--template", default=None, help="Prompt template name (prompts/<name>.txt) or path "
              f"[default: {DEFAULT_RAG_TEMPLATE} / {DEFAULT_CLOSED_TEMPLATE}].")
@click.option("--fuse-template", default=DEFAULT_FUSE_TEMPLATE, show_default=True)
@click.option("--context-tokens", type=int, default=1500, show_default=True,
              help="Context budget; longer contexts are split, answered per part and fused.")
@click.option("--max-tokens", type=int, default=200, show_default=True, help="Completion tokens per call.")
@click.option("--temperature", type=float, default=0.0, show_default=True)
@click.option("--max-words", type=int, default=None, help="Cut answers to their first N words before scoring "
              "and export (answer-file runs: 300).")
@click.option("--limit", type=int, default=None, help="Only the first N questions (by id).")
@click.option("--question-id", "question_ids", multiple=True, help="Only these questions (repeatable).")
@click.option("--run-id", default=None, help="Run id (default: <dataset>-<mode>-<config hash>).")
@llm_options()
@click.option("--ledger-batch", type=int, default=16, show_default=True,
              help="LLM calls per landed llm_calls batch (a killed run loses at most one batch).")
@click.option("--split", "split", default=None,
              help="Comma list of question splits to answer (default: every split except 'dropped').")
@shard_option("question ids")
def command(retrieval_run_id: str | None, closed_book: bool, dataset: str | None, k: int, template: str | None,
            fuse_template: str, context_tokens: int, max_tokens: int, temperature: float, max_words: int | None,
            limit: int | None, question_ids: tuple[str, ...], run_id: str | None, llm_config: LLMConfig,
            ledger_batch: int, split: str | None, shard: Shard | None) -> Produced:
    """Answer a dataset's questions, closed-book or over a retrieval run, and land the answer run."""
    if closed_book == (retrieval_run_id is not None):
        raise click.UsageError("give exactly one of --retrieval-run R or --closed-book --dataset D")
    if closed_book and not dataset:
        raise click.UsageError("--closed-book needs --dataset")
    if k < 1 or context_tokens < 64 or (max_words is not None and max_words < 1):
        raise click.UsageError("--k >= 1, --context-tokens >= 64 and --max-words >= 1")
    # SIGTERM like Ctrl-C: the client's finally lands the calls already made and stops the embedded server
    sigterm_as_interrupt()
    run_id = run_answers(None, retrieval_run_id=retrieval_run_id, dataset=dataset, k=k, template=template,
                fuse_template=fuse_template, context_tokens=context_tokens, max_tokens=max_tokens,
                temperature=temperature, max_words=max_words, limit=limit, question_ids=question_ids, run_id=run_id,
                config=llm_config, ledger_batch=ledger_batch, splits=parse_splits(split), shard=shard)
    return run_id, {"run_id": run_id}

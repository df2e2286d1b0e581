"""`finrag answer`: an answer run over a retrieval run (RAG) or closed-book, through the one LLM client.

    finrag answer --retrieval-run R [--k K] [--template rag_answer_v1] [--max-words 300] [--limit N]
    finrag answer --closed-book --dataset D [--template closed_book_v1] [--limit N]

The rules and decisions are documented in python_jobs/generation/runs.py.
"""

from __future__ import annotations

import click

from python_jobs.commands._options import Produced, llm_options, produces, shard_option, sigterm_as_interrupt
from python_jobs.core.lake import Lake
from python_jobs.core.question_sets import parse_splits
from python_jobs.core.shards import Shard
from python_jobs.generation.runs import AnswerConfig, run_answers
from python_jobs.llm.config import LLMConfig

FIELDS = AnswerConfig.model_fields


@click.command("answer")
@produces
@click.option("--retrieval-run", "retrieval_run_id", default=None, help=FIELDS["retrieval_run_id"].description)
@click.option("--closed-book", is_flag=True, help="Answer without retrieved context (needs --dataset).")
@click.option("--dataset", default=None, help=FIELDS["dataset"].description)
@click.option("--k", type=int, default=AnswerConfig.default("k"), show_default=True, help=FIELDS["k"].description)
@click.option("--template", default=None, help=FIELDS["template"].description)
@click.option("--fuse-template", default=AnswerConfig.default("fuse_template"), show_default=True,
              help=FIELDS["fuse_template"].description)
@click.option("--context-tokens", type=int, default=AnswerConfig.default("context_tokens"), show_default=True,
              help=FIELDS["context_tokens"].description)
@click.option("--max-tokens", type=int, default=AnswerConfig.default("max_tokens"), show_default=True,
              help=FIELDS["max_tokens"].description)
@click.option("--temperature", type=float, default=AnswerConfig.default("temperature"), show_default=True)
@click.option("--max-words", type=int, default=None, help=FIELDS["max_words"].description)
@click.option("--limit", type=int, default=None, help=FIELDS["limit"].description)
@click.option("--question-id", "question_ids", multiple=True, help="Only these questions (repeatable).")
@click.option("--run-id", default=None, help=FIELDS["run_id"].description)
@llm_options()
@click.option("--ledger-batch", type=int, default=AnswerConfig.default("ledger_batch"), show_default=True,
              help=FIELDS["ledger_batch"].description)
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
    cfg = AnswerConfig(retrieval_run_id=retrieval_run_id, dataset=dataset, k=k, template=template,
                       fuse_template=fuse_template, context_tokens=context_tokens, max_tokens=max_tokens,
                       temperature=temperature, max_words=max_words, limit=limit, question_ids=question_ids,
                       splits=parse_splits(split), run_id=run_id, ledger_batch=ledger_batch)
    # SIGTERM like Ctrl-C: the client's finally lands the calls already made and stops the embedded server
    sigterm_as_interrupt()
    run_id = run_answers(Lake(), cfg, llm_config, shard=shard)
    return run_id, {"run_id": run_id}

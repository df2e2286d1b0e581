"""`finrag judge`: an LLM-judge run over an answer run, through the one LLM client.

    finrag judge --answer-run A [--metrics correctness,faithfulness] [--judge-model M] [--limit N] [--question-id Q]

The rules and decisions are documented in python_jobs/judging/runs.py.
"""

from __future__ import annotations

import click

from python_jobs.commands._options import (
    Produced,
    llm_options,
    parse_rubrics,
    produces,
    shard_option,
    sigterm_as_interrupt,
)
from python_jobs.core.shards import Shard
from python_jobs.judging.runs import run_judge
from python_jobs.llm.config import LLMConfig

# FinanceBench eval modes whose prompt held the gold evidence (oracle: the evidence pages; inContext: the whole
# filing, of which we have the evidence pages); *_reverse put the context after the question

@click.command("judge")
@produces
@click.option("--answer-run", "answer_run_id", required=True, help="The answer run to judge.")
@click.option("--metrics", default=None, help="Comma list of judged metrics (seeds/metrics.csv) "
              "[default: all that apply to the run].")
@click.option("--rubric", "rubric_values", multiple=True, help="METRIC=TEMPLATE: another rubric prompt for a metric "
              "(name under prompts/ or a path; repeatable).")
@click.option("--limit", type=int, default=None, help="Only the first N answers (by question id).")
@click.option("--question-id", "question_ids", multiple=True, help="Only these questions (repeatable).")
@click.option("--max-tokens", type=int, default=128, show_default=True, help="Completion tokens per judgment.")
@click.option("--passage-tokens", type=int, default=900, show_default=True,
              help="Token budget of all passages in one prompt (each of the first 10 is cut to its share).")
@click.option("--judge-run-id", default=None, help="Judge run id (default: <answer run>-judge-<config hash>).")
@llm_options("--judge-model", "Judge model at the endpoint (default: $FINRAG_LLM_MODEL or the embedded SmolLM2).")
@click.option("--ledger-batch", type=int, default=16, show_default=True)
@shard_option("question ids")
def command(answer_run_id: str, metrics: str | None, rubric_values: tuple[str, ...],
            limit: int | None, question_ids: tuple[str, ...], max_tokens: int, passage_tokens: int,
            judge_run_id: str | None, llm_config: LLMConfig, ledger_batch: int,
            shard: Shard | None) -> Produced:
    """Judge an answer run on LLM-judged metrics and land the judge run."""
    if max_tokens < 8 or passage_tokens < 64 or (limit is not None and limit < 1):
        raise click.UsageError("--max-tokens >= 8, --passage-tokens >= 64, --limit >= 1")
    metric_list = [m.strip() for m in metrics.split(",") if m.strip()] if metrics else None
    if metric_list is not None and (not metric_list or len(set(metric_list)) != len(metric_list)):
        raise click.UsageError("--metrics: a comma list of distinct metric names")
    sigterm_as_interrupt()  # like Ctrl-C: the client lands the calls already made
    judge_run_id = run_judge(None, answer_run_id=answer_run_id, metrics=metric_list,
                             rubrics=parse_rubrics(rubric_values), limit=limit,
                             question_ids=question_ids, max_tokens=max_tokens, passage_tokens=passage_tokens,
                             judge_run_id=judge_run_id, config=llm_config, ledger_batch=ledger_batch,
                             shard=shard)
    return judge_run_id, {"judge_run_id": judge_run_id}

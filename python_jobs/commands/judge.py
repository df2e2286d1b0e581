"""`finrag judge`: an LLM-judge run over an answer run, through the one LLM client.

    finrag judge --answer-run A [--metrics correctness,faithfulness] [--judge-model M] [--limit N] [--question-id Q]
                 [--repeats N [--temperature T]]

The rules and decisions are documented in python_jobs/judge/runs.py.
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
from python_jobs.core.lake import Lake
from python_jobs.core.shards import Shard
from python_jobs.judge.runs import JudgeConfig, run_judge
from python_jobs.llm.config import LLMConfig

FIELDS = JudgeConfig.model_fields


@click.command("judge")
@produces
@click.option("--answer-run", "answer_run_id", required=True, help=FIELDS["answer_run_id"].description)
@click.option("--metrics", default=None, help="Comma list of judged metrics (seeds/metrics.csv) "
              "[default: all that apply to the run].")
@click.option("--rubric", "rubric_values", multiple=True, help="METRIC=TEMPLATE: another rubric prompt for a metric "
              "(name under prompts/ or a path; repeatable).")
@click.option("--limit", type=int, default=None, help=FIELDS["limit"].description)
@click.option("--question-id", "question_ids", multiple=True, help="Only these questions (repeatable).")
@click.option("--max-tokens", type=int, default=JudgeConfig.default("max_tokens"), show_default=True,
              help=FIELDS["max_tokens"].description)
@click.option("--passage-tokens", type=int, default=JudgeConfig.default("passage_tokens"), show_default=True,
              help=FIELDS["passage_tokens"].description)
@click.option("--repeats", type=int, default=JudgeConfig.default("repeats"), show_default=True,
              help=FIELDS["repeats"].description)
@click.option("--temperature", type=float, default=None, help=FIELDS["temperature"].description)
@click.option("--judge-run-id", default=None, help=FIELDS["judge_run_id"].description)
@llm_options("--judge-model", "Judge model at the endpoint (default: $FINRAG_LLM_MODEL or the embedded SmolLM2).")
@click.option("--ledger-batch", type=int, default=JudgeConfig.default("ledger_batch"), show_default=True)
@shard_option("question ids")
def command(answer_run_id: str, metrics: str | None, rubric_values: tuple[str, ...],
            limit: int | None, question_ids: tuple[str, ...], max_tokens: int, passage_tokens: int,
            repeats: int, temperature: float | None, judge_run_id: str | None, llm_config: LLMConfig,
            ledger_batch: int, shard: Shard | None) -> Produced:
    """Judge an answer run on LLM-judged metrics and land the judge run."""
    cfg = JudgeConfig(answer_run_id=answer_run_id,
                      metrics=[m.strip() for m in metrics.split(",") if m.strip()] if metrics else None,
                      rubrics=parse_rubrics(rubric_values), limit=limit, question_ids=question_ids,
                      max_tokens=max_tokens, passage_tokens=passage_tokens, judge_run_id=judge_run_id,
                      ledger_batch=ledger_batch, repeats=repeats, temperature=temperature)
    sigterm_as_interrupt()  # like Ctrl-C: the client lands the calls already made
    judge_run_id = run_judge(Lake(), cfg, llm_config, shard=shard)
    return judge_run_id, {"judge_run_id": judge_run_id}

"""`finrag generate-qa`: OmniEval-style QA instances generated from an ingested corpus (docs/qa_generation.md).

    finrag generate-qa --dataset D [--tasks extractive,multi_hop,...] [--per-cell N] [--seed S] [--sample U]
                       [--unit chunk|document] [--chunker-id C] [--topics seeds/omnieval_topics.csv] [--max-topics T]
                       [--test-fraction F] [--rounds R] [--concurrency K]

The rules and decisions are documented in python_jobs/qa_generation/pipeline.py.
"""

from __future__ import annotations

import click

from python_jobs.commands._options import Produced, llm_options, parse_tasks, produces, sigterm_as_interrupt
from python_jobs.core.lake import Lake
from python_jobs.llm.config import LLMConfig
from python_jobs.qa_generation.pipeline import GenerationConfig, run_generation

FIELDS = GenerationConfig.model_fields


def default(name: str) -> dict[str, object]:
    """An option's default and help, read from the config."""
    return {"default": GenerationConfig.default(name), "show_default": True, "help": FIELDS[name].description}


@click.command("generate-qa")
@produces
@click.option("--dataset", required=True, help=FIELDS["dataset"].description)
@click.option("--tasks", default=",".join(GenerationConfig.default("tasks")), show_default=True,
              help="Comma list of tasks.")
@click.option("--per-cell", type=int, **default("per_cell"))
@click.option("--seed", type=int, **default("seed"))
@click.option("--unit", type=click.Choice(["chunk", "document"]), **default("unit"))
@click.option("--chunker-id", default=None, help=FIELDS["chunker_id"].description)
@click.option("--topics", "topics_path", default=None, type=click.Path(exists=True, dir_okay=False),
              help=FIELDS["topics_path"].description)
@click.option("--sample", type=int, **default("sample"))
@click.option("--max-topics", type=int, default=None, help=FIELDS["max_topics"].description)
@click.option("--test-fraction", type=float, **default("test_fraction"))
@click.option("--rounds", type=int, **default("rounds"))
@click.option("--passage-chars", type=int, **default("passage_chars"))
@click.option("--run-id", default=None, help=FIELDS["run_id"].description)
@llm_options()
@click.option("--ledger-batch", type=int, **default("ledger_batch"))
def command(dataset: str, tasks: str, per_cell: int, seed: int, unit: str, chunker_id: str | None,
            topics_path: str | None, sample: int, max_topics: int | None, test_fraction: float, rounds: int,
            passage_chars: int, run_id: str | None, llm_config: LLMConfig, ledger_batch: int) -> Produced:
    """Generate QA instances over a corpus's topic x task matrix, inspect them, land them (source = generated)."""
    cfg = GenerationConfig(dataset=dataset, tasks=parse_tasks(tasks), per_cell=per_cell, seed=seed, unit=unit,
                           chunker_id=chunker_id, topics_path=topics_path, max_topics=max_topics, sample=sample,
                           test_fraction=test_fraction, rounds=rounds, passage_chars=passage_chars, run_id=run_id,
                           ledger_batch=ledger_batch)
    sigterm_as_interrupt()
    run_id = run_generation(Lake(), cfg, llm_config)
    return run_id, {"generation_run_id": run_id}

"""`finrag generate-qa`: OmniEval-style QA instances generated from an ingested corpus (docs/qa_generation.md).

    finrag generate-qa --dataset D [--tasks extractive,multi_hop,...] [--per-cell N] [--seed S] [--sample U]
                       [--unit chunk|document] [--chunker-id C] [--topics seeds/omnieval_topics.csv] [--max-topics T]
                       [--test-fraction 0.5] [--rounds 2] [--concurrency K]

The rules and decisions are documented in python_jobs/qa_generation/pipeline.py.
"""

from __future__ import annotations

import click

from python_jobs.commands._options import Produced, llm_options, parse_tasks, produces, sigterm_as_interrupt
from python_jobs.llm.config import LLMConfig
from python_jobs.qa_generation.pipeline import run_generation
from python_jobs.qa_generation.tasks import TASKS


@click.command("generate-qa")
@produces
@click.option("--dataset", required=True, help="Corpus to generate from; instances land in this dataset.")
@click.option("--tasks", default=",".join(TASKS), show_default=True, help="Comma list of tasks.")
@click.option("--per-cell", type=int, default=2, show_default=True, help="Instances per topic x task cell.")
@click.option("--seed", type=int, default=0, show_default=True)
@click.option("--unit", type=click.Choice(["chunk", "document"]), default="chunk", show_default=True,
              help="What is sampled and classified: chunks, or one chunk per document.")
@click.option("--chunker-id", default=None, help="Chunks partition (default: the dataset's only one).")
@click.option("--topics", "topics_path", default=None, type=click.Path(exists=True, dir_okay=False),
              help="Flattened topic tree CSV (`finrag topics flatten`) [default: seeds/omnieval_topics.csv].")
@click.option("--sample", type=int, default=40, show_default=True, help="Units to sample and classify.")
@click.option("--max-topics", type=int, default=None, help="Keep the T most populated topics as cells.")
@click.option("--test-fraction", type=float, default=0.5, show_default=True,
              help="Share of kept instances in the 'gen_test' split (the rest 'gen_train'; seeded by question id).")
@click.option("--rounds", type=int, default=2, show_default=True,
              help="Generation rounds: failed attempts are refilled from the cell's unused units.")
@click.option("--passage-chars", type=int, default=1500, show_default=True,
              help="Characters of each chunk put into a prompt (and stored as evidence text).")
@click.option("--run-id", default=None, help="Generation run id (default: qagen-<dataset>-<config hash>).")
@llm_options()
@click.option("--ledger-batch", type=int, default=8, show_default=True,
              help="LLM calls per landed llm_calls batch (a killed run loses at most one batch).")
def command(dataset: str, tasks: str, per_cell: int, seed: int, unit: str, chunker_id: str | None,
            topics_path: str | None, sample: int, max_topics: int | None, test_fraction: float, rounds: int,
            passage_chars: int, run_id: str | None, llm_config: LLMConfig, ledger_batch: int) -> Produced:
    """Generate QA instances over a corpus's topic x task matrix, inspect them, land them (source = generated)."""
    if per_cell < 1 or sample < 1 or rounds < 1 or passage_chars < 100 or (max_topics is not None and max_topics < 1):
        raise click.UsageError("--per-cell, --sample, --rounds, --max-topics >= 1 and --passage-chars >= 100")
    if not 0.0 <= test_fraction <= 1.0:
        raise click.UsageError("--test-fraction is between 0 and 1")
    sigterm_as_interrupt()
    run_id = run_generation(None, dataset=dataset, tasks=parse_tasks(tasks), per_cell=per_cell, seed=seed, unit=unit,
                   chunker_id=chunker_id, topics_path=topics_path, max_topics=max_topics, sample=sample,
                   test_fraction=test_fraction, rounds=rounds, passage_chars=passage_chars, run_id=run_id,
                   config=llm_config, ledger_batch=ledger_batch)
    return run_id, {"generation_run_id": run_id}

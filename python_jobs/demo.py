"""`finrag demo`: the main job end to end on the embedded defaults.

synthesise a corpus (or take FinanceBench) → ingest → chunk → index → retrieve (several retrievers and the oracle
conditions) → dbt build → report. Each step is the real `finrag` verb run as its own process (no job imports another),
so the demo is exactly what a user would type.
"""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

import click

from .config import HOME_ENV, warehouse_home

RETRIEVALS: list[tuple[str, str]] = [
    ("bm25", "full"),
    ("dense", "full"),
    ("hybrid", "full"),
    ("dense", "oracle_doc"),
    ("dense", "oracle_page"),
]


def _step(title: str, args: list[str]) -> None:
    click.secho(f"\n==> {title}: finrag {' '.join(args)}", fg="cyan", err=True)
    started = time.monotonic()
    code = subprocess.call([sys.executable, "-m", "python_jobs.cli", *args], env=os.environ.copy())
    if code:
        raise click.ClickException(f"step '{title}' failed (exit {code})")
    click.secho(f"    {title}: {time.monotonic() - started:.1f}s", fg="green", err=True)


@click.command("demo")
@click.option("--source", type=click.Choice(["synthetic", "financebench"]), default="synthetic", show_default=True,
              help="synthetic: a corpus the project generates; financebench: the real files under --financebench-dir.")
@click.option("--financebench-dir", default="../shared/data/financebench", show_default=True,
              help="A FinanceBench checkout (data/*.jsonl and pdfs/).")
@click.option("--dataset", default=None, help="Dataset name (default: demo_synthetic or financebench).")
@click.option("--preset", default="1024/128", show_default=True, help="Chunker preset (tokens/overlap).")
@click.option("--k", default=5, show_default=True, help="Results per question.")
@click.option("--seed", default=0, show_default=True, help="Seed of the synthetic corpus.")
def command(source: str, financebench_dir: str, dataset: str | None, preset: str, k: int, seed: int) -> None:
    """Run the main job end to end and print the retrieval leaderboard."""
    home = warehouse_home()
    os.environ[HOME_ENV] = str(home)
    home.mkdir(parents=True, exist_ok=True)
    if source == "synthetic":
        dataset = dataset or "demo_synthetic"
        corpus = home / "inputs" / f"synthetic_seed{seed}"
        _step("synthesise a 10-K-like corpus", ["synth", "--out", str(corpus), "--seed", str(seed)])
        questions, documents, pdfs = corpus / "questions.jsonl", corpus / "documents.jsonl", corpus / "pdfs"
    else:
        dataset = dataset or "financebench"
        fb = Path(financebench_dir)
        questions = fb / "data" / "financebench_open_source.jsonl"
        documents = fb / "data" / "financebench_document_information.jsonl"
        pdfs = fb / "pdfs"
    _step("ingest", ["ingest", "financebench", "--questions", str(questions), "--documents", str(documents),
                     "--pdfs", str(pdfs), "--dataset", dataset])
    _step("chunk", ["chunk", "--dataset", dataset, "--preset", preset])
    _step("index", ["index", "--dataset", dataset])
    for retriever, condition in RETRIEVALS:
        _step(f"retrieve {retriever} / {condition}",
              ["retrieve", "--retriever", retriever, "--dataset", dataset, "--k", str(k), "--condition", condition])
    _step("dbt build", ["build", "--quiet"])
    _step("leaderboard", [
        "sql",
        "select r.retriever, r.condition, l.granularity, l.metric, l.k, round(l.mean, 4) as mean, l.n_questions "
        "from mart_retrieval_leaderboard l join stg_lake__retrieval_runs r using (run_id) "
        f"where r.dataset = '{dataset}' and l.metric in ('recall', 'ndcg', 'ap') and l.k = {k} "
        "and l.granularity in ('doc', 'page') order by l.granularity, l.metric, r.condition, r.retriever",
    ])
    click.secho(f"\nwarehouse: {home / 'finrag.duckdb'}  (query it with `finrag sql`)", fg="green", err=True)

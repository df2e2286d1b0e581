"""`finrag demo`: the main job end to end on the embedded defaults.

synthesise a corpus (or take FinanceBench) → ingest → chunk → index → retrieve (several retrievers and the oracle
conditions) → answer (closed-book and RAG, with the embedded SmolLM2 unless an endpoint is configured) → dbt build →
leaderboards. Each step is the real `finrag` verb run as its own process (no job imports another),
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


def _step(title: str, args: list[str]) -> str:
    """Run one verb; its stdout is shown and returned (retrieve and answer print the run id there)."""
    click.secho(f"\n==> {title}: finrag {' '.join(args)}", fg="cyan", err=True)
    started = time.monotonic()
    proc = subprocess.run([sys.executable, "-m", "python_jobs.cli", *args], env=os.environ.copy(),
                          stdout=subprocess.PIPE, text=True)
    sys.stdout.write(proc.stdout)
    if proc.returncode:
        raise click.ClickException(f"step '{title}' failed (exit {proc.returncode})")
    click.secho(f"    {title}: {time.monotonic() - started:.1f}s", fg="green", err=True)
    return proc.stdout


@click.command("demo")
@click.option("--source", type=click.Choice(["synthetic", "financebench"]), default="synthetic", show_default=True,
              help="synthetic: a corpus the project generates; financebench: the real files under --financebench-dir.")
@click.option("--financebench-dir", default="../shared/data/financebench", show_default=True,
              help="A FinanceBench checkout (data/*.jsonl and pdfs/).")
@click.option("--dataset", default=None, help="Dataset name (default: demo_synthetic or financebench).")
@click.option("--preset", default=None,
              help="Chunker preset (tokens/overlap; default 256/32 on the synthetic corpus, which fits the embedder's "
                   "256-token window, and 1024/128 on FinanceBench as the retrieval-gap study chunks it).")
@click.option("--k", default=5, show_default=True, help="Results per question.")
@click.option("--seed", default=0, show_default=True, help="Seed of the synthetic corpus.")
@click.option("--answer-limit", default=8, show_default=True,
              help="Questions answered per answer run (the embedded model is slow on 2 cores; 0 = all).")
def command(source: str, financebench_dir: str, dataset: str | None, preset: str | None, k: int, seed: int,
            answer_limit: int) -> None:
    """Run the main job end to end and print the retrieval leaderboard."""
    home = warehouse_home()
    os.environ[HOME_ENV] = str(home)
    home.mkdir(parents=True, exist_ok=True)
    if source == "synthetic":
        dataset = dataset or "demo_synthetic"
        corpus = home / "inputs" / f"synthetic_seed{seed}"
        _step("synthesise a 10-K-like corpus", ["synth", "--out", str(corpus), "--seed", str(seed)])
        questions, documents, pdfs = corpus / "questions.jsonl", corpus / "documents.jsonl", corpus / "pdfs"
        preset = preset or "256/32"
    else:
        dataset = dataset or "financebench"
        fb = Path(financebench_dir)
        questions = fb / "data" / "financebench_open_source.jsonl"
        documents = fb / "data" / "financebench_document_information.jsonl"
        pdfs = fb / "pdfs"
        preset = preset or "1024/128"
    _step("ingest", ["ingest", "financebench", "--questions", str(questions), "--documents", str(documents),
                     "--pdfs", str(pdfs), "--dataset", dataset])
    _step("chunk", ["chunk", "--dataset", dataset, "--preset", preset])
    _step("index", ["index", "--dataset", dataset])
    run_ids: dict[tuple[str, str], str] = {}
    for retriever, condition in RETRIEVALS:
        out = _step(f"retrieve {retriever} / {condition}",
                    ["retrieve", "--retriever", retriever, "--dataset", dataset, "--k", str(k), "--condition", condition])
        run_ids[(retriever, condition)] = dict(kv.split("=", 1) for kv in out.split() if "=" in kv)["run_id"]
    limit = ["--limit", str(answer_limit)] if answer_limit else []
    _step("answer closed-book", ["answer", "--closed-book", "--dataset", dataset, "--max-tokens", "64", *limit])
    _step("answer over the hybrid run", ["answer", "--retrieval-run", run_ids[("hybrid", "full")], "--k", "3",
                                         "--max-tokens", "64", *limit])
    _step("dbt build", ["build", "--quiet"])
    _step("retrieval leaderboard", [
        "sql",
        "select r.retriever, r.condition, "
        "round(max(l.mean) filter (where l.metric = 'doc_rec'), 4) as doc_rec, "
        "round(max(l.mean) filter (where l.metric = 'page_rec'), 4) as page_rec, "
        "round(max(l.mean) filter (where l.metric = 'ndcg' and l.granularity = 'page'), 4) as ndcg_page, "
        "round(max(l.mean) filter (where l.metric = 'mrr' and l.granularity = 'page'), 4) as mrr_page, "
        "max(l.n_questions) as n_questions "
        "from mart_retrieval_leaderboard l join stg_lake__retrieval_runs r using (run_id) "
        f"where r.dataset = '{dataset}' and l.k = {k} group by all order by r.condition, r.retriever",
    ])
    _step("generation leaderboard", [
        "sql",
        "select run_id, eval_mode, metric, round(mean, 4) as mean, n from mart_generation_leaderboard "
        f"where dataset = '{dataset}' order by metric, eval_mode",
    ])
    click.secho(f"\nwarehouse: {home / 'finrag.duckdb'}  (query it with `finrag sql`)", fg="green", err=True)

"""`finrag demo`: the main job end to end on the embedded defaults.

The rules and decisions are documented in python_jobs/demo/pipeline.py.
"""

from __future__ import annotations

import os
from pathlib import Path

import click
import yaml

from python_jobs.core.config import HOME_ENV, warehouse_home
from python_jobs.demo.pipeline import (
    AGREEMENT_METRICS,
    AGREEMENT_RUN,
    CALIBRATION,
    DEMO_JUDGE_METRICS,
    DEMO_QA_TOPICS,
    GENERATED_SPLITS,
    JUDGED_REPORT,
    RETRIEVALS,
    leaderboard_queries,
    run_step,
    shared_llm,
    sweep_grid,
)


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
              help="Questions answered (and human-labelled answers judged) per run (the embedded model is slow on 2 "
                   "cores; 0 = all).")
@click.option("--qa-sample", default=8, show_default=True,
              help="Chunks sampled for QA generation (0 = skip QA generation).")
def command(source: str, financebench_dir: str, dataset: str | None, preset: str | None, k: int, seed: int,
            answer_limit: int, qa_sample: int) -> None:
    """Run the main job end to end and print the retrieval leaderboard."""
    home = warehouse_home()
    os.environ[HOME_ENV] = str(home)
    home.mkdir(parents=True, exist_ok=True)
    if source == "synthetic":
        dataset = dataset or "demo_synthetic"
        corpus = home / "inputs" / f"synthetic_seed{seed}"
        run_step("synthesise a 10-K-like corpus", ["synth", "--out", str(corpus), "--seed", str(seed)])
        questions, documents, pdfs = corpus / "questions.jsonl", corpus / "documents.jsonl", corpus / "pdfs"
        preset = preset or "256/32"
    else:
        dataset = dataset or "financebench"
        fb = Path(financebench_dir)
        questions = fb / "data" / "financebench_open_source.jsonl"
        documents = fb / "data" / "financebench_document_information.jsonl"
        pdfs = fb / "pdfs"
        preset = preset or "1024/128"
    run_step("ingest", ["ingest", "financebench", "--questions", str(questions), "--documents", str(documents),
                        "--pdfs", str(pdfs), "--dataset", dataset])
    chunker_id = run_step("chunk", ["chunk", "--dataset", dataset, "--preset", preset]).strip()
    # named, not resolved: after the sweep below the dataset has two chunkings (and a re-run of the demo finds them)
    run_step("index", ["index", "--dataset", dataset, "--chunker-id", chunker_id])
    run_ids: dict[tuple[str, str], str] = {}
    for retriever, condition in RETRIEVALS:
        out = run_step(f"retrieve {retriever} / {condition}",
                       ["retrieve", "--retriever", retriever, "--dataset", dataset, "--chunker-id", chunker_id,
                        "--k", str(k), "--condition", condition])
        run_ids[(retriever, condition)] = out.strip()  # a producing verb prints its id alone
    if source == "synthetic":  # on FinanceBench a second chunking would embed the PDFs again (~10 minutes)
        grid = home / "inputs" / f"sweep_{dataset}.yaml"
        grid.parent.mkdir(parents=True, exist_ok=True)
        grid.write_text(yaml.safe_dump(sweep_grid(dataset, preset, k), sort_keys=False))
        run_step("sweep 2 chunk sizes x 3 retrievers", ["sweep", str(grid)])
    limit = ["--limit", str(answer_limit)] if answer_limit else []
    fb = Path(financebench_dir)
    labelled = fb / "results" / f"{AGREEMENT_RUN}.jsonl"
    with shared_llm():
        run_step("answer closed-book", ["answer", "--closed-book", "--dataset", dataset, "--max-tokens", "64", *limit])
        rag = run_step("answer over the hybrid run", ["answer", "--retrieval-run", run_ids[("hybrid", "full")],
                                                      "--k", "3", "--max-tokens", "64", *limit]).strip()
        if qa_sample:
            run_step("generate OmniEval-style QA over the corpus",
                     ["generate-qa", "--dataset", dataset, "--chunker-id", chunker_id, "--per-cell", "1",
                      "--sample", str(qa_sample), "--max-topics", str(DEMO_QA_TOPICS), "--seed", str(seed)])
            run_step("retrieve hybrid on the generated QA", ["retrieve", "--retriever", "hybrid", "--dataset", dataset,
                                                             "--chunker-id", chunker_id, "--k", str(k), "--split",
                                                             GENERATED_SPLITS])
        run_step("judge the RAG answers", ["judge", "--answer-run", rag, "--metrics", DEMO_JUDGE_METRICS])
        if labelled.exists() and source == "synthetic":
            # FinanceBench's human-labelled answers: the judge's agreement with people (questions only, no PDFs)
            d = fb / "data"
            run_step("ingest FinanceBench questions",
                     ["ingest", "financebench", "--questions", str(d / "financebench_open_source.jsonl"),
                      "--documents", str(d / "financebench_document_information.jsonl")])
        if labelled.exists():
            run_step("ingest human-labelled answers", ["ingest", "financebench-answers", str(labelled)])
            run_step("judge them", ["judge", "--answer-run", AGREEMENT_RUN, "--metrics", AGREEMENT_METRICS,
                                    *(["--limit", str(answer_limit)] if answer_limit else [])])
            run_step("declare what predicts the human label", ["calibrate", *CALIBRATION])
        else:
            click.secho(f"({labelled} not found: no judge-human agreement in this demo)", fg="yellow", err=True)
    run_step("dbt build", ["build", "--quiet"])
    for title, sql in leaderboard_queries(dataset, k):
        run_step(title, ["sql", sql])
    run_step(*JUDGED_REPORT)
    click.secho(f"\nwarehouse: {home / 'finrag.duckdb'}  (query it with `finrag sql`; marts as Parquet under "
                f"{home / 'exports' / 'marts'})\ndashboard: make dashboard", fg="green", err=True)

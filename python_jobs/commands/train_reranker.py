"""`finrag train-reranker`: fine-tune a cross-encoder reranker per document-level fold (gold passages against a first
stage's hard negatives); fold models under $FINRAG_HOME/models, one `model_trainings` row per fold. Use it with
`finrag retrieve --retriever rerank --reranker trained:<training_id>`.

The rules and decisions are documented in python_jobs/reranking/training.py.
"""

from __future__ import annotations

import click

from python_jobs.commands._options import Produced, produces
from python_jobs.core.lake import Lake
from python_jobs.corpus.encoders import DEFAULT_EMBEDDER
from python_jobs.reranking.training import PASSAGES, RerankerTrainingConfig, train_reranker

DEFAULTS = RerankerTrainingConfig(dataset="")


@click.command("train-reranker")
@produces
@click.option("--dataset", required=True, help="Dataset whose questions, evidence and chunks / pages make the pairs.")
@click.option("--passage", type=click.Choice(PASSAGES), default=DEFAULTS.passage, show_default=True,
              help="What the reranker reads: chunks, or pages as the page scorer reads them (rerank the same "
                   "passages with it).")
@click.option("--first-stage", default=None,
              help="Retriever (its default settings) whose top results that are not gold are the hard negatives "
                   "(default: the rerank retriever's first stage).")
@click.option("--negatives", type=int, default=DEFAULTS.negatives, show_default=True,
              help="Hard negatives per question (the first stage's best non-gold passages).")
@click.option("--negatives-depth", type=int, default=DEFAULTS.negatives_depth, show_default=True,
              help="How deep the first stage is read for hard negatives.")
@click.option("--chunker-id", default=None, help="Chunks partition (default: the dataset's only one).")
@click.option("--folds", type=int, default=DEFAULTS.folds, show_default=True,
              help="k of the document-level k-fold cross-validation (one model per fold).")
@click.option("--base-model", default=DEFAULT_EMBEDDER, show_default=True,
              help="Encoder or cross-encoder (sentence-transformers name or local path) to fine-tune; an encoder "
                   "gets a fresh classification head (all-MiniLM-L6-v2 = the packaged copy).")
@click.option("--head-only/--full-model", default=DEFAULTS.head_only, show_default=True,
              help="Train only the scoring head (pooler and classifier): faster and smaller.")
@click.option("--epochs", type=int, default=DEFAULTS.epochs, show_default=True, help="Training epochs per fold.")
@click.option("--seed", type=int, default=DEFAULTS.seed, show_default=True,
              help="Seeds the folds, the head's initialisation, the data order and the training.")
@click.option("--batch-size", type=int, default=DEFAULTS.batch_size, show_default=True)
@click.option("--learning-rate", type=float, default=DEFAULTS.learning_rate, show_default=True)
@click.option("--warmup-ratio", type=float, default=DEFAULTS.warmup_ratio, show_default=True,
              help="Share of the steps of linear learning-rate warm-up.")
@click.option("--max-length", type=int, default=DEFAULTS.max_length, show_default=True,
              help="Word pieces of a (question, passage) pair the model reads (the rest is cut).")
@click.option("--doc-label/--no-doc-label", default=DEFAULTS.doc_label, show_default=True,
              help="Pages: put the document's company, type and period in front of each page's text.")
@click.option("--page-windows/--whole-pages", default=DEFAULTS.page_windows, show_default=True,
              help="Pages: read each page as overlapping windows of --max-length word pieces (question and label "
                   "included); train on the window holding the evidence text against hard-negative pages' windows, "
                   "score a page by its best window (MaxP).")
@click.option("--window-stride", type=float, default=DEFAULTS.window_stride, show_default=True,
              help="Page windows: the step from one window to the next, as a share of a window (0.5: half overlap).")
@click.option("--negative-windows", type=int, default=DEFAULTS.negative_windows, show_default=True,
              help="Page windows: windows of each hard-negative page trained on (those sharing the most words with "
                   "the question).")
@click.option("--fusion-top-n", type=int, default=DEFAULTS.fusion_top_n, show_default=True,
              help="How many of the first stage's top candidates each fold's fusion weight (for `retrieve "
                   "--rerank-fusion trained`) is chosen over: by default as many as the rerank stage reads at k = 5.")
@click.option("--fusion-k", type=int, default=DEFAULTS.fusion_k, show_default=True,
              help="The cut-off of the recall (on each fold's training questions) that chooses the fusion weight.")
@click.option("--training-id", default=None, help="Training id (default: derived from the config and the examples).")
def command(dataset: str, passage: str, first_stage: str | None, negatives: int, negatives_depth: int,
            chunker_id: str | None, folds: int, base_model: str, head_only: bool, epochs: int, seed: int,
            batch_size: int, learning_rate: float, warmup_ratio: float, max_length: int, doc_label: bool,
            page_windows: bool, window_stride: float, negative_windows: int, fusion_top_n: int, fusion_k: int,
            training_id: str | None) -> Produced:
    """Fine-tune a cross-encoder reranker per document-level fold; land model_trainings."""
    cfg = RerankerTrainingConfig(
        dataset=dataset, base_model=base_model, folds=folds, epochs=epochs, seed=seed, batch_size=batch_size,
        learning_rate=learning_rate, warmup_ratio=warmup_ratio, passage=passage, first_stage=first_stage,
        negatives=negatives, negatives_depth=negatives_depth, chunker_id=chunker_id, head_only=head_only,
        max_length=max_length, doc_label=doc_label, fusion_top_n=fusion_top_n, fusion_k=fusion_k,
        page_windows=page_windows, window_stride=window_stride, negative_windows=negative_windows)
    out = train_reranker(Lake(), cfg, training_id)
    return str(out["training_id"]), out

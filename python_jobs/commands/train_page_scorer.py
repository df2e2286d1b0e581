"""`finrag train-page-scorer`: fine-tune the page scorer of the retrieval-gap study with document-level k-fold
cross-validation; fold models under $FINRAG_HOME/models, one `model_trainings` row per fold.

The rules and decisions are documented in python_jobs/page_scoring/ (training.py, folds.py, pages.py).
"""

from __future__ import annotations

import click

from python_jobs.commands._options import Produced, produces
from python_jobs.core.lake import Lake
from python_jobs.corpus.encoders import DEFAULT_EMBEDDER
from python_jobs.page_scoring.training import TrainingConfig, train_page_scorer

DEFAULTS = TrainingConfig(dataset="")


@click.command("train-page-scorer")
@produces
@click.option("--dataset", required=True, help="Dataset whose questions, evidence and pages make the pairs.")
@click.option("--folds", type=int, default=DEFAULTS.folds, show_default=True,
              help="k of the document-level k-fold cross-validation (one model per fold).")
@click.option("--base-model", default=DEFAULT_EMBEDDER, show_default=True,
              help="sentence-transformers name or local path to fine-tune (all-MiniLM-L6-v2 = the packaged copy).")
@click.option("--epochs", type=int, default=DEFAULTS.epochs, show_default=True,
              help="Training epochs per fold (0 = no training: the base model scores pages, a baseline).")
@click.option("--seed", type=int, default=DEFAULTS.seed, show_default=True,
              help="Seeds the folds, the data order and the weights' training.")
@click.option("--batch-size", type=int, default=DEFAULTS.batch_size, show_default=True,
              help="Pairs per batch (the other pages of a batch are a question's negatives).")
@click.option("--learning-rate", type=float, default=DEFAULTS.learning_rate, show_default=True)
@click.option("--warmup-ratio", type=float, default=DEFAULTS.warmup_ratio, show_default=True,
              help="Share of the steps of linear learning-rate warm-up.")
@click.option("--doc-label/--no-doc-label", default=DEFAULTS.doc_label, show_default=True,
              help="Put the document's company, type and period in front of each page's text.")
@click.option("--training-id", default=None, help="Training id (default: derived from the config and the pairs).")
def command(dataset: str, folds: int, base_model: str, epochs: int, seed: int, batch_size: int, learning_rate: float,
            warmup_ratio: float, doc_label: bool, training_id: str | None) -> Produced:
    """Fine-tune a page scorer per document-level fold; land model_trainings."""
    cfg = TrainingConfig(dataset, base_model, folds, epochs, seed, batch_size, learning_rate, warmup_ratio, doc_label)
    out = train_page_scorer(Lake(), cfg, training_id)
    return str(out["training_id"]), out

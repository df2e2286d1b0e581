"""Cross-encoder reranking beyond the retriever itself (python_jobs/retrieval/rerank.py is the `rerank` retriever):

- `training`: `finrag train-reranker`, a cross-encoder fine-tuned per document-level fold (the page scorer's folds,
  seeds, training ids, model store and `model_trainings` rows: python_jobs/page_scoring/training.py's `train_folds`)
  on (question, passage) pairs: the gold chunks or pages as positives, a first stage's top results that are not gold
  as hard negatives.
- `scores`: scoring (question, passage) pairs with a cross-encoder, batched, with a progress bar, through a score
  cache per (model, question, passage) under the home, so a sweep re-scores nothing it has scored.
- `trained`: a landed reranker training (`--reranker trained:<training_id>`): which fold model scores which question.
"""

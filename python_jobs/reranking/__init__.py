"""Training cross-encoder rerankers (`finrag train-reranker`, training.py): a cross-encoder per document-level fold
(the page scorer's folds, seeds, training ids, model store and `model_trainings` rows: python_jobs/page_scoring/
training.py's `train_folds`) on (question, passage) pairs — the gold chunks or pages as positives, a first stage's top
results that are not gold as hard negatives (so this package sits above python_jobs/retrieval/, whose retrievers it
runs).

What uses a trained reranker lives lower: a landed training as `--reranker trained:<training_id>` (which fold model
scores which question) is python_jobs/page_scoring/rerankers.py; scoring pairs through the home's score cache is
python_jobs/corpus/rerank_scores.py; the `rerank` retriever is python_jobs/retrieval/rerank.py.
"""

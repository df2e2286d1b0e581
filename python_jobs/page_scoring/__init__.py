"""The learned page scorer of the retrieval-gap study (`finrag train-page-scorer`, `finrag retrieve --retriever
page_scorer`): a bi-encoder fine-tuned on (question, gold page text) pairs to score a question's candidate pages; the
top P pages are kept and chunk retrieval is restricted to them (python_jobs/retrieval/page_scorer.py).

- `pages`: the page text the scorer reads (whitespace collapsed, header / footer lines repeated across a document's
  pages removed, the document's label in front), the same for training and scoring.
- `folds`: the (question, gold page) pairs and document-level k-fold cross-validation (a question and every one of
  its gold documents are on one side of a fold).
- `training`: fine-tuning one model per fold (sentence-transformers, Multiple Negatives Ranking loss with in-batch
  negatives), seeded; lands `model_trainings`.
- `rerankers`: a landed `finrag train-reranker` training as `--reranker trained:<id>` (python_jobs/reranking/ trains
  it): which fold model scores which question.
- `registry`: a landed training's folds and fold models, which fold model may score which question, and the page
  vectors of each fold model cached under $FINRAG_HOME/models.
"""

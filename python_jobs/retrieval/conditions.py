"""Search conditions of the retrieval-gap study: the candidate set of each question.

- `full`: the whole corpus (the dataset's chunks partition).
- `oracle_doc`: only chunks of the question's gold document(s) (relevant evidence rows, python_jobs/core/rules.yml).
- `oracle_page`: only chunks of a gold document that cover at least one of its gold pages (page_start <= p <= the
  chunk's last page for a gold (doc, p); the rules' page_coverage says what a null page_end covers).

A question without evidence (or, for oracle_page, without a gold page number) has no oracle candidate set and is
skipped under the oracle conditions; the job reports how many.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import polars as pl

from python_jobs.core.contracts import contract
from python_jobs.core.rules import RULES
from python_jobs.corpus.vectors import in_list, sql_str

CONDITIONS = contract("retrieval_runs").column("condition").accepted  # full, oracle_doc, oracle_page


@dataclass(frozen=True)
class Restriction:
    doc_ids: tuple[str, ...]
    pages: tuple[tuple[str, int], ...] | None = None  # (doc_id, page_number); None = whole documents

    def mask(self, doc_id: np.ndarray, page_start: np.ndarray, page_end: np.ndarray) -> np.ndarray:
        """Boolean mask over corpus rows (arrays aligned with the corpus)."""
        if self.pages is None:
            return np.isin(doc_id, np.asarray(self.doc_ids, dtype=object))
        m = np.zeros(len(doc_id), dtype=bool)
        for d, p in self.pages:
            m |= (doc_id == d) & (page_start <= p) & (page_end >= p)
        return m

    def where(self) -> str:
        """The same restriction as a LanceDB (DataFusion SQL) filter."""
        if self.pages is None:
            return in_list("doc_id", self.doc_ids)
        terms = [
            f"(doc_id = {sql_str(d)} AND page_start <= {int(p)} AND "
            f"{RULES.last_page_sql('page_start', 'page_end')} >= {int(p)})" for d, p in self.pages
        ]
        return "(" + " OR ".join(terms) + ")"


def restrictions(condition: str, evidence: pl.DataFrame) -> dict[str, Restriction]:
    """question_id -> Restriction, for the questions that have one under `condition` (empty for `full`)."""
    if condition not in CONDITIONS:
        raise ValueError(f"unknown condition {condition!r}")
    if condition == "full":
        return {}
    gold = evidence.filter(RULES.is_relevant(pl.col("relevance")))
    out: dict[str, Restriction] = {}
    if condition == "oracle_doc":
        for qid, docs in gold.group_by("question_id").agg(pl.col("doc_id").unique().sort()).iter_rows():
            out[qid] = Restriction(tuple(docs))
        return out
    pages = gold.filter(pl.col("page_number").is_not_null()).select("question_id", "doc_id", "page_number").unique()
    for qid, docs, nums in (
        pages.sort("doc_id", "page_number").group_by("question_id", maintain_order=True)
        .agg("doc_id", "page_number").iter_rows()
    ):
        pairs = tuple(sorted(set(zip(docs, nums))))
        out[qid] = Restriction(tuple(sorted(set(docs))), pairs)
    return out

"""Training pairs and document-level k-fold cross-validation.

Pairs: one (question, gold page text) pair per distinct (question, gold document, gold page) of the lake `evidence`
(relevant by the rules, python_jobs/core/rules.yml; a page number given) whose page is in the lake `pages` — the page
text as pages.py normalises it. FinanceBench lists the same page twice for some questions; the pair is made once.

Folds: the unit of a fold is a *group* of documents — the documents with at least one pair, joined when a question
has gold pages in more than one of them (connected components), so a question and every one of its gold documents
are on the same side. Groups are shuffled with the seed, then (stably) sorted by pair count, largest first, and each
goes to the fold with the fewest pairs so far (ties: the lower fold). Fold f's model trains on the pairs of every
other fold's documents and is the only model allowed to score the questions whose gold documents are fold f's test
documents: no page of a test document — and no question about one — is ever in that model's training data.

Questions outside every fold (no pair: their gold document has no pages in the lake, or they have no evidence) were
seen by no model; they are scored by fold `sha256(question_id) mod k` (`fold_of_question`).
"""

from __future__ import annotations

import hashlib
import random
from collections.abc import Iterable, Mapping
from dataclasses import dataclass

import polars as pl

from python_jobs.core.errors import InputError
from python_jobs.core.rules import RULES


@dataclass(frozen=True)
class Pair:
    question_id: str
    doc_id: str
    page_number: int
    question: str
    page_text: str


@dataclass(frozen=True)
class Fold:
    fold: int
    train_doc_ids: tuple[str, ...]
    test_doc_ids: tuple[str, ...]


def gold_documents(evidence: pl.DataFrame) -> dict[str, frozenset[str]]:
    """question_id → its gold documents (relevant evidence, with or without a page number)."""
    gold = evidence.filter(RULES.is_relevant(pl.col("relevance")))
    return {q: frozenset(docs) for q, docs in gold.group_by("question_id").agg(pl.col("doc_id").unique()).iter_rows()}


def training_pairs(questions: pl.DataFrame, evidence: pl.DataFrame, pages: pl.DataFrame) -> list[Pair]:
    """Every (question, gold page) whose page text is known, sorted by question, document, page."""
    gold = (evidence.filter(RULES.is_relevant(pl.col("relevance")) & pl.col("page_number").is_not_null())
            .select("question_id", "doc_id", pl.col("page_number").cast(pl.Int32)).unique())
    rows = (gold.join(questions.select("question_id", "question"), on="question_id", how="inner")
            .join(pages.select("doc_id", "page_number", "text"), on=["doc_id", "page_number"], how="inner")
            .filter(pl.col("text").str.strip_chars().str.len_chars() > 0)
            .sort("question_id", "doc_id", "page_number"))
    return [Pair(q, d, p, question, text)
            for q, d, p, question, text
            in rows.select("question_id", "doc_id", "page_number", "question", "text").iter_rows()]


def document_groups(pairs: Iterable[Pair]) -> list[tuple[frozenset[str], int]]:
    """Connected components of the documents with pairs (joined by a question with pairs in several), with their
    pair counts, sorted by their smallest document id."""
    pairs = list(pairs)
    parent: dict[str, str] = {}

    def find(x: str) -> str:
        while parent[x] != x:
            parent[x] = parent[parent[x]]
            x = parent[x]
        return x

    for p in pairs:
        parent.setdefault(p.doc_id, p.doc_id)
    by_question: dict[str, list[str]] = {}
    for p in pairs:
        by_question.setdefault(p.question_id, []).append(p.doc_id)
    for docs in by_question.values():
        for d in docs[1:]:
            a, b = find(docs[0]), find(d)
            if a != b:
                parent[max(a, b)] = min(a, b)
    members: dict[str, set[str]] = {}
    for d in parent:
        members.setdefault(find(d), set()).add(d)
    count: dict[str, int] = {}
    for p in pairs:
        root = find(p.doc_id)
        count[root] = count.get(root, 0) + 1
    return sorted(((frozenset(m), count[r]) for r, m in members.items()), key=lambda g: min(g[0]))


def make_folds(pairs: Iterable[Pair], k: int, seed: int) -> list[Fold]:
    """Document-level folds over the documents with pairs: every document is a test document of exactly one fold."""
    if k < 2:
        raise InputError(f"--folds must be at least 2, got {k}", field="folds")
    groups = document_groups(pairs)
    if len(groups) < k:
        raise InputError(f"only {len(groups)} document group(s) have (question, gold page) pairs; fewer than "
                         f"--folds {k} (each fold needs its own test documents)", field="folds")
    order = list(groups)
    random.Random(seed).shuffle(order)
    order.sort(key=lambda g: -g[1])  # stable: equal sizes keep the seeded order
    load = [0] * k
    test: list[set[str]] = [set() for _ in range(k)]
    for docs, n in order:
        f = min(range(k), key=lambda i: (load[i], i))
        load[f] += n
        test[f] |= docs
    every = set().union(*test)
    return [Fold(f, tuple(sorted(every - test[f])), tuple(sorted(test[f]))) for f in range(k)]


def fold_of_question(folds: list[Fold], question_id: str, gold_docs: Mapping[str, frozenset[str]]) -> int:
    """The one fold whose model may score the question: the fold holding its gold documents as test documents, or
    for a question outside every fold, fold sha256(question_id) mod k. Refuses a question whose gold documents are
    split over several folds (its evidence changed after the training: retrain)."""
    docs = gold_docs.get(question_id, frozenset())
    held = {f.fold for f in folds if docs & set(f.test_doc_ids)}
    if len(held) > 1:
        raise InputError(f"question {question_id!r} has gold documents in the test sets of folds {sorted(held)}: "
                         "its evidence changed after the training; retrain the page scorer", field="model_training")
    if held:
        (f,) = held
        leaked = docs & set(folds[f].train_doc_ids)
        if leaked:  # cannot happen with folds from make_folds; guards a hand-edited or inconsistent training
            raise InputError(f"fold {f} trained on {sorted(leaked)}, gold documents of its test question "
                             f"{question_id!r}", field="model_training")
        return f
    return int(hashlib.sha256(question_id.encode()).hexdigest(), 16) % len(folds)

"""The page scorer's data side, without a model: page normalisation, the (question, gold page) pairs, and the
document-level folds (no document, and no question, on both sides of a fold; the same seed gives the same folds)."""

from __future__ import annotations

from pathlib import Path

import polars as pl
import pytest

from python_jobs.core.errors import InputError
from python_jobs.page_scoring.folds import Pair, fold_of_question, gold_documents, make_folds, training_pairs
from python_jobs.page_scoring.pages import clean_page, doc_label, normalise_pages, read_page_texts, repeated_lines
from support.page_corpus import ABSENT_DOC, COMPANIES, DATASET, land_page_corpus

WORDS = "alpha bravo charlie delta echo foxtrot golf hotel india juliet kilo lima mike november oscar papa".split()


def body(i: int) -> list[str]:
    return [f"{WORDS[(i + j) % 16]} {WORDS[(3 * i + j) % 16]}   {WORDS[(5 * i + 2 * j) % 16]}" for j in range(8)]


def test_repeated_headers_and_footers_are_removed_and_whitespace_collapsed():
    pages = ["\n".join(["T", "able of ", "Contents", *body(i), "  Note 3 of\tthe filing", str(i + 1)])
             for i in range(10)]
    pages[4] = "\n".join([*body(4), "Table of Contents is mentioned in the body", "5"])
    rep = repeated_lines(pages)
    assert {"t", "able of", "contents", "#", "note # of the filing"} <= rep  # page numbers 1-9 share the key "#"
    assert "##" not in rep  # "10" closes one page only
    assert not any(WORDS[0] in k or WORDS[5] in k for k in rep)  # body lines differ from page to page
    assert clean_page(pages[0], rep) == " ".join(" ".join(x.split()) for x in body(0))
    assert clean_page(pages[4], rep) == " ".join([*(" ".join(x.split()) for x in body(4)),
                                                  "Table of Contents is mentioned in the body"])
    # a line repeated on too few pages is content
    assert repeated_lines(["A\nx", "A\ny", "B\nz", "C\nw"], min_pages=3) == set()
    # the same words in the middle of a long page stay: only the first / last zone lines are headers / footers
    long = "\n".join(["Contents"] + [f"line {i}" for i in range(12)] + ["Contents"] + [f"more {i}" for i in range(12)])
    assert clean_page(long, {"contents"}).split().count("Contents") == 1


def test_doc_label_and_normalised_lake_pages(tmp_path: Path):
    assert doc_label("3M_2022_10K", "3M_2022_10K", "3M", "10-K", "2022") == "3M 10-K 2022 10K"
    assert doc_label("BESTBUY_2024Q2_10Q", "BESTBUY_2024Q2_10Q", "Best Buy", "10-Q", "2024") == \
        "Best Buy 10-Q 2024 BESTBUY 2024Q2 10Q"
    lake = land_page_corpus(tmp_path / "home")
    pages = read_page_texts(lake, DATASET)
    assert pages.height == len(COMPANIES) * 5 and pages.columns == ["doc_id", "page_number", "text"]
    acme = pages.filter(pl.col("doc_id") == "ACME_2022_10K").sort("page_number")["text"].to_list()
    assert all(t.startswith("Acme 10-K 2022 10K | ") for t in acme)
    assert not any("FORM 10-K" in t or "Table of Contents" in t or t.endswith(" 1") for t in acme)
    bare = read_page_texts(lake, DATASET, doc_label_on=False)
    assert bare["text"][0].startswith("Capital expenditures")
    with pytest.raises(InputError, match="no pages"):
        read_page_texts(lake, "nothing_here")
    empty = pl.DataFrame({"doc_id": ["D"], "page_number": [0], "text": [""]})
    assert normalise_pages(empty, None, False)["text"][0] == ""


def corpus_pairs(tmp_path: Path) -> tuple[list[Pair], dict]:
    lake = land_page_corpus(tmp_path / "home")
    ev = lake.read("evidence", where={"dataset": DATASET})
    pairs = training_pairs(lake.read("questions", where={"dataset": DATASET}), ev, read_page_texts(lake, DATASET))
    return pairs, gold_documents(ev)


def test_pairs_are_the_gold_pages_with_text(tmp_path: Path):
    pairs, gold = corpus_pairs(tmp_path)
    keys = [(p.question_id, p.doc_id, p.page_number) for p in pairs]
    assert len(keys) == len(set(keys)) == 2 * len(COMPANIES) + 2 + 2
    assert ("qtwo", "INITECH_2022_10K", 0) in keys and ("qtwo", "INITECH_2022_10K", 1) in keys
    assert not any(q in ("qabsent", "qnone") for q, _, _ in keys)  # no page text / no evidence: no pair
    assert gold["qabsent"] == {ABSENT_DOC[0]} and "qnone" not in gold


@pytest.mark.parametrize("k", [2, 3, 5])
@pytest.mark.parametrize("seed", [0, 1, 7])
def test_folds_never_leak_a_document_or_a_question(tmp_path: Path, k: int, seed: int):
    pairs, gold = corpus_pairs(tmp_path)
    folds = make_folds(pairs, k, seed)
    docs = {p.doc_id for p in pairs}
    assert [f.fold for f in folds] == list(range(k))
    tests = [set(f.test_doc_ids) for f in folds]
    assert set().union(*tests) == docs and sum(map(len, tests)) == len(docs)  # each document tested exactly once
    for f in folds:
        train, test = set(f.train_doc_ids), set(f.test_doc_ids)
        assert test and not train & test and train | test == docs
        train_q = {p.question_id for p in pairs if p.doc_id in train}
        test_q = {p.question_id for p in pairs if p.doc_id in test}
        assert not train_q & test_q  # no question on both sides
    # the question with gold pages in two filings holds them in one fold
    (pair_fold,) = [f for f in folds if "ACME_2022_10K" in f.test_doc_ids]
    assert "GLOBEX_2022_10K" in pair_fold.test_doc_ids
    # each question is scored by the fold that held its documents out, questions outside every fold by a fixed one
    for q, docs_q in gold.items():
        f = fold_of_question(folds, q, gold)
        if docs_q & docs:
            assert docs_q & docs <= set(folds[f].test_doc_ids) and not docs_q & set(folds[f].train_doc_ids)
    assert fold_of_question(folds, "qabsent", gold) == fold_of_question(folds, "qabsent", gold)
    # the same seed, the same folds
    assert make_folds(pairs, k, seed) == folds


def test_folds_balance_pairs_differ_by_seed_and_refuse_too_few_groups(tmp_path: Path):
    pairs, gold = corpus_pairs(tmp_path)
    by_seed = {s: make_folds(pairs, 2, s) for s in range(6)}
    assert len({tuple(f.test_doc_ids for f in folds) for folds in by_seed.values()}) > 1
    for folds in by_seed.values():
        sizes = [sum(p.doc_id in f.test_doc_ids for p in pairs) for f in folds]
        assert max(sizes) - min(sizes) <= 6  # greedy on pair counts: the largest group (ACME + GLOBEX) has 6 pairs
    with pytest.raises(InputError, match="fewer than --folds 6"):
        make_folds(pairs, 6, 0)  # five groups (ACME and GLOBEX are one)
    with pytest.raises(InputError, match="at least 2"):
        make_folds(pairs, 1, 0)
    # a question whose gold documents ended up in two test sets (evidence changed after training) is refused
    folds = by_seed[0]
    a, b = folds[0].test_doc_ids[0], folds[1].test_doc_ids[0]
    with pytest.raises(InputError, match="retrain"):
        fold_of_question(folds, "qx", {"qx": frozenset({a, b})})

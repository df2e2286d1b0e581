"""A small corpus for the page scorer, landed straight into the lake: six filings of five pages, each page with the
filing's running header and a page-number footer (what the page normalisation removes), one chunk per page, and
questions with gold pages — among them a question with gold pages in two filings (the two must fall in one fold),
one whose filing has no pages (outside every fold) and one without evidence.

Most questions name their page's topic by a made-up word ("What was Acme's zorblat?" for capital expenditures): the
untrained MiniLM can tell the filing by the company's name but not the page, so a model fine-tuned on the pairs has
something to learn (and the test that it learned it does not hang on how well MiniLM knows finance)."""

from __future__ import annotations

from pathlib import Path

import polars as pl

from python_jobs.core.lake import Lake

DATASET = "pagefin"
CHUNKER = "page1"

COMPANIES = [
    ("ACME_2022_10K", "Acme", "10-K"), ("GLOBEX_2022_10K", "Globex", "10-K"), ("INITECH_2022_10K", "Initech", "10-K"),
    ("HOOLI_2023_10Q", "Hooli", "10-Q"), ("UMBRELLA_2022_10K", "Umbrella", "10-K"),
    ("VANDELAY_2023_10Q", "Vandelay", "10-Q"),
]
ABSENT_DOC = ("SOYLENT_2022_10K", "Soylent", "10-K")  # listed, no pages (its PDF "absent")

# page topics: (the page's wording, the questions' wording: a made-up word per topic)
TOPICS = [
    ("Capital expenditures for property, plant and equipment were {a} million, mainly new factories.",
     "What was {c}'s zorblat?"),
    ("Net revenue grew to {a} million; the services segment contributed {b} million of net revenue.",
     "How large was the quenfir of {c}?"),
    ("Long-term debt was {a} million; notes of {b} million mature within five years.",
     "What is {c}'s plimdex?"),
    ("The board declared dividends of {a} million and repurchased shares for {b} million.",
     "How much vartosh did {c} have?"),
    ("Inventories rose to {a} million while receivables fell to {b} million, lowering working capital.",
     "Describe the grelkin of {c}."),
]


def page_text(i: int, company: str, dtype: str, p: int) -> str:
    body = TOPICS[p][0].format(a=100 + 37 * i + 11 * p, b=20 + 5 * i + 3 * p)
    other = TOPICS[(p + 1) % len(TOPICS)][0].split(";")[0].split(" were ")[0].split(" was ")[0]
    return (f"{company.upper()} CORP — FORM {dtype} — Table of Contents\n"
            f"{body}\nThis page also refers to: {other.lower()} (see note {p + 3}).\n"
            f"{p + 1}")


PAGES = [(doc, p, page_text(i, company, dtype, p))
         for i, (doc, company, dtype) in enumerate(COMPANIES) for p in range(len(TOPICS))]


def _questions() -> list[tuple[str, str, list[tuple[str, int]]]]:
    out = []
    for i, (doc, company, _) in enumerate(COMPANIES):
        for p in ((i % 5), (i + 2) % 5):
            out.append((f"q{i}{p}", TOPICS[p][1].format(c=company), [(doc, p)]))
    # gold pages in two filings: the two are one group, always on the same side of a fold
    out.append(("qpair", "Compare the long-term debt of Acme and Globex.",
                [("ACME_2022_10K", 2), ("GLOBEX_2022_10K", 2)]))
    # a gold page that is in two questions' evidence, and a question with two gold pages
    out.append(("qtwo", "What did Initech spend on factories, and what were its sales?",
                [("INITECH_2022_10K", 0), ("INITECH_2022_10K", 1)]))
    out.append(("qabsent", "What was Soylent's zorblat?", [(ABSENT_DOC[0], 0)]))
    out.append(("qnone", "Which company has the largest debt?", []))
    return out


QUESTIONS = _questions()


def land_page_corpus(home: Path) -> Lake:
    lake = Lake(home)
    docs = pl.DataFrame([{"doc_id": d, "dataset": DATASET, "title": d, "company": c, "doc_type": t,
                          "period": d.split("_")[1], "has_content": d != ABSENT_DOC[0],
                          "n_pages": len(TOPICS) if d != ABSENT_DOC[0] else None}
                         for d, c, t in [*COMPANIES, ABSENT_DOC]])
    pages = pl.DataFrame([{"doc_id": d, "dataset": DATASET, "page_number": p, "text": t} for d, p, t in PAGES])
    qs = pl.DataFrame([{"question_id": q, "dataset": DATASET, "split": "test", "question": text, "source": "human",
                        "question_type": "made-up word" if q.startswith("q") and q[1:].isdigit() else "other"}
                       for q, text, _ in QUESTIONS])
    ev = pl.DataFrame([{"question_id": q, "evidence_ordinal": i, "dataset": DATASET, "doc_id": d, "page_number": p,
                        "relevance": 1} for q, _, gold in QUESTIONS for i, (d, p) in enumerate(gold)])
    chunks = pl.DataFrame([{"chunk_id": f"{d}::{CHUNKER}::{p:05d}", "doc_id": d, "dataset": DATASET,
                            "chunker_id": CHUNKER, "ordinal": p, "page_start": p, "page_end": p, "text": t,
                            "n_tokens": len(t.split())} for d, p, t in PAGES])
    lake.land([("documents", DATASET, docs), ("pages", DATASET, pages), ("questions", DATASET, qs),
               ("evidence", DATASET, ev), ("chunks", f"{DATASET}.{CHUNKER}", chunks)])
    return lake

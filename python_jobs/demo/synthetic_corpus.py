"""`finrag synth`: the project's own demo corpus, written in FinanceBench's file formats.

Fictional companies (several sectors) each get a 10-K (fiscal 2023) and a 10-Q (first quarter of 2024) as real PDFs
drawn with fpdf2: prose sections (Business, Risk Factors, MD&A, notes), financial statements whose numbers are
internally consistent (gross profit = revenue - cost of revenue, total assets = total liabilities + equity, the cash
flow statement rolls the balance sheet's cash forward, the 10-Q's December 31 column equals the 10-K's), and a bar
chart with a caption. Questions are generated from the numbers placed on known pages, so every gold page is known.

Output (the layout `finrag ingest financebench` reads):

    DIR/questions.jsonl   one FinanceBench question per line (financebench_open_source.jsonl schema)
    DIR/documents.jsonl   one document per line (financebench_document_information.jsonl schema)
    DIR/pdfs/<doc_name>.pdf

Deterministic for a seed: the same seed gives byte-identical files (the PDFs' creation date is fixed).
Nothing here is real data: the project must not ship copies of public benchmarks.

The parts: financials.py (the companies and their numbers), pdf_drawing.py (fpdf2 pages, tables, charts and the
anchors that place each cited row on its page), filings.py (the 10-K and the 10-Q), questions.py (the question
templates and their evidence); this module is the job that runs them for a seed and writes the files.
"""

from __future__ import annotations

import json
import os
import random
from dataclasses import dataclass
from pathlib import Path

from python_jobs.core.console import progress
from python_jobs.core.errors import InputError
from python_jobs.demo.filings import Filing, build_10k, build_10q
from python_jobs.demo.financials import COMPANIES, FY, make_financials
from python_jobs.demo.questions import DOMAIN_NUMBERS, evidence_items, pick_templates

__all__ = ["COMPANIES", "SynthResult", "synthesize"]  # COMPANIES: `finrag synth --companies` names its range


@dataclass(frozen=True)
class SynthResult:
    documents: int
    pages: int
    questions: int
    two_page_questions: int


def _write_bytes(path: Path, data: bytes) -> None:
    # write to a temp name and rename, so an interrupted run never leaves a truncated file behind
    tmp = path.with_name(f".{path.name}.tmp")
    tmp.write_bytes(data)
    os.replace(tmp, path)


def synthesize(out: Path, seed: int = 0, companies: int = 6, questions_per_doc: int = 5) -> SynthResult:
    if not 1 <= companies <= len(COMPANIES):
        raise InputError(f"--companies must be between 1 and {len(COMPANIES)}, got {companies}", field="companies")
    if questions_per_doc < 0:
        raise InputError(f"--questions-per-doc must be >= 0, got {questions_per_doc}", field="questions_per_doc")
    rng = random.Random(seed)
    profiles = rng.sample(COMPANIES, companies)
    filings: list[Filing] = []
    for c in progress(profiles, desc="synth filings", unit="company"):
        # one generator per company, derived from the seed: adding companies does not change the others' numbers
        crng = random.Random(f"{seed}:{c.code}")
        fin = make_financials(c, crng)
        filings += [build_10k(c, fin, crng), build_10q(c, fin, crng)]

    questions: list[dict[str, object]] = []
    qrng = random.Random(f"{seed}:questions")
    for f in filings:
        for t in pick_templates(f, questions_per_doc, qrng):
            qa = t.make(f)
            questions.append({
                "financebench_id": f"finrag_synth_{seed}_{len(questions) + 1:05d}",
                "company": f.company.name,
                "doc_name": f.doc_name,
                "question_type": t.question_type,
                "question_reasoning": t.reasoning,
                "domain_question_num": DOMAIN_NUMBERS.get(t.key),
                "question": qa.question,
                "answer": qa.answer,
                "justification": qa.justification,
                "dataset_subset_label": "SYNTHETIC",
                "evidence": evidence_items(f, qa),
            })
    documents = [
        {"doc_name": f.doc_name, "company": f.company.name, "gics_sector": f.company.sector, "doc_type": f.doc_type,
         "doc_period": FY if f.doc_type == "10k" else FY + 1, "doc_link": f"pdfs/{f.doc_name}.pdf"}
        for f in filings
    ]
    (out / "pdfs").mkdir(parents=True, exist_ok=True)
    for f in filings:
        _write_bytes(out / "pdfs" / f"{f.doc_name}.pdf", f.pdf_bytes)
    _write_bytes(out / "documents.jsonl", "".join(json.dumps(d) + "\n" for d in documents).encode())
    _write_bytes(out / "questions.jsonl", "".join(json.dumps(q) + "\n" for q in questions).encode())
    return SynthResult(
        documents=len(filings),
        pages=sum(len(f.page_texts) for f in filings),
        questions=len(questions),
        two_page_questions=sum(1 for q in questions if len(q["evidence"]) > 1),  # type: ignore[arg-type]
    )

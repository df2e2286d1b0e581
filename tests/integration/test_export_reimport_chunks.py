"""A run over PDF chunks, exported as TREC and re-imported, scores identically at chunk, page and doc level:
the re-import takes each docno's document and pages from the chunks table. The synthetic PDF corpus (`finrag synth`,
2 companies, seed 3) is ingested once per module into a template home; each test works on its own copy."""

from __future__ import annotations

from pathlib import Path

import pytest

from python_jobs.core.lake import Lake
from support.cli import MODELS_ONLY, run_finrag
from support.shared_home import copy_home
from support.warehouse import warehouse_query


@pytest.fixture(scope="module")
def synth_template(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """`finrag synth` (2 companies, seed 3) ingested as the dataset `synth`, PDFs and all; read-only."""
    base = tmp_path_factory.mktemp("synth")
    template, corpus = base / "warehouse", base / "corpus"
    template.mkdir()
    run_finrag(template, "synth", "--out", str(corpus), "--companies", "2", "--seed", "3")
    run_finrag(template, "ingest", "financebench", "--questions", str(corpus / "questions.jsonl"), "--documents",
               str(corpus / "documents.jsonl"), "--pdfs", str(corpus / "pdfs"), "--dataset", "synth")
    return template


@pytest.fixture
def synth(home: Path, synth_template: Path) -> Path:
    """The ingested synthetic corpus in this test's `home` (a copy of the template's lake)."""
    return copy_home(synth_template, home)


def test_pdf_chunk_run_round_trips_through_trec(home: Path, synth: Path, finrag, tmp_path: Path) -> None:
    finrag("chunk", "--dataset", "synth", "--preset", "256/32")
    proc = finrag("retrieve", "--retriever", "bm25", "--dataset", "synth", "--k", "10")
    run_id = proc.stdout.strip()
    trec = tmp_path / "bm25.trec"
    finrag("export-run", "--run-id", run_id, "--format", "trec", "--out", str(trec))
    finrag("ingest", "trec-run", str(trec), "--dataset", "synth", "--run-id", "bm25-reimported")

    lake = Lake(home)
    original = lake.read_partition("retrieval_results", run_id).sort(["question_id", "rank"])
    again = lake.read_partition("retrieval_results", "bm25-reimported").sort(["question_id", "rank"])
    cols = ["question_id", "rank", "chunk_id", "doc_id", "page_start", "page_end"]
    assert original.select(cols).equals(again.select(cols))
    assert lake.read_partition("retrieval_runs", "bm25-reimported")["chunker_id"].to_list() == \
        lake.read_partition("retrieval_runs", run_id)["chunker_id"].to_list()

    finrag("build", "--quiet", *MODELS_ONLY)
    sql = ("select granularity, metric, k, mean, n_questions, mean_complete from mart_retrieval_leaderboard "
           "where run_id = '{}' order by all")
    a, b = warehouse_query(home, sql.format(run_id)), warehouse_query(home, sql.format("bm25-reimported"))
    assert {row[0] for row in a} == {"chunk", "page", "doc"}
    assert len(a) == len(b) > 30
    for x, y in zip(a, b, strict=True):
        assert x[:3] == y[:3] and x[4] == y[4], (x, y)
        assert x[3] == pytest.approx(y[3], abs=1e-12) and x[5] == pytest.approx(y[5], abs=1e-12), (x, y)


def test_unknown_docno_is_still_rejected(home: Path, synth: Path, finrag, tmp_path: Path) -> None:
    qid = Lake(home).read("questions")["question_id"][0]
    run = tmp_path / "bad.trec"
    run.write_text(f"{qid} Q0 NOT_A_CHUNK 1 1.0 x\n")
    out = finrag("ingest", "trec-run", str(run), "--dataset", "synth", "--run-id", "bad", check=False)
    assert out.returncode == 2
    assert f"file {run}, line 1, field 'docno': unknown document 'NOT_A_CHUNK'" in out.stderr
    assert Lake(home).partitions("retrieval_runs") == []

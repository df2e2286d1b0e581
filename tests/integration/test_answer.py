"""`finrag answer` (RAG and closed-book), answer files and the generation marts, end to end as subprocesses against
a scripted OpenAI-compatible server on loopback, over real FinanceBench questions and a real filing's chunks."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import polars as pl
import pytest

from python_jobs.core.lake import Lake
from python_jobs.stats.text_metrics import bleu, exact_match, numeric_match, rouge_l_f, token_f1
from support.answers_homes import GOLD_DOC, one_pdf_home
from support.cli import dbt_build, run_finrag
from support.fake_llm import Behaviour, FakeLLM
from support.paths import PROJECT
from support.shared_home import copy_home
from support.warehouse import retrieval_ks, warehouse_query

KEY = "sk-answer-test-SECRET-0b7e2d91"


@pytest.fixture(scope="module")
def fb(tmp_path_factory: pytest.TempPathFactory) -> dict:
    """FinanceBench questions and one real 30-page filing (a copy of the session's shared one-PDF home,
    support/answers_homes.py), chunked, and a BM25 run over it."""
    home = copy_home(one_pdf_home(tmp_path_factory)[0], tmp_path_factory.mktemp("answer") / "warehouse")
    run_finrag(home, "chunk", "--dataset", "financebench", "--preset", "256/32")
    run_finrag(home, "retrieve", "--retriever", "bm25", "--dataset", "financebench", "--k", "5")
    lake = Lake(home)
    (retrieval_run,) = lake.partitions("retrieval_runs")
    gold_qs = sorted(set(lake.read("evidence").filter(pl.col("doc_id") == GOLD_DOC)["question_id"]))
    questions = lake.read("questions").sort("question_id")
    others = [q for q in questions["question_id"].to_list() if q not in gold_qs][:2]
    refs = dict(zip(questions["question_id"], questions["reference_answers"].to_list(), strict=True))
    texts = dict(zip(questions["question_id"], questions["question"], strict=True))
    return {"home": home, "retrieval_run": retrieval_run, "qids": gold_qs + others, "gold_qs": gold_qs,
            "refs": refs, "texts": texts}


@pytest.fixture
def llm_env(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    monkeypatch.setenv("FINRAG_LLM_MODEL", "fake-model")
    monkeypatch.setenv("FINRAG_LLM_API_KEY", KEY)
    yield


def answer(home: Path, fake: FakeLLM, *args: str, check: bool = True) -> subprocess.CompletedProcess[str]:
    os.environ["FINRAG_LLM_BASE_URL"] = fake.base_url
    try:
        return run_finrag(home, "answer", "--timeout", "2", "--max-attempts", "2", *args, check=check)
    finally:
        del os.environ["FINRAG_LLM_BASE_URL"]


def qargs(qids: list[str]) -> list[str]:
    return [a for q in qids for a in ("--question-id", q)]


def test_rag_and_closed_book_runs_score_side_by_side(fb: dict, llm_env: None) -> None:
    home, qids = fb["home"], fb["qids"]
    q0 = fb["gold_qs"][0]
    gold = fb["refs"][q0][0]
    # the scripted model answers one question with its gold answer (both runs), others with a deterministic echo
    b = Behaviour(script={fb["texts"][q0]: gold})
    with FakeLLM(b) as fake:
        rag = answer(home, fake, "--retrieval-run", fb["retrieval_run"], "--k", "3", *qargs(qids)).stdout.strip()
        closed = answer(home, fake, "--closed-book", "--dataset", "financebench", "--max-words", "4",
                        *qargs(qids)).stdout.strip()
        n_calls = len(b.requests)
        assert n_calls == 2 * len(qids)
        # a re-run of both makes no new call and lands the same answers
        rerun = answer(home, fake, "--retrieval-run", fb["retrieval_run"], "--k", "3", *qargs(qids))
        assert rerun.stdout.strip() == rag
        answer(home, fake, "--closed-book", "--dataset", "financebench", "--max-words", "4", *qargs(qids))
        assert len(b.requests) == n_calls
    lake = Lake(home)
    runs = {r["run_id"]: r for r in lake.read("generation_runs").iter_rows(named=True)}
    assert runs[rag]["retrieval_run_id"] == fb["retrieval_run"] and runs[closed]["retrieval_run_id"] is None
    assert runs[rag]["prompt_template"].startswith("rag_answer_v1@")
    assert runs[closed]["prompt_template"].startswith("closed_book_v1@")
    assert json.loads(runs[closed]["params"])["max_words"] == 4 and runs[rag]["model"] == "fake-model"

    # RAG: the top-3 chunks by rank, in the prompt with their doc ids and texts
    answers = lake.read_partition("answers", rag).sort("question_id")
    assert answers["question_id"].to_list() == sorted(qids) and answers["error"].is_null().all()
    results = lake.read("retrieval_results", where={"run_id": fb["retrieval_run"]})
    chunks = dict(zip(*lake.read("chunks", columns=["chunk_id", "text"]).get_columns(), strict=True))
    for a in answers.iter_rows(named=True):
        top = results.filter((pl.col("question_id") == a["question_id"]) & (pl.col("rank") <= 3)).sort("rank")
        assert a["context_chunk_ids"] == top["chunk_id"].to_list()
        for i, (cid, doc) in enumerate(zip(top["chunk_id"], top["doc_id"], strict=True), start=1):
            assert f"[{i}] (doc {doc}" in a["prompt"] and chunks[cid].strip() in a["prompt"]
        assert fb["texts"][a["question_id"]] in a["prompt"]
    assert answers.filter(pl.col("question_id") == q0)["answer"].to_list() == [gold]
    ledger = lake.read("llm_calls")
    calls, cache_rows = ledger.filter(pl.col("cache_hits") == 0), ledger.filter(pl.col("cache_hits") > 0)
    assert calls.height == 2 * len(qids) and set(ledger["purpose"]) == {"answer"}
    assert cache_rows["cache_hits"].sum() == 2 * len(qids)  # the re-runs, served from the cache

    dbt_build(home, "--select", "+mart_generation_leaderboard", "+mart_generation_by_slice",
              "+mart_retrieval_evidence_overlap", "--indirect-selection", "cautious")
    board = warehouse_query(home, "select run_id, metric, mean, n, n_questions, is_closed_book "
                                  "from mart_generation_leaderboard order by run_id, metric")
    assert {r[0] for r in board} == {rag, closed}
    assert {(r[0], r[5]) for r in board} == {(rag, False), (closed, True)}
    # every score is the python function of the (cut) answer against the references
    scores = warehouse_query(home, "select run_id, question_id, answer_scored, rouge_l, token_f1, exact_match, bleu, "
                                   "numeric_match from fct_generation_question_scores")
    assert len(scores) == 2 * len(qids)
    for run_id, qid, scored, r, f1, em, bl, nm in scores:
        full = lake.read_partition("answers", run_id).filter(pl.col("question_id") == qid)["answer"][0]
        assert scored == (" ".join(full.split()[:4]) if run_id == closed else full)
        refs = fb["refs"][qid]
        assert r == pytest.approx(max(rouge_l_f(scored, x) for x in refs))
        assert f1 == pytest.approx(max(token_f1(scored, x) for x in refs))
        assert em == max(exact_match(scored, x) for x in refs)
        assert bl == pytest.approx(max(bleu(scored, x) for x in refs))
        nms = [numeric_match(scored, x) for x in refs if numeric_match(scored, x) is not None]
        assert nm == (max(nms) if nms else None)
    rag_em = [x for x in board if x[0] == rag and x[1] == "exact_match"][0]
    assert rag_em[2] == pytest.approx(1 / len(qids)) and rag_em[3] == len(qids)
    slices = warehouse_query(home, f"select value, n from mart_generation_by_slice where run_id = '{rag}' "
                                   "and dimension = 'company' and metric = 'rouge_l'")
    assert dict(slices)["Best Buy"] == len(fb["gold_qs"])
    overlap = warehouse_query(home, "select k, n_questions, mean_max_rouge_l from mart_retrieval_evidence_overlap "
                                    "order by k")
    # the cut-offs are the retrieval metrics' (var retrieval_ks), 0 = the whole ranking
    assert [r[0] for r in overlap] == sorted(retrieval_ks()) and all(0 < r[2] <= 1 for r in overlap)
    by_k = {r[0]: r[2] for r in overlap}
    positive = sorted(k for k in by_k if k > 0)
    # max over more chunks never falls (beyond the float noise of averaging equal maxima in another order)
    assert all(by_k[a] <= by_k[b] + 1e-12 for a, b in zip(positive, positive[1:])), by_k
    # the run returns 5 results: the whole ranking is within the deepest k
    assert by_k[0] == pytest.approx(by_k[positive[-1]], abs=1e-12), by_k
    # the key never reached the lake or the warehouse
    for f in home.rglob("*"):
        if f.is_file():
            assert KEY.encode() not in f.read_bytes(), f


def test_long_context_is_split_answered_per_part_and_fused(fb: dict, llm_env: None) -> None:
    home, q = fb["home"], fb["gold_qs"][:2]
    b = Behaviour(script={"Partial answers:": "FUSED ANSWER"})
    with FakeLLM(b) as fake:
        run = answer(home, fake, "--retrieval-run", fb["retrieval_run"], "--k", "4", "--context-tokens", "300",
                     "--run-id", "split-test", *qargs(q)).stdout.strip()
    assert run == "split-test"
    # each 256-token chunk is a part of its own: 4 part answers and one fusion per question
    purposes = [r["messages"][-1]["content"].startswith("Question:") for r in b.requests]
    assert len(b.requests) == 2 * (4 + 1) and sum(purposes) == 2
    answers = Lake(home).read_partition("answers", run)
    assert answers["answer"].to_list() == ["FUSED ANSWER"] * 2
    for a in answers.iter_rows(named=True):
        assert a["prompt"].count("=== next prompt ===") == 4 and len(a["context_chunk_ids"]) == 4
        assert a["prompt"].count("<user>") == 5 and "Part 4: fake answer" in a["prompt"]
    ledger = Lake(home).read("llm_calls")
    assert {"answer_part", "fuse"} <= set(ledger["purpose"])


def test_failed_calls_land_as_errors_never_as_answers(fb: dict, llm_env: None) -> None:
    home, q = fb["home"], fb["qids"][:3]
    b = Behaviour(always={fb["texts"][q[1]]: "500"})
    with FakeLLM(b) as fake:
        # another max_tokens: another request (the first test's answers are cached)
        proc = answer(home, fake, "--closed-book", "--dataset", "financebench", "--run-id", "fail-test",
                      "--max-tokens", "99", *qargs(q))
    a = Lake(home).read_partition("answers", "fail-test").sort("question_id")
    bad = a.filter(pl.col("question_id") == q[1]).row(0, named=True)
    assert bad["answer"] is None and "InternalServerError 500" in bad["error"]
    assert a.filter(pl.col("question_id") != q[1])["error"].is_null().all()
    assert "1 failed" in proc.stderr and KEY not in proc.stderr + proc.stdout


def test_a_run_whose_every_call_failed_lands_and_exits_non_zero(fb: dict, llm_env: None) -> None:
    home, q = fb["home"], fb["qids"][:2]
    with FakeLLM(Behaviour(always={"": "500"})) as fake:  # every request: HTTP 500
        proc = answer(home, fake, "--closed-book", "--dataset", "financebench", "--run-id", "all-failed",
                      "--max-tokens", "77", *qargs(q), check=False)
    assert proc.returncode == 1 and proc.stdout == ""
    assert "every answer of run all-failed failed (2 of 2)" in proc.stderr
    assert "the first error: InternalServerError 500" in proc.stderr and KEY not in proc.stderr
    # nothing is lost: the run and its errors landed
    assert Lake(home).read_partition("answers", "all-failed")["error"].is_not_null().sum() == 2


def test_killed_job_resumes_and_lands_every_answer_once(fb: dict, llm_env: None) -> None:
    home = fb["home"]
    qids = sorted(fb["texts"])[20:32]
    b = Behaviour(latency=0.4)
    lake = Lake(home)
    with FakeLLM(b) as fake:
        env = {**os.environ, "FINRAG_HOME": str(home), "FINRAG_LLM_BASE_URL": fake.base_url}
        cmd = [sys.executable, "-m", "python_jobs.cli", "answer", "--closed-book", "--dataset", "financebench",
               "--run-id", "kill-test", "--concurrency", "1", "--ledger-batch", "2", *qargs(qids)]
        earlier = len(lake.partitions("llm_calls"))
        proc = subprocess.Popen(cmd, env=env, cwd=PROJECT, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline and len(lake.partitions("llm_calls")) < earlier + 2:
            time.sleep(0.05)
        proc.send_signal(signal.SIGKILL)
        proc.wait()
        landed = lake.read("llm_calls").filter((pl.col("purpose") == "answer") & (pl.col("cache_hits") == 0))
        before = len(b.requests)
        assert "kill-test" not in lake.partitions("answers")
        done = {json.loads(r)["messages"][-1]["content"] for r in landed["request"]}
        n_landed = sum(any(fb["texts"][q] in d for d in done) for q in qids)
        assert 2 <= n_landed < len(qids)
        answer(home, fake, "--closed-book", "--dataset", "financebench", "--run-id", "kill-test",
               "--concurrency", "1", "--ledger-batch", "2", *qargs(qids))
        rerun_calls = len(b.requests) - before
    assert rerun_calls == len(qids) - n_landed  # only what had not landed is asked again
    a = Lake(home).read_partition("answers", "kill-test")
    assert sorted(a["question_id"].to_list()) == qids and a["error"].is_null().all()


def test_answer_files_round_trip_and_bad_files(fb: dict, llm_env: None, tmp_path: Path) -> None:
    home = fb["home"]
    with FakeLLM(Behaviour()) as fake:
        rag = answer(home, fake, "--retrieval-run", fb["retrieval_run"], "--k", "2", "--run-id", "files-test",
                     *qargs(fb["qids"][:3])).stdout.strip()
    out = tmp_path / "files-test.jsonl"
    run_finrag(home, "export-answers", "--run-id", rag, "--out", str(out))
    lines = [json.loads(x) for x in out.read_text().splitlines()]
    assert [x["id"] for x in lines] == sorted(fb["qids"][:3])
    assert all(len(x["passages"]) == 2 and x["passages"][0]["doc_IDs"] for x in lines)
    assert all(x["final_prompt"].count(x["passages"][0]["passage"].strip()[:200]) == 1 for x in lines)
    # partial files are valid: import two of the three under a new run id
    part = tmp_path / "imported.jsonl"
    part.write_text("".join(json.dumps(x) + "\n" for x in lines[:2]))
    run_finrag(home, "import-answers", str(part), "--dataset", "financebench", "--model", "fake-model")
    lake = Lake(home)
    imported = lake.read_partition("answers", "imported").sort("question_id")
    original = lake.read_partition("answers", rag).sort("question_id").head(2)
    assert imported["answer"].to_list() == original["answer"].to_list()
    assert imported["prompt"].to_list() == original["prompt"].to_list()
    assert imported["context_chunk_ids"].to_list() == original["context_chunk_ids"].to_list()
    run = lake.read("generation_runs", where={"run_id": "imported"}).row(0, named=True)
    assert json.loads(run["params"])["max_words"] == 300 and run["eval_mode"] == "answer_file"
    again = tmp_path / "again.jsonl"
    run_finrag(home, "export-answers", "--run-id", "imported", "--out", str(again))
    assert again.read_text() == "".join(json.dumps(x, ensure_ascii=False) + "\n" for x in lines[:2])

    runs_before = lake.partitions("generation_runs")
    good = json.dumps(lines[0])
    cases = {
        "missing.jsonl": (good + "\n" + json.dumps({k: v for k, v in lines[1].items() if k != "answer"}) + "\n",
                          "line 2, field 'answer'"),
        "badjson.jsonl": (good + "\n{not json\n", "line 2, field '<record>'"),
        # a key given twice: json.loads would keep the second answer silently
        "twice.jsonl": (good[:-1] + ', "answer": "the other answer"}\n', "line 1, field 'answer'"),
        # not UTF-8 (Latin-1 bytes in the answer): was a traceback
        "latin1.jsonl": (good + "\n" + json.dumps({**lines[1], "answer": "cafe"}).replace('"cafe"', '"caf\u00e9"')
                         + "\n", "line 2, field 'answer'"),
        "passage.jsonl": (json.dumps({**lines[0], "passages": [{"passage": "x", "doc_IDs": []}]}) + "\n",
                          "line 1, field 'passages.0.doc_IDs'"),
        "unknown.jsonl": (json.dumps({**lines[0], "id": "no_such_question"}) + "\n", "line 1, field 'id'"),
        "dup.jsonl": (good + "\n" + good + "\n", "line 2, field 'id'"),
    }
    for name, (text, where) in cases.items():
        f = tmp_path / name
        f.write_bytes(text.encode("latin-1" if name == "latin1.jsonl" else "utf-8"))
        proc = run_finrag(home, "import-answers", str(f), "--dataset", "financebench", check=False)
        assert proc.returncode == 2, name
        assert f"file {f}, {where}" in proc.stderr, (name, proc.stderr)
    assert Lake(home).partitions("generation_runs") == runs_before  # nothing of a failed load landed


def test_template_file_is_hashed_into_the_run_id(fb: dict, llm_env: None, tmp_path: Path) -> None:
    from python_jobs.llm.prompts import load_template

    home, q = fb["home"], fb["qids"][:1]
    stock = load_template("rag_answer_v1")
    edited = tmp_path / "rag_answer_v1.txt"
    edited.write_text(stock.text.replace("Answer concisely.", "Answer in one sentence."))
    b = Behaviour()
    with FakeLLM(b) as fake:
        a = answer(home, fake, "--retrieval-run", fb["retrieval_run"], "--k", "2", *qargs(q)).stdout.strip()
        e = answer(home, fake, "--retrieval-run", fb["retrieval_run"], "--k", "2", "--template", str(edited),
                   *qargs(q)).stdout.strip()
    assert a != e and a.startswith("financebench-rag-")
    runs = {r["run_id"]: r["prompt_template"] for r in Lake(home).read("generation_runs").iter_rows(named=True)}
    assert runs[a] == stock.ref and runs[e] == f"rag_answer_v1@{load_template(str(edited)).sha256[:12]}"
    assert "Answer in one sentence." in b.requests[-1]["messages"][-1]["content"]
    proc = run_finrag(home, "answer", "--closed-book", "--dataset", "financebench", "--template", "no_such",
                      check=False)
    assert proc.returncode == 2 and "no prompt template 'no_such'" in proc.stderr

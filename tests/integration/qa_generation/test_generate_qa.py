"""`finrag generate-qa` end to end as subprocesses against the scripted OpenAI-compatible server, over the synthetic
corpus (real PDFs through the FinanceBench ingest, chunked 256/32): topic classification, every task's generator,
the inspector, malformed replies (the instance fails with its reason, nothing broken lands), the LLM cache (a re-run
makes no call), seeded determinism, a custom topic tree, and `finrag retrieve --split`."""

from __future__ import annotations

import json
import os
from collections import Counter
from collections.abc import Iterator
from pathlib import Path

import polars as pl
import pytest

from python_jobs.core.lake import Lake
from python_jobs.qa_generation.human_inspection import generated_questions
from python_jobs.qa_generation.tasks import assigned_split
from support.cli import run_finrag
from support.fake_llm import Behaviour, FakeLLM
from support.qa_generation_home import (
    ARGS,
    CHARS,
    CLASSIFY,
    DS,
    EXTRACT,
    INSPECT,
    fresh_home,
    generate,
    run_id_of,
    script_for,
    tail,
)


@pytest.fixture
def llm_env(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    monkeypatch.setenv("FINRAG_LLM_MODEL", "fake-model")
    monkeypatch.delenv("FINRAG_LLM_BASE_URL", raising=False)
    yield


@pytest.fixture(scope="module")
def generated(corpus: dict) -> dict:
    """One generation run over the synthetic corpus with the scripted agents."""
    home = fresh_home(corpus, "gen")
    units = sampled_units(corpus, 12, 7)
    bad = units[0]
    behaviour = Behaviour(script=script_for(corpus["chunks"], bad_classification=bad))
    os.environ["FINRAG_LLM_MODEL"] = "fake-model"
    try:
        with FakeLLM(behaviour) as fake:
            proc = generate(home, fake, *ARGS)
            n_calls = len(behaviour.requests)
            again = generate(home, fake, *ARGS)
            n_calls_again = len(behaviour.requests) - n_calls
    finally:
        del os.environ["FINRAG_LLM_MODEL"]
    run_id = run_id_of(proc)
    lake = Lake(home)
    return {"home": home, "run_id": run_id, "proc": proc, "again": again, "n_calls": n_calls,
            "n_calls_again": n_calls_again, "bad_chunk": bad, "lake": lake,
            "questions": generated_questions(lake),
            "attempts": lake.read("qa_generation_attempts"), "evidence": lake.read("evidence"),
            "inspections": lake.read("qa_inspections")}


def sampled_units(corpus: dict, sample: int, seed: int) -> list[str]:
    from python_jobs.qa_generation.pipeline import read_units, sample_units

    lake = Lake(corpus["base"])
    (part,) = [p for p in lake.partitions("chunks")]
    units = read_units(lake, DS, part.split(".", 1)[1])
    return [u.chunk_id for u in sample_units(units, "chunk", sample, seed)]


def test_every_task_lands_or_fails_with_its_reason(generated: dict) -> None:
    att, qs = generated["attempts"], generated["questions"]
    run_id = generated["run_id"]
    assert run_id.startswith("qagen-demo_synthetic-")
    assert set(att["generation_run_id"]) == {run_id}
    # the unit whose classification named no topic: one failed attempt without topic or task
    cls = att.filter(pl.col("task").is_null())
    assert cls.height == 1 and cls["status"][0] == "failed"
    assert cls["chunk_ids"][0].to_list() == [generated["bad_chunk"]]
    assert "topic classification: the reply names no topic" in cls["reason"][0]
    by = {(t, s): n for t, s, n in att.group_by("task", "status").len().iter_rows()}
    # two topics (Stock analysis, Corporate bonds) x 2 per cell, every unit distinct
    assert by[("extractive", "ok")] == 4 and ("extractive", "failed") not in by
    assert by[("conversational", "ok")] == 4
    assert by[("long_form", "dropped")] == 4  # landed, split 'dropped'
    # malformed replies: every attempt fails, the cell is refilled in round 2 from unused units, nothing lands
    contrast = att.filter(pl.col("task") == "contrast")
    assert set(contrast["status"]) == {"failed"} and contrast.height == 8
    assert set(contrast["reason"]) == {"contrast generator: no 'Question:' line in the reply"}
    mh = att.filter(pl.col("task") == "multi_hop")
    calc = mh.filter(pl.col("question_type") == "multi_hop_calc")
    chain = mh.filter(pl.col("question_type") == "multi_hop_chain")
    assert set(calc["status"]) == {"ok"} and calc.height >= 1
    assert set(chain["status"]) == {"failed"} and chain.height >= 1
    assert set(chain["reason"]) == {"multi_hop_chain generator: no 'Answer:' line in the reply"}
    # failed attempts never land as questions; landed ones do, exactly
    landed = att.filter(pl.col("status").is_in(["ok", "dropped"]))
    assert sorted(qs["question_id"]) == sorted(landed["question_id"])
    failed = att.filter(pl.col("status") == "failed")
    assert failed["question_id"].null_count() == failed.height
    assert qs.filter(pl.col("task") == "contrast").height == 0
    # stderr has the per-task summary, stdout only the run id
    err = generated["proc"].stderr
    assert "extractive      attempts   4  landed   4 (kept 4, dropped 0)  failed 0" in err
    assert "contrast        attempts   8  landed   0 (kept 0, dropped 0)  failed 8" in err
    assert generated["proc"].stdout == f"{run_id}\n"


def test_questions_carry_topic_task_split_and_meta(generated: dict) -> None:
    qs = generated["questions"]
    assert set(qs["source"]) == {"generated"} and set(qs["dataset"]) == {DS}
    assert all(q.startswith("gen-") and len(q) == 16 for q in qs["question_id"])
    assert set(qs["load_id"]) == {generated["run_id"]}
    paths = {tuple(p) for p in qs["topic_path"].to_list()}
    assert paths == {("投资", "股票市场", "股票分析"), ("投资", "债券市场", "企业债券")}
    ex = qs.filter(pl.col("task") == "extractive")
    assert set(ex["question_type"]) == {"extractive"}
    assert set(qs.filter(pl.col("task") == "multi_hop")["question_type"]) == {"multi_hop_calc"}
    for q in qs.iter_rows(named=True):
        meta = json.loads(q["meta"])
        assert meta["generation_run_id"] == generated["run_id"] and meta["model"] == "fake-model"
        assert meta["cell"]["task"] == q["task"] and meta["cell"]["topic_id"] == "/".join(q["topic_path"])
        assert meta["prompts"][meta["kind"]].startswith(f"qa_{meta['kind']}_v1@")
        assert meta["assigned_split"] == assigned_split(q["question_id"], 7, 0.5)
        # kept instances get their seeded split; the inspector's drops land as 'dropped'
        assert q["split"] == ("dropped" if q["task"] == "long_form" else meta["assigned_split"])
    assert Counter(qs.filter(pl.col("split") != "dropped")["split"]).keys() == {"gen_train", "gen_test"}
    conv = qs.filter(pl.col("task") == "conversational").row(0, named=True)
    assert conv["question"] == "Which of them sells through distributors?"
    assert conv["reference_answers"] == ["Subscriptions."]
    assert [t["role"] for t in conv["conversation"]] == ["user", "assistant", "user"]
    assert conv["conversation"][-1]["content"] == conv["question"]
    calc = qs.filter(pl.col("task") == "multi_hop").row(0, named=True)
    assert calc["reference_answers"] == ["1,250"] and json.loads(calc["meta"])["calculation"] == "1,000 + 250"


def test_evidence_is_the_chunks_given_at_chunk_page_and_doc_level(generated: dict) -> None:
    ev, att = generated["evidence"], generated["attempts"]
    chunks = Lake(generated["home"]).read("chunks").select("chunk_id", "doc_id", "page_start", "page_end", "text")
    info = {r["chunk_id"]: r for r in chunks.iter_rows(named=True)}
    for a in att.filter(pl.col("status").is_in(["ok", "dropped"])).iter_rows(named=True):
        rows = ev.filter(pl.col("question_id") == a["question_id"]).sort("evidence_ordinal")
        expected = [(c, info[c]["doc_id"], p) for c in a["chunk_ids"]
                    for p in range(info[c]["page_start"], info[c]["page_end"] + 1)]
        assert list(zip(rows["chunk_id"], rows["doc_id"], rows["page_number"])) == expected
        assert rows["evidence_ordinal"].to_list() == list(range(len(expected)))
        assert set(rows["relevance"]) == {1}
        assert rows["evidence_text"][0] == info[a["chunk_ids"][0]]["text"].strip()[:CHARS]
    # calculation instances got two passages of one document, neighbours
    for a in att.filter(pl.col("question_type") == "multi_hop_calc").iter_rows(named=True):
        first, second = (info[c] for c in a["chunk_ids"])
        assert first["doc_id"] == second["doc_id"]


def test_inspections_land_for_every_landed_instance(generated: dict) -> None:
    ins, qs = generated["inspections"], generated["questions"]
    assert set(ins["inspection_run_id"]) == {generated["run_id"]}
    assert set(ins["inspector"]) == {"llm:fake-model"}
    assert sorted(ins["question_id"]) == sorted(qs["question_id"])
    verdict = dict(zip(ins["question_id"], ins["verdict"], strict=True))
    for q in qs.iter_rows(named=True):
        assert verdict[q["question_id"]] == ("drop" if q["task"] == "long_form" else "keep")
    assert set(ins.filter(pl.col("verdict") == "drop")["score"]) == {2}
    assert set(ins.filter(pl.col("verdict") == "drop")["reason"]) == {"the answer is vague."}


def test_rerun_makes_no_new_call_and_lands_the_same(generated: dict) -> None:
    assert generated["n_calls"] > 0
    assert generated["n_calls_again"] == 0
    assert "LLM calls made 0, from cache" in generated["again"].stderr
    assert run_id_of(generated["again"]) == generated["run_id"]
    lake = Lake(generated["home"])
    assert lake.partitions("qa_generation_attempts") == [generated["run_id"]]
    qs = generated_questions(lake).drop("created_at")
    assert qs.sort("question_id").equals(generated["questions"].drop("created_at").sort("question_id"))


def test_same_seed_same_instances_other_seed_other_sample(corpus: dict, generated: dict, llm_env: None) -> None:
    behaviour = Behaviour(script=script_for(corpus["chunks"], bad_classification=generated["bad_chunk"]))
    with FakeLLM(behaviour) as fake:
        same_home = fresh_home(corpus, "same")
        same = run_id_of(generate(same_home, fake, *ARGS, "--tasks", "extractive,long_form,conversational"))
        other_home = fresh_home(corpus, "other")
        other = run_id_of(generate(other_home, fake, "--per-cell", "2", "--sample", "12", "--seed", "8",
                                   "--tasks", "extractive,long_form,conversational"))
    assert same != other
    mine = generated["questions"].filter(pl.col("task").is_in(["extractive", "long_form", "conversational"]))
    again = generated_questions(Lake(same_home))
    # a --tasks subset is another configuration (another run id and ids), but the same sampled units and splits
    chunks = lambda qs: sorted((q["task"], tuple(json.loads(q["meta"])["chunk_ids"])) for q in qs.iter_rows(named=True))  # noqa: E731
    assert chunks(again) == chunks(mine)
    assert sampled_units(corpus, 12, 7) != sampled_units(corpus, 12, 8)
    third = generated_questions(Lake(other_home))
    assert chunks(third) != chunks(mine)


def test_custom_topic_tree(corpus: dict, tmp_path: Path, llm_env: None) -> None:
    tree = {"topic_name": "Filings", "sub_topics": [
        {"topic_name": "Revenue", "sub_topics": [{"topic_name": "Recurring revenue"}, {"topic_name": "Services"}]},
        {"topic_name": "Workforce"}]}
    (tmp_path / "tree.json").write_text(json.dumps(tree))
    home = fresh_home(corpus, "custom")
    run_finrag(home, "topics", "flatten", "--tree", str(tmp_path / "tree.json"), "--out", str(tmp_path / "t.csv"))
    script = {tail(r["text"]) + CLASSIFY: "Topic: Workforce" if r["doc_id"].startswith("ILEXIA") else "Topic: Services"
              for r in corpus["chunks"].iter_rows(named=True)}
    script |= {k: v for k, v in script_for(corpus["chunks"]).items() if k.endswith(EXTRACT) or k == INSPECT}
    behaviour = Behaviour(script=script)
    with FakeLLM(behaviour) as fake:
        generate(home, fake, "--topics", str(tmp_path / "t.csv"), "--tasks", "extractive", "--per-cell", "1",
                 "--sample", "8", "--seed", "7")
    # the classifier saw the custom leaves (not OmniEval's) and the questions carry the custom paths
    first = behaviour.requests[0]["messages"][-1]["content"]
    assert "- Recurring revenue\n- Services\n- Workforce" in first and "Stock analysis" not in first
    qs = generated_questions(Lake(home))
    assert sorted(tuple(p) for p in qs["topic_path"].to_list()) == [("Revenue", "Services"), ("Workforce",)]


def test_bad_topics_file_and_options_fail_before_any_call(corpus: dict, tmp_path: Path, llm_env: None) -> None:
    home = fresh_home(corpus, "bad")
    bad = tmp_path / "bad.csv"
    bad.write_text("topic_id,level,name_zh,name_en,is_leaf\na,1,a,A,maybe\n")
    behaviour = Behaviour()
    with FakeLLM(behaviour) as fake:
        proc = generate(home, fake, "--topics", str(bad), check=False)
        assert proc.returncode == 2 and "line 2" in proc.stderr and "is_leaf" in proc.stderr
        proc = generate(home, fake, "--tasks", "extractive,poetry", check=False)
        assert proc.returncode != 0 and "poetry" in proc.stderr
    assert behaviour.requests == []
    assert Lake(home).partitions("qa_generation_attempts") == []


def test_retrieve_selects_splits(generated: dict) -> None:
    home, qs = generated["home"], generated["questions"]
    everything = Lake(home).read("questions")  # the corpus's own 4 questions are 'test': never in 'gen_test'
    n_test = everything.filter(pl.col("split") == "gen_test").height
    n_default = everything.filter(pl.col("split") != "dropped").height
    assert n_test == qs.filter(pl.col("split") == "gen_test").height > 0 and n_default >= n_test + 4
    out = run_finrag(home, "retrieve", "--retriever", "bm25", "--dataset", DS, "--k", "5", "--split", "gen_test").stdout
    run_id = out.strip()
    default = run_finrag(home, "retrieve", "--retriever", "bm25", "--dataset", DS, "--k", "5").stdout.strip()
    assert run_id != default
    lake = Lake(home)
    runs = {r["run_id"]: json.loads(r["params"]) for r in lake.read("retrieval_runs").iter_rows(named=True)}
    assert runs[run_id]["splits"] == ["gen_test"] and runs[run_id]["n_questions"] == n_test
    assert runs[default]["splits"] == ["gen_test", "gen_train", "test"] and runs[default]["n_questions"] == n_default
    res = lake.read("retrieval_results", where={"run_id": run_id})
    assert set(res["question_id"]) == set(everything.filter(pl.col("split") == "gen_test")["question_id"])
    bad = run_finrag(home, "retrieve", "--retriever", "bm25", "--dataset", DS, "--split", "gen_human_test", check=False)
    assert bad.returncode == 2 and "no questions in split(s) gen_human_test" in bad.stderr


def test_document_units_spread_over_documents(corpus: dict, llm_env: None) -> None:
    home = fresh_home(corpus, "docs")
    with FakeLLM(Behaviour(script=script_for(corpus["chunks"]))) as fake:
        generate(home, fake, "--unit", "document", "--tasks", "extractive", "--per-cell", "4", "--sample", "10")
    att = Lake(home).read("qa_generation_attempts")
    docs = [c[0].split("::")[0] for c in att["chunk_ids"].to_list()]
    assert len(docs) == 4 and len(set(docs)) == 4  # one chunk of each of the 4 filings
    assert set(att["status"]) == {"ok"}

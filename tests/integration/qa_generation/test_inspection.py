"""Human inspection of generated QA instances: `finrag export-inspection` -> annotators' scores ->
`finrag import-inspection` (validation, atomic landing, drop / fix / keep applied, idempotent), then `dbt build`:
mart_qa_generation_acceptance and mart_qa_generation_inspection_agreement against numbers worked out from the lake
here, and a bm25 run over the generated test split scored at chunk level (fct_retrieval_question_scores,
mart_retrieval_leaderboard) against a reference computed from the retrieval results and the generated evidence."""

from __future__ import annotations

import csv
import json
import os
from pathlib import Path

import polars as pl
import pytest

from python_jobs.core.lake import Lake
from python_jobs.qa_generation.human_inspection import generated_questions
from support.cli import run_finrag
from support.fake_llm import Behaviour, FakeLLM
from support.qa_generation_home import ARGS, DS, fresh_home, generate, run_id_of, script_for
from support.warehouse import warehouse_query

SCORES = [5, 3, 1, 4, 2, 5, 3, 4]  # cycled over the exported rows


@pytest.fixture(scope="module")
def flow(corpus: dict, tmp_path_factory: pytest.TempPathFactory) -> dict:
    home = fresh_home(corpus, "inspect")
    os.environ["FINRAG_LLM_MODEL"] = "fake-model"
    try:
        with FakeLLM(Behaviour(script=script_for(corpus["chunks"]))) as fake:
            run_id = run_id_of(generate(home, fake, *ARGS))
    finally:
        del os.environ["FINRAG_LLM_MODEL"]
    out = tmp_path_factory.mktemp("files")
    sample = out / "sample.csv"
    proc = run_finrag(home, "export-inspection", "--out", str(sample), "--per-cell", "1", "--seed", "3")
    with open(sample, newline="", encoding="utf-8") as fh:
        rows = list(csv.DictReader(fh))
    filled = out / "filled.csv"
    rows = [dict(r) for r in rows]  # the exported rows stay as exported
    exported = [dict(r) for r in rows]
    for i, r in enumerate(rows):
        r["score"] = str(SCORES[i % len(SCORES)])
        if r["score"] == "3":
            r["corrected_answer"] = f"corrected answer {i}"
            r["comment"] = "answer fixed"
    write_csv(filled, rows)
    return {"home": home, "run_id": run_id, "out": out, "sample": sample, "export": proc, "rows": exported,
            "filled": filled}


def write_csv(path: Path, rows: list[dict]) -> None:
    with open(path, "w", newline="", encoding="utf-8") as fh:
        w = csv.DictWriter(fh, fieldnames=list(rows[0]))
        w.writeheader()
        w.writerows(rows)


def test_export_samples_each_cell_blind(flow: dict) -> None:
    rows = flow["rows"]
    qs = generated_questions(Lake(flow["home"]))
    cells = {("/".join(q["topic_path"]), q["task"]) for q in qs.iter_rows(named=True)}
    assert len(rows) == len(cells) == 8  # 2 topics x (extractive, multi_hop, long_form, conversational)
    assert {(r["topic"], r["task"]) for r in rows} == {
        (t, k) for t in ("Stock analysis", "Corporate bonds") for k in ("extractive", "multi_hop", "long_form",
                                                                          "conversational")}
    assert list(rows[0]) == ["question_id", "dataset", "generation_run_id", "topic", "task", "question_type",
                             "conversation", "question", "answer", "passages", "score", "corrected_question",
                             "corrected_answer", "comment"]
    assert all(r["score"] == "" and r["passages"].startswith("[1] (doc ") for r in rows)
    conv = next(r for r in rows if r["task"] == "conversational")
    assert conv["conversation"] == "user: How many reportable segments does the company have?\nassistant: Two."
    # the sample is seeded
    again = flow["out"] / "again.csv"
    run_finrag(flow["home"], "export-inspection", "--out", str(again), "--per-cell", "1", "--seed", "3")
    assert again.read_text() == flow["sample"].read_text()


@pytest.mark.parametrize("row, change, field", [
    (2, {"question_id": "gen-000000000000"}, "question_id"),
    (1, {"score": "7"}, "score"),
    (0, {"score": "three"}, "score"),
    (5, {"score": "3", "corrected_question": "", "corrected_answer": ""}, "corrected_answer"),
    (3, {"question_id": "<row 1>"}, "question_id"),  # a duplicate
])
def test_bad_files_name_line_and_field_and_land_nothing(flow: dict, row: int, change: dict, field: str) -> None:
    rows = [dict(r) for r in csv.DictReader(open(flow["filled"], newline="", encoding="utf-8"))]
    rows[row].update({k: rows[1]["question_id"] if v == "<row 1>" else v for k, v in change.items()})
    bad = flow["out"] / "bad.csv"
    write_csv(bad, rows)
    # records span lines (passages hold newlines): the error names the line the record starts on
    starts = [i for i, x in enumerate(bad.read_text().splitlines(), start=1) if x.startswith("gen-")]
    lake = Lake(flow["home"])
    before = lake.read_partition("questions", flow["run_id"]).drop("created_at")
    proc = run_finrag(flow["home"], "import-inspection", str(bad), check=False)
    assert proc.returncode == 2, proc.stderr
    assert f"bad.csv, line {starts[row]}, field '{field}'" in proc.stderr, proc.stderr
    assert [p for p in lake.partitions("qa_inspections") if p.startswith("human-")] == []
    assert lake.read_partition("questions", flow["run_id"]).drop("created_at").equals(before)


def test_a_200k_character_cell_is_read(flow: dict) -> None:
    """csv's default cap (131,072 characters) made a long corrected answer a traceback; now the file is read, and
    the error is the real one of another row, with its line."""
    rows = [dict(r) for r in csv.DictReader(open(flow["filled"], newline="", encoding="utf-8"))]
    rows[0]["comment"] = "long " * 40_000
    rows[1]["score"] = "7"
    bad = flow["out"] / "long.csv"
    write_csv(bad, rows)
    starts = [i for i, x in enumerate(bad.read_text().splitlines(), start=1) if x.startswith("gen-")]
    proc = run_finrag(flow["home"], "import-inspection", str(bad), check=False)
    assert proc.returncode == 2 and "Traceback" not in proc.stderr
    assert f"long.csv, line {starts[1]}, field 'score'" in proc.stderr, proc.stderr


def test_a_bom_is_read_as_every_reader_reads_it(flow: dict) -> None:
    """Excel saves CSV with a byte-order mark: the header's first name was read as '\ufeffquestion_id' ("missing
    column"); now the file reads, and the error is the real one."""
    rows = [dict(r) for r in csv.DictReader(open(flow["filled"], newline="", encoding="utf-8"))]
    rows[1]["score"] = "7"
    bad = flow["out"] / "bom.csv"
    write_csv(bad, rows)
    bad.write_bytes(b"\xef\xbb\xbf" + bad.read_bytes())
    starts = [i for i, x in enumerate(bad.read_text(encoding="utf-8-sig").splitlines(), start=1)
              if x.startswith("gen-")]
    proc = run_finrag(flow["home"], "import-inspection", str(bad), check=False)
    assert proc.returncode == 2 and f"bom.csv, line {starts[1]}, field 'score'" in proc.stderr, proc.stderr


def test_jsonl_errors(flow: dict) -> None:
    bad = flow["out"] / "bad.jsonl"
    bad.write_text(json.dumps({"question_id": flow["rows"][0]["question_id"], "score": 4, "corrected_question": "",
                               "corrected_answer": "", "comment": ""}) + "\n{not json\n")
    proc = run_finrag(flow["home"], "import-inspection", str(bad), check=False)
    assert proc.returncode == 2 and "line 2" in proc.stderr


@pytest.fixture(scope="module")
def imported(flow: dict) -> dict:
    home = flow["home"]
    first = run_finrag(home, "import-inspection", str(flow["filled"]))
    irid = first.stdout.strip()
    lake = Lake(home)
    after_first = lake.read_partition("questions", flow["run_id"]).drop("created_at").sort("question_id")
    second = run_finrag(home, "import-inspection", str(flow["filled"]))
    out = run_finrag(home, "retrieve", "--retriever", "bm25", "--dataset", DS, "--k", "5",
                     "--split", "gen_test,gen_human_test").stdout
    retrieval_run = out.strip()
    run_finrag(home, "build", "--select", "+mart_qa_generation_acceptance", "+mart_qa_generation_inspection_agreement",
               "+mart_retrieval_leaderboard", "+dim_questions", "--indirect-selection", "cautious")
    return {"irid": irid, "first": first, "second": second, "after_first": after_first,
            "retrieval_run": retrieval_run}


def test_import_applies_drop_fix_keep_and_is_idempotent(flow: dict, imported: dict) -> None:
    lake = Lake(flow["home"])
    assert imported["second"].stdout == imported["first"].stdout  # same file -> same inspection run id
    assert "keep 4, fix 2, drop 2" in imported["first"].stderr
    ins = lake.read("qa_inspections").filter(pl.col("inspector") == "human")
    assert set(ins["inspection_run_id"]) == {imported["irid"]} and ins.height == 8
    qs = lake.read_partition("questions", flow["run_id"]).sort("question_id")
    assert qs.drop("created_at").equals(imported["after_first"])
    by_id = {q["question_id"]: q for q in qs.iter_rows(named=True)}
    for i, row in enumerate(flow["rows"]):
        q, score = by_id[row["question_id"]], SCORES[i % len(SCORES)]
        meta = json.loads(q["meta"])
        assert q["human_score"] == score
        if score <= 2:
            assert q["split"] == "dropped" and q["human_verdict"] == "drop"
        else:
            assert q["split"] == ("gen_human_test" if meta["assigned_split"] == "gen_test" else "gen_train")
        if score == 3:
            assert q["reference_answers"] == [f"corrected answer {i}"]
            assert meta["original_answers"] == [row["answer"]] and q["question"] == row["question"]
        else:
            assert q["reference_answers"] == [row["answer"]] and "original_answers" not in meta
    # instances nobody inspected keep the LLM's split
    for q in qs.iter_rows(named=True):
        if q["question_id"] not in {r["question_id"] for r in flow["rows"]}:
            assert q["split"] == json.loads(q["meta"])["llm_split"]


def test_acceptance_mart_matches_the_lake(flow: dict, imported: dict) -> None:
    lake = Lake(flow["home"])
    att = lake.read("qa_generation_attempts")
    human = dict(zip(*lake.read("qa_inspections").filter(pl.col("inspector") == "human")
                     .select("question_id", "verdict").to_dict(as_series=False).values(), strict=True))
    n_gen = att.filter(pl.col("status").is_in(["ok", "dropped"])).height
    n_kept = att.filter(pl.col("status") == "ok").height
    accepted = sum(v in ("keep", "fix") for v in human.values())
    overall = warehouse_query(flow["home"], "select n_attempts, n_failed, n_generated, n_kept, n_dropped, "
                              "acceptance_ratio, n_human_inspected, n_human_keep, n_human_fix, n_human_drop, "
                              "human_acceptance_ratio from mart_qa_generation_acceptance "
                              "where topic_level = 0 and task = 'all'")
    assert overall == [(att.height, att.filter(pl.col("status") == "failed").height, n_gen, n_kept, n_gen - n_kept,
                        pytest.approx(n_kept / n_gen), 8, 4, 2, 2, pytest.approx(accepted / 8))]
    # one topic x task cell at the second level, English path beside the zh path
    cell = warehouse_query(flow["home"], "select topic_en, n_attempts, n_generated, n_kept, acceptance_ratio "
                           "from mart_qa_generation_acceptance where topic_level = 2 and topic = '投资/股票市场' "
                           "and task = 'long_form'")
    assert cell == [("Investment/Stock market", 2, 2, 0, 0.0)]
    contrast = warehouse_query(flow["home"], "select n_failed, n_generated, acceptance_ratio from "
                               "mart_qa_generation_acceptance where topic_level = 0 and task = 'contrast'")
    assert contrast == [(8, 0, None)]


def test_agreement_mart_matches_a_reference(flow: dict, imported: dict) -> None:
    lake = Lake(flow["home"])
    ins = lake.read("qa_inspections")
    llm = dict(ins.filter(pl.col("inspector") != "human").select("question_id", "verdict").iter_rows())
    hum = dict(ins.filter(pl.col("inspector") == "human").select("question_id", "verdict").iter_rows())
    pairs = [(llm[q] == "keep", hum[q] in ("keep", "fix")) for q in hum]
    n = len(pairs)
    po = sum(a == b for a, b in pairs) / n
    pl_, ph = sum(a for a, _ in pairs) / n, sum(b for _, b in pairs) / n
    pe = pl_ * ph + (1 - pl_) * (1 - ph)
    kappa = (po - pe) / (1 - pe)
    # the same columns as mart_judge_agreement (one macro, agreement_stats): accuracy, p_expected, kappa
    got = warehouse_query(flow["home"], "select n, accuracy, p_llm_accept, p_human_accept, p_expected, kappa "
                          "from mart_qa_generation_inspection_agreement where task = 'all'")
    assert got == [(8, pytest.approx(po), pytest.approx(pl_), pytest.approx(ph), pytest.approx(pe),
                    pytest.approx(kappa))]
    assert 0 < po < 1 and kappa != 0  # a non-trivial case: both agree and disagree


def test_retrieval_on_the_generated_set_is_scored_at_chunk_level(flow: dict, imported: dict) -> None:
    home, run = flow["home"], imported["retrieval_run"]
    lake = Lake(home)
    qs = generated_questions(lake).filter(pl.col("split").is_in(["gen_test", "gen_human_test"]))
    assert qs.height > 0
    res = lake.read("retrieval_results", where={"run_id": run})
    ev = lake.read("evidence")
    expected = {}
    for qid in qs["question_id"]:
        gold = set(ev.filter(pl.col("question_id") == qid)["chunk_id"])
        top = res.filter(pl.col("question_id") == qid).sort("rank")["chunk_id"].to_list()[:5]
        expected[qid] = len(gold & set(top)) / len(gold)
    got = dict(warehouse_query(home, f"select question_id, recall from fct_retrieval_question_scores "
                                     f"where run_id = '{run}' and granularity = 'chunk' and k = 5 "
                                     f"and question_id like 'gen-%'"))
    assert got == pytest.approx(expected)
    assert any(v > 0 for v in expected.values())
    (mean, n), = warehouse_query(home, f"select mean, n_questions from mart_retrieval_leaderboard where run_id = "
                                       f"'{run}' and granularity = 'chunk' and metric = 'recall' and k = 5")
    # the corpus's own questions are 'test', so a run on the generated test splits holds only generated ones
    assert n == lake.read("questions").filter(pl.col("split").is_in(["gen_test", "gen_human_test"])).height
    splits = dict(warehouse_query(home, "select split, count(*) from dim_questions where question_id like 'gen-%' "
                                        "group by 1"))
    assert splits.get("gen_human_test", 0) > 0 and splits["dropped"] > 0

"""The judge marts under a real `dbt build` (of the marts a test reads and everything upstream of them): normalisation
and its range test, the leaderboard (N/A and failed counted, never averaged; -1 a real score), slices, the
answer-file combined score, and judge-human agreement (accuracy, Cohen's kappa, confusion) against FinanceBench's
human labels, checked against sklearn.

The two fault tests start from one home built once per module (a single in-scale judgment through
fct_judge_scores), each on its own copy."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

import duckdb
import polars as pl
import pytest
from sklearn.metrics import accuracy_score, cohen_kappa_score

from python_jobs.core.lake import Lake
from python_jobs.warehouse.dbt_runner import run_dbt
from support.cli import dbt_build, run_finrag
from support.fake_llm import Behaviour, FakeLLM
from support.judge_home import ORACLE, judge, key, oracle_qids, run_id_of
from support.shared_home import copy_home
from support.warehouse import warehouse_query


def land_judgment(home: Path, judge_run_id: str, raw: float) -> None:
    lake = Lake(home)
    lake.land([
        ("judge_runs", judge_run_id, pl.DataFrame([{"judge_run_id": judge_run_id, "answer_run_id": "a",
                                                     "judge_model": "m", "rubric_version": "judge_correctness_v1@x"}])),
        ("judgments", judge_run_id, pl.DataFrame([{"judge_run_id": judge_run_id, "question_id": "q1",
                                                    "metric": "correctness", "raw_score": raw, "status": "ok"}])),
    ])


SCORES_ONLY = ("--select", "+fct_judge_scores", "--indirect-selection", "cautious")


@pytest.fixture(scope="module")
def in_scale(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A home with one in-scale judgment (raw 2 of correctness' -1..2), built through fct_judge_scores; the tests
    copy it before they write."""
    home = tmp_path_factory.mktemp("in_scale") / "warehouse"
    land_judgment(home, "in_scale", 2.0)
    dbt_build(home, *SCORES_ONLY)
    return home


def test_off_scale_raw_score_fails_the_build(in_scale: Path, tmp_path: Path) -> None:
    home = copy_home(in_scale, tmp_path / "warehouse")
    assert warehouse_query(home, "select normalized_score from fct_judge_scores") == [(1.0,)]
    land_judgment(home, "off_scale", 5.0)  # the lake contract does not know scales: the build must catch it
    proc = run_finrag(home, "build", *SCORES_ONLY, check=False)
    assert proc.returncode != 0
    assert "column_rules_fct_judge_scores" in proc.stdout and "FAIL 1" in proc.stdout
    # the failing test's rows name the rule, the column, its bounds and how many rows are out of them
    [test_sql] = (home / "dbt_target" / "compiled").rglob("column_rules_fct_judge_*.sql")
    assert warehouse_query(home, test_sql.read_text()) == [("in_range", "normalized_score", "[0, 1]", 1)]


def test_a_null_in_a_required_column_or_a_repeated_key_fails_naming_the_column(in_scale: Path,
                                                                                tmp_path: Path) -> None:
    home = copy_home(in_scale, tmp_path / "warehouse")
    con = duckdb.connect(str(home / "finrag.duckdb"))
    # what a faulty model would write: its one row twice (a repeated key, null parts compared as values), with nulls
    con.execute("insert into fct_judge_scores select * from fct_judge_scores")
    con.execute("update fct_judge_scores set judge_model = null, metric = null")
    con.close()
    assert run_dbt(["test", "--select", "fct_judge_scores", "--store-failures"], home=home, quiet=True) != 0
    # one column_rules test for the model, failing with a row per broken rule: the null columns and the rows, the
    # key and how many of its values repeat
    [(failures,)] = warehouse_query(home, "select table_schema || '.' || table_name from information_schema.tables "
                                          "where table_schema like '%dbt_test__audit' "
                                          "and table_name like 'column_rules%'")
    assert warehouse_query(home, f"select rule, column_name, n_failing from {failures} order by 2") == [
        ("not_null", "judge_model", 2), ("unique", "judge_run_id, question_id, metric, repeat", 1),
        ("not_null", "metric", 2)]


def human_class(raw: float) -> str:
    return {2.0: "correct", 1.0: "correct", 0.0: "abstention", -1.0: "incorrect"}[raw]


def judge_class(raw: float) -> str:
    # docs/judges.md: the nearest correctness point, 1 and 2 both correct
    return "correct" if raw >= 0.5 else ("incorrect" if raw < -0.5 else "abstention")


def test_financebench_judge_run_marts_and_agreement(base: dict, wh: Path, tmp_path: Path) -> None:
    qids = oracle_qids(wh, 10)
    correctness = ['{"score": 2}', '{"score": -1}', '{"score": 0}', '{"score": 1.4}', '{"score": -0.7}',
                   '{"score": 0.3}', "looks right to me", '{"score": "N/A"}', '{"score": 2}', '{"score": -1}']
    faithfulness = ['{"score": -1}', '{"score": 1}', '{"score": 0.5}', '{"score": -1}', '{"score": 0}',
                    '{"score": 1}', '{"score": 1}', '{"score": 7}', '{"score": 0}', '{"score": -0.2}']
    acc = ['{"score": 2}', '{"score": 0}', '{"score": 1}', '{"score": 2}', '{"score": 0}',
           '{"score": 2}', '{"score": 1}', '{"score": 0}', '{"score": 2}', '{"score": 2}']
    script = {}
    for q, c, f, a in zip(qids, correctness, faithfulness, acc, strict=True):
        script[key(base, "correctness", q)] = c
        script[key(base, "faithfulness", q)] = f
        script[key(base, "acc", q)] = a
    script[key(base, "hal", qids[0])] = '{"score": -1, "rationale": "no claim"}'
    script["Metric: hallucination"] = '{"score": 0}'
    # OmniEval-style human labels for acc on the same answers
    omni = [2, 0, 2, 2, 1, 0, 1, 0, 2, 2]
    labels = tmp_path / "omni.jsonl"
    labels.write_text("".join(json.dumps({"answer_run_id": ORACLE, "question_id": q, "metric": "acc", "score": s})
                              + "\n" for q, s in zip(qids, omni, strict=True)))
    run_finrag(wh, "import-human-labels", str(labels), "--label-set", "omni_human")
    with FakeLLM(Behaviour(script=script)) as fake:
        jid = run_id_of(judge(wh, fake, "--answer-run", ORACLE, "--metrics", "correctness,faithfulness,acc,hal",
                              *[a for q in qids for a in ("--question-id", q)]))
    # what the checks below read (the judge marts and everything upstream of them), with their data tests
    dbt_build(wh, "--select", "+mart_judge_leaderboard", "+mart_judge_by_slice", "+mart_answer_file_scores",
              "+mart_answer_file_leaderboard", "+mart_judge_agreement", "+mart_judge_confusion",
              "--indirect-selection", "cautious")

    j = Lake(wh).read("judgments", where={"judge_run_id": jid})
    by = {(r["question_id"], r["metric"]): r for r in j.iter_rows(named=True)}
    assert by[(qids[6], "correctness")]["status"] == "failed" and by[(qids[7], "correctness")]["status"] == "failed"
    assert by[(qids[7], "faithfulness")]["status"] == "failed" and by[(qids[0], "hal")]["status"] == "not_applicable"

    # leaderboard: means over ok rows only, -1 enters as 0 on both answer-file metrics
    board = {r[0]: r[1:] for r in warehouse_query(wh, f"""
        select metric, mean, mean_raw, n_ok, n_not_applicable, n_failed, answer_model, eval_mode, judge_family
        from mart_judge_leaderboard where judge_run_id = '{jid}'""")}
    ok_c = [json.loads(c)["score"] for c in correctness if c.startswith("{") and c != '{"score": "N/A"}']
    assert board["correctness"][2:6] == (8, 0, 2, "gpt-4")
    assert board["correctness"][0] == pytest.approx(sum((s + 1) / 3 for s in ok_c) / 8)
    assert board["correctness"][1] == pytest.approx(sum(ok_c) / 8)
    ok_f = [json.loads(f)["score"] for f in faithfulness if f != '{"score": 7}']
    assert board["faithfulness"][2:5] == (9, 0, 1)
    assert board["faithfulness"][0] == pytest.approx(sum((s + 1) / 2 for s in ok_f) / 9)
    assert board["hal"][2:5] == (9, 1, 0) and board["hal"][0] == 0.0 and board["hal"][7] == "omnieval"
    assert board["correctness"][6:] == ("oracle", "answer_file")

    # slices: over ok rows; the dataset slice holds them all
    assert warehouse_query(wh, f"""select n from mart_judge_by_slice where judge_run_id = '{jid}'
        and dimension = 'dataset' and metric = 'correctness'""") == [(8,)]
    assert warehouse_query(wh, f"""select sum(n) from mart_judge_by_slice where judge_run_id = '{jid}'
        and dimension = 'question_type' and metric = 'faithfulness'""") == [(9,)]

    # the combined answer-file score: mean of the normalised pair, both ok
    combined = dict(warehouse_query(wh, f"select question_id, combined_score from mart_answer_file_scores "
                                        f"where judge_run_id = '{jid}'"))
    c0, f0 = json.loads(correctness[0])["score"], json.loads(faithfulness[0])["score"]
    assert combined[qids[0]] == pytest.approx(((c0 + 1) / 3 + (f0 + 1) / 2) / 2)
    assert combined[qids[6]] is None and combined[qids[7]] is None
    (mean_combined, n_combined), = warehouse_query(
        wh, f"select mean_combined, n_combined from mart_answer_file_leaderboard where judge_run_id = '{jid}'")
    assert n_combined == 8 and mean_combined == pytest.approx(sum(v for v in combined.values() if v is not None) / 8)

    # agreement with FinanceBench's human labels (Correct 2 / Incorrect -1 / Refusal 0), against sklearn
    human = Lake(wh).read("human_labels", where={"label_set": "financebench_human", "answer_run_id": ORACLE})
    hraw = dict(zip(human["question_id"], human["raw_score"], strict=True))
    pairs = [(judge_class(by[(q, "correctness")]["raw_score"]), human_class(hraw[q]))
             for q in qids if by[(q, "correctness")]["status"] == "ok"]
    jc, hc = [p[0] for p in pairs], [p[1] for p in pairs]
    rows = warehouse_query(wh, """select grain, n, n_not_scored, accuracy, kappa from mart_judge_agreement
        where label_set = 'financebench_human' and metric = 'correctness' and judge_model = 'fake-model'
        order by grain""")
    assert [r[0] for r in rows] == ["judge_model", "judge_model_overall", "judge_run"]
    for _, n, n_not, accuracy, kappa in rows:
        assert (n, n_not) == (8, 2)
        assert accuracy == pytest.approx(accuracy_score(hc, jc))
        assert kappa == pytest.approx(cohen_kappa_score(hc, jc))
    cells = dict(((r[0], r[1]), r[2]) for r in warehouse_query(wh, f"""select judge_class, human_class, n
        from mart_judge_confusion where judge_run_id = '{jid}' and label_set = 'financebench_human'
        and metric = 'correctness'"""))
    assert len(cells) == 9 and {k: v for k, v in cells.items() if v} == dict(Counter(pairs))
    # every agreement row has its confusion matrix, counted from the same pairs: its cells sum to the row's n
    sums = dict(warehouse_query(wh, """select grain, sum(n) from mart_judge_confusion
        where label_set = 'financebench_human' and metric = 'correctness' and judge_model = 'fake-model'
        group by grain"""))
    assert sums == {"judge_run": 8, "judge_model": 8, "judge_model_overall": 8}

    # OmniEval-style labels: acc classes are its scale points
    apairs = [(str(json.loads(a)["score"]), str(s)) for a, s in zip(acc, omni, strict=True)]
    (n, accuracy, kappa), = warehouse_query(wh, f"""select n, accuracy, kappa from mart_judge_agreement
        where grain = 'judge_run' and judge_run_id = '{jid}' and label_set = 'omni_human' and metric = 'acc'""")
    assert n == 10 and accuracy == pytest.approx(accuracy_score([p[1] for p in apairs], [p[0] for p in apairs]))
    assert kappa == pytest.approx(cohen_kappa_score([p[1] for p in apairs], [p[0] for p in apairs]))

"""`finrag judge` and `finrag import-human-labels`, end to end as subprocesses against the scripted OpenAI-compatible
server (tests/support/fake_llm.py), over FinanceBench's real questions and human-labelled answer runs."""

from __future__ import annotations

import json
from pathlib import Path

import polars as pl

from python_jobs.core.lake import Lake
from python_jobs.core.metrics import load_metrics
from python_jobs.stats.text_metrics import parse_amounts
from support.cli import run_finrag
from support.fake_llm import Behaviour, FakeLLM
from support.judge_home import LABELS, ORACLE, judge, key, oracle_qids, run_id_of
from support.paths import PROJECT

CLOSED = "gpt-4_closedBook"


def judgments(home: Path, judge_run_id: str) -> dict[tuple[str, str], dict]:
    df = Lake(home).read("judgments", where={"judge_run_id": judge_run_id})
    return {(r["question_id"], r["metric"]): r for r in df.iter_rows(named=True)}


def test_replies_are_read_strictly_and_rerun_retries_only_failures(base: dict, wh: Path) -> None:
    q1, q2, q3 = oracle_qids(wh, 3)
    script = {
        # ok scores, code fence and prose around one object tolerated; -1 is a real score for both answer-file metrics
        key(base, "correctness", q1): '```json\n{"score": -1, "rationale": "wrong number"}\n```',
        key(base, "faithfulness", q1): 'Verdict: {"score": -1, "rationale": "unsupported"} done',
        key(base, "acc", q1): '{"score": 2, "rationale": "right"}',
        key(base, "com", q1): '{"score": "N/A", "rationale": "single point"}',  # N/A allowed for COM
        key(base, "hal", q1): '{"score": -1}',  # HAL's sentinel: not applicable
        key(base, "utl", q1): '{"score": "N/A"}',  # UTL has no N/A: failed
        key(base, "correctness", q2): '{"score": 1.5, "rationale": "mostly"}',  # continuous
        key(base, "faithfulness", q2): '{"score": 0.25, "rationale": "some support", "extra": 1}',
        key(base, "acc", q2): '{"score": 1.5}',  # discrete metric, not an integer
        key(base, "com", q2): '{"score": 3, "rationale": "too high"}',  # off the scale
        key(base, "hal", q2): '{"score": 1} {"score": 0}',  # two objects
        key(base, "utl", q2): "I would say 2",  # no JSON
        key(base, "faithfulness", q3): '{"score": 2}',  # off faithfulness' scale (max 1)
        key(base, "acc", q3): '{"rationale": "forgot the score"}',
        key(base, "com", q3): '{"score": true}',
        key(base, "hal", q3): '{"score": "high"}',
        key(base, "utl", q3): '{"score": 0, "rationale": "ignores them"}',
        "Metric: numerical accuracy": '{"score": 1, "rationale": "same numbers"}',
    }
    b = Behaviour(script=script, always={key(base, "correctness", q3): "500"})
    args = ("--answer-run", ORACLE, "--question-id", q1, "--question-id", q2, "--question-id", q3)
    with FakeLLM(b) as fake:
        proc = judge(wh, fake, *args)
        jid = run_id_of(proc)
        j = judgments(wh, jid)
        n_first = len(b.requests)
        again = judge(wh, fake, *args)
        n_second = len(b.requests) - n_first
    specs = load_metrics()
    assert set(j) == {(q, m) for q in (q1, q2, q3) for m in specs}  # every judgment lands, with a status

    def st(q: str, m: str) -> tuple:
        r = j[(q, m)]
        return r["status"], r["raw_score"]

    assert st(q1, "correctness") == ("ok", -1.0) and j[(q1, "correctness")]["rationale"] == "wrong number"
    assert st(q1, "faithfulness") == ("ok", -1.0)
    assert st(q1, "acc") == ("ok", 2.0)
    assert st(q1, "com") == ("not_applicable", -1.0)
    assert st(q1, "hal") == ("not_applicable", -1.0)
    assert st(q1, "utl") == ("failed", None) and "utl has no not-applicable value" in j[(q1, "utl")]["error"]
    assert st(q2, "correctness") == ("ok", 1.5)
    assert st(q2, "faithfulness") == ("ok", 0.25)
    assert st(q2, "acc")[0] == "failed" and "off the acc scale" in j[(q2, "acc")]["error"]
    assert st(q2, "com")[0] == "failed"
    assert "score 3 is off the com scale; allowed: one of 0, 1, 2" in j[(q2, "com")]["error"]
    assert st(q2, "hal")[0] == "failed" and "2 JSON objects" in j[(q2, "hal")]["error"]
    assert st(q2, "utl")[0] == "failed" and "no JSON object" in j[(q2, "utl")]["error"]
    assert st(q3, "correctness") == ("failed", None)
    assert "LLM call failed: InternalServerError 500" in j[(q3, "correctness")]["error"]
    assert st(q3, "faithfulness")[0] == "failed" and "allowed: a number in [-1, 1]" in j[(q3, "faithfulness")]["error"]
    assert st(q3, "acc")[0] == "failed" and "field 'score'" in j[(q3, "acc")]["error"]
    assert st(q3, "com")[0] == "failed" and st(q3, "hal")[0] == "failed"
    assert st(q3, "utl") == ("ok", 0.0)
    for q in (q1, q2, q3):  # NAC: judged only when the reference answer holds a number
        numeric = bool(parse_amounts(base["ref"][q]))
        assert st(q, "nac") == (("ok", 1.0) if numeric else ("not_applicable", None))
    for r in j.values():  # a failure never carries a score; every failure says why
        assert (r["status"] == "failed") == (r["error"] is not None)
        assert r["status"] != "failed" or r["raw_score"] is None
    n_calls = sum(1 for q in (q1, q2, q3) for m in specs if not (m == "nac" and not parse_amounts(base["ref"][q])))
    assert n_first == n_calls + 1  # the 500 was tried twice (--max-attempts 2)
    # the re-run: same id, same rows; every call from the cache except the failed one, which is tried again
    assert run_id_of(again) == jid and n_second == 2
    assert len(judgments(wh, jid)) == len(j)
    assert "ok" in proc.stderr and "not_applicable" in proc.stderr and "failed" in proc.stderr
    run = Lake(wh).read("judge_runs", where={"judge_run_id": jid}).row(0, named=True)
    assert run["answer_run_id"] == ORACLE and run["judge_model"] == "fake-model"
    assert run["metrics"] == ",".join(specs) and run["rubric_version"].count("judge_") == len(specs)
    assert json.loads(run["params"])["max_passages"] == 10


def test_rerun_makes_no_new_calls_and_rubric_edit_is_a_new_run(base: dict, wh: Path, tmp_path: Path) -> None:
    qids = oracle_qids(wh, 3)
    b = Behaviour(script={"Metric: correctness": '{"score": 2, "rationale": "ok"}'})
    qargs = [a for q in qids for a in ("--question-id", q)]
    with FakeLLM(b) as fake:
        first = run_id_of(judge(wh, fake, "--answer-run", ORACLE, "--metrics", "correctness", *qargs))
        n = len(b.requests)
        second = run_id_of(judge(wh, fake, "--answer-run", ORACLE, "--metrics", "correctness", *qargs))
        assert second == first and len(b.requests) == n == 3
        edited = tmp_path / "judge_correctness_v2.txt"
        edited.write_text((PROJECT / "prompts" / "judge_correctness_v1.txt").read_text()
                          + "Be strict.\n")
        third = run_id_of(judge(wh, fake, "--answer-run", ORACLE, "--metrics", "correctness", "--rubric",
                                f"correctness={edited}", *qargs))
    assert third != first and len(b.requests) == 6
    assert "judge_correctness_v2@" in Lake(wh).read("judge_runs", where={"judge_run_id": third})["rubric_version"][0]
    assert sorted(Lake(wh).partitions("judgments")) == sorted({first, third})  # placeholders are not listed


def test_repeats_land_one_judgment_each_with_its_seed_from_the_cache_on_rerun(base: dict, wh: Path) -> None:
    """--repeats 3: every answer x metric has 3 rows in the one judge run, each from its own sampled request (seed r,
    temperature 0.7); the not_applicable decisions made without a call are written once per repeat; a re-run makes
    no call. --repeats 1 is the run a plain `finrag judge` makes: same id, same requests (no seed, temperature 0)."""
    q1, q2 = oracle_qids(wh, 2)
    # the scripted judge changes its mind on q1 between seeds; on q2 it does not
    b = Behaviour(script={key(base, "correctness", q1): ['{"score": 2}', '{"score": -1}', '{"score": 2}'],
                          "Metric: correctness": '{"score": 1, "rationale": "same"}',
                          "Metric: numerical accuracy": '{"score": 1}'})
    args = ("--answer-run", ORACLE, "--metrics", "correctness,nac", "--question-id", q1, "--question-id", q2)
    n_nac = sum(1 for q in (q1, q2) if parse_amounts(base["ref"][q]))  # NAC is judged only with a numeric reference
    with FakeLLM(b) as fake:
        single = run_id_of(judge(wh, fake, *args))
        n_single = len(b.requests)
        assert run_id_of(judge(wh, fake, *args, "--repeats", "1")) == single and len(b.requests) == n_single
        repeated = run_id_of(judge(wh, fake, *args, "--repeats", "3"))
        sampled = b.requests[n_single:]
        assert run_id_of(judge(wh, fake, *args, "--repeats", "3")) == repeated
        n_after = len(b.requests)
        no_repeats = judge(wh, fake, *args, "--temperature", "0.5", check=False)
    assert n_single == 2 + n_nac and all("seed" not in r and r["temperature"] == 0 for r in b.requests[:n_single])
    assert len(sampled) == 3 * n_single and n_after == n_single + len(sampled)  # the re-run: every call cached
    assert sorted(r["seed"] for r in sampled) == sorted([1, 2, 3] * n_single)
    assert {r["temperature"] for r in sampled} == {0.7}
    assert repeated != single
    params = json.loads(Lake(wh).read("judge_runs", where={"judge_run_id": repeated})["params"][0])
    assert (params["repeats"], params["temperature"]) == (3, 0.7)
    assert "repeats" not in json.loads(Lake(wh).read("judge_runs", where={"judge_run_id": single})["params"][0])
    rows = Lake(wh).read("judgments", where={"judge_run_id": repeated}).sort("question_id", "metric", "repeat")
    assert rows.height == 2 * 2 * 3
    for (qid, metric), group in rows.group_by(["question_id", "metric"], maintain_order=True):
        assert group["repeat"].to_list() == [1, 2, 3]
        if metric == "nac" and not parse_amounts(base["ref"][qid]):  # decided without a call, once per repeat
            assert group["status"].to_list() == ["not_applicable"] * 3
            assert group["rationale"].n_unique() == 1
    scores = {(r["question_id"], r["metric"], r["repeat"]): r["raw_score"] for r in rows.iter_rows(named=True)}
    assert [scores[(q1, "correctness", r)] for r in (1, 2, 3)] == [2.0, -1.0, 2.0]
    assert [scores[(q2, "correctness", r)] for r in (1, 2, 3)] == [1.0, 1.0, 1.0]
    assert Lake(wh).read("judgments", where={"judge_run_id": single})["repeat"].to_list() == [1] * (2 * 2)
    assert no_repeats.returncode == 2 and "field 'temperature'" in no_repeats.stderr


def test_closed_book_passage_metrics_are_not_applicable_without_a_call(base: dict, wh: Path) -> None:
    b = Behaviour(script={"Metric:": '{"score": 1, "rationale": "x"}'})
    with FakeLLM(b) as fake:
        jid = run_id_of(judge(wh, fake, "--answer-run", CLOSED, "--metrics", "hal,utl,faithfulness", "--limit", "4"))
        assert b.requests == []
        default = run_id_of(judge(wh, fake, "--answer-run", CLOSED, "--limit", "2"))
    j = judgments(wh, jid)
    assert len(j) == 12 and {r["status"] for r in j.values()} == {"not_applicable"}
    assert all(r["raw_score"] is None and "no passages" in r["rationale"] for r in j.values())
    # by default a closed-book run is judged only on the metrics that apply to it
    run = Lake(wh).read("judge_runs", where={"judge_run_id": default}).row(0, named=True)
    assert run["metrics"] == "acc,com,nac,correctness"


def test_judge_sees_300_words_and_10_passages(base: dict, wh: Path, tmp_path: Path) -> None:
    qid = oracle_qids(wh, 1)[0]
    answer = " ".join(f"w{i}" for i in range(400))
    passages = [{"passage": f"passage number {i} says revenue grew.", "doc_IDs": ["DOC"]} for i in range(1, 13)]
    f = tmp_path / "long_run.jsonl"
    f.write_text(json.dumps({"id": qid, "question": base["text"][qid], "answer": answer, "passages": passages,
                             "final_prompt": "p"}) + "\n")
    run_finrag(wh, "import-answers", str(f), "--dataset", "financebench", "--model", "m")
    b = Behaviour(script={"Metric:": '{"score": 1, "rationale": "x"}'})
    with FakeLLM(b) as fake:
        judge(wh, fake, "--answer-run", "long_run", "--metrics", "correctness,faithfulness,hal")
    prompts = {m: next(r["messages"][-1]["content"] for r in b.requests if LABELS[m] in r["messages"][-1]["content"])
               for m in ("correctness", "faithfulness", "hal")}
    assert "w299" in prompts["correctness"] and "w300" not in prompts["correctness"]
    for m in ("faithfulness", "hal"):
        assert "passage number 10 says" in prompts[m] and "passage number 11" not in prompts[m]
        assert "[10] passage number 10" in prompts[m]


def test_a_reply_cut_at_max_tokens_says_so(base: dict, wh: Path) -> None:
    qid = oracle_qids(wh, 1)[0]
    # the fake server counts words as tokens: 11 words reach --max-tokens 8, and no JSON was closed
    b = Behaviour(script={"Metric:": 'I think that this answer is correct and relevant to it {"score"'})
    with FakeLLM(b) as fake:
        jid = run_id_of(judge(wh, fake, "--answer-run", ORACLE, "--metrics", "correctness", "--question-id", qid,
                              "--max-tokens", "8"))
    (row,) = judgments(wh, jid).values()
    assert row["status"] == "failed" and row["raw_score"] is None
    assert row["error"].startswith("no JSON object in the reply") and row["error"].endswith(
        "(the reply was cut at --max-tokens 8)")


def test_a_judge_run_whose_every_call_failed_lands_and_exits_non_zero(base: dict, wh: Path) -> None:
    q1, q2 = oracle_qids(wh, 2)
    with FakeLLM(Behaviour(always={"": "500"})) as fake:  # every request: HTTP 500
        proc = judge(wh, fake, "--answer-run", ORACLE, "--metrics", "correctness,acc", "--question-id", q1,
                     "--question-id", q2, check=False)
    assert proc.returncode == 1 and proc.stdout == ""
    # judges ask for the verdict's JSON schema (structured output where the endpoint has it)
    assert {r["response_format"]["json_schema"]["name"] for r in fake.behaviour.requests} == {"judge_verdict"}
    assert "every LLM call of judge run" in proc.stderr
    assert "failed (4 of 4); the first error: InternalServerError 500" in proc.stderr
    (judge_run,) = Lake(wh).partitions("judgments")  # landed with its errors: nothing lost
    rows = judgments(wh, judge_run)
    assert len(rows) == 4 and all(r["status"] == "failed" and "500" in r["error"] for r in rows.values())


def test_unknown_run_metric_or_question_is_an_input_error(base: dict, wh: Path) -> None:
    with FakeLLM(Behaviour()) as fake:
        bad_run = judge(wh, fake, "--answer-run", "nope", check=False)
        bad_metric = judge(wh, fake, "--answer-run", ORACLE, "--metrics", "correctness,fluency", check=False)
        bad_q = judge(wh, fake, "--answer-run", ORACLE, "--question-id", "financebench_id_99999", check=False)
        assert fake.behaviour.requests == []
    assert bad_run.returncode == 2 and "no answer run 'nope'" in bad_run.stderr
    assert bad_metric.returncode == 2 and "unknown metric 'fluency'" in bad_metric.stderr
    assert bad_q.returncode == 2 and "financebench_id_99999" in bad_q.stderr
    assert Lake(wh).partitions("judgments") == []


def test_import_human_labels_good_and_bad_input(base: dict, wh: Path, tmp_path: Path) -> None:
    q1, q2 = oracle_qids(wh, 2)
    good = [
        {"answer_run_id": ORACLE, "question_id": q1, "metric": "acc", "score": 2, "annotator": "a1", "label": "right"},
        {"answer_run_id": ORACLE, "question_id": q2, "metric": "acc", "score": 0, "annotator": "a1"},
        {"answer_run_id": ORACLE, "question_id": q1, "metric": "com", "score": "N/A", "annotator": "a2"},
        {"answer_run_id": ORACLE, "question_id": q2, "metric": "com", "score": -1},
        {"answer_run_id": ORACLE, "question_id": q1, "metric": "faithfulness", "score": -0.5},
    ]
    f = tmp_path / "omni_labels.jsonl"
    f.write_text("".join(json.dumps(x) + "\n" for x in good))
    run_finrag(wh, "import-human-labels", str(f), "--label-set", "omni_human")
    run_finrag(wh, "import-human-labels", str(f), "--label-set", "omni_human")  # idempotent
    labels = Lake(wh).read_partition("human_labels", "omni_human").sort(["metric", "question_id"])
    assert labels.select("metric", "question_id", "raw_score").rows() == [
        ("acc", q1, 2.0), ("acc", q2, 0.0), ("com", q1, -1.0), ("com", q2, -1.0), ("faithfulness", q1, -0.5)]
    assert labels.filter(pl.col("metric") == "com")["label"].to_list() == ["N/A", None]
    before = Lake(wh).read("human_labels").height

    line1 = json.dumps(good[0])
    cases = {
        "metric": {"answer_run_id": ORACLE, "question_id": q1, "metric": "fluency", "score": 1},
        "score": {"answer_run_id": ORACLE, "question_id": q1, "metric": "acc", "score": 3},
        "answer_run_id": {"answer_run_id": "no_such_run", "question_id": q1, "metric": "acc", "score": 1},
        "question_id": {"answer_run_id": ORACLE, "question_id": "financebench_id_99999", "metric": "acc", "score": 1},
        "scroe": {"answer_run_id": ORACLE, "question_id": q2, "metric": "acc", "scroe": 1, "score": 1},
    }
    for field, obj in cases.items():
        bad = tmp_path / f"bad_{field}.jsonl"
        bad.write_text(line1 + "\n" + json.dumps(obj) + "\n")
        proc = run_finrag(wh, "import-human-labels", str(bad), "--label-set", "bad_set", check=False)
        assert proc.returncode == 2, proc.stderr
        assert f"file {bad}, line 2, field '{field}'" in proc.stderr, proc.stderr
    for score, why in (("N/A", "acc has no not-applicable value"), (-1, "off the acc scale")):
        bad = tmp_path / "bad_na.jsonl"
        bad.write_text(json.dumps({**good[0], "score": score}) + "\n")
        proc = run_finrag(wh, "import-human-labels", str(bad), "--label-set", "bad_set", check=False)
        assert proc.returncode == 2 and "line 1, field 'score'" in proc.stderr and why in proc.stderr, proc.stderr
    dup = tmp_path / "dup.jsonl"
    dup.write_text(line1 + "\n" + line1 + "\n")
    proc = run_finrag(wh, "import-human-labels", str(dup), "--label-set", "bad_set", check=False)
    assert proc.returncode == 2 and "line 2" in proc.stderr and "duplicate" in proc.stderr
    assert Lake(wh).read("human_labels").height == before and "bad_set" not in Lake(wh).partitions("human_labels")

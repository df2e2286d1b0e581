"""One warehouse home for the dashboard tests, built through the real CLI, once per test session (also across
pytest-xdist workers: support/shared_home.py, the first builds it under a file lock, the others reuse it).

- demo_synthetic: `finrag synth` (2 companies) → ingest → chunk 256/32 → bm25 full + bm25 oracle_page → a sweep of
  chunk size 128 / 256 x bm25 / keywords (its baseline the bm25 run) → answers
  closed-book and RAG against tests/support/fake_llm.py (the RAG run answers one question with its gold answer, so
  run vs run has a flip). The synthetic corpus carries no OmniEval labels: its questions are re-landed (same load id,
  through the lake API) with a topic path from the OmniEval seed and a task, as an OmniEval-style load would carry
  them, so the topic x task matrix has cells.
- financebench (real files): questions and document list, two real human-labelled answer runs from
  ../shared/data/financebench/results, and a judge run of correctness over 30 answers of one of them (scripted
  judge: the FakeLLM replies by substring), so the judge leaderboard and agreement pages have data.
- the three states of a judged mean (mart_judge_trust), the cheapest way (no LLM, no extra build): the FakeLLM judge
  run above agrees with FinanceBench's labels no better than chance (kappa about 0, its interval holds 0); a second
  judge run over the other labelled run, landed directly through `Lake.land` (correctness copied from FinanceBench's
  labels with two answers flipped, and faithfulness), a few human labels of that run in a label set of their own
  (`finrag import-human-labels`, 12 of its 30 judged answers) and `finrag calibrate` make its correctness
  calibrated (PPI++, n = 12 of 30) and leave its faithfulness uncalibrated (no human labels faithfulness).
- `finrag build` (dbt build of every model, without the data / unit tests, + publish).

Copies for the tests that must write (dbt docs generate, a build while the dashboard serves) are made right after
the build, so no test ever writes the shared home.
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import polars as pl
import pytest

from python_jobs.core.contracts import contract
from python_jobs.core.lake import Lake
from python_jobs.sources.financebench import LABEL_SCORES  # FinanceBench's label -> correctness score
from support.cli import MODELS_ONLY, run_finrag
from support.fake_llm import Behaviour, FakeLLM
from support.paths import PROJECT, SHARED_DATA
from support.shared_home import copy_home, shared_home

DATASET = "demo_synthetic"
# the marts, not the data and unit tests of every model: those are other suites' business
# (tests/integration/test_dbt_project.py and each model's own tests), and they double the build time
BUILD_ARGS = ("--quiet", *MODELS_ONLY)
FB_RUNS = ("gpt-4_closedBook", "gpt-4-1106-preview_oracle")
JUDGED_RUN = "gpt-4_closedBook"
# the landed judge run (no LLM) over the other labelled run, its spot-check label set and what it judges
CALIBRATED_RUN = FB_RUNS[1]  # gpt-4-1106-preview_oracle
LANDED_JUDGE = f"{CALIBRATED_RUN}-judge-landed"
LANDED_JUDGE_MODEL = "landed-judge"
SPOT_CHECK = "spot_check"
# (topic path, task) given to the synthetic questions in turn: two level-1 topics, three level-2, two tasks
TOPIC_TASKS = [
    (["银行业务", "零售银行"], "extractive"),
    (["银行业务", "商业银行"], "multi_hop"),
    (["投资", "股票市场"], "extractive"),
]

SWEEP_GRID = f"""\
dataset: {DATASET}
fixed:
  k: 5
  chunk_overlap: 32
parameters:
  chunk_size: [128, 256]
  retriever: [bm25, keywords]
baseline: {{chunk_size: 256, retriever: bm25}}
"""


@dataclass(frozen=True)
class DashHome:
    home: Path  # shared: read it, never write it
    docs_home: Path  # a copy for `dbt docs generate`
    lock_home: Path  # a copy for the build-while-serving test
    facts: dict  # run ids and other ids the tests look for


def _llm(fake: FakeLLM) -> dict[str, str]:
    return {"FINRAG_LLM_BASE_URL": fake.base_url, "FINRAG_LLM_MODEL": "fake-model",
            "FINRAG_LLM_API_KEY": "sk-dashboard-test-not-a-key"}


def _existing_topics() -> list[tuple[list[str], str]]:
    """The TOPIC_TASKS paths must be real OmniEval topics (the seed gives them English names)."""
    import csv
    ids = {row["topic_id"] for row in csv.DictReader((PROJECT / "seeds" /
                                                       "omnieval_topics.csv").open(encoding="utf-8"))}
    missing = ["/".join(path) for path, _ in TOPIC_TASKS if "/".join(path) not in ids]
    assert not missing, f"not OmniEval topics (seeds/omnieval_topics.csv): {missing}"
    return TOPIC_TASKS


def land_calibrated_judge(home: Path, root: Path, fin: Callable[..., str]) -> None:
    """The judged means that are calibrated and uncalibrated: a judge run over CALIBRATED_RUN's first 30 answers,
    landed as a judge would (correctness = FinanceBench's own label with the 5th and 8th answers flipped, so its kappa
    against the humans is high but not 1; faithfulness cycling 1, 1, 0, 1, -1, judged twice), human labels of every
    other one of its first 24 answers in SPOT_CHECK (FinanceBench's labels again), and the pairing that makes its
    correctness the predictor of SPOT_CHECK's correctness: PPI++ over 12 labelled and 18 unlabelled answers."""
    rows = sorted((json.loads(line) for line in (SHARED_DATA / "financebench" / "results" / f"{CALIBRATED_RUN}.jsonl")
                   .read_text().splitlines() if line.strip()), key=lambda r: r["financebench_id"])[:30]
    human = [LABEL_SCORES[r["label"]] for r in rows]
    flipped = {4: -1.0, 7: 2.0}
    correctness = [flipped.get(i, score) for i, score in enumerate(human)]
    assert [human[i] for i in flipped] == [2.0, -1.0]  # the flips are disagreements
    faithfulness = [(1.0, 1.0, 0.0, 1.0, -1.0)[i % 5] for i in range(len(rows))]
    # faithfulness judged twice (the judge's noise floor, mart_judge_reliability): the second repeat says -1 where the
    # first said 1 on every sixth answer, so those answers' verdicts flip
    again = [-1.0 if i % 6 == 0 and score == 1.0 else score for i, score in enumerate(faithfulness)]
    rubrics = {"correctness": "judge_correctness_v1@landed", "faithfulness": "judge_faithfulness_v1@landed"}
    run = contract("judge_runs").frame([{
        "judge_run_id": LANDED_JUDGE, "answer_run_id": CALIBRATED_RUN, "judge_model": LANDED_JUDGE_MODEL,
        "rubric_version": ",".join(rubrics.values()), "metrics": ",".join(rubrics),
        "params": json.dumps({"metrics": list(rubrics), "landed_by": "tests/support/dashboard_home.py"})}])
    judgments = contract("judgments").frame([
        {"judge_run_id": LANDED_JUDGE, "question_id": r["financebench_id"], "metric": metric, "repeat": repeat,
         "rubric": rubrics[metric], "raw_score": scores[i], "rationale": "landed", "status": "ok"}
        for metric, repeat, scores in (("correctness", 1, correctness), ("faithfulness", 1, faithfulness),
                                       ("faithfulness", 2, again))
        for i, r in enumerate(rows)])
    Lake(home).land([("judge_runs", LANDED_JUDGE, run), ("judgments", LANDED_JUDGE, judgments)])
    labels = root / "spot_check.jsonl"
    labels.write_text("".join(json.dumps({
        "answer_run_id": CALIBRATED_RUN, "question_id": r["financebench_id"], "metric": "correctness",
        "score": int(LABEL_SCORES[r["label"]]), "annotator": "spot-check", "label": r["label"]}) + "\n"
        for r in rows[:24:2]))
    fin("import-human-labels", str(labels), "--label-set", SPOT_CHECK)
    fin("calibrate", "--label-set", SPOT_CHECK, "--human-metric", "correctness", "--predictor", "correctness")


def build(root: Path) -> dict:
    home = root / "warehouse"
    def fin(*args: str, env: dict[str, str] | None = None) -> str:
        return run_finrag(home, *args, env=env).stdout
    corpus = root / "synthetic"
    fin("synth", "--out", str(corpus), "--seed", "0", "--companies", "2", "--questions-per-doc", "3")
    fin("ingest", "financebench", "--questions", str(corpus / "questions.jsonl"), "--documents",
        str(corpus / "documents.jsonl"), "--pdfs", str(corpus / "pdfs"), "--dataset", DATASET)
    lake = Lake(home)
    questions = lake.read_partition("questions", DATASET).sort("question_id")
    topics = _existing_topics()
    tagged = questions.with_columns(
        pl.Series("topic_path", [topics[i % len(topics)][0] for i in range(questions.height)],
                  dtype=pl.List(pl.String)),
        pl.Series("task", [topics[i % len(topics)][1] for i in range(questions.height)], dtype=pl.String),
    ).drop("created_at")
    lake.land_one("questions", DATASET, tagged)
    fin("chunk", "--dataset", DATASET, "--preset", "256/32")
    bm25 = fin("retrieve", "--retriever", "bm25", "--dataset", DATASET, "--k", "5").strip()
    oracle = fin("retrieve", "--retriever", "bm25", "--dataset", DATASET, "--k", "5", "--condition",
                 "oracle_page").strip()
    # a small sweep (no model to load): 2 chunk sizes x BM25 / keyword expansion, its baseline the bm25 run above
    # (the same configuration: the sweep skips it), for the sweep page
    grid = root / "sweep.yaml"
    grid.write_text(SWEEP_GRID)
    sweep = fin("sweep", str(grid)).strip()
    q0 = questions.row(0, named=True)
    gold = q0["reference_answers"][0]

    # real FinanceBench questions (no PDFs needed for answers and labels) and two real answer runs with labels
    fb = SHARED_DATA / "financebench"
    empty_pdfs = root / "no_pdfs"
    empty_pdfs.mkdir()
    fin("ingest", "financebench", "--questions", str(fb / "data" / "financebench_open_source.jsonl"),
        "--documents", str(fb / "data" / "financebench_document_information.jsonl"), "--pdfs", str(empty_pdfs))
    fin("ingest", "financebench-answers", *[str(fb / "results" / f"{r}.jsonl") for r in FB_RUNS])
    fb_questions = lake.read("questions", where={"dataset": "financebench"}).sort("question_id")
    fb_answers = lake.read_partition("answers", JUDGED_RUN).sort("question_id").head(30)
    texts = dict(zip(fb_questions["question_id"], fb_questions["question"], strict=True))
    # the scripted judge: -1 for the first 10 judged answers, 2 for the others (first matching rule wins)
    wrong = {texts[q]: '{"score": -1, "rationale": "scripted: incorrect"}' for q in fb_answers["question_id"][:10]}
    script = {**wrong, "Metric: correctness": '{"score": 2, "rationale": "scripted: correct"}',
              # the synthetic RAG run answers q0 with its gold answer, closed book does not (a flip): only the RAG
              # prompt has passages before the question
              f"\n\nQuestion: {q0['question']}": gold}

    with FakeLLM(Behaviour(script=script)) as fake:
        env = _llm(fake)
        closed = fin("answer", "--closed-book", "--dataset", DATASET, "--timeout", "5", env=env).strip()
        rag = fin("answer", "--retrieval-run", bm25, "--k", "3", "--timeout", "5", env=env).strip()
        judge_out = fin("judge", "--answer-run", JUDGED_RUN, "--metrics", "correctness",
                        *[a for q in fb_answers["question_id"] for a in ("--question-id", q)], "--timeout", "5",
                        env=env)
    judge_run = judge_out.strip()
    land_calibrated_judge(home, root, fin)
    fin("build", *BUILD_ARGS)
    return {"bm25": bm25, "oracle": oracle, "closed": closed, "rag": rag, "judge": judge_run, "sweep": sweep,
            "flip_question": q0["question_id"], "fb_runs": list(FB_RUNS), "judged_run": JUDGED_RUN,
            "landed_judge": LANDED_JUDGE, "calibrated_run": CALIBRATED_RUN, "spot_check": SPOT_CHECK}


def dashboard_home(tmp_path_factory: pytest.TempPathFactory) -> DashHome:
    """The home, built once per session (the `dash` fixture, tests/integration/dashboard/conftest.py), with the two
    copies beside it. FINRAG_DASHBOARD_FIXTURE_DIR reuses (or builds once into) a fixed directory when iterating on
    the tests."""
    def build_with_copies(home: Path) -> dict:
        facts = build(home.parent)
        for copy in ("docs", "lock"):
            copy_home(home, home.parent / f"warehouse_{copy}")
        return facts

    fixed = os.environ.get("FINRAG_DASHBOARD_FIXTURE_DIR")
    home, facts = shared_home(tmp_path_factory, "dashboard", build_with_copies, fixed=Path(fixed) if fixed else None)
    return DashHome(home, home.parent / "warehouse_docs", home.parent / "warehouse_lock", facts)

"""`finrag demo`: the main job end to end on the embedded defaults.

synthesise a corpus (or take FinanceBench) → ingest → chunk → index → retrieve (several retrievers and the oracle
conditions) → on the synthetic corpus, a sweep of 2 chunk sizes x 3 retrievers (`finrag sweep`; the demo's own
chunking's three runs are already there, so it chunks and embeds the other size and runs three) → answer
(closed-book and RAG, with the embedded SmolLM2 unless an endpoint is configured) → generate OmniEval-style QA over
the corpus and retrieve on it → judge the RAG answers → FinanceBench's human-labelled gpt-4_oracle answers judged
for agreement (when the shared data is there) → dbt build (and publish the marts) → leaderboards. Each step is the
real `finrag` verb run as its own process (no job imports another), so the demo is exactly what a user would type.
Without an endpoint, one embedded LLM server is started for all the LLM steps (loading it costs ~60 s), and stopped
at the end.
"""

from __future__ import annotations

import os
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager

from python_jobs.core.console import say
from python_jobs.core.errors import JobError
from python_jobs.llm.config import BASE_URL_ENV, MODEL_ENV
from python_jobs.llm.server import EMBEDDED_MODEL, start_embedded_server

AGREEMENT_RUN = "gpt-4_oracle"  # a FinanceBench answer run with human labels
DEMO_JUDGE_METRICS = "acc,utl,hal,correctness,faithfulness"
# the human-labelled answers are judged on the metric the people labelled (agreement) and on acc; both, and the
# answers' numeric match, are declared predictors of the human label (`finrag calibrate`), so the printout shows a
# judged mean in each state: the RAG answers' uncalibrated, acc calibrated, correctness against its kappa
AGREEMENT_METRICS = "correctness,acc"
CALIBRATION = ["--label-set", "financebench_human", "--human-metric", "correctness",
               "--predictor", "correctness", "--predictor", "acc", "--predictor", "numeric_match"]
# QA generation's cells: the most populated topics x the five tasks. Since the classifier's reply is held to the topic
# list (structured output), all sampled units get a topic, so without a cap the cells (and the demo's time) grow
# with the topics found; two topics x five tasks is what the demo's time budget holds
DEMO_QA_TOPICS = 2
GENERATED_SPLITS = "gen_train,gen_test"  # the generated instances the LLM inspector kept (docs/qa_generation.md)

RETRIEVALS: list[tuple[str, str]] = [
    ("bm25", "full"),
    ("dense", "full"),
    ("hybrid", "full"),
    ("dense", "oracle_doc"),
    ("dense", "oracle_page"),
]


def sweep_grid(dataset: str, preset: str, k: int) -> dict[str, object]:
    """The demo's sweep (python_jobs/sweeps/grid.py): bm25, dense and hybrid over the demo's chunking and one of half
    its window (same overlap). The demo's own retrievals are the first chunking's three runs (the same run ids), so
    the sweep skips them and adds one chunking, its vectors and three runs."""
    size, overlap = (int(n) for n in preset.split("/"))
    return {"dataset": dataset, "fixed": {"k": k, "chunk_overlap": overlap},
            "parameters": {"chunk_size": [size // 2, size], "retriever": ["bm25", "dense", "hybrid"]},
            "baseline": {"chunk_size": size, "retriever": "bm25"}}


def leaderboard_queries(dataset: str, k: int) -> list[tuple[str, str]]:
    """What the demo prints at the end: (title, SQL) for `finrag sql`, which reads the published marts only."""
    return [
        ("retrieval leaderboard (a sweep's runs with their setting)",
         "with board as (select run_id, retriever, condition, "
         "round(max(mean) filter (where metric = 'doc_rec'), 4) as doc_rec, "
         "round(max(mean) filter (where metric = 'page_rec'), 4) as page_rec, "
         "round(max(mean) filter (where metric = 'ndcg' and granularity = 'page'), 4) as ndcg_page, "
         "round(max(mean) filter (where metric = 'mrr' and granularity = 'page'), 4) as mrr_page, "
         "max(n_questions) as n_questions "
         f"from mart_retrieval_leaderboard where dataset = '{dataset}' and k = {k} group by all), "
         "settings as (select run_id, max(setting) as sweep_setting from mart_sweep_runs group by run_id) "
         "select board.*, settings.sweep_setting from board left join settings using (run_id) "
         "order by condition, retriever, n_questions desc, sweep_setting"),
        ("sweep: each parameter value's mean PageRec over the other parameter's settings",
         "select sweep_id, parameter, value, n_runs, round(mean, 4) as mean, round(ci_low, 4) as ci_low, "
         "round(ci_high, 4) as ci_high, is_best_value, round(parameter_spread, 4) as spread "
         f"from mart_sweep_parameter_effects where dataset = '{dataset}' and metric = 'page_rec' and k = {k} "
         "order by sweep_id, parameter, value_order"),
        ("generation leaderboard",
         "select run_id, eval_mode, metric, round(mean, 4) as mean, n from mart_generation_leaderboard "
         f"where dataset = '{dataset}' order by metric, eval_mode"),
        ("judge-human agreement",
         "select judge_run_id, label_set, metric, n, round(accuracy, 4) as accuracy, round(kappa, 4) as kappa, "
         "round(kappa_lower, 4) as kappa_lower, round(kappa_upper, 4) as kappa_upper "
         "from mart_judge_agreement where judge_run_id is not null order by judge_run_id"),
        ("calibrated means: the human label's mean from its labels and each predictor (PPI++ where some answers "
         "are unlabelled)",
         "select answer_run_id, label_set, human_metric, predictor, predictor_run_id, n_labelled, n_unlabelled, "
         "round(predictor_mean, 4) as predictor_mean, round(human_mean, 4) as human_mean, "
         "round(ppi_mean, 4) as ppi_mean, round(ppi_lower, 4) as ppi_lower, round(ppi_upper, 4) as ppi_upper, "
         "round(ppi_lambda, 4) as ppi_lambda from mart_judge_calibrated order by answer_run_id, predictor"),
    ]


# the judge leaderboard, each mean beside how far it can be trusted (`finrag report --judged`: mart_judge_trust)
JUDGED_REPORT = ("judge leaderboard: every judged mean and how far it can be trusted", ["report", "--judged"])


def run_step(title: str, args: list[str]) -> str:
    """Run one verb; its stdout is shown and returned (a producing verb prints its id there, alone)."""
    say(f"\n==> {title}: finrag {' '.join(args)}")
    started = time.monotonic()
    proc = subprocess.run([sys.executable, "-m", "python_jobs.cli", *args], env=os.environ.copy(),
                          stdout=subprocess.PIPE, text=True)
    sys.stdout.write(proc.stdout)
    if proc.returncode:
        raise JobError(f"step '{title}' failed (exit {proc.returncode})")
    say(f"    {title}: {time.monotonic() - started:.1f}s")
    return proc.stdout


@contextmanager
def shared_llm() -> Iterator[None]:
    """One embedded LLM server for every LLM step, unless an endpoint is configured."""
    if os.environ.get(BASE_URL_ENV):
        yield
        return
    proc, base_url = start_embedded_server()
    os.environ[BASE_URL_ENV], os.environ[MODEL_ENV] = base_url, EMBEDDED_MODEL
    try:
        yield
    finally:
        del os.environ[BASE_URL_ENV], os.environ[MODEL_ENV]
        proc.terminate()
        try:
            proc.wait(10)
        except subprocess.TimeoutExpired:
            proc.kill()

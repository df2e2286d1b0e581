"""The lake inventory (`finrag ls`, the dashboard's run labels): a lake built through the Lake API with a retrieval
run, a RAG answer run over it, a judge run of that, and questions with and without reference answers."""

from __future__ import annotations

from pathlib import Path

from python_jobs.core.contracts import contract
from python_jobs.core.lake import Lake
from python_jobs.warehouse import inventory


def lake_with_runs(home: Path) -> Lake:
    lake = Lake(home)
    questions = contract("questions").frame([
        {"question_id": "q1", "dataset": "d", "split": "test", "question": "q1?", "source": "human",
         "reference_answers": ["a"]},
        {"question_id": "q2", "dataset": "d", "split": "test", "question": "q2?", "source": "human"},
        {"question_id": "q3", "dataset": "d", "split": "dropped", "question": "q3?", "source": "generated"},
    ])
    retrieval = contract("retrieval_runs").frame([
        {"run_id": "d-dense-full-1", "dataset": "d", "retriever": "dense", "condition": "full", "k": 10,
         "embedder": "sentence-transformers/all-MiniLM-L6-v2", "question_splits": ["test"], "params": "{}",
         "config_hash": "h", "config_id": "c", "source": "finrag"}])
    answers = contract("generation_runs").frame([
        {"run_id": "d-rag-1", "dataset": "d", "retrieval_run_id": "d-dense-full-1", "model": "org/m-1",
         "eval_mode": "rag", "params": "{}"}])
    judge = contract("judge_runs").frame([
        {"judge_run_id": "d-rag-1-judge-1", "answer_run_id": "d-rag-1", "judge_model": "j",
         "rubric_version": "r@1", "metrics": "correctness", "params": "{}"}])
    lake.land([("questions", "d", questions), ("retrieval_runs", "d-dense-full-1", retrieval),
               ("generation_runs", "d-rag-1", answers), ("judge_runs", "d-rag-1-judge-1", judge)])
    return lake


def test_labels_say_what_each_run_is(tmp_path: Path) -> None:
    labels = inventory.run_labels(lake_with_runs(tmp_path))
    assert labels == {
        "d-dense-full-1": "dense · full · k=10 · split test · all-MiniLM-L6-v2",
        "d-rag-1": "rag · m-1 · all splits over [dense · full · k=10 · split test · all-MiniLM-L6-v2]",
        "d-rag-1-judge-1": "judge j of [rag · m-1 · all splits over [dense · full · k=10 · split test · "
                           "all-MiniLM-L6-v2]]",
    }


def test_datasets_and_runs(tmp_path: Path) -> None:
    lake = lake_with_runs(tmp_path)
    datasets = inventory.datasets(lake).to_dicts()
    # the dropped question is not counted; q2 has no reference answer
    assert datasets == [{"dataset": "d", "n_questions": 2, "n_with_reference": 1, "n_documents": 0, "n_pages": 0,
                         "n_chunks": 0, "n_retrieval_runs": 1, "n_answer_runs": 1, "n_judge_runs": 1}]
    runs = inventory.runs(lake)
    assert set(zip(runs["kind"], runs["run_id"], runs["dataset"], strict=True)) == {
        ("retrieval", "d-dense-full-1", "d"), ("answer", "d-rag-1", "d"), ("judge", "d-rag-1-judge-1", "d")}


def test_no_lake_is_none_and_stays_absent(tmp_path: Path) -> None:
    assert inventory.inventory(tmp_path / "empty") is None
    assert not (tmp_path / "empty").exists()

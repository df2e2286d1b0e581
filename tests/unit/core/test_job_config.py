"""The jobs' typed configs (python_jobs/core/job_config.py) built from plain dicts, as a sweep's YAML grid will:
unknown keys and bad values are InputErrors naming the field (and the file), defaults are the classes', and the
checks the verbs made by hand live in the configs."""

from __future__ import annotations

import re

import pytest

from python_jobs.core.errors import InputError
from python_jobs.generation.runs import AnswerConfig
from python_jobs.judge.runs import JudgeConfig
from python_jobs.qa_generation.pipeline import GenerationConfig
from python_jobs.qa_generation.tasks import TASKS


@pytest.mark.parametrize("kind, values, field, says", [
    (AnswerConfig, {"retrieval_run_id": "r", "k": 0}, "k", "greater than or equal to 1"),
    (AnswerConfig, {"retrieval_run_id": "r", "context_tokens": 63}, "context_tokens", "greater than or equal to 64"),
    (AnswerConfig, {"retrieval_run_id": "r", "max_words": 0}, "max_words", "greater than or equal to 1"),
    (AnswerConfig, {"retrieval_run_id": "r", "temprature": 0.2}, "temprature", "Extra inputs are not permitted"),
    (AnswerConfig, {"retrieval_run_id": "r", "limit": "5"}, "limit", "valid integer"),
    (AnswerConfig, {}, "dataset", "a closed-book run (no retrieval_run_id) needs a dataset"),
    (JudgeConfig, {}, "answer_run_id", "required field is missing"),
    (JudgeConfig, {"answer_run_id": "a", "max_tokens": 7}, "max_tokens", "greater than or equal to 8"),
    (JudgeConfig, {"answer_run_id": "a", "metrics": ["correctness", "correctness"]}, "metrics", "distinct"),
    (JudgeConfig, {"answer_run_id": "a", "metrics": []}, "metrics", "distinct"),
    (JudgeConfig, {"answer_run_id": "a", "rubrics": {"correctness": 1}}, "rubrics.correctness", "valid string"),
    (GenerationConfig, {"dataset": "d", "tasks": ["extractive", "poetry"]}, "tasks", "a list of distinct tasks"),
    (GenerationConfig, {"dataset": "d", "test_fraction": 1.5}, "test_fraction", "less than or equal to 1"),
    (GenerationConfig, {"dataset": "d", "passage_chars": 99}, "passage_chars", "greater than or equal to 100"),
    (GenerationConfig, {"dataset": "d", "unit": "page"}, "unit", "'chunk' or 'document'"),
])
def test_bad_values_are_input_errors_naming_the_field(kind, values: dict, field: str, says: str):
    with pytest.raises(InputError, match=re.escape(says)) as e:
        kind.from_dict(values, file="grid.yaml")
    assert (e.value.field, e.value.file) == (field, "grid.yaml")


def test_a_dict_gives_the_config_of_the_keywords_with_the_declared_defaults():
    cfg = AnswerConfig.from_dict({"retrieval_run_id": "r", "question_ids": ["q2", "q1"], "temperature": 0})
    assert cfg == AnswerConfig(retrieval_run_id="r", question_ids=("q2", "q1"))
    assert (cfg.k, cfg.temperature, cfg.closed_book) == (AnswerConfig.default("k"), 0.0, False)
    assert type(cfg.temperature) is float  # an int from a YAML file hashes as the CLI's float would
    gen = GenerationConfig.from_dict({"dataset": "d"})
    assert gen.tasks == TASKS and gen.per_cell == GenerationConfig.default("per_cell")
    with pytest.raises(Exception, match="frozen"):
        gen.seed = 1  # type: ignore[misc]

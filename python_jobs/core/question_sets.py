"""Which questions a run uses: the `--split` selection shared by `finrag retrieve` and `finrag answer`.

Splits in the lake: ingested benchmarks land as 'test' (or their own split); generated instances (generate-qa) as
'gen_train' / 'gen_test' when the LLM inspector kept them, 'dropped' when it (or a human) dropped them, and
'gen_human_test' when a human accepted a test instance (docs/qa_generation.md). By default a run uses every split
except 'dropped'; `--split gen_test,gen_human_test` picks splits by name. The splits used land in the run's
`question_splits` column (dbt scores the run against the qrels of those splits' questions only).
"""

from __future__ import annotations

import polars as pl

from python_jobs.core.errors import InputError

EXCLUDED_BY_DEFAULT = ("dropped",)


def parse_splits(value: str | None) -> tuple[str, ...] | None:
    """A comma list of split names; None (or empty) = the default selection."""
    if value is None or not value.strip():
        return None
    splits = tuple(sorted(dict.fromkeys(s.strip() for s in value.split(",") if s.strip())))
    return splits or None


def select_splits(questions: pl.DataFrame, splits: tuple[str, ...] | None) -> pl.DataFrame:
    """The questions of the selected splits; an explicit selection that matches no question is an error (naming the
    splits the dataset has)."""
    if splits is None:
        return questions.filter(pl.col("split").is_null() | ~pl.col("split").is_in(list(EXCLUDED_BY_DEFAULT)))
    chosen = questions.filter(pl.col("split").is_in(list(splits)))
    if questions.height and chosen.height == 0:
        have = sorted(x for x in questions["split"].unique().to_list() if x is not None)
        raise InputError(f"no questions in split(s) {', '.join(splits)}; this dataset has {', '.join(have)}",
                         field="split")
    return chosen


def splits_param(splits: tuple[str, ...] | None, selected: pl.DataFrame) -> list[str]:
    """What a run records in question_splits: the explicit selection, else the splits the default
    selection used (so dbt judges the run against the qrels of exactly those splits: int_retrieval_runs)."""
    if splits:
        return list(splits)
    return sorted(x for x in selected["split"].unique().to_list() if x is not None)

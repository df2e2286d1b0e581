"""`finrag import-human-labels FILE --label-set NAME`: OmniEval-style human judge labels, per metric, from JSONL.

    {"answer_run_id": "gpt-4_oracle", "question_id": "financebench_id_03029", "metric": "acc", "score": 2,
     "annotator": "a1", "label": "right"}

The rules and decisions are documented in python_jobs/sources/human_labels.py.
"""

from __future__ import annotations

from pathlib import Path

import click
import polars as pl

from python_jobs.commands._options import Produced, produces
from python_jobs.core.console import say
from python_jobs.core.errors import InputError
from python_jobs.core.lake import Lake, check_id
from python_jobs.labelling.requests import check_against_requests
from python_jobs.sources.human_labels import read_labels


@click.command("import-human-labels")
@produces
@click.argument("path", type=click.Path(exists=True, dir_okay=False, path_type=Path))
@click.option("--label-set", required=True, help="Name of the label set (the human_labels partition).")
def command(path: Path, label_set: str) -> Produced:
    """Import human judge labels (JSONL: answer_run_id, question_id, metric, score[, annotator, label]); a file
    `finrag label-next` wrote, once a person filled in its scores."""
    check_id(label_set, "label set")
    lake = Lake()
    labels, unfilled, requested = read_labels(lake, path, label_set)
    if labels.height == 0:
        raise InputError(f"no line has a score yet ({unfilled} with score null): fill in the labels first",
                         file=str(path), field="score")
    named = labels.select("answer_run_id", "question_id", "metric")
    # the set keeps its labels of runs this file does not name; those it names are replaced, except that a
    # label-next file's runs keep their labels of the answers it does not name
    kept = lake.read_partition("human_labels", label_set).filter(
        ~pl.col("answer_run_id").is_in(labels["answer_run_id"].unique().to_list())
        | (pl.col("answer_run_id").is_in(sorted(requested))
           & ~pl.struct("answer_run_id", "question_id", "metric").is_in(named.to_struct().implode())))
    if kept.height:
        labels = pl.concat([kept.drop("created_at", strict=False).with_columns(
            pl.lit(None, pl.String).alias("_file"), pl.lit(None, pl.Int64).alias("_line")), labels],
            how="diagonal_relaxed")
    notes = check_against_requests(lake, label_set, named, labels)
    lake.land([("human_labels", label_set, labels)])
    counts = labels.group_by("metric").len().sort("metric")
    say(f"landed human_labels label_set={label_set}: {labels.height} labels ("
        + ", ".join(f"{m} {n}" for m, n in counts.iter_rows()) + ")"
        + (f"; {unfilled} line(s) with score null skipped (not labelled yet)" if unfilled else ""))
    for note in notes:
        say(note)
    return label_set, {"label_set": label_set}

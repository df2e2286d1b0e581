"""`finrag topics flatten`: turn a topic tree (OmniEval's `{"topic_name", "sub_topics"}` JSON) into the flat seed
`seeds/omnieval_topics.csv`: one row per node at every level, Chinese names kept, English names added."""

from __future__ import annotations

import csv
import json
from pathlib import Path

import click

from python_jobs.core.errors import InputError
from python_jobs.sources.topic_tree import COLUMNS, flatten

# English names for OmniEval's topic tree, written by the project.

@click.group("topics")
def command() -> None:
    """Topic taxonomies."""


@command.command("flatten")
@click.option("--tree", "tree_path", required=True, type=click.Path(exists=True, dir_okay=False))
@click.option("--out", "out_path", default="seeds/omnieval_topics.csv", show_default=True)
def flatten_cmd(tree_path: str, out_path: str) -> None:
    """Flatten a topic tree JSON into a seed CSV (every level, English names added)."""
    try:
        tree = json.loads(Path(tree_path).read_text(encoding="utf-8-sig"))
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise InputError(f"not a UTF-8 JSON topic tree: {exc}", file=tree_path) from None
    rows = flatten(tree, source=tree_path)
    with open(out_path, "w", newline="", encoding="utf-8") as f:
        w = csv.DictWriter(f, fieldnames=COLUMNS)
        w.writeheader()
        w.writerows(rows)
    click.echo(f"{len(rows)} topics -> {out_path}")

"""A sweep's grid is checked whole before anything runs: each structural error and each configuration the runs'
own configs refuse is an InputError naming the grid file, the line of the offending key or value and its path
(python_jobs/sweeps/grid.py, plan_sweep in python_jobs/sweeps/runs.py); nothing lands. The expansion: the
Cartesian product in the grid's order, less the exclusions, and the baseline's configuration."""

from __future__ import annotations

from pathlib import Path

import pytest

from python_jobs.core.errors import InputError
from python_jobs.core.lake import Lake
from python_jobs.sweeps.grid import parse_grid, read_grid
from python_jobs.sweeps.runs import plan_sweep
from support.paths import PROJECT
from support.toy_corpus import DATASET, FLAT

GOOD = f"""\
dataset: {DATASET}
fixed:
  k: 3
parameters:
  chunk_size: [16, 32]
  retriever: [bm25, keywords, hybrid]
exclude:
  - {{chunk_size: 16, retriever: hybrid}}
baseline: {{chunk_size: 32, retriever: bm25}}
"""


def grid_file(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "grid.yaml"
    path.write_text(text)
    return path


def refused(path: Path, home: Path | None = None) -> InputError:
    """The error of checking the grid file (its structure, then, with a home, every configuration)."""
    with pytest.raises(InputError) as caught:
        grid = read_grid(path)
        if home is not None:
            plan_sweep(Lake(home), grid)
    return caught.value


def test_the_grid_expands_to_its_product_less_the_exclusions(tmp_path: Path) -> None:
    grid = read_grid(grid_file(tmp_path, GOOD))
    points = grid.points()
    assert [p.describe() for p in points] == [
        "chunk_size=16, retriever=bm25", "chunk_size=16, retriever=keywords",
        "chunk_size=32, retriever=bm25", "chunk_size=32, retriever=keywords", "chunk_size=32, retriever=hybrid"]
    assert grid.baseline_point(points).describe() == "chunk_size=32, retriever=bm25"
    assert grid.settings(points[1]) == {"k": 3, "chunk_size": 16, "retriever": "keywords"}
    assert points[4].indices == {"chunk_size": 1, "retriever": 2}


@pytest.mark.parametrize(("text", "line", "field", "message"), [
    ("dataset: d\nparameters: {retriever: [bm25]}\nbaselin: {retriever: bm25}\n", 3, "baselin", "unknown key"),
    ("dataset: d\nfixed: {k: 3}\n", None, "parameters", "required key is missing"),
    ("dataset: d\nparameters:\n  retriever: [bm25]\n  retriever: [dense]\n", 4, "parameters.retriever",
     "key given twice"),
    ("dataset: d\nparameters:\n  retriever:\n    - bm25\n    - dense\n    - bm25\n", 6, "parameters.retriever[2]",
     "value bm25 is given twice"),
    ("dataset: d\nparameters:\n  retriever: bm25\n", 3, "parameters.retriever", "a list of at least one value"),
    ("dataset: d\nparameters:\n  retriever: []\n", 3, "parameters.retriever", "a list of at least one value"),
    ("dataset: d\nfixed:\n  k: 3\nparameters:\n  k: [1, 2]\n", 3, "fixed.k", "fixed or a parameter, not both"),
    ("dataset: d\nparameters:\n  retriever: [bm25]\n  run_id: [a, b]\n", 4, "parameters.run_id",
     "not a grid setting"),
    ("dataset: d\nfixed: {dataset: e}\nparameters: {retriever: [bm25]}\n", 2, "fixed.dataset", "not a grid setting"),
    ("dataset: d\nkind: judge\nparameters: {retriever: [bm25]}\n", 2, "kind", "kind is one of retrieval, answer"),
    ("dataset: d\nparameters: {retriever: [bm25, dense]}\nexclude:\n  - {retreiver: bm25}\n", 4,
     "exclude[0].retreiver", "not a parameter"),
    ("dataset: d\nparameters: {retriever: [bm25, dense]}\nexclude:\n  - retriever: hybrid\n", 4,
     "exclude[0].retriever", "hybrid is not one of the parameter's values (bm25, dense)"),
    ("dataset: d\nparameters: {retriever: [bm25, dense]}\nexclude: [{retriever: bm25}, {retriever: dense}]\n", 3,
     "exclude", "every configuration is excluded"),
    ("dataset: d\nparameters:\n  retriever: [bm25, dense]\n  k: [3, 5]\nbaseline: {retriever: bm25}\n", 5,
     "baseline", "matches 2 configurations: give a value for every parameter"),
    ("dataset: d\nparameters: {retriever: [bm25, dense]}\nexclude: [{retriever: dense}]\n"
     "baseline: {retriever: dense}\n", 4, "baseline", "the baseline is excluded"),
    ("dataset: d\nparameters: {retriever: [bm25, dense]\n", 3, None, "not valid YAML"),
    ("dataset: d\nparameters: {retriever: [2024-01-01]}\n", 2, "parameters", "cannot give as JSON"),
])
def test_structural_errors_name_file_line_and_field(tmp_path: Path, text: str, line: int | None, field: str | None,
                                                    message: str) -> None:
    path = grid_file(tmp_path, text)
    err = refused(path)
    assert (err.file, err.line, err.field) == (str(path), line, field)
    assert message in err.detail


def test_an_empty_grid_file_and_a_missing_one(tmp_path: Path) -> None:
    assert refused(grid_file(tmp_path, "# nothing\n")).detail == "the grid file is empty"
    missing = refused(tmp_path / "nosuch.yaml")
    assert missing.file == str(tmp_path / "nosuch.yaml") and "cannot read the grid file" in missing.detail


@pytest.mark.parametrize(("body", "line", "field", "message"), [
    # a bad value of a run setting: the value's own line in the parameter's list
    ("fixed: {{chunker_id: {flat}}}\nparameters:\n  retriever: [bm25]\n  k:\n    - 3\n    - 0\n", 7,
     "parameters.k[1]", "greater than or equal to 1"),
    # a combination the registry refuses: rrf_k is hybrid's, not bm25's
    ("fixed: {{chunker_id: {flat}}}\nparameters:\n  retriever: [hybrid, bm25]\n  rrf_k: [10, 60]\n", 5,
     "parameters.rrf_k[0]", "'rrf_k' is not a setting of bm25"),
    ("fixed: {{chunker_id: {flat}}}\nparameters:\n  retriever: [bm25, nosuch]\n", 4, "parameters.retriever[1]",
     "unknown retriever 'nosuch'"),
    ("fixed: {{chunker_id: {flat}, reranker: x}}\nparameters:\n  retriever: [rerank]\n"
     "  first_stage: [bm25, parent_child]\n", 5,
     "parameters.first_stage[1]", "--first-stage 'parent_child' is not valid for rerank"),
    ("fixed: {{chunker_id: nosuch}}\nparameters:\n  retriever: [bm25]\n", 2, "fixed.chunker_id",
     "no chunks for dataset 'toyfin' with chunker id 'nosuch'"),
    # a chunking the chunker refuses: the overlap of a window must be below its size
    ("parameters:\n  retriever: [bm25]\n  chunk_size: [8, 16]\n  chunk_overlap: [0, 8]\n", 5,
     "parameters.chunk_overlap[1]", "overlap must be in [0, size), got 8 for size 8"),
    ("fixed: {{chunk_preset: 256/32}}\nparameters:\n  chunk_size: [16]\n  retriever: [bm25]\n", 2,
     "fixed.chunk_preset", "give either a preset or a size"),
    ("fixed:\n  chunker_id: {flat}\nparameters:\n  retriever: [bm25]\n  chunk_size: [16]\n", 3, "fixed.chunker_id",
     "a chunking (chunk_*) or a chunker_id, not both"),
    # two configurations that are one run: batch_size is not part of a run's config
    ("fixed: {{chunker_id: {flat}}}\nparameters:\n  retriever: [bm25]\n  batch_size: [32, 64]\n", 5,
     "parameters.batch_size[1]", "are the same run 'toyfin-bm25-full-"),
    # an answer grid: its settings are an answer run's
    ("kind: answer\nparameters:\n  chunk_size: [16]\n", 4, "parameters.chunk_size[0]",
     "not a setting of an answer run"),
    ("kind: answer\nfixed:\n  retrieval_run_id: nosuch\nparameters:\n  k: [1, 2]\n", 4, "fixed.retrieval_run_id",
     "no retrieval run 'nosuch' in the lake"),
])
def test_configurations_the_runs_refuse_name_file_line_and_field(tmp_path: Path, home: Path, toy: Lake, body: str,
                                                                 line: int, field: str, message: str) -> None:
    path = grid_file(tmp_path, f"dataset: {DATASET}\n" + body.format(flat=FLAT))
    err = refused(path, home)
    assert (err.file, err.line, err.field) == (str(path), line, field), err
    assert message in err.detail
    assert Lake(home).partitions("retrieval_runs") == [] and Lake(home).partitions("sweeps") == []


def test_a_bad_value_in_an_answer_grid(tmp_path: Path, home: Path, toy: Lake) -> None:
    path = grid_file(tmp_path, f"dataset: {DATASET}\nkind: answer\nparameters:\n  temperature: [0.0, 3.0]\n")
    err = refused(path, home)
    assert (err.line, err.field) == (4, "parameters.temperature[1]") and "less than or equal to 2" in err.detail


def test_a_grid_parsed_from_text_names_its_file() -> None:
    with pytest.raises(InputError, match=r"^file g\.yaml, line 1, field 'dataset': the dataset is a name$"):
        parse_grid("dataset: [a]\nparameters: {k: [1]}\n", "g.yaml")


def test_the_example_grid_of_the_docs() -> None:
    """docs/sweeps/financebench_chunks_x_retrievers.yaml is a valid grid, and docs/sweeps.md shows it as it is."""
    path = PROJECT / "docs" / "sweeps" / "financebench_chunks_x_retrievers.yaml"
    grid = read_grid(path)
    assert [p.describe() for p in grid.points()] == [
        "chunk_size=512, retriever=bm25", "chunk_size=512, retriever=dense", "chunk_size=1024, retriever=bm25",
        "chunk_size=1024, retriever=dense", "chunk_size=1024, retriever=hybrid"]
    shown = "\n".join(line for line in path.read_text().splitlines() if not line.startswith("#"))
    assert f"```yaml\n{shown}\n```" in (PROJECT / "docs" / "sweeps.md").read_text()

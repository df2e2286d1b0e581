"""A dry run checks what the run will check (issue 47): a grid whose dataset has no questions in the lake is refused
by `plan_sweep` - so by `finrag sweep --dry-run` and by the real run alike - naming the grid file, the line and the
field `dataset`, before anything lands."""

from __future__ import annotations

from pathlib import Path

import pytest

from python_jobs.core.errors import InputError
from python_jobs.core.lake import Lake
from python_jobs.sweeps.grid import parse_grid
from python_jobs.sweeps.runs import plan_sweep, run_sweep
from support.sweeps import TOY_GRID
from support.toy_corpus import DATASET


@pytest.mark.parametrize("dry_run", [True, False])
def test_a_grid_of_a_dataset_not_in_the_lake_fails_dry_or_not(home: Path, toy: Lake, dry_run: bool) -> None:
    grid = parse_grid(TOY_GRID.replace(f"dataset: {DATASET}", "dataset: nosuch"), "grid.yaml")
    with pytest.raises(InputError) as caught:
        run_sweep(Lake(home), plan_sweep(Lake(home), grid), dry_run=dry_run, progress=False)
    assert (caught.value.file, caught.value.line, caught.value.field) == ("grid.yaml", 1, "dataset")
    assert "no questions for dataset 'nosuch'" in caught.value.detail
    assert Lake(home).partitions("sweeps") == [] and Lake(home).partitions("chunks") == toy.partitions("chunks")


def test_the_toy_grid_still_plans(home: Path, toy: Lake) -> None:
    assert run_sweep(Lake(home), plan_sweep(Lake(home), parse_grid(TOY_GRID, "grid.yaml")), dry_run=True,
                     progress=False)["to_run"] == 4

"""sql_functions' versions of outside libraries: the version of the distribution that installs the module (what
importlib.metadata.packages_distributions says), found by the module's name alone, without importing it."""

from __future__ import annotations

from importlib import metadata

import pytest

from python_jobs.stats.sql_functions import _library_version


@pytest.mark.parametrize(("module", "distribution"), [
    ("scipy.stats", "scipy"),  # named like its distribution
    ("absl.flags", "absl-py"),  # named otherwise (rouge-score's dependency)
    ("yaml", "PyYAML"),
    ("sklearn.metrics", "scikit-learn"),
])
def test_a_library_is_versioned_by_the_distribution_that_installs_it(module: str, distribution: str) -> None:
    top = module.split(".")[0]
    assert distribution in metadata.packages_distributions()[top]
    assert _library_version(module) == f"{top}=={metadata.version(distribution)}"


def test_a_module_no_distribution_installs_is_versioned_by_python() -> None:
    assert _library_version("no_such_module_here.sub").startswith("no_such_module_here (python 3.")

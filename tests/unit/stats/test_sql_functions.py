"""sql_functions' versions of outside libraries: the version of the distribution that installs the module (what
importlib.metadata.packages_distributions says), found by the module's name alone, without importing it; and the
UDFs' Arrow results built from buffers (arrow_array, arrow_struct) equal to pyarrow's own."""

from __future__ import annotations

from importlib import metadata

import numpy as np
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


@pytest.mark.parametrize(("values", "arrow_type", "mask"), [
    ([1.5, None, -2.0, float("inf")], "float64", None),
    (np.array([1.0, np.nan, 3.0]), "float64", np.array([False, True, False])),
    (np.array([0.25, 0.5]), "float64", None),
    (["win", None, "tié", ""], "string", None),
    ([True, None, False, True], "bool", None),
    ([False, True, False], "bool", np.array([False, False, True])),
    ([], "string", None),
])
def test_arrow_array_equals_pyarrows_own(values, arrow_type: str, mask) -> None:
    import pyarrow as pa

    from python_jobs.stats.sql_functions import arrow_array

    t = {"float64": pa.float64(), "string": pa.string(), "bool": pa.bool_()}[arrow_type]
    got = arrow_array(values, t, mask=mask)
    got.validate(full=True)
    assert got.equals(pa.array(values, type=t, mask=mask)), got


@pytest.mark.parametrize("mask", [[False, True, False], [False, False, False], [True, True, True]])
def test_arrow_struct_equals_pyarrows_own(mask: list[bool]) -> None:
    import pyarrow as pa

    from python_jobs.stats.sql_functions import arrow_array, arrow_struct

    children = {"ci_low": arrow_array([0.1, None, -2.5], pa.float64()),
                "exact": arrow_array([True, False, None], pa.bool_())}
    got = arrow_struct(children, mask)
    got.validate(full=True)
    want = pa.StructArray.from_arrays(list(children.values()), names=list(children), mask=pa.array(mask))
    assert got.equals(want) and got.to_pylist() == want.to_pylist(), got

"""Landing validation through Great Expectations, and the home's Data Docs.

    expectations.py      the suites derived from the contracts, running one on a frame, a failure's InputError
    results.py           the home's GX file context (stored results, suites) and its Data Docs
    gx_site.py, gx_views/  the Data Docs templates that replace GX's own (offline, no CDN)
    data_docs_server.py  serves the Data Docs on loopback for the dashboard

How the lake gets its validator (a small inversion, so core imports nothing outside core and no package cycle
exists): python_jobs/core/validator.py declares what the `Lake` needs — the `Validator` protocol (validate a frame,
raise for a failed result, keep the results) and `ParentKeys`, the parent ids the lake computes for each reference.
This package provides the Great Expectations implementation, `GreatExpectations` below, and registers it with
`core.validator.register` when it is imported; python_jobs/__init__.py imports it, and every import of any
`python_jobs` module (`from python_jobs.core.lake import Lake` included) runs that file first. So every `Lake` a job,
test or script builds validates exactly as before, without a validator passed to any of them, and a landing with no
validator registered is a JobError (core/validator.py), never a silently unvalidated landing.

This module imports neither GX nor Polars: `finrag --help` imports it (through python_jobs/__init__.py), and
`import great_expectations` takes 3-4.5 s. The methods below import expectations.py / results.py on the first
landing, and those import GX only when a frame is first validated (expectations.gx()).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from python_jobs.core import validator

if TYPE_CHECKING:
    import polars as pl

    from python_jobs.core.contracts import Contract, Reference
    from python_jobs.core.validator import ParentKeys


class GreatExpectations:
    """The lake's `Validator`: the suites of expectations.py, the results store of results.py."""

    def validate(self, c: Contract, partition_value: str, frame: pl.DataFrame,
                 parents: Mapping[Reference, ParentKeys], part: tuple[int, int] | None = None) -> Any:
        from python_jobs.validation import expectations

        return expectations.validate(c, partition_value, frame, parents, part)

    def raise_for(self, result: Any, c: Contract, frame: pl.DataFrame,
                  fields: Mapping[str, str] | None = None) -> None:
        from python_jobs.validation import expectations

        expectations.raise_for(result, c, frame, fields)

    def keep(self, home: Path, results: Sequence[Any]) -> None:
        from python_jobs.validation import results as store

        store.keep(home, results)


validator.register(GreatExpectations())

"""Landing validation through Great Expectations (GX 1.24.1; SPEC §7): the suites, running them on a frame, and
the InputError of a failed run.

Every frame `Lake.land` lands is validated first, against an ExpectationSuite derived from its table's `Contract`
(contracts.yml) and never written by hand: one expectation per contract rule.

    contract rule                      expectation
    required (keys, partition too)     expect_column_values_to_not_be_null
    accepted                           expect_column_values_to_be_in_set, the contract's values
    min / max                          expect_column_values_to_be_between (inclusive)
    key                                expect_column_values_to_be_unique / expect_compound_columns_to_be_unique:
                                       unique within the frame
    unique (more column sets)          expect_compound_columns_to_be_unique
    reference, same_dataset            expect_column_values_to_be_in_set over the parent's ids of the row's dataset
                                       (lake + this landing), only on rows whose dataset has parent rows
                                       (row_condition `dataset_has_<parent> == True`): a TREC-only dataset is valid
    reference, plain                   expect_column_values_to_be_in_set over the parent's ids (lake + this landing)

Not expectations: types (the lake casts each frame to the contract's Polars schema first, `lake.conform`, with its
own error), and keys unique across loads (a key another partition already landed is a property of the lake, not of a
frame: `lake.py` checks it after this validation).

How a frame is validated: the pandas route (GX's SQL route over DuckDB does not work, ../shared/ENVIRONMENT.md), a
whole-dataframe batch of only the columns the suite reads (pandas 3 keeps Polars' strings in Arrow: no copy of the
text). A reference's value set is a run-time parameter (`$PARAMETER`) that the lake fills, pruned to the values the
frame holds: the same verdict, and a stored result the size of the frame's distinct values, not of the parent table.
A failure becomes the `InputError` users know: the first failing expectation in suite order, its first unexpected row
mapped back to the frame's `_file` / `_line` (else `(row i)`), the field named as the input names it.
"""

from __future__ import annotations

import os

os.environ["GX_ANALYTICS_ENABLED"] = "False"  # before GX is ever imported: no usage events leave the machine

import logging
import sys
import warnings
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import UTC, datetime
from functools import cache
from typing import TYPE_CHECKING, Any

import polars as pl

from python_jobs.core.contracts import Contract, Reference, contract
from python_jobs.core.errors import InputError, JobError
from python_jobs.core.validator import ParentKeys

if TYPE_CHECKING:
    import pandas as pd

# SUMMARY: counts and the first 20 unexpected values and row indices, never the full lists (a 10M-row frame that
# fails everywhere must not produce a 10M-entry result)
RESULT_FORMAT = {"result_format": "SUMMARY", "partial_unexpected_count": 20}
FINGERPRINT_MAX_BYTES = 32 * 2**20


@cache
def gx() -> Any:
    """The great_expectations module, imported on first use (3-4.5 s)."""
    warnings.filterwarnings("ignore", module=r"great_expectations(\..*)?$")
    # With the Spark extra installed GX imports pyspark (and pyspark.ml) when it finds it: a quarter of a second of
    # every landing's import, a warning that pyspark predates pandas 3, and pyspark.sql.connect, whose import calls
    # sys.exit(0) without grpc in a process whose __main__ has no file (a pytest-xdist worker, `python -c`). Its
    # pandas route never needs Spark, so pyspark is hidden for GX's import and GX takes it as absent (its
    # compatibility layer's own fallback); a process that already imported pyspark keeps it.
    hidden = [name for name in ("pyspark", "pyspark.sql.connect") if name not in sys.modules]
    if "pyspark" not in hidden:
        warnings.filterwarnings("ignore", message="PySpark does not yet fully support pandas", category=FutureWarning)
    for name in hidden:
        sys.modules[name] = None  # type: ignore[assignment]
    try:
        import great_expectations
        from great_expectations.execution_engine import pandas_execution_engine
    finally:
        for name in hidden:
            if sys.modules.get(name, 0) is None:
                del sys.modules[name]

    # GX fingerprints every pandas batch below 1 GB (an md5 over the whole frame, shown as a batch marker in Data
    # Docs): on a 10M-row run it costs more than all the expectations together, so only small batches get one
    pandas_execution_engine.HASH_THRESHOLD = FINGERPRINT_MAX_BYTES
    # GX logs a warning per unreadable stored result when it builds the docs index, and its own deprecations: the
    # docs say it themselves, and jobs' stderr is for the user's input errors
    logging.getLogger("great_expectations").setLevel(logging.ERROR)
    return great_expectations


# ---- suites derived from the contract --------------------------------------------------------------------------
@dataclass(frozen=True)
class Rule:
    """One rule of a contract; one expectation in the table's suite."""

    kind: str  # required | accepted | range | key | unique | reference
    columns: tuple[str, ...]
    values: tuple[str, ...] | None = None  # accepted
    low: float | None = None  # range
    high: float | None = None
    reference: Reference | None = None


def rules(c: Contract) -> list[Rule]:
    """The table's rules in the order they are checked (the first failing one is reported)."""
    out = [Rule("required", (col,)) for col in c.not_null]
    out += [Rule("accepted", (col,), values=allowed) for col, allowed in c.accepted.items()]
    out += [Rule("range", (col,), low=lo, high=hi) for col, (lo, hi) in c.ranges.items()]
    out.append(Rule("key", c.key))
    out += [Rule("unique", tuple(cols)) for cols in c.unique]
    out += [Rule("reference", (r.column,), reference=r) for r in c.references]
    return out


def has_parent_column(ref: Reference) -> str:
    """The batch column saying whether a row's dataset has rows in the parent table (same_dataset references)."""
    return f"dataset_has_{ref.table}"


def parameter_name(ref: Reference) -> str:
    """The suite parameter holding a reference's value set (filled per landing)."""
    return f"{ref.column}_in_{ref.table}_{ref.field}"


def _expectation(c: Contract, rule: Rule, index: int) -> Any:
    e = gx().expectations
    col = rule.columns[-1]
    where = f"contracts.yml {c.name}"
    meta = {"finrag_rule": rule.kind, "finrag_rule_index": index}  # maps a result back to its rule
    if rule.kind == "required":
        return e.ExpectColumnValuesToNotBeNull(column=col, meta=meta, notes=f"{where}: {col} is required")
    if rule.kind == "accepted":
        return e.ExpectColumnValuesToBeInSet(column=col, value_set=list(rule.values or ()), meta=meta,
                                             notes=f"{where}: {col} accepted values")
    if rule.kind == "range":
        return e.ExpectColumnValuesToBeBetween(column=col, min_value=rule.low, max_value=rule.high, meta=meta,
                                               notes=f"{where}: {col} min / max (inclusive)")
    if rule.kind == "key":
        notes = f"{where}: key {', '.join(c.key)}, unique within the load (across loads: checked by the lake)"
        if len(c.key) == 1:
            return e.ExpectColumnValuesToBeUnique(column=col, meta=meta, notes=notes)
        return e.ExpectCompoundColumnsToBeUnique(column_list=list(c.key), meta=meta, notes=notes)
    if rule.kind == "unique":
        return e.ExpectCompoundColumnsToBeUnique(column_list=list(rule.columns), meta=meta,
                                                 notes=f"{where}: {', '.join(rule.columns)} unique within the load")
    ref = rule.reference
    assert ref is not None
    kwargs: dict[str, Any] = {"column": ref.column, "value_set": {"$PARAMETER": parameter_name(ref)}, "meta": meta}
    if ref.same_dataset:
        if "dataset" not in c.schema:
            raise ValueError(f"{c.name}: a same_dataset reference needs a dataset column")
        from great_expectations.expectations.row_conditions import Column

        kwargs["row_condition"] = Column(has_parent_column(ref)) == True  # noqa: E712 - a GX condition, not a test
        kwargs["notes"] = (f"{where}: {ref.column} references {ref.table}.{ref.field} within the row's dataset, for "
                           f"datasets that have {ref.table} (lake + this landing)")
    else:
        kwargs["notes"] = f"{where}: {ref.column} references {ref.table}.{ref.field} (lake + this landing)"
    return e.ExpectColumnValuesToBeInSet(**kwargs)


def suite_for(c: Contract) -> Any:
    """The table's ExpectationSuite, derived from its contract: one expectation per rule, in `rules` order."""
    return gx().ExpectationSuite(name=c.name, expectations=[_expectation(c, r, i) for i, r in enumerate(rules(c))],
                                 meta={"derived_from": "python_jobs/core/contracts.yml"})


def batch_columns(c: Contract) -> list[str]:
    """The frame columns the suite reads (all a batch needs, besides the dataset_has_<parent> flags)."""
    cols = [col for r in rules(c) for col in r.columns]
    if any(r.same_dataset for r in c.references):
        cols.append("dataset")
    return list(dict.fromkeys(cols))



def batch_frame(c: Contract, frame: pl.DataFrame, parents: Mapping[Reference, ParentKeys]) -> pd.DataFrame:
    """The frame as GX's pandas batch: the suite's columns, the dataset_has_<parent> flags; strings stay in Arrow
    (pandas 3), integers become int64 (GX compares int64 / float64 columns with min / max vectorised, any other
    dtype value by value in Python)."""
    flags = [pl.col("dataset").is_in(pl.Series(list(parents[r].datasets or ()), dtype=pl.String).implode())
             .fill_null(False).alias(has_parent_column(r)) for r in c.references if r.same_dataset]
    cols = [pl.col(x).cast(pl.Int64) if c.schema[x].is_integer() else pl.col(x) for x in batch_columns(c)]
    return frame.select(*cols, *flags).to_pandas()


# ---- GX contexts ---------------------------------------------------------------------------------------------
@cache
def runner() -> Any:
    """The in-memory GX context of this process: the pandas datasource, the suites, the validation definitions."""
    g = gx()
    from great_expectations.data_context.types.base import ProgressBarsConfig

    ctx = g.get_context(mode="ephemeral")
    ctx.variables.progress_bars = ProgressBarsConfig(globally=False, metric_calculations=False)
    ctx.data_sources.add_pandas("lake")
    return ctx


@cache
def _definition(table: str) -> Any:
    """The table's ValidationDefinition: its dataframe asset's whole-dataframe batch and its suite."""
    ctx = runner()
    asset = ctx.data_sources.get("lake").add_dataframe_asset(table)
    batch = asset.add_batch_definition_whole_dataframe("frame")
    suite = ctx.suites.add(suite_for(contract(table)))
    return ctx.validation_definitions.add(gx().ValidationDefinition(name=table, data=batch, suite=suite))



# ---- validating ----------------------------------------------------------------------------------------------
def validate(c: Contract, partition_value: str, frame: pl.DataFrame, parents: Mapping[Reference, ParentKeys],
             part: tuple[int, int] | None = None) -> Any:
    """Run the table's suite on a (typed, stamped) frame; returns GX's ExpectationSuiteValidationResult.

    `part`: (i, n) when the frame is slice i of n of a landing in slices (`lake.Slices`): each slice is a validation
    of its own, run name `<partition>.slice-<i>-of-<n>`, with the slice in the result's meta."""
    gx()  # first: it imports GX the safe way
    from great_expectations.core.run_identifier import RunIdentifier

    definition = _definition(c.name)
    params = {parameter_name(r): list(parents[r].ids) for r in c.references}
    run_name = f"{c.partition}={partition_value}"
    if part is not None and part[1] > 1:
        run_name += f".slice-{part[0]}-of-{part[1]}"
    run_id = RunIdentifier(run_name=run_name, run_time=datetime.now(UTC))
    result = definition.run(batch_parameters={"dataframe": batch_frame(c, frame, parents)},
                            expectation_parameters=params, result_format=RESULT_FORMAT, run_id=run_id)
    files = frame["_file"].drop_nulls().unique().sort().to_list() if "_file" in frame.columns else []
    result.meta["finrag"] = {"table": c.name, "partition": f"{c.partition}={partition_value}", "rows": frame.height,
                             "files": files[:20]}
    if part is not None and part[1] > 1:
        result.meta["finrag"]["slice"] = {"index": part[0], "of": part[1]}
    return result


def raise_for(result: Any, c: Contract, frame: pl.DataFrame, fields: Mapping[str, str] | None = None) -> None:
    """Raise the InputError of a failed validation: its first failing expectation (suite order), first bad row."""
    if result.success:
        return
    table_rules = rules(c)
    failed = []
    for r in result.results:
        info = r.exception_info or {}
        if info.get("raised_exception"):  # a bug (a column missing from the batch, ...), not bad input
            raise JobError(f"{c.name}: Great Expectations could not evaluate {r.expectation_config.type}: "
                           f"{info.get('exception_message')}")
        if not r.success:
            failed.append((int(r.expectation_config.meta["finrag_rule_index"]), r))
    if not failed:
        raise JobError(f"{c.name}: validation failed without a failing expectation")
    index, first = min(failed, key=lambda x: x[0])  # suite order: GX may return results in another
    raise _input_error(c, table_rules[index], frame, first.result, fields or {})


def _first_row(rule: Rule, frame: pl.DataFrame, summary: Mapping[str, Any]) -> int:
    """The frame row to report, from GX's partial unexpected index list (row indices of the batch)."""
    index = [int(i) for i in summary.get("partial_unexpected_index_list") or []]
    if rule.kind not in ("key", "unique"):
        if index:
            return index[0]
        bad = summary.get("partial_unexpected_list") or []  # GX gave values only: find their first row
        return int(frame.select(pl.col(rule.columns[-1]).is_in(pl.Series(bad).implode())).to_series().arg_true()[0])
    # every row of a duplicated key is unexpected: report the first row that repeats an earlier one (as the first
    # line that makes the load invalid), i.e. the second occurrence
    seen: set[tuple[Any, ...]] = set()
    for i in index:
        k = tuple(frame.row(i, named=True)[col] for col in rule.columns)
        if k in seen:
            return i
        seen.add(k)
    # the first 20 unexpected rows hold no repeat (their keys repeat later): the frame's first repeating row
    repeats = frame.select(~pl.struct(list(rule.columns)).is_first_distinct()).to_series()
    return int(repeats.arg_true()[0])


def _where(frame: pl.DataFrame, i: int) -> dict[str, Any]:
    out: dict[str, Any] = {}
    if "_file" in frame.columns:
        out["file"] = frame["_file"][i]
    if "_line" in frame.columns:
        out["line"] = frame["_line"][i]
    return out


def _input_error(c: Contract, rule: Rule, frame: pl.DataFrame, summary: Mapping[str, Any],
                 fields: Mapping[str, str]) -> InputError:
    i = _first_row(rule, frame, summary)
    row = frame.row(i, named=True)
    col = rule.columns[-1]
    where = _where(frame, i)
    at = "" if where.get("line") is not None else f" (row {i})"
    value = row[col]
    if rule.kind == "required":
        why = "required value is missing"
    elif rule.kind == "accepted":
        why = f"value not one of {list(rule.values or ())}"
    elif rule.kind == "range":
        why = f"value below {rule.low}" if rule.low is not None and value < rule.low else f"value above {rule.high}"
    elif rule.kind == "key":
        why = f"duplicate key {tuple(c.key)}"
    elif rule.kind == "unique":
        why = f"duplicate {tuple(rule.columns)}"
    else:
        ref = rule.reference
        assert ref is not None
        noun = ref.table.removesuffix("s").replace("_", " ")
        if ref.same_dataset:
            why = (f"unknown {noun} {value!r}: dataset {row['dataset']!r} has {ref.table.replace('_', ' ')} and this "
                   f"is not one of them")
        else:
            why = f"unknown {noun} {value!r}: not in {ref.table}"
    field = fields.get(col, col).format_map(row)  # the input's name of the column (a template over the row)
    return InputError(f"{c.name}{at}: {why}", field=field, **where)


"""The lake's table contracts (SPEC §4), read from contracts.yml beside this module: the one place a table's
columns, types, keys, accepted values, ranges and references are declared.

Everything else derives from a `Contract`: the frames jobs build (`Contract.frame`), the landing validation
(python_jobs/core/lake.py, python_jobs/validation/), the typed empty placeholder partition of every table
(so dbt's sources bind on a fresh home), and the dbt sources / staging models (python_jobs/warehouse/dbt_codegen.py).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any

import polars as pl

from python_jobs.core.config import project_yaml
from python_jobs.core.errors import InputError

CONTRACTS_YML = Path(__file__).with_name("contracts.yml")
# where each row came from: validation errors name them
ORIGIN = {"_file": pl.String, "_line": pl.Int64}
COLUMN_KEYS = {"name", "type", "description", "required", "accepted", "min", "max", "default"}

_SCALARS: dict[str, tuple[pl.DataType, str]] = {
    # contract type -> (polars dtype, DuckDB type as dbt documents it)
    "string": (pl.String(), "varchar"),
    "boolean": (pl.Boolean(), "boolean"),
    "int32": (pl.Int32(), "integer"),
    "int64": (pl.Int64(), "bigint"),
    "float64": (pl.Float64(), "double"),
    "timestamp": (pl.Datetime("us", "UTC"), "timestamp with time zone"),
}


def parse_type(text: str, named: Mapping[str, str] | None = None) -> tuple[pl.DataType, str]:
    """A contract type → (polars dtype, SQL type): scalars, list<T>, struct<a:T,b:T>, or a name of `types`."""
    text = text.strip()
    named = named or {}
    if text in named:
        return parse_type(named[text], named)
    if text in _SCALARS:
        return _SCALARS[text]
    m = re.fullmatch(r"list<(.+)>", text)
    if m:
        inner, sql = parse_type(m[1], named)
        return pl.List(inner), f"{sql}[]"
    m = re.fullmatch(r"struct<(.+)>", text)
    if m:
        fields = [f.split(":", 1) for f in m[1].split(",")]
        parsed = [(name.strip(), *parse_type(t, named)) for name, t in fields]
        return (pl.Struct({n: d for n, d, _ in parsed}),
                "struct(" + ", ".join(f"{n} {s}" for n, _, s in parsed) + ")")
    raise ValueError(f"unknown contract type {text!r}")


@dataclass(frozen=True)
class Column:
    name: str
    type: str
    dtype: pl.DataType
    sql_type: str
    description: str
    required: bool = False
    accepted: tuple[str, ...] | None = None
    min: float | None = None
    max: float | None = None
    shared: bool = False  # described once in shared_columns (one docs block for every table that has it)
    # the value of a row landed before the column existed (read_parquet's union_by_name gives null there): the
    # staging view, the lake's readers and the landing of a frame without the column fill it in
    default: Any = None


@dataclass(frozen=True)
class Reference:
    column: str
    table: str
    field: str
    same_dataset: bool = True  # the parent row is looked up within the child's dataset


@dataclass(frozen=True)
class Contract:
    name: str
    description: str
    partition: str  # the column whose value names the partition directory (load / run id)
    key: tuple[str, ...]
    columns: tuple[Column, ...]
    references: tuple[Reference, ...] = ()
    unique: tuple[tuple[str, ...], ...] = ()  # more column sets unique within a load (besides the key)

    @property
    def schema(self) -> dict[str, pl.DataType]:
        return {c.name: c.dtype for c in self.columns}

    @property
    def polars_schema(self) -> pl.Schema:
        return pl.Schema(self.schema)

    def column(self, name: str) -> Column:
        for c in self.columns:
            if c.name == name:
                return c
        raise KeyError(f"{self.name} has no column {name!r}")

    @property
    def not_null(self) -> tuple[str, ...]:
        return tuple(c.name for c in self.columns if c.required)

    @property
    def accepted(self) -> dict[str, tuple[str, ...]]:
        return {c.name: c.accepted for c in self.columns if c.accepted}

    @property
    def defaults(self) -> dict[str, Any]:
        return {c.name: c.default for c in self.columns if c.default is not None}

    @property
    def ranges(self) -> dict[str, tuple[float | None, float | None]]:
        return {c.name: (c.min, c.max) for c in self.columns if c.min is not None or c.max is not None}

    def frame(self, rows: Iterable[Mapping[str, Any]] | None = None, *, fields: Mapping[str, str] | None = None,
              **columns: Sequence[Any]) -> pl.DataFrame:
        """Rows (dicts) or columns → a frame typed by this contract, with the columns the rows carry (the lake adds
        the others as nulls, the partition and created_at when it lands the frame) and the _file / _line origin
        columns when present. Unknown columns are an error here, not a silent drop. A value the column's type cannot
        hold (a number beyond int32, text in a number column) is an InputError naming the row's file and line and the
        field as `fields` names the column for the input (as `Lake.land` takes them; the column's name otherwise)."""
        if rows is not None:
            rows = list(rows)
            # no rows: every column the job fills (an empty frame still has the shape of the table)
            names = (list(dict.fromkeys(k for r in rows for k in r)) if rows
                     else [c.name for c in self.columns if c.name not in (self.partition, "created_at")])
            data = {n: [r.get(n) for r in rows] for n in names}
        else:
            data = dict(columns)
        schema = {**self.schema, **ORIGIN}
        unknown = [n for n in data if n not in schema]
        if unknown:
            raise KeyError(f"{self.name}: columns not in the contract: {unknown}")
        try:
            return pl.DataFrame(data, schema={n: schema[n] for n in data})
        except (TypeError, OverflowError, pl.exceptions.PolarsError) as exc:
            raise self._misfit(data, schema, fields or {}) or exc from None

    def _misfit(self, data: Mapping[str, Sequence[Any]], schema: Mapping[str, pl.DataType],
                fields: Mapping[str, str]) -> InputError | None:
        """The InputError of the first value (column by column, then row by row) that its column's type cannot hold;
        None when each value fits alone (then the frame's failure is not the input's)."""
        for name, values in data.items():
            dtype = schema[name]
            if _fits(values, dtype):
                continue
            i = next((i for i, v in enumerate(values) if v is not None and not _fits([v], dtype)), None)
            if i is None:
                continue
            row = {n: v[i] for n, v in data.items()}
            type_ = self.column(name).type if name not in ORIGIN else "int64"
            return InputError(f"{self.name}: {row[name]!r} does not fit the column {name}, of type {type_}",
                              file=row.get("_file"), line=row.get("_line"),
                              field=fields.get(name, name).format_map(row))
        return None

    def empty(self) -> pl.DataFrame:
        return pl.DataFrame(schema=self.polars_schema)


def _fits(values: Sequence[Any], dtype: pl.DataType) -> bool:
    try:
        pl.Series(values=values, dtype=dtype, strict=True)
    except (TypeError, OverflowError, pl.exceptions.PolarsError):
        return False
    return True


def _load(path: Path = CONTRACTS_YML) -> dict[str, Contract]:
    spec = project_yaml(path)
    named: dict[str, str] = spec.get("types") or {}
    shared: dict[str, dict[str, Any]] = spec["shared_columns"]
    out: dict[str, Contract] = {}
    for table, t in spec["tables"].items():
        raw = [({"name": c} if isinstance(c, str) else dict(c)) for c in t["columns"]]
        for c in raw:  # an unquoted comma in a flow mapping would silently become a key: refuse it
            unknown = set(c) - COLUMN_KEYS
            if unknown:
                raise ValueError(f"{path}: {table}.{c.get('name')} has unknown keys {sorted(unknown)} "
                                 "(quote a description that holds a comma)")
        names = [c["name"] for c in raw]
        for implicit in (t["partition"], "created_at"):
            if implicit not in names:
                raw.append({"name": implicit})
        required = set(t["key"]) | {t["partition"], "created_at"}
        columns = []
        for c in raw:
            base = shared.get(c["name"], {})
            if "type" not in c and not base:
                raise ValueError(f"{path}: {table}.{c['name']} has no type and is not a shared column")
            type_text = c.get("type", base.get("type"))
            dtype, sql = parse_type(type_text, named)
            columns.append(Column(
                name=c["name"], type=type_text, dtype=dtype, sql_type=sql,
                description=c.get("description", base.get("description", "")),
                required=bool(c.get("required")) or c["name"] in required,
                accepted=tuple(str(v) for v in c["accepted"]) if c.get("accepted") else None,
                min=c.get("min"), max=c.get("max"),
                shared="description" not in c and bool(base),
                default=c.get("default"),
            ))
        refs = tuple(Reference(r["column"], r["to"], r.get("field", r["column"]), r.get("same_dataset", True))
                     for r in t.get("references") or ())
        unique = tuple(tuple(u) for u in t.get("unique") or ())
        out[table] = Contract(table, t["description"], t["partition"], tuple(t["key"]), tuple(columns), refs, unique)
    return out


@cache
def shared_columns() -> dict[str, Column]:
    """The columns described once for every table that has them (each a docs block of its own in dbt)."""
    spec = project_yaml(CONTRACTS_YML)
    named = spec.get("types") or {}
    return {name: Column(name, c["type"], *parse_type(c["type"], named), c["description"], shared=True)
            for name, c in spec["shared_columns"].items()}


CONTRACTS: dict[str, Contract] = _load()


def contract(table: str) -> Contract:
    try:
        return CONTRACTS[table]
    except KeyError:
        raise KeyError(f"unknown lake table {table!r}; known: {', '.join(CONTRACTS)}") from None

"""The Python functions the warehouse registers into SQL, and what each one's results depend on.

Every registration (text_metrics.py, paired_tests.py) goes through `register`, which records the SQL name with the
Python function that computes it. `version(names)` hashes, for the registered names among `names`, the source of the
function and of everything it reaches: the project's functions, classes and modules it names (followed
recursively), the constants it reads, and the installed version of every outside library it uses. dbt's
code_fingerprint (macros/retrieval/retrieval_versions.sql) passes every function name a model's SQL calls to
`sql_function_version`, so editing a text metric or the paired tests recomputes exactly the runs of the models
that call them, and nothing keeps a list of those files by hand.
"""

from __future__ import annotations

import dis
import hashlib
import importlib
import inspect
import sys
import types
from collections.abc import Callable, Collection, Iterable
from functools import cache
from importlib import metadata

PACKAGE = "python_jobs"
VERSION_FUNCTION = "sql_function_version"

# SQL name -> the Python functions whose code decides its results (the function, and the wrapper that feeds it)
REGISTERED: dict[str, tuple[Callable[..., object], ...]] = {}


def scalar_functions(conn) -> set[str]:
    """The names of the scalar functions a DuckDB connection has (~15 ms: DuckDB lists its whole catalog), what the
    modules' register_duckdb_functions read to register each function once; one reader registering several modules'
    functions on one connection reads it once and passes it to each."""
    return {r[0] for r in conn.execute(
        "select function_name from duckdb_functions() where function_type = 'scalar'").fetchall()}


def register(name: str, *fns: Callable[..., object]) -> None:
    """Record that SQL `name` computes with `fns` (on DuckDB and on Spark alike)."""
    REGISTERED[name] = fns


def _code_objects(code: types.CodeType) -> Iterable[types.CodeType]:
    yield code
    for const in code.co_consts:
        if isinstance(const, types.CodeType):
            yield from _code_objects(const)


@cache
def _distributions() -> dict[str, list[str]]:
    return metadata.packages_distributions()


def _library_version(name: str) -> str:
    """The installed version of the distribution that provides the (top-level package of) module `name`."""
    top = name.split(".")[0]
    for dist in _distributions().get(top, []):
        try:
            return f"{top}=={metadata.version(dist)}"
        except metadata.PackageNotFoundError:
            continue
    return f"{top} (python {sys.version_info.major}.{sys.version_info.minor})"


def _ours(obj: object) -> bool:
    return (getattr(obj, "__module__", None) or getattr(obj, "__name__", "")).split(".")[0] == PACKAGE


def _closure(obj: object, seen: dict[str, str]) -> None:
    """Add to `seen` (key -> text) the source of `obj` and of what it reaches."""
    obj = inspect.unwrap(obj) if callable(obj) else obj  # an lru_cache'd function: the function itself
    key = obj.__name__ if inspect.ismodule(obj) else f"{obj.__module__}.{obj.__qualname__}"
    if key in seen:
        return
    if inspect.ismodule(obj):
        seen[key] = inspect.getsource(obj) if _ours(obj) else _library_version(obj.__name__)
        return
    if not _ours(obj):
        module = inspect.getmodule(obj)
        seen[key] = _library_version(module.__name__) if module is not None else repr(obj)
        return
    seen[key] = inspect.getsource(obj)
    functions = [obj] if inspect.isfunction(obj) else [
        member for member in vars(obj).values() if inspect.isfunction(member)] if inspect.isclass(obj) else []
    for fn in functions:
        codes = list(_code_objects(fn.__code__))
        # the modules the function imports in its own body (`from rouge_score import tokenize`): an outside one by its
        # version alone, without importing it here (scipy.stats: 0.4 s for a build that may never call it)
        for module in sorted({ins.argval for code in codes for ins in dis.get_instructions(code)
                              if ins.opname == "IMPORT_NAME"}):
            if module.split(".")[0] == PACKAGE:
                _closure(importlib.import_module(module), seen)
            else:
                seen.setdefault(module, _library_version(module))
        names = {n for code in codes for n in code.co_names}
        for name in sorted(names):
            # names the function reads from its module (attribute names and builtins are not found there)
            target = fn.__globals__.get(name)
            if target is None:
                continue
            if isinstance(target, (int, float, str, bytes, tuple, frozenset, dict, list)):
                seen[f"{fn.__module__}.{name}"] = repr(target)
            elif inspect.isfunction(inspect.unwrap(target)) or inspect.isclass(target) or inspect.ismodule(target):
                _closure(target, seen)


@cache
def function_version(name: str) -> str:
    """A hash of what the registered function `name` computes with (see the module docstring)."""
    seen: dict[str, str] = {}
    for fn in REGISTERED[name]:
        _closure(fn, seen)
    return hashlib.sha256("\0".join(f"{k}\0{v}" for k, v in sorted(seen.items())).encode()).hexdigest()


def version(names: str | None) -> str:
    """For a comma-separated list of SQL function names: a hash of the registered ones' versions ('' for none)."""
    wanted = sorted({n.strip().lower() for n in (names or "").split(",")} & set(REGISTERED))
    if not wanted:
        return ""
    return hashlib.sha256("|".join(f"{n}={function_version(n)}" for n in wanted).encode()).hexdigest()


def register_duckdb_version_function(conn, existing: Collection[str] | None = None) -> None:
    """`sql_function_version(names VARCHAR) -> VARCHAR` on a DuckDB connection (`existing`: as scalar_functions)."""
    from duckdb import sqltypes as t

    existing = scalar_functions(conn) if existing is None else existing
    if VERSION_FUNCTION not in existing:
        conn.create_function(VERSION_FUNCTION, version, [t.VARCHAR], t.VARCHAR, null_handling="special",
                             side_effects=False)


def register_spark_version_function(spark) -> None:
    """The same function on a SparkSession (the models' SQL calls it on both engines)."""
    spark.udf.register(VERSION_FUNCTION, version, "string")


# ---- results of the Arrow UDFs ---------------------------------------------------------------------------------------
def arrow_array(values, type, mask=None):  # noqa: A002 (pyarrow's own name for it)
    """`pa.array(values, type=type, mask=mask)` for the UDFs' result types (float64, bool, string), built from its
    buffers: `pa.array` imports pandas on its first call (~0.4 CPU-seconds, what a whole on-demand `finrag compare`
    query costs besides), and no UDF result needs pandas. `values`: a list (None for NULL) or a numpy array;
    `mask`: True for NULL."""
    import numpy as np
    import pyarrow as pa

    n = len(values)
    if isinstance(values, np.ndarray) and values.dtype != object:
        valid = np.ones(n, dtype=bool)
    else:
        valid = np.fromiter((v is not None for v in values), dtype=bool, count=n)
    if mask is not None:
        valid &= ~np.asarray(mask, dtype=bool)
    nulls = int(n - valid.sum())
    validity = pa.py_buffer(np.packbits(valid, bitorder="little")) if nulls else None
    if pa.types.is_string(type):
        data = [v.encode() if ok else b"" for v, ok in zip(values, valid, strict=True)]
        offsets = np.zeros(n + 1, dtype=np.int32)
        np.cumsum([len(d) for d in data], out=offsets[1:])
        buffers = [validity, pa.py_buffer(offsets), pa.py_buffer(b"".join(data))]
    elif pa.types.is_boolean(type):
        bits = np.fromiter((bool(v) and ok for v, ok in zip(values, valid, strict=True)), dtype=bool, count=n)
        buffers = [validity, pa.py_buffer(np.packbits(bits, bitorder="little"))]
    elif pa.types.is_float64(type):
        data = np.asarray(values if valid.all() else [v if ok else 0.0 for v, ok in zip(values, valid, strict=True)],
                          dtype=np.float64)
        buffers = [validity, pa.py_buffer(np.ascontiguousarray(data))]
    else:
        raise TypeError(f"arrow_array: no {type} results")
    return pa.Array.from_buffers(type, n, buffers, null_count=nulls)


def arrow_struct(children: dict[str, object], mask) -> object:
    """`pa.StructArray.from_arrays(children, names, mask=mask)` built from its buffers: from_arrays imports
    pyarrow.compute to invert the mask (~30 ms, in every on-demand `finrag compare`). `children`: name -> the field's
    array (arrow_array's); `mask`: True for a NULL struct."""
    import numpy as np
    import pyarrow as pa

    valid = ~np.asarray(mask, dtype=bool)
    nulls = int(len(valid) - valid.sum())
    validity = pa.py_buffer(np.packbits(valid, bitorder="little")) if nulls else None
    struct = pa.struct([pa.field(name, array.type) for name, array in children.items()])
    return pa.Array.from_buffers(struct, len(valid), [validity], null_count=nulls, children=list(children.values()))

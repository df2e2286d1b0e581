"""Line-by-line readers for the benchmark input formats (JSONL, TSV/CSV with a header, whitespace TREC files).

Every record is parsed into a pydantic model, so any error names the file, the 1-based line and the field:
malformed JSON, a missing or mistyped field, non-UTF-8 bytes, a wrong column count, an empty file, a number beyond
its column (`integer`) or beyond a double, and, in whitespace-separated files, a header line or a value with a space
told as such. Ingest jobs call these before anything lands (SPEC §7). This is a shared (non-verb) module.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from functools import partial
from pathlib import Path
from typing import Annotated, Any, TypeVar

import polars as pl
from pydantic import (
    AfterValidator,
    BaseModel,
    ConfigDict,
    PlainValidator,
    ValidationError,
)

from python_jobs.core.errors import InputError, validation_error

M = TypeVar("M", bound=BaseModel)
_REPLACEMENT = "\ufffd"
_KEY_BEFORE = re.compile(r'[{,]\s*"((?:[^"\\]|\\.)*)"')  # a string in key position: after '{' or ','


# ---- records ------------------------------------------------------------------------------------------------
class Record(BaseModel):
    # extra fields are kept (they go to `meta`), but declared ones must have the declared type
    model_config = ConfigDict(extra="allow", str_strip_whitespace=False)


def integer(dtype: pl.DataType) -> Any:
    """The record type of a whole number that lands in a column of `dtype` (pl.Int32, ...): a number beyond the
    column's range is an error naming its line and field, not an overflow when the frame is built."""
    bits = {pl.Int8: 8, pl.Int16: 16, pl.Int32: 32, pl.Int64: 64}[dtype]
    low, high = -(2 ** (bits - 1)), 2 ** (bits - 1) - 1

    def within(value: int) -> int:
        if not low <= value <= high:
            raise ValueError(f"out of range: a whole number from {low} to {high} is expected")
        return value

    return Annotated[int, AfterValidator(within)]


# A period, as the documents' `period` column holds it (its description in the contracts): a year, or a year's
# quarter. FinanceBench writes years as numbers (doc_period 2015); BEIR titles carry them in doc names.
PERIOD = r"\d{4}(?:Q[1-4])?"


def _period(value: object) -> str:
    text = str(value) if isinstance(value, int) and not isinstance(value, bool) else value
    if not isinstance(text, str) or not re.fullmatch(PERIOD, text):
        raise ValueError("a period is a year (e.g. 2015) or a quarter (e.g. 2023Q1)")
    return text


Period = Annotated[str, PlainValidator(_period)]


# ---- helpers -------------------------------------------------------------------------------------------------
def _bad_utf8_field_json(text: str) -> str:
    """Which JSON field holds the undecodable bytes (they were replaced by U+FFFD)."""
    try:
        obj = json.loads(text)
    except json.JSONDecodeError:
        return _json_key_at(text, text.find(_REPLACEMENT))
    found: list[str] = []

    def walk(v: object, path: str) -> None:
        if found:
            return
        if isinstance(v, str) and _REPLACEMENT in v:
            found.append(path)
        elif isinstance(v, dict):
            for k, x in v.items():
                walk(x, f"{path}.{k}" if path else str(k))
                if _REPLACEMENT in str(k) and not found:
                    found.append(path or "<key>")
        elif isinstance(v, list):
            for i, x in enumerate(v):
                walk(x, f"{path}[{i}]")

    walk(obj, "")
    return found[0] if found else "<record>"


def _json_key_at(text: str, pos: int) -> str:
    """The last object key that starts before `pos`: the field being read when parsing failed."""
    keys = _KEY_BEFORE.findall(text[: max(pos, 0)])
    return keys[-1] if keys else "<record>"


def file_lines(path: Path) -> Iterator[tuple[int, bytes]]:
    with open(path, "rb") as fh:
        for i, raw in enumerate(fh, start=1):
            yield i, _raw_line(i, raw)


def _raw_line(number: int, raw: bytes) -> bytes:
    """A line's bytes as the readers take them: without its line end, and without the file's UTF-8 BOM on line 1."""
    if number == 1 and raw.startswith(b"\xef\xbb\xbf"):
        raw = raw[3:]
    return raw.rstrip(b"\r\n")


def decode_line(raw: bytes, file: str, line: int, field_of_replaced) -> str:
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        replaced = raw.decode("utf-8", errors="replace")
        raise InputError(
            f"bytes are not valid UTF-8 (byte offset {exc.start}: {raw[exc.start:exc.start + 4]!r})",
            file=file, line=line, field=field_of_replaced(replaced),
        ) from None


class _DuplicateKey(ValueError):
    def __init__(self, key: str) -> None:
        super().__init__(key)
        self.key = key


def _unique_keys(pairs: list[tuple[str, object]]) -> dict[str, object]:
    """json's object_pairs_hook: a key given twice in one object is an error (json.loads keeps the last silently)."""
    obj: dict[str, object] = {}
    for key, value in pairs:
        if key in obj:
            raise _DuplicateKey(key)
        obj[key] = value
    return obj


class _NotFinite(ValueError):
    def __init__(self, number: str) -> None:
        super().__init__(number)
        self.number = number


def _finite(number: str) -> float:
    """json's parse_float / parse_constant: 1e999 (beyond a double) would read as inf, and NaN / Infinity are not
    JSON; none of them is a number any column can hold."""
    value = float(number)
    if not math.isfinite(value):
        raise _NotFinite(number)
    return value


def json_line(text: str, file: str, line: int) -> object:
    """One JSON value of a JSONL line; malformed JSON, a number beyond a double (or NaN / Infinity) and a key given
    twice in one object are InputErrors that name the file, the line and the key."""
    try:
        return json.loads(text, object_pairs_hook=_unique_keys, parse_float=_finite, parse_constant=_finite)
    except _NotFinite as exc:
        beyond = " (beyond a double's range, about 1.8e308)" if re.match(r"-?\d", exc.number) else ""
        raise InputError(f"{exc.number} is not a finite number{beyond}", file=file, line=line,
                         field=_json_key_at(text, text.find(exc.number))) from None
    except json.JSONDecodeError as exc:
        raise InputError(f"malformed JSON at column {exc.colno}: {exc.msg}", file=file, line=line,
                         field=_json_key_at(text, exc.pos)) from None
    except _DuplicateKey as exc:
        raise InputError(f"key {exc.key!r} appears twice in one JSON object (which value is meant?)", file=file,
                         line=line, field=exc.key) from None


def jsonl_lines(path: str | Path) -> Iterator[tuple[int, object]]:
    """(line number, JSON value) of every non-blank line of a JSONL file: UTF-8 checked (the error names the field
    holding the bad bytes), a leading BOM dropped, duplicate keys refused."""
    file = str(path)
    for line, raw in file_lines(Path(path)):
        text = decode_line(raw, file, line, _bad_utf8_field_json)
        if text.strip():  # blank lines (e.g. a trailing one) carry no record
            yield line, json_line(text, file, line)


def empty_file_error(file: str, first_field: str) -> InputError:
    return InputError("file is empty: expected at least one record", file=file, line=1, field=first_field)


# ---- readers -------------------------------------------------------------------------------------------------
def read_jsonl(path: str | Path, model: type[M], allow_empty: bool = False) -> list[tuple[int, M]]:
    """Every non-blank line of a JSONL file as (line number, parsed model)."""
    path = Path(path)
    file = str(path)
    names = {f.alias: f.alias for f in model.model_fields.values() if f.alias}
    first_field = next(iter(model.model_fields.values())).alias or next(iter(model.model_fields))
    out: list[tuple[int, M]] = []
    for line, obj in jsonl_lines(path):
        if not isinstance(obj, dict):
            raise InputError(f"expected a JSON object, got {type(obj).__name__}", file=file, line=line,
                             field="<record>")
        try:
            out.append((line, model.model_validate(obj)))
        except ValidationError as exc:
            raise validation_error(exc, file, line, names) from None
    if not out and not allow_empty:
        raise empty_file_error(file, first_field)
    return out


def read_delimited(
    path: str | Path,
    model: type[M],
    columns: Sequence[str],
    *,
    sep: str | None,
    header: Sequence[Sequence[str]] | None = None,
    allow_empty: bool = False,
    trailing: bool = False,
) -> list[tuple[int, M]]:
    """A delimited text file as (line number, model) rows.

    `sep=None` splits on runs of whitespace (TREC files). With `header`, the first line must equal one of the
    accepted header spellings (compared case-insensitively, '-' and '_' alike). With `trailing`, cells after the
    last column are ignored (trec_eval reads a run line's six fields and skips the rest of the line).
    """
    path = Path(path)
    out = list(parse_delimited(file_lines(path), str(path), model, columns, sep=sep, header=header, trailing=trailing))
    if not out and not allow_empty:
        raise empty_file_error(str(path), columns[0])
    return out


def parse_delimited(
    lines: Iterable[tuple[int, bytes]],
    file: str,
    model: type[M],
    columns: Sequence[str],
    *,
    sep: str | None,
    header: Sequence[Sequence[str]] | None = None,
    trailing: bool = False,
) -> Iterator[tuple[int, M]]:
    """`read_delimited`'s rows, one at a time, from (line number, raw line) pairs: any part of a file (a block of a
    sliced landing, `block_lines`) is checked exactly as the whole file would be."""
    seen_header = header is None
    norm = lambda cells: [c.strip().lower().replace("-", "_") for c in cells]  # noqa: E731

    def split(text: str) -> list[str]:
        return text.split() if sep is None else text.split(sep)

    def bad_field(replaced: str) -> str:
        cells = split(replaced)
        for i, c in enumerate(cells):
            if _REPLACEMENT in c:
                return columns[i] if i < len(columns) else f"column {i + 1}"
        return columns[0]

    def parse(cells: list[str], line: int) -> M:
        if trailing and len(cells) > len(columns):
            cells = cells[:len(columns)]
        if len(cells) != len(columns):
            field = columns[len(cells)] if len(cells) < len(columns) else f"column {len(columns) + 1}"
            raise InputError(
                f"expected {len(columns)} columns ({', '.join(columns)}), got {len(cells)}",
                file=file, line=line, field=field,
            )
        try:
            return model.model_validate(dict(zip(columns, (c.strip() for c in cells))))
        except ValidationError as exc:
            raise validation_error(exc, file, line) from None

    at_start: bool | None = None  # the next record is the file's first (these lines start at the file's line 1)
    for line, raw in lines:
        at_start = line == 1 if at_start is None else at_start
        text = decode_line(raw, file, line, bad_field)
        if not text.strip():
            continue
        first_record, at_start = at_start, False
        cells = split(text)
        if not seen_header:
            seen_header = True
            if norm(cells) not in [norm(h) for h in header or []]:
                raise InputError(
                    f"expected a header line {sep.join(header[0]) if sep else ' '.join(header[0])!r}, "
                    f"got {text[:80]!r}",
                    file=file, line=line, field="header",
                )
            continue
        try:
            record = parse(cells, line)
        except InputError as exc:
            if sep is None:  # whitespace-separated: say what a column count or a type error stands for here
                raise _whitespace_error(exc, text, cells, columns, model, partial(parse, line=line),
                                        first_record=first_record) from None
            raise
        yield line, record


_NUMBER = re.compile(r"[-+]?(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?")


def _whitespace_error(exc: InputError, text: str, cells: list[str], columns: Sequence[str], model: type[BaseModel],
                      parse: Callable[[list[str]], BaseModel], first_record: bool) -> InputError:
    """The error of a whitespace-separated line that does not parse, told as what it most likely is:
    - a header line (TREC files have none): the file's first line, with no number in it where the format has numbers;
    - a value with a space in it: joining two neighbouring cells into one text column makes the line parse (the last
      such column is named: ids come before the numbers, and a docno is the likeliest to hold a space);
    - else the plain error (`exc`)."""
    text_columns = [i for i, c in enumerate(columns) if model.model_fields[c].annotation is str]
    if first_record and len(text_columns) < len(columns) and not any(_NUMBER.fullmatch(c) for c in cells):
        return InputError(f"a header line? this format has none: expected {', '.join(columns)} values, got "
                          f"{text[:80]!r}", file=exc.file, line=exc.line, field="header")
    joined = []
    for i in text_columns:
        if i + 1 < len(cells) and len(cells) > len(columns):
            try:
                parse([*cells[:i], f"{cells[i]} {cells[i + 1]}", *cells[i + 2:]])
            except InputError:
                continue
            joined.append(i)
    if joined:
        i = joined[-1]
        return InputError(f"{columns[i]} {cells[i] + ' ' + cells[i + 1]!r} contains a space: fields are separated by "
                          f"whitespace, so the fields after it shift (the line has {len(cells)} where "
                          f"{len(columns)} are expected: {', '.join(columns)})",
                          file=exc.file, line=exc.line, field=columns[i])
    return exc


def file_blocks(path: str | Path, block_bytes: int) -> Iterator[tuple[int, bytes]]:
    """A file as (number of its first line, bytes) blocks of about `block_bytes`, each ending at a line end (so a
    block holds whole lines), in file order: what a sliced landing reads the file in, one block in memory at a
    time."""
    first, rest = 1, b""
    with open(path, "rb") as fh:
        while True:
            chunk = fh.read(block_bytes)
            if not chunk:
                break
            data = rest + chunk
            end = data.rfind(b"\n") + 1
            if not end:  # no line end yet: a line longer than a block
                rest = data
                continue
            block, rest = data[:end], data[end:]
            yield first, block
            first += block.count(b"\n")
    if rest:
        yield first, rest


def block_lines(first: int, block: bytes) -> Iterator[tuple[int, bytes]]:
    """The (line number, raw line) pairs of a `file_blocks` block, as `file_lines` gives them for the whole file."""
    parts = block.split(b"\n")
    if parts and parts[-1] == b"":
        parts.pop()
    for i, raw in enumerate(parts, start=first):
        yield i, _raw_line(i, raw)


def read_whitespace_frame(path: str | Path | bytes, schema: Mapping[str, pl.DataType],
                          keep: Sequence[str] | None = None, trailing: bool = False,
                          first_line: int = 1) -> pl.DataFrame | None:
    """A whitespace-delimited file (TREC qrels and runs) read in one vectorised pass: `_line` (1-based) plus the
    `schema` columns (or only those in `keep`: the others are checked, not kept), blank lines skipped; None when any
    line is not plainly well-formed (not UTF-8, a wrong column count, a value that does not cast, a non-finite
    float). With `trailing`, text after the last column is ignored, as `read_delimited(trailing=True)` does.

    Per-line pydantic parsing (`read_delimited`) costs ~2 GB and ~18 s per million lines. Callers use this first and
    fall back to `read_delimited` on None: that reader decides what is accepted and names the file, line and field
    of what is not, so both paths accept the same files and only the well-formed ones take the fast one.

    `path` may also be a block of a file's bytes (`file_blocks`) whose first line is line `first_line`."""
    names = list(schema)
    kept = [n for n in names if keep is None or n in keep]
    cells = r"^\s*" + r"\s+".join(r"(\S+)" for _ in names) + (r"(?:\s.*)?$" if trailing else r"\s*$")
    typed = [pl.col("cells").struct.field(f"{i + 1}").cast(t, strict=False).alias(n)
             for i, (n, t) in enumerate(schema.items())]
    bad = [pl.col(n).is_null() for n in names] + [~pl.col(n).is_finite() for n, t in schema.items() if t.is_float()]
    try:
        frame = (
            pl.scan_csv(path, has_header=False, separator="\x01", quote_char=None, new_columns=["text"],
                        schema={"text": pl.String}, encoding="utf8")
            .with_row_index("_line", offset=first_line)
            .with_columns(pl.col("text").str.strip_chars_start("\ufeff"))
            .filter(pl.col("text").str.strip_chars().str.len_bytes() > 0)
            .select(pl.col("_line").cast(pl.Int64), pl.col("text").str.extract_groups(cells).alias("cells"))
            .select("_line", *typed)
            .select("_line", *kept, pl.any_horizontal(bad).alias("_bad"))
            .collect(engine="streaming")
        )
    except (pl.exceptions.PolarsError, OSError):
        return None
    if frame.height == 0 or frame["_bad"].any():
        return None
    return frame.drop("_bad")

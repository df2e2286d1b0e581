"""The one error type jobs raise for bad input: it names the file, line and field."""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from pydantic import ValidationError

REQUIRED_SETTING = "required_setting"  # the pydantic error type of a setting not given (core.job_config.required)


class InputError(Exception):
    """Bad input. The CLI prints it and exits non-zero; nothing of the load has landed."""

    def __init__(self, message: str, *, file: str | None = None, line: int | None = None, field: str | None = None):
        self.file, self.line, self.field, self.detail = file, line, field, message
        where = []
        if file is not None:
            where.append(f"file {file}")
        if line is not None:
            where.append(f"line {line}")
        if field is not None:
            where.append(f"field {field!r}")
        super().__init__(f"{', '.join(where)}: {message}" if where else message)


class JobError(Exception):
    """A job could not finish (a failed step, an unusable warehouse): the CLI prints it and exits non-zero."""


def _field_of(loc: Sequence[object], names: dict[str, str] | None = None) -> str:
    parts: list[str] = []
    for p in loc:
        if isinstance(p, int):
            parts[-1:] = [f"{parts[-1]}[{p}]" if parts else f"[{p}]"]
        else:
            parts.append((names or {}).get(str(p), str(p)))
    return ".".join(parts)


_TYPE_TAG = re.compile(r"^(str|int|float|bool|none|list|dict|bytes|[a-z\-]+\[.*\])$")


def _trim(loc: Sequence[object]) -> list[object]:
    """Drop pydantic's union-member tags from an error location: ('gold_answer', 'str') → ('gold_answer',)."""
    out = list(loc)
    while len(out) > 1 and isinstance(out[-1], str) and _TYPE_TAG.match(out[-1]):
        out.pop()
    return out


def validation_error(exc: ValidationError, file: str | None = None, line: int | None = None,
                     names: dict[str, str] | None = None) -> InputError:
    """A pydantic validation error as an InputError naming the first failing field (a record's, a config's)."""
    errors = exc.errors()
    err = errors[0]
    loc = _trim(err["loc"])
    field = _field_of(loc, names) or None
    if len(loc) < len(err["loc"]):  # a union: name the accepted types
        tags = [str(e["loc"][len(loc)]) for e in errors if _trim(e["loc"]) == loc and len(e["loc"]) > len(loc)]
        why = f"value must be one of the types {', '.join(dict.fromkeys(tags))}"
    else:
        why = ("required field is missing" if err["type"] == "missing"
               else str(err["ctx"]["error"]) if err["type"] == "value_error" else err["msg"])  # ours, as raised
    if err["type"] not in ("missing", REQUIRED_SETTING) and "input" in err:
        why += f" (got {str(err['input'])[:60]!r})"
    return InputError(why, file=file, line=line, field=field)

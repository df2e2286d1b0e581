"""The one error type jobs raise for bad input: it names the file, line and field."""

from __future__ import annotations


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

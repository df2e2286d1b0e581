"""The base of the jobs' typed configs (a retrieval run, an answer run, a judge run, a generation run, each
retriever's settings): a frozen pydantic model, built from keyword arguments or a plain dict (the CLI's options, a
sweep's YAML grid), whose unknown keys and bad values raise an InputError naming the field. Each setting and its
default are declared once, in its config class; the CLI reads the defaults from there (`default`)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Self

from pydantic import BaseModel, ConfigDict, ValidationError
from pydantic_core import PydanticCustomError

from python_jobs.core.errors import REQUIRED_SETTING, InputError, validation_error


def required(message: str) -> PydanticCustomError:
    """What a validator raises for a setting that has no default and was not given; `message` says what to give."""
    return PydanticCustomError(REQUIRED_SETTING, message)


class JobConfig(BaseModel):
    # strict: an int setting takes an int (not "10", True or 10.0); a float one also an int. Tuples, which a YAML
    # file spells as lists, are declared with Field(strict=False).
    model_config = ConfigDict(frozen=True, extra="forbid", strict=True)

    def __init__(self, **values: Any) -> None:
        try:
            super().__init__(**values)
        except ValidationError as exc:
            raise validation_error(exc) from None

    @classmethod
    def from_dict(cls, values: Mapping[str, Any], *, file: str | None = None) -> Self:
        """The config of a plain dict (e.g. a YAML grid's point; `file` names it in errors)."""
        bad = [k for k in values if not isinstance(k, str)]
        if bad:
            raise InputError(f"a setting's name must be a string, got {bad[0]!r}", file=file)
        try:
            return cls(**values)
        except InputError as exc:
            raise InputError(exc.detail, file=file, field=exc.field) from None

    @classmethod
    def default(cls, name: str) -> Any:
        """The declared default of a setting (what the CLI shows and passes when the option is not given)."""
        return cls.model_fields[name].get_default(call_default_factory=True)

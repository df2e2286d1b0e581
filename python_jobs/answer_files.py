"""The answer-file format (shared by the `import-answers` and `export-answers` verbs; not a verb itself).

One JSON object per line: id, question, answer, passages (ordered, each with its text and doc ids), final_prompt
— validated against schemas/answer_file.schema.json. Partial files (any subset of a dataset's questions) are valid.
The evaluation guideline judges only the first 300 words of an answer and the first 10 passages: imported runs carry
params max_words = 300 and max_passages = 10, so dbt scores the cut answer.
"""

from __future__ import annotations

import json
from functools import lru_cache
from pathlib import Path
from typing import Any

from .config import PROJECT_DIR
from .errors import InputError

SCHEMA_PATH = PROJECT_DIR / "schemas" / "answer_file.schema.json"
JUDGED_WORDS = 300
JUDGED_PASSAGES = 10


@lru_cache(maxsize=1)
def validator():
    from jsonschema import Draft202012Validator

    schema = json.loads(SCHEMA_PATH.read_text())
    Draft202012Validator.check_schema(schema)
    return Draft202012Validator(schema)


def check_record(record: Any, file: str, line: int) -> dict[str, Any]:
    """Validate one line's object; the error names file, line and the JSON path of the field."""
    errors = sorted(validator().iter_errors(record), key=lambda e: list(e.absolute_path))
    if errors:
        err = errors[0]
        path = ".".join(str(p) for p in err.absolute_path)
        if err.validator == "required":
            missing = next((p for p in err.validator_value if p not in (err.instance or {})), None)
            path = f"{path}.{missing}" if path and missing else (missing or path)
        elif err.validator == "additionalProperties":
            extra = sorted(set(err.instance) - set(err.schema.get("properties", {})))
            path = f"{path}.{extra[0]}" if path and extra else (extra[0] if extra else path)
        raise InputError(err.message, file=file, line=line, field=path or "(record)")
    return record


def read_answer_file(path: Path) -> list[tuple[int, dict[str, Any]]]:
    """Every record of the file with its line number, all validated (nothing is returned when one is bad)."""
    records: list[tuple[int, dict[str, Any]]] = []
    seen: dict[str, int] = {}
    with open(path, encoding="utf-8") as fh:
        for line_no, raw in enumerate(fh, start=1):
            if not raw.strip():
                continue
            try:
                record = json.loads(raw)
            except json.JSONDecodeError as exc:
                raise InputError(f"not valid JSON: {exc.msg} (column {exc.colno})", file=str(path), line=line_no,
                                 field="(json)") from None
            check_record(record, str(path), line_no)
            if record["id"] in seen:
                raise InputError(f"question {record['id']!r} answered twice (first on line {seen[record['id']]})",
                                 file=str(path), line=line_no, field="id")
            seen[record["id"]] = line_no
            records.append((line_no, record))
    return records

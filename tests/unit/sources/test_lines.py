"""The line readers shared by the TREC sources: trailing text after a run line's six fields is ignored by both the
vectorised reader and the per-line one (as trec_eval does, its fixture results.trunc has such lines), and only
when asked: qrels and other whitespace files keep an exact column count, and the error names the extra column."""

from __future__ import annotations

from pathlib import Path

import pytest

from python_jobs.core.errors import InputError
from python_jobs.sources.lines import read_delimited, read_whitespace_frame
from python_jobs.sources.trec import TREC_RUN_SCHEMA, TrecRunRow

LINES = ["301 Q0 d1 1 2.5 STANDARD more junk at", "301\tQ0\td2\t2\t1.5\tSTANDARD", "302 Q0 d3 1 0.5 STANDARD x"]


def write(tmp_path: Path, lines: list[str]) -> Path:
    path = tmp_path / "run.trec"
    path.write_text("\n".join(lines) + "\n")
    return path


def test_both_readers_skip_trailing_text_when_asked(tmp_path: Path) -> None:
    path = write(tmp_path, LINES)
    frame = read_whitespace_frame(path, TREC_RUN_SCHEMA, trailing=True)
    assert frame is not None
    assert frame.select("topic", "docno", "rank", "score", "tag").rows() == [
        ("301", "d1", 1, 2.5, "STANDARD"), ("301", "d2", 2, 1.5, "STANDARD"), ("302", "d3", 1, 0.5, "STANDARD")]
    rows = read_delimited(path, TrecRunRow, tuple(TREC_RUN_SCHEMA), sep=None, trailing=True)
    assert [(line, r.docno, r.tag) for line, r in rows] == [(1, "d1", "STANDARD"), (2, "d2", "STANDARD"),
                                                           (3, "d3", "STANDARD")]


def test_an_exact_column_count_otherwise(tmp_path: Path) -> None:
    path = write(tmp_path, LINES)
    assert read_whitespace_frame(path, TREC_RUN_SCHEMA) is None  # the per-line reader decides, and names the line
    with pytest.raises(InputError) as err:
        read_delimited(path, TrecRunRow, tuple(TREC_RUN_SCHEMA), sep=None)
    assert err.value.line == 1 and err.value.field == "column 7"


def test_trailing_text_does_not_hide_a_bad_field(tmp_path: Path) -> None:
    path = write(tmp_path, [LINES[0], "301 Q0 d2 two 1.5 STANDARD junk"])
    assert read_whitespace_frame(path, TREC_RUN_SCHEMA, trailing=True) is None
    with pytest.raises(InputError) as err:
        read_delimited(path, TrecRunRow, tuple(TREC_RUN_SCHEMA), sep=None, trailing=True)
    assert err.value.line == 2 and err.value.field == "rank"
    # too few columns is still an error with trailing on
    short = write(tmp_path, ["301 Q0 d1 1 2.5"])
    with pytest.raises(InputError) as err:
        read_delimited(short, TrecRunRow, tuple(TREC_RUN_SCHEMA), sep=None, trailing=True)
    assert err.value.field == "tag"


def test_jsonl_refuses_a_key_given_twice_at_any_depth(tmp_path: Path) -> None:
    from python_jobs.sources.lines import jsonl_lines

    path = tmp_path / "q.jsonl"
    path.write_bytes(b'\xef\xbb\xbf{"id": "q1", "meta": {"a": 1}}\n\n{"id": "q2", "meta": {"a": 1, "a": 2}}\n')
    with pytest.raises(InputError) as err:
        list(jsonl_lines(path))
    assert (err.value.line, err.value.field) == (3, "a") and "twice" in str(err.value)
    path.write_bytes(b'{"id": "q1", "text": "x", "id": "q9"}\n')
    with pytest.raises(InputError) as err:
        list(jsonl_lines(path))
    assert (err.value.line, err.value.field) == (1, "id")
    # the BOM is dropped and blank lines skipped: the one good file reads as two records
    path.write_bytes(b'\xef\xbb\xbf{"id": "q1"}\n\n{"id": "q2"}\n')
    assert list(jsonl_lines(path)) == [(1, {"id": "q1"}), (3, {"id": "q2"})]

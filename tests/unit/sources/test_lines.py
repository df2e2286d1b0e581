"""The line readers shared by the TREC sources: trailing text after a run line's six fields is ignored by both the
vectorised reader and the per-line one (as trec_eval does, its fixture results.trunc has such lines), and only
when asked: qrels and other whitespace files keep an exact column count, and the error names the extra column."""

from __future__ import annotations

from pathlib import Path

import pytest

from python_jobs.core.errors import InputError
from python_jobs.sources.lines import block_lines, parse_delimited, read_delimited, read_whitespace_frame
from python_jobs.sources.trec import TREC_QREL_SCHEMA, TREC_RUN_SCHEMA, TrecQrel, TrecRunRow

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


def qrels_error(path: Path) -> InputError:
    with pytest.raises(InputError) as err:
        read_delimited(path, TrecQrel, tuple(TREC_QREL_SCHEMA), sep=None)
    return err.value


def test_a_header_line_is_called_one_only_on_the_first_line(tmp_path: Path) -> None:
    """No number in a file's first line where the format has numbers: a header, which TREC files do not have. The
    same text further down is a bad line like any other, and a block of a sliced read that starts mid-file never
    takes its first line for a header."""
    good = ["301 0 d1 1", "301 0 d2 0"]
    err = qrels_error(write(tmp_path, ["", "topic iteration docno rel", *good]))
    assert (err.line, err.field) == (2, "header")
    assert "a header line? this format has none: expected topic, iteration, docno, rel values" in err.detail
    err = qrels_error(write(tmp_path, [*good, "topic iteration docno rel"]))
    assert (err.line, err.field) == (3, "rel") and "valid integer" in err.detail
    with pytest.raises(InputError) as block_err:
        list(parse_delimited(block_lines(40, b"topic iteration docno rel\n"), "f", TrecQrel, tuple(TREC_QREL_SCHEMA),
                             sep=None))
    assert (block_err.value.line, block_err.value.field) == (40, "rel")


def test_a_value_with_a_space_is_named(tmp_path: Path) -> None:
    """Joining two neighbouring cells into one text column makes the line parse: that column holds a space. Of the
    joins that parse, the last text column is named (a docno rather than the topic before it)."""
    err = qrels_error(write(tmp_path, ["301 0 d1 1", "301 0 FR94 0202 1"]))
    assert (err.line, err.field) == (2, "docno")
    assert err.detail == ("docno 'FR94 0202' contains a space: fields are separated by whitespace, so the fields "
                          "after it shift (the line has 5 where 4 are expected: topic, iteration, docno, rel)")
    # two spaces, or a plain count error: the plain message
    assert qrels_error(write(tmp_path, ["301 0 F R 94 1"])).field == "column 5"
    assert qrels_error(write(tmp_path, ["301 0 d1"])).field == "rel"
    # a run keeps its trailing text, and its shifted rank gives the space away
    path = write(tmp_path, ["301 Q0 FR94 02-02 1 2.5 STANDARD"])
    with pytest.raises(InputError) as run_err:
        read_delimited(path, TrecRunRow, tuple(TREC_RUN_SCHEMA), sep=None, trailing=True)
    assert run_err.value.field == "docno" and "'FR94 02-02' contains a space" in run_err.value.detail


def test_numbers_beyond_their_column(tmp_path: Path) -> None:
    """A grade beyond the evidence table's int32 and a rank beyond int64: both readers refuse them (the vectorised
    one hands the file to the per-line one, which names the line and field)."""
    path = write(tmp_path, ["301 0 d1 1", f"301 0 d2 {2**31}"])
    assert read_whitespace_frame(path, TREC_QREL_SCHEMA) is None
    err = qrels_error(path)
    assert (err.line, err.field) == (2, "rel")
    assert err.detail == f"out of range: a whole number from -2147483648 to 2147483647 is expected (got '{2**31}')"
    assert qrels_error(write(tmp_path, ["301 0 d1 -2147483649"])).field == "rel"
    path = write(tmp_path, [f"301 Q0 d1 {2**63} 1.0 t"])
    assert read_whitespace_frame(path, TREC_RUN_SCHEMA) is None
    with pytest.raises(InputError, match="out of range") as run_err:
        read_delimited(path, TrecRunRow, tuple(TREC_RUN_SCHEMA), sep=None)
    assert run_err.value.field == "rank"


def test_jsonl_refuses_numbers_no_double_holds(tmp_path: Path) -> None:
    from python_jobs.sources.lines import jsonl_lines

    path = tmp_path / "q.jsonl"
    for number in ("1e999", "-1e999", "NaN", "Infinity"):
        path.write_text(f'{{"id": "q1", "meta": {{"a": 1.5, "b": {number}}}}}\n')
        with pytest.raises(InputError, match="is not a finite number") as err:
            list(jsonl_lines(path))
        assert (err.value.line, err.value.field) == (1, "b")
    path.write_text('{"id": "q1", "n": 99999999999999999999, "x": 1e300}\n')  # a big int and a big double are fine
    assert list(jsonl_lines(path)) == [(1, {"id": "q1", "n": 99999999999999999999, "x": 1e300})]


def test_a_period_is_a_year_or_a_quarter() -> None:
    from pydantic import BaseModel, ValidationError

    from python_jobs.sources.lines import Period

    class Doc(BaseModel):
        period: Period

    assert [Doc(period=p).period for p in (2015, "2015", "2023Q1")] == ["2015", "2015", "2023Q1"]
    for bad in ("twenty-fifteen", 15, "2023Q5", "2015 ", True, 2015.0, None):
        with pytest.raises(ValidationError, match="a period is a year"):
            Doc(period=bad)

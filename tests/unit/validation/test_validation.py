"""Landing validation through Great Expectations (python_jobs/validation/): each table's suite is derived from
its contract (one expectation per rule), and a failed expectation becomes the InputError users know, naming file,
line and field; every result is stored in the home and listed by its Data Docs."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import polars as pl
import pytest

from python_jobs.core.contracts import CONTRACTS, contract
from python_jobs.core.errors import InputError
from python_jobs.core.lake import Lake
from python_jobs.validation.expectations import suite_for
from python_jobs.validation.results import build_data_docs, stored_results
from support.paths import PROJECT


def expectations(table: str) -> list[dict]:
    """The table's suite as plain dicts: type, kwargs, meta."""
    suite = suite_for(contract(table))
    return [e.configuration.to_json_dict() for e in suite.expectations]


def of_type(table: str, kind: str) -> list[dict]:
    return [e for e in expectations(table) if e["type"] == kind]


# ---- suites derived from the contract ---------------------------------------------------------------------------
@pytest.mark.parametrize("table", sorted(CONTRACTS))
def test_one_expectation_per_contract_rule(table: str) -> None:
    c = contract(table)
    got = expectations(table)
    wanted = (len(c.not_null) + len(c.accepted) + len(c.ranges) + 1 + len(c.unique) + len(c.references))
    assert len(got) == wanted
    assert {e["kwargs"]["column"] for e in got if e["type"] == "expect_column_values_to_not_be_null"} == set(c.not_null)
    in_set = {e["kwargs"]["column"]: e["kwargs"]["value_set"] for e in got
              if e["type"] == "expect_column_values_to_be_in_set" and isinstance(e["kwargs"]["value_set"], list)}
    assert in_set == {col: list(values) for col, values in c.accepted.items()}
    between = {e["kwargs"]["column"]: (e["kwargs"].get("min_value"), e["kwargs"].get("max_value")) for e in got
               if e["type"] == "expect_column_values_to_be_between"}
    assert between == dict(c.ranges)
    keys = [e for e in got
            if e["type"] in ("expect_column_values_to_be_unique", "expect_compound_columns_to_be_unique")]
    assert [k["kwargs"].get("column_list", [k["kwargs"].get("column")]) for k in keys] == [
        list(c.key), *(list(cols) for cols in c.unique)]
    refs = [e for e in got if isinstance(e["kwargs"].get("value_set"), dict)]
    assert [e["kwargs"]["column"] for e in refs] == [r.column for r in c.references]


def test_retrieval_runs_suite_has_the_contracts_accepted_conditions() -> None:
    (condition,) = [e for e in of_type("retrieval_runs", "expect_column_values_to_be_in_set")
                    if e["kwargs"]["column"] == "condition"]
    assert condition["kwargs"]["value_set"] == ["full", "oracle_doc", "oracle_page"]
    assert condition["kwargs"]["value_set"] == list(contract("retrieval_runs").column("condition").accepted)
    (k,) = of_type("retrieval_runs", "expect_column_values_to_be_between")
    assert (k["kwargs"]["column"], k["kwargs"]["min_value"], k["kwargs"].get("max_value")) == ("k", 1, None)
    (key,) = of_type("retrieval_runs", "expect_column_values_to_be_unique")
    assert key["kwargs"]["column"] == "run_id"


def test_references_are_run_time_parameters() -> None:
    refs = {e["kwargs"]["column"]: e for e in of_type("retrieval_results", "expect_column_values_to_be_in_set")}
    # same_dataset: only rows of datasets that have questions (a TREC-only dataset is valid)
    question = refs["question_id"]["kwargs"]
    assert question["value_set"] == {"$PARAMETER": "question_id_in_questions_question_id"}
    assert question["row_condition"]["column"]["name"] == "dataset_has_questions"
    # plain: always
    run = refs["run_id"]["kwargs"]
    assert run["value_set"] == {"$PARAMETER": "run_id_in_retrieval_runs_run_id"} and "row_condition" not in run
    key, unit = of_type("retrieval_results", "expect_compound_columns_to_be_unique")
    assert key["kwargs"]["column_list"] == ["run_id", "question_id", "rank"]
    assert unit["kwargs"]["column_list"] == ["run_id", "question_id", "chunk_id"]  # a unit ranked once


# ---- GX-backed errors: file, line, field ------------------------------------------------------------------------
def origin(frame: pl.DataFrame, file: str, first_line: int = 1) -> pl.DataFrame:
    return frame.with_columns(pl.lit(file).alias("_file"),
                              pl.int_range(first_line, first_line + frame.height, dtype=pl.Int64).alias("_line"))


def run_row(run_id: str = "r1", dataset: str = "ds", **kw: object) -> dict:
    return {"run_id": run_id, "dataset": dataset, "retriever": "bm25", "condition": "full", "k": 10,
            "config_hash": "h", "config_id": "h", "source": "finrag", **kw}


def results(run_id: str, qids: list[str], dataset: str = "ds", ranks: list[int] | None = None) -> pl.DataFrame:
    n = len(qids)
    return pl.DataFrame({"run_id": [run_id] * n, "question_id": qids, "dataset": [dataset] * n,
                         "rank": ranks or list(range(1, n + 1)), "chunk_id": [f"c{i}" for i in range(n)],
                         "doc_id": [f"d{i}" for i in range(n)]}, schema_overrides={"rank": pl.Int32})


def questions(ids: list[str], dataset: str = "ds") -> pl.DataFrame:
    n = len(ids)
    return pl.DataFrame({"question_id": ids, "dataset": [dataset] * n, "split": ["test"] * n,
                         "question": [f"q {i}" for i in ids], "source": ["human"] * n})


def test_accepted_value_names_file_line_field(home: Path) -> None:
    runs = origin(pl.DataFrame([run_row("r1"), run_row("r1", condition="oracle")]), "runs.jsonl", 7)
    with pytest.raises(InputError) as err:
        Lake(home).land_one("retrieval_runs", "r1", runs)
    assert str(err.value) == ("file runs.jsonl, line 8, field 'condition': retrieval_runs: value not one of "
                              "['full', 'oracle_doc', 'oracle_page']")
    assert Lake(home).partitions("retrieval_runs") == []


def test_reference_to_questions_only_when_the_dataset_has_them(home: Path) -> None:
    lake = Lake(home)
    # a TREC-only dataset (no questions): any question id is fine
    lake.land([("retrieval_runs", "r0", pl.DataFrame([run_row("r0", "trec_only")])),
               ("retrieval_results", "r0", results("r0", ["t1", "t2"], "trec_only"))])
    lake.land_one("questions", "ds", questions(["q1", "q2"]))
    bad = origin(results("r1", ["q1", "q2", "qX", "q1"], ranks=[1, 1, 1, 2]), "run.trec")
    with pytest.raises(InputError) as err:
        lake.land([("retrieval_runs", "r1", pl.DataFrame([run_row("r1")])), ("retrieval_results", "r1", bad)],
                  fields={"retrieval_results": {"question_id": "topic"}})
    assert str(err.value) == ("file run.trec, line 3, field 'topic': retrieval_results: unknown question 'qX': "
                              "dataset 'ds' has questions and this is not one of them")
    assert lake.partitions("retrieval_runs") == ["r0"]


def test_plain_reference_and_row_numbers_without_lines(home: Path) -> None:
    with pytest.raises(InputError) as err:
        Lake(home).land_one("retrieval_results", "r9", results("r9", ["t1"], "trec_only"))
    assert str(err.value) == ("field 'run_id': retrieval_results (row 0): unknown retrieval run 'r9': "
                              "not in retrieval_runs")


def test_compound_duplicate_names_the_repeating_line(home: Path) -> None:
    lake = Lake(home)
    bad = origin(results("r1", ["a", "b", "c", "b", "a"], "trec_only", ranks=[1, 1, 1, 1, 1]), "run.trec", 10)
    with pytest.raises(InputError) as err:
        lake.land([("retrieval_runs", "r1", pl.DataFrame([run_row("r1", "trec_only")])),
                   ("retrieval_results", "r1", bad)])
    assert str(err.value) == ("file run.trec, line 13, field 'rank': retrieval_results: duplicate key "
                              "('run_id', 'question_id', 'rank')")


def test_a_unit_ranked_twice_names_its_second_line(home: Path) -> None:
    # the contract's `unique: [[run_id, question_id, chunk_id]]`: a run ranks a unit once (the metrics rely on it)
    bad = results("r1", ["a", "a", "a"], "trec_only").with_columns(chunk_id=pl.Series(["c0", "c1", "c0"]))
    with pytest.raises(InputError) as err:
        Lake(home).land([("retrieval_runs", "r1", pl.DataFrame([run_row("r1", "trec_only")])),
                         ("retrieval_results", "r1", origin(bad, "run.trec", 4))],
                        fields={"retrieval_results": {"chunk_id": "docno"}})
    assert str(err.value) == ("file run.trec, line 6, field 'docno': retrieval_results: duplicate "
                              "('run_id', 'question_id', 'chunk_id')")
    assert Lake(home).partitions("retrieval_results") == []


def test_many_duplicates_still_name_the_first_repeat(home: Path) -> None:
    """30 distinct keys, then their repeats: GX's first 20 unexpected rows hold no repeat; the error still names the
    first repeating line."""
    ids = [f"q{i:02d}" for i in range(30)]
    bad = origin(questions(ids + ids[::-1]), "q.jsonl")
    with pytest.raises(InputError) as err:
        Lake(home).land_one("questions", "ds", bad)
    assert str(err.value) == ("file q.jsonl, line 31, field 'question_id': questions: duplicate key "
                              "('dataset', 'question_id')")


def test_parents_come_from_the_same_landing_not_from_replaced_partitions(home: Path) -> None:
    lake = Lake(home)
    docs = pl.DataFrame({"doc_id": ["d1", "d2"], "dataset": ["ds"] * 2, "doc_type": ["10-K"] * 2,
                         "has_content": [True] * 2})
    lake.land_one("documents", "ds", docs)
    pages = pl.DataFrame({"doc_id": ["d2", "d1"], "dataset": ["ds", "ds"], "page_number": [0, 0],
                          "text": ["a", "b"]}, schema_overrides={"page_number": pl.Int32})
    # the same landing replaces partition ds of documents with d2 only: d1 is about to go, so pages may not name it
    with pytest.raises(InputError, match=r"pages \(row 1\): unknown document 'd1'"):
        lake.land([("documents", "ds", docs.head(0).vstack(docs.tail(1))), ("pages", "ds", pages)])
    lake.land([("documents", "ds", docs.with_columns(pl.Series("doc_id", ["d1", "d2"]))), ("pages", "ds", pages)])
    assert lake.read("pages").height == 2


def test_field_templates_format_the_row(home: Path) -> None:
    lake = Lake(home)
    docs = pl.DataFrame({"doc_id": ["d1"], "dataset": ["fb"], "doc_type": ["10-K"], "has_content": [True]})
    ev = origin(pl.DataFrame({"question_id": ["q1", "q1"], "evidence_ordinal": [0, 1], "dataset": ["fb", "fb"],
                              "doc_id": ["d1", "NOPE"], "relevance": [1, 1]},
                             schema_overrides={"evidence_ordinal": pl.Int32, "relevance": pl.Int32}), "q.jsonl", 5)
    ev = ev.with_columns(pl.lit(5, pl.Int64).alias("_line"))  # both items come from one question's line
    with pytest.raises(InputError) as err:
        lake.land([("documents", "fb", docs), ("evidence", "fb", ev)],
                  fields={"evidence": {"doc_id": "evidence[{evidence_ordinal}].doc_name"}})
    assert str(err.value).startswith("file q.jsonl, line 5, field 'evidence[1].doc_name': evidence: unknown "
                                     "document 'NOPE'")


# ---- results kept, Data Docs rendered ---------------------------------------------------------------------------
def test_every_result_is_stored_and_listed_in_the_data_docs(home: Path) -> None:
    lake = Lake(home)
    lake.land_one("questions", "good", questions(["q1"], "good"))
    with pytest.raises(InputError):
        lake.land_one("questions", "bad", questions(["q2", "q2"], "bad"))
    stored = [(r["suite"], r["run_name"], r["success"]) for r in stored_results(home)]
    assert stored == [("questions", "load_id=good", True), ("questions", "load_id=bad", False)]
    failed = json.loads(stored_results(home)[1]["path"].read_text())
    (dup,) = [r for r in failed["results"] if not r["success"]]
    assert dup["expectation_config"]["type"] == "expect_compound_columns_to_be_unique"  # (dataset, question_id)
    assert dup["result"]["partial_unexpected_list"] == [{"dataset": "bad", "question_id": "q2"}] * 2
    index = (home / "data_docs" / "index.html").read_text()
    assert "load_id=good" in index and "load_id=bad" in index
    # static HTML, readable offline: the rows are in the page, not drawn by a script from a CDN
    assert index.count('class="finrag-row finrag-success"') == 1
    assert index.count('class="finrag-row finrag-failed"') == 1
    assert "<script src=" not in index
    pages = sorted((home / "data_docs" / "validations" / "questions").rglob("*.html"))
    assert len(pages) == 2
    # the docs can be rebuilt from the stored results alone
    (home / "data_docs" / "index.html").unlink()
    assert build_data_docs(home) == home / "data_docs" / "index.html"
    assert "load_id=bad" in (home / "data_docs" / "index.html").read_text()


GX_FREE = """
import sys
from python_jobs.cli import cli
for args in ({args}):
    try:
        cli.main(list(args), standalone_mode=False)
    except SystemExit:
        pass
print("great_expectations" in sys.modules)
"""


def test_commands_that_do_not_land_do_not_import_gx(home: Path) -> None:
    """`import great_expectations` costs seconds: only a landing pays for it."""
    verbs = [("sql", "--help"), ("report", "--help"), ("ingest", "trec-run", "--help"), ("data-docs", "--help"),
             ("dashboard", "--help")]
    proc = subprocess.run([sys.executable, "-c", GX_FREE.format(args=", ".join(map(repr, verbs)))], cwd=PROJECT,
                          capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip().splitlines()[-1] == "False"

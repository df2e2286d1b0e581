"""The lake's one declaration (python_jobs/core/contracts.yml) and everything generated from it."""

from __future__ import annotations

import shutil
from pathlib import Path

import polars as pl
import pytest
import yaml

from python_jobs.core.contracts import CONTRACTS, _load, contract
from python_jobs.core.errors import InputError
from python_jobs.warehouse.dbt_codegen import RULES_DIR, STAGING_DIR, generated_files, stale_files, write_generated
from support.paths import PROJECT


def test_every_table_declares_its_key_partition_and_landing_time() -> None:
    for c in CONTRACTS.values():
        names = [col.name for col in c.columns]
        assert c.partition in names and "created_at" in names, c.name
        assert set(c.key) <= set(names), c.name
        for name in (*c.key, c.partition, "created_at"):
            assert c.column(name).required, (c.name, name)
        assert all(col.description for col in c.columns), c.name  # every column documented
        for ref in c.references:
            assert ref.column in names and ref.field in [x.name for x in contract(ref.table).columns], (c.name, ref)


def test_frames_are_typed_by_the_contract() -> None:
    frame = contract("questions").frame([{"question_id": "q1", "dataset": "d", "reference_answers": ["a"],
                                          "conversation": [{"role": "user", "content": "hi"}], "_line": 3}])
    assert frame.schema["reference_answers"] == pl.List(pl.String)
    assert frame.schema["conversation"] == pl.List(pl.Struct({"role": pl.String, "content": pl.String}))
    assert frame.schema["_line"] == pl.Int64 and "split" not in frame.columns  # only what the rows carry
    empty = contract("answers").frame([])  # no rows: the table's shape, without partition and landing time
    assert "question_id" in empty.columns and empty.height == 0
    assert "run_id" not in empty.columns and "created_at" not in empty.columns
    with pytest.raises(KeyError, match="not in the contract"):
        contract("answers").frame([{"run_id": "r", "typo_column": 1}])


def test_a_value_its_column_cannot_hold_names_its_row() -> None:
    """The contract's cast is where a number beyond int32 (or text in a number column) meets its type: an InputError
    naming the row's file and line and the input's field (a template over the row), not Polars' TypeError."""
    rows = [{"question_id": "q1", "evidence_ordinal": 0, "relevance": 1, "_file": "q.jsonl", "_line": 1},
            {"question_id": "q2", "evidence_ordinal": 3, "relevance": 2**31, "_file": "q.jsonl", "_line": 2}]
    with pytest.raises(InputError) as err:
        contract("evidence").frame(rows, fields={"relevance": "evidence[{evidence_ordinal}].grade"})
    assert str(err.value) == ("file q.jsonl, line 2, field 'evidence[3].grade': evidence: 2147483648 does not fit the "
                              "column relevance, of type int32")
    with pytest.raises(InputError) as err:  # columns (Series, as the TREC readers give them), no field names
        contract("evidence").frame(question_id=pl.Series(["a", "b"]), relevance=pl.Series([int("9" * 20), 1]),
                                   _line=pl.Series([7, 8]))
    assert (err.value.line, err.value.field) == (7, "relevance") and err.value.file is None
    with pytest.raises(InputError, match="'x' does not fit the column relevance"):
        contract("evidence").frame([{"question_id": "q1", "relevance": "x", "_line": 4}])
    assert contract("evidence").frame(rows[:1])["relevance"].dtype == pl.Int32  # what fits is cast as before


def test_an_unquoted_comma_in_a_description_is_refused(tmp_path: Path) -> None:
    bad = tmp_path / "contracts.yml"
    bad.write_text("""
shared_columns:
  created_at: {type: timestamp, description: When.}
  load_id: {type: string, description: The load.}
tables:
  t:
    description: A table.
    partition: load_id
    key: [id]
    columns:
      - {name: id, type: string, description: An id (first, second).}
""")
    with pytest.raises(ValueError, match=r"t\.id has unknown keys .*quote a description"):
        _load(bad)


def test_generated_dbt_files_equal_the_committed_ones() -> None:
    assert stale_files() == [], "run `finrag contracts generate` and commit the result"


def test_a_hand_edit_of_a_generated_file_is_caught(tmp_path: Path) -> None:
    project = tmp_path / "project"
    shutil.copytree(PROJECT / STAGING_DIR, project / STAGING_DIR)
    shutil.copytree(PROJECT / RULES_DIR, project / RULES_DIR)
    assert stale_files(project) == []
    sources = project / STAGING_DIR / "_lake__sources.yml"
    sources.write_text(sources.read_text().replace("- name: answers\n", "- name: answers\n    # edited by hand\n", 1))
    (project / STAGING_DIR / "stg_lake__retired_table.sql").write_text("select 1")
    assert stale_files(project) == [STAGING_DIR / "_lake__sources.yml", STAGING_DIR / "stg_lake__retired_table.sql"]
    assert write_generated(project) == [STAGING_DIR / "_lake__sources.yml", STAGING_DIR / "stg_lake__retired_table.sql"]
    assert stale_files(project) == [] and not (project / STAGING_DIR / "stg_lake__retired_table.sql").exists()


def test_a_contract_column_reaches_sources_staging_and_docs() -> None:
    files = {g.path.name: g.text for g in generated_files()}
    # a column declared once (retrieval_runs.config_id) is in the sources, the staging view, its tests and the docs
    assert "- name: config_id" in files["_lake__sources.yml"]
    assert "        config_id,\n" in files["stg_lake__retrieval_runs.sql"]
    yml = files["stg_lake__retrieval_runs.yml"]
    assert "- name: config_id\n    description: '{{ doc(\"lake__retrieval_runs__config_id\") }}'" in yml
    assert "{% docs lake__retrieval_runs__config_id %}" in files["_lake__docs.md"]
    # accepted values, ranges, keys and references become the staging model's data tests
    assert "accepted_values" in yml and "- oracle_page" in yml
    def column_rules(name: str) -> dict:
        [model] = yaml.safe_load(files[name])["models"]
        [rules] = [t["column_rules"]["arguments"] for t in model["data_tests"] if "column_rules" in t]
        return rules

    assert column_rules("stg_lake__qa_inspections.yml")["in_range"] == {"score": {"min_value": 1, "max_value": 5}}
    # the key and the other unique column set, each a key of the one test
    assert column_rules("stg_lake__retrieval_results.yml")["unique"] == [
        ["run_id", "question_id", "rank"], ["run_id", "question_id", "chunk_id"]]
    assert "known_in_dataset" in files["stg_lake__evidence.yml"] and "relationships" in files["stg_lake__answers.yml"]

"""The lake: validation before landing, atomic multi-table landings, idempotent re-runs, crash recovery."""

from __future__ import annotations

import json
import os
import select
import signal
import subprocess
import sys
import textwrap
import time
from collections.abc import Iterator
from pathlib import Path

import polars as pl
import pytest

from python_jobs.core import lake as lake_mod
from python_jobs.core import validator
from python_jobs.core.contracts import CONTRACTS
from python_jobs.core.errors import InputError, JobError
from python_jobs.core.lake import Lake
from support.paths import PROJECT


def docs(ids: list[str], dataset: str = "ds") -> pl.DataFrame:
    n = len(ids)
    return pl.DataFrame({"doc_id": ids, "dataset": [dataset] * n, "doc_type": ["10-K"] * n, "has_content": [True] * n})


def questions(ids: list[str], dataset: str = "ds") -> pl.DataFrame:
    n = len(ids)
    return pl.DataFrame(
        {"question_id": ids, "dataset": [dataset] * n, "split": ["test"] * n,
         "question": [f"q {i}" for i in ids], "source": ["human"] * n}
    )


def leftovers(home: Path, sub: str) -> list[Path]:
    d = home / "lake" / sub
    return list(d.iterdir()) if d.exists() else []


def test_fresh_lake_has_typed_placeholders(home: Path) -> None:
    lake = Lake(home)
    for name, c in CONTRACTS.items():
        path = home / "lake" / name / f"{c.partition}=__empty__" / "part-0.parquet"
        assert path.exists()
        assert pl.read_parquet(path).schema == pl.Schema(c.schema)
        assert lake.partitions(name) == []
        assert lake.read(name).height == 0


def test_landing_replaces_its_own_partition_only(home: Path) -> None:
    lake = Lake(home)
    lake.land([("documents", "a", docs(["d1", "d2"], "a")), ("questions", "a", questions(["q1"], "a"))])
    lake.land_one("documents", "b", docs(["d3"], "b"))
    lake.land_one("documents", "a", docs(["d1", "d2", "d4"], "a"))  # a re-run with one more document
    assert sorted(lake.read("documents")["doc_id"].to_list()) == ["d1", "d2", "d3", "d4"]
    assert lake.partitions("documents") == ["a", "b"]
    lake.land_one("documents", "a", docs(["d1", "d2", "d4"], "a"))  # the same again: nothing changes
    assert lake.read("documents").height == 4
    assert lake.read("documents", where={"load_id": "a"}).height == 3


def test_one_bad_frame_lands_nothing(home: Path) -> None:
    lake = Lake(home)
    bad = questions(["q1", "q1"]).with_columns(pl.Series("_file", ["x.jsonl"] * 2), pl.Series("_line", [3, 4]))
    with pytest.raises(InputError) as err:
        lake.land([("documents", "a", docs(["d1"])), ("questions", "a", bad)])
    assert str(err.value) == ("file x.jsonl, line 4, field 'question_id': questions: duplicate key "
                              "('dataset', 'question_id')")
    assert lake.partitions("documents") == [] and lake.partitions("questions") == []
    assert leftovers(home, "_staging") == []


@pytest.mark.parametrize(
    ("change", "message"),
    [
        (lambda f: f.with_columns(pl.lit("10K").alias("doc_type")),
         "field 'doc_type': documents (row 0): value not one of"),
        (lambda f: f.with_columns(pl.lit(None, pl.String).alias("dataset")),
         "field 'dataset': documents (row 0): required value is missing"),
        (lambda f: f.with_columns(pl.lit(-1).alias("n_pages")), "field 'n_pages': documents (row 0): value below 0"),
        (lambda f: f.with_columns(pl.lit("x").alias("surprise")),
         "field 'surprise': documents: columns not in the contract"),
        (lambda f: f.drop("doc_type"), "field 'doc_type': documents: required column missing"),
        (lambda f: f.with_columns(pl.lit("many").alias("n_pages")),
         "documents: a value does not fit the contract's type"),
    ],
)
def test_contract_violations_name_the_field(home: Path, change, message: str) -> None:
    with pytest.raises(InputError) as err:
        Lake(home).land_one("documents", "a", change(docs(["d1"])))
    assert message in str(err.value)
    assert Lake(home).partitions("documents") == []


def test_a_landing_without_a_registered_validator_is_refused(home: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # importing python_jobs registers Great Expectations (python_jobs/validation/); without it nothing lands unchecked
    assert type(validator.validator()).__name__ == "GreatExpectations"
    monkeypatch.setattr(validator, "_REGISTERED", [])
    with pytest.raises(JobError, match="no landing validator is registered"):
        Lake(home).land_one("documents", "a", docs(["d1"]))
    assert Lake(home).partitions("documents") == [] and leftovers(home, "_staging") == []


def test_keys_are_unique_across_loads(home: Path) -> None:
    lake = Lake(home)
    lake.land_one("documents", "a", docs(["d1"]))
    with pytest.raises(InputError, match=r"key \('ds', 'd1'\) already landed by load_id=a"):
        lake.land_one("documents", "b", docs(["d1"]))


def test_a_column_with_a_default_reads_as_it_where_a_partition_predates_it(home: Path) -> None:
    """judgments.repeat (default 1) was added after judge runs had landed: their files have no such column. Reading
    them beside a newer run (whose file sorts after the old one: a scan taking the first file's schema would drop
    the column from both), checking keys against them and landing a frame that leaves the column out all read it as
    1; the staging view coalesces it the same way."""
    lake = Lake(home)
    for run in ("old", "zz_new"):
        lake.land_one("judge_runs", run, pl.DataFrame({"judge_run_id": [run], "answer_run_id": ["a"],
                                                       "judge_model": ["m"], "rubric_version": ["v"]}))
    old = lake.partition_path("judgments", "old")
    old.parent.mkdir(parents=True)
    pl.DataFrame({"judge_run_id": ["old"], "question_id": ["q1"], "metric": ["acc"], "status": ["ok"],
                  "raw_score": [1.0], "created_at": [lake_mod.now_utc()]}).write_parquet(old)
    row = {"judge_run_id": "zz_new", "question_id": "q1", "metric": "acc", "status": "ok", "raw_score": 2.0}
    lake.land_one("judgments", "zz_new", pl.DataFrame([row | {"repeat": 1}, row | {"repeat": 2}]))
    got = lake.read("judgments").sort("judge_run_id", "repeat").select("judge_run_id", "repeat", "raw_score")
    assert got.rows() == [("old", 1, 1.0), ("zz_new", 1, 2.0), ("zz_new", 2, 2.0)]
    assert lake.read_partition("judgments", "old")["repeat"].to_list() == [1]
    lake.land_one("judgments", "zz_new", pl.DataFrame([row]))  # a frame without the column: repeat 1
    assert lake.read("judgments", where={"judge_run_id": "zz_new"})["repeat"].to_list() == [1]
    with pytest.raises(InputError, match="duplicate key"):
        lake.land_one("judgments", "zz_new", pl.DataFrame([row, row | {"repeat": 1}]))
    staging = (PROJECT / "models" / "staging" / "stg_lake__judgments.sql").read_text()
    assert "coalesce(repeat, 1) as repeat" in staging


def test_ids_are_unique_within_a_dataset_only(home: Path) -> None:
    """TREC topic ids and doc ids repeat across collections ("301", "Q000"): a second collection using them was
    refused ("key ('Q000', 0) already landed")."""
    lake = Lake(home)
    for ds in ("one", "two"):
        lake.land([("documents", ds, docs(["d1", "d2"], ds)), ("questions", ds, questions(["Q000"], ds)),
                   ("evidence", ds, pl.DataFrame({"question_id": ["Q000"], "evidence_ordinal": [0], "dataset": [ds],
                                                  "doc_id": ["d1"], "relevance": [1]}))])
    assert lake.read("questions").sort("dataset")["dataset"].to_list() == ["one", "two"]
    assert lake.read("documents").height == 4


def test_partition_values_are_safe_names(home: Path) -> None:
    with pytest.raises(InputError, match="must match"):
        Lake(home).land_one("documents", "../escape", docs(["d1"]))


def test_crash_after_commit_rolls_forward(home: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    lake = Lake(home)
    lake.land([("documents", "a", docs(["old"])), ("questions", "a", questions(["q-old"]))])
    real_replace = os.replace
    calls = {"n": 0}

    def dying_replace(src, dst):  # the journal commit (call 1) succeeds, then the process "dies" mid-swap
        calls["n"] += 1
        if calls["n"] == 4:
            raise KeyboardInterrupt("killed")
        return real_replace(src, dst)

    monkeypatch.setattr(lake_mod.os, "replace", dying_replace)
    with pytest.raises(KeyboardInterrupt):
        lake.land([("documents", "a", docs(["new"])), ("questions", "a", questions(["q-new"]))])
    monkeypatch.setattr(lake_mod.os, "replace", real_replace)
    recovered = Lake(home)  # the next job finishes the committed landing
    assert recovered.read("documents")["doc_id"].to_list() == ["new"]
    assert recovered.read("questions")["question_id"].to_list() == ["q-new"]
    assert leftovers(home, "_journal") == [] and leftovers(home, "_staging") == []


def test_crash_before_commit_keeps_the_old_partition(home: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    lake = Lake(home)
    lake.land_one("documents", "a", docs(["old"]))
    real_replace = os.replace

    def dying_replace(src, dst):  # dies while committing the journal: nothing was swapped yet
        raise KeyboardInterrupt("killed")

    monkeypatch.setattr(lake_mod.os, "replace", dying_replace)
    with pytest.raises(KeyboardInterrupt):
        lake.land_one("documents", "a", docs(["new"]))
    monkeypatch.setattr(lake_mod.os, "replace", real_replace)
    recovered = Lake(home)
    assert recovered.read("documents")["doc_id"].to_list() == ["old"]
    assert leftovers(home, "_staging") == []


SIGKILL_SCRIPT = """
import sys
import polars as pl
from python_jobs.core.lake import Lake
lake = Lake(sys.argv[1])
n = 200_000
i = 0
while True:
    i += 1
    frame = pl.DataFrame({"doc_id": [f"d{j}" for j in range(n)], "dataset": ["ds"] * n,
                          "doc_type": ["10-K"] * n, "has_content": [True] * n, "title": [str(i)] * n})
    lake.land_one("documents", "a", frame)
"""


def killed_while_landing(command: list[str], target: Path) -> Iterator[None]:
    """Start `command` (a process that keeps re-landing a partition) and SIGKILL it at several moments after its
    first landing wrote `target`; yields after each kill, for the caller to check the lake."""
    for delay in (0.05, 0.3, 0.7, 1.3):
        proc = subprocess.Popen(command, cwd=PROJECT)
        deadline = time.monotonic() + 60
        while not target.exists() and time.monotonic() < deadline:  # kill only once landings are under way
            time.sleep(0.02)
        time.sleep(delay)
        proc.send_signal(signal.SIGKILL)
        proc.wait()
        yield


def test_sigkill_never_leaves_a_partial_partition(home: Path) -> None:
    """A real process, killed at arbitrary moments while it keeps re-landing a 200k-row partition."""
    target = home / "lake" / "documents" / "load_id=a" / "part-0.parquet"
    for _ in killed_while_landing([sys.executable, "-c", textwrap.dedent(SIGKILL_SCRIPT), str(home)], target):
        frame = Lake(home).read("documents")
        assert frame.height == 200_000
        assert frame["title"].n_unique() == 1  # one whole landing, never a mix of two


def test_an_empty_load_lands_beside_others(home: Path) -> None:
    lake = Lake(home)
    lake.land_one("documents", "a", docs(["d1"]))
    lake.land_one("documents", "b", docs([]))
    assert lake.partitions("documents") == ["a", "b"]
    assert lake.read("documents")["doc_id"].to_list() == ["d1"]


# ---- two jobs at once ---------------------------------------------------------------------------------------------
CONCURRENT_SCRIPT = """
import json, sys, time
from pathlib import Path
import polars as pl
from python_jobs.core.errors import InputError
from python_jobs.core.lake import Lake

home, who, mode, n = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4])
landed, refused = [], []
done = Path(home) / "landings_done"
if mode == "open":  # jobs starting up, one after another, until the landings are done: every Lake() recovers
    deadline = time.monotonic() + 300
    while not done.exists() and time.monotonic() < deadline:
        Lake(home)
try:
    for i in range(n if mode != "open" else 0):
        # "land": partition <who>-<i>; its doc ids are <who>-<i>-* (own) or shared-<i>-* (both jobs land them)
        ids = [f"{'shared' if mode == 'land_shared' else who}-{i}-{j}" for j in range(50)]
        frame = pl.DataFrame({"doc_id": ids, "dataset": ["ds"] * 50, "doc_type": ["10-K"] * 50,
                              "has_content": [True] * 50})
        try:
            Lake(home).land_one("documents", f"{who}-{i}", frame)
            landed.append(f"{who}-{i}")
        except InputError:
            refused.append(f"{who}-{i}")
finally:
    if mode != "open":
        done.touch()
print(json.dumps({"landed": landed, "refused": refused}))
"""


def run_together(home: Path, *jobs: tuple[str, str, int]) -> list[dict]:
    procs = [subprocess.Popen([sys.executable, "-c", CONCURRENT_SCRIPT, str(home), who, mode, str(n)], cwd=PROJECT,
                              stdout=subprocess.PIPE, text=True, env={**os.environ, "PYTHONPATH": str(PROJECT)})
             for who, mode, n in jobs]
    outs = [p.communicate(timeout=600)[0] for p in procs]
    assert all(p.returncode == 0 for p in procs), outs
    return [json.loads(o.strip().splitlines()[-1]) for o in outs]


def test_a_job_starting_up_never_discards_a_landing_under_way(home: Path) -> None:
    """Every Lake() used to delete lake/_staging: a landing staged at that moment said "landed" and was gone."""
    Lake(home)
    lander, _ = run_together(home, ("a", "land", 25), ("b", "open", 0))
    assert len(lander["landed"]) == 25
    lake = Lake(home)
    assert sorted(lake.partitions("documents")) == sorted(lander["landed"])
    assert lake.read("documents").height == 25 * 50
    assert leftovers(home, "_staging") == [] and leftovers(home, "_journal") == []


def test_two_landings_never_both_pass_the_key_check(home: Path) -> None:
    """Two jobs landing the same doc ids at once could both pass "key unique across loads"."""
    Lake(home)
    a, b = run_together(home, ("a", "land_shared", 15), ("b", "land_shared", 15))
    docs_ = Lake(home).read("documents")
    assert docs_["doc_id"].is_unique().all() and docs_.height == 15 * 50
    # each shared batch landed exactly once, by one of the two jobs; the other was told why
    assert len(a["landed"]) + len(b["landed"]) == 15 and len(a["refused"]) + len(b["refused"]) == 15


# ---- readers never see a load half swapped in ---------------------------------------------------------------------
SLOW_APPLY_SCRIPT = """
import sys, time
from pathlib import Path
import polars as pl
from python_jobs.core.lake import Lake

home = Path(sys.argv[1])
slow = Lake._apply


def apply_slowly(self, txid, moves):  # the swap of a two-table load, one table at a time, with a pause between
    for i, move in enumerate(moves):
        slow(self, f"{txid}-{i}", [move])
        (home / f"applied-{i}").touch()
        time.sleep(3)


Lake._apply = apply_slowly
docs = pl.DataFrame({"doc_id": ["new-1"], "dataset": ["ds"], "doc_type": ["10-K"], "has_content": [True]})
qs = pl.DataFrame({"question_id": ["new-q"], "dataset": ["ds"], "split": ["test"], "question": ["q"],
                   "source": ["human"]})
Lake(home).land([("documents", "L", docs), ("questions", "L", qs)])
"""


def test_a_reader_waits_for_a_swap_under_way_and_sees_the_whole_load(home: Path) -> None:
    """Readers took each table as it stood: mid-swap, documents were the new load's and questions the old one's."""
    lake = Lake(home)
    lake.land([("documents", "L", docs(["old-1"])), ("questions", "L", questions(["old-q"]))])
    writer = subprocess.Popen([sys.executable, "-c", SLOW_APPLY_SCRIPT, str(home)], cwd=PROJECT,
                              env={**os.environ, "PYTHONPATH": str(PROJECT)})
    try:
        deadline = time.monotonic() + 120
        while not (home / "applied-0").exists() and time.monotonic() < deadline:
            time.sleep(0.05)
        assert (home / "applied-0").exists() and writer.poll() is None  # one table swapped, the other not yet
        reader = Lake(home)
        assert reader.read("documents")["doc_id"].to_list() == ["new-1"]  # waited for the swap to end
        assert (home / "applied-1").exists()
        assert reader.read("questions")["question_id"].to_list() == ["new-q"]
    finally:
        assert writer.wait(60) == 0


LANDING_SCRIPT = """
import sys
import polars as pl
from python_jobs.core.lake import Lake
docs = pl.DataFrame({"doc_id": ["d"], "dataset": ["ds"], "doc_type": ["10-K"], "has_content": [True]})
Lake(sys.argv[1]).land_one("documents", "W", docs)
print("landed")
"""


def test_a_landing_waits_while_a_build_reads_the_lake(home: Path) -> None:
    """The dbt plugin holds the lake still for the whole build; a landing meanwhile waits, and says so."""
    from python_jobs.warehouse.dbt_plugin import Plugin

    plugin = Plugin("finrag", {})  # what dbt-duckdb does when a build opens the warehouse
    with lake_mod.Lake(home)._writer_lock(wait=False) as free:
        assert not free
    writer = subprocess.Popen([sys.executable, "-c", LANDING_SCRIPT, str(home)], cwd=PROJECT, text=True,
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                              env={**os.environ, "PYTHONPATH": str(PROJECT)})
    said = ""
    try:
        # until the landing says it waits (its start-up alone can take seconds on a loaded machine), then a while
        deadline = time.monotonic() + 120
        while "waiting for the lake" not in said and time.monotonic() < deadline and writer.poll() is None:
            if select.select([writer.stderr], [], [], 1.0)[0]:
                said += writer.stderr.readline()
        time.sleep(1)
        assert writer.poll() is None and Lake(home).partitions("documents") == []
    finally:
        plugin._lake_view.__exit__(None, None, None)  # the build ends
    out, err = writer.communicate(timeout=60)
    assert writer.returncode == 0 and out.strip() == "landed"
    assert "waiting for the lake: another job is landing, or a build is reading the lake" in said + err
    assert Lake(home).partitions("documents") == ["W"]


# ---- landings in slices ----------------------------------------------------------------------------------------
def doc_slices(tmp: Path, n_parts: int, per_part: int, title: str = "t") -> lake_mod.Slices:
    """documents in `n_parts` Parquet slice files (sliced by doc_id: each id in one slice), with _file / _line."""
    tmp.mkdir(parents=True, exist_ok=True)
    paths = []
    for i in range(n_parts):
        ids = [f"d{i}-{j}" for j in range(per_part)]
        frame = docs(ids).with_columns(pl.lit(title).alias("title"), pl.lit("docs.jsonl").alias("_file"),
                                       pl.Series("_line", [i * per_part + j + 1 for j in range(per_part)]))
        paths.append(tmp / f"slice-{i}.parquet")
        frame.write_parquet(paths[-1])
    return lake_mod.Slices(paths, ("doc_id",))


def test_slices_land_as_part_files_of_one_partition(home: Path, tmp_path: Path) -> None:
    lake = Lake(home)
    landed = lake.land([("documents", "a", doc_slices(tmp_path, 3, 4)), ("questions", "a", questions(["q1"]))])
    assert [x.rows for x in landed] == [12, 1]
    assert [p.name for p in lake.partition_files("documents", "a")] == [f"part-{i}.parquet" for i in range(3)]
    assert lake.read_partition("documents", "a").height == 12 == lake.read("documents").height
    assert lake.read("documents")["created_at"].n_unique() == 1
    # landing the partition again in one piece replaces every part file
    lake.land_one("documents", "a", docs(["d0-0"]))
    assert [p.name for p in lake.partition_files("documents", "a")] == ["part-0.parquet"]
    assert lake.read("documents")["doc_id"].to_list() == ["d0-0"]


def test_a_bad_row_in_a_later_slice_lands_nothing(home: Path, tmp_path: Path) -> None:
    lake = Lake(home)
    lake.land_one("documents", "a", docs(["old"]))
    sliced = doc_slices(tmp_path, 3, 4)
    pl.read_parquet(sliced.parts[2]).with_columns(
        pl.when(pl.col("_line") == 11).then(pl.lit(-1)).otherwise(None).alias("n_pages")).write_parquet(sliced.parts[2])
    with pytest.raises(InputError) as err:
        lake.land([("documents", "a", sliced)])
    assert str(err.value) == "file docs.jsonl, line 11, field 'n_pages': documents: value below 0"
    assert lake.read("documents")["doc_id"].to_list() == ["old"]
    assert leftovers(home, "_staging") == []


def test_slices_must_not_share_a_value_of_the_slicing_columns(home: Path, tmp_path: Path) -> None:
    sliced = doc_slices(tmp_path, 2, 3)
    pl.read_parquet(sliced.parts[0]).with_columns(pl.lit("d1-0").alias("doc_id")).head(1).write_parquet(
        sliced.parts[0])
    with pytest.raises(JobError, match="in two slices"):
        Lake(home).land([("documents", "a", sliced)])
    with pytest.raises(JobError, match="does not contain"):  # slicing columns outside the key
        Lake(home).land([("documents", "b", lake_mod.Slices(sliced.parts, ("title",)))])
    assert Lake(home).partitions("documents") == []


SIGKILL_SLICES_SCRIPT = """
import sys
from pathlib import Path
import polars as pl
from python_jobs.core.lake import Lake, Slices
lake = Lake(sys.argv[1])
work = Path(sys.argv[2])
n, parts = 50_000, 4
i = 0
while True:
    i += 1
    paths = []
    for p in range(parts):
        frame = pl.DataFrame({"doc_id": [f"d{p}-{j}" for j in range(n)], "dataset": ["ds"] * n,
                              "doc_type": ["10-K"] * n, "has_content": [True] * n, "title": [str(i)] * n})
        paths.append(work / f"{i}-{p}.parquet")
        frame.write_parquet(paths[-1])
    lake.land([("documents", "a", Slices(paths, ("doc_id",)))])
"""


def test_sigkill_never_leaves_a_partial_sliced_partition(home: Path, tmp_path: Path) -> None:
    """A real process, killed at arbitrary moments while it keeps re-landing a partition of 4 slices."""
    target = home / "lake" / "documents" / "load_id=a" / "part-3.parquet"
    command = [sys.executable, "-c", textwrap.dedent(SIGKILL_SLICES_SCRIPT), str(home), str(tmp_path)]
    for _ in killed_while_landing(command, target):
        frame = Lake(home).read("documents")
        assert frame.height == 200_000
        assert frame["title"].n_unique() == 1  # one whole landing, never a mix of two
        assert len(Lake(home).partition_files("documents", "a")) == 4
        assert leftovers(home, "_staging") == []

"""Bad trace files are refused before anything lands (SPEC §7, §11): exit 2, one error line naming the file, the line,
the span and the field, and the lake as it was (a good production run landed first stays untouched). The files are
small edits of OTLP/JSON that the real OpenTelemetry SDK recorded (tests/support/otlp_traces.py, made once per
module) and of a Langfuse export in its documented columns (tests/support/langfuse_exports.py). And the landing
rules of several files: a run's files landed one after the other equal one landing of all, and a re-ingest changes
nothing. No dbt build here: the lake alone."""

from __future__ import annotations

import hashlib
import json
import re
import shutil
from pathlib import Path

import pytest

from python_jobs.core.lake import Lake
from support.cli import run_finrag
from support.langfuse_exports import make_export
from support.otlp_traces import make_traces
from support.shared_home import copy_home

TABLES = ("questions", "retrieval_results", "answers", "judgments", "human_labels", "llm_calls", "generation_runs",
          "retrieval_runs", "judge_runs", "metric_declarations")


def snapshot(home: Path) -> dict[str, str]:
    lake = home / "lake"
    return {str(p.relative_to(lake)): hashlib.sha256(p.read_bytes()).hexdigest()
            for p in sorted(lake.glob("*/*/*.parquet")) if "__empty__" not in str(p)}


@pytest.fixture(scope="module")
def otlp(tmp_path_factory: pytest.TempPathFactory) -> dict:
    """The SDK's files, and a home where a good production run (version 1.0's traces) landed."""
    out = tmp_path_factory.mktemp("otlp")
    (spans, logs), _ = make_traces(out, n_per_version=8, labelled=3, repeated=2)
    lines = spans.read_text().splitlines()
    # make_traces writes version 1.0's spans first, in batches of 64 (24 spans: line 1), then 2.0's
    assert all('"1.0"' in x for x in lines[:1]) and all('"2.0"' in x for x in lines[1:])
    first = out / "spans-1.0.jsonl"
    first.write_text(lines[0] + "\n")
    template = tmp_path_factory.mktemp("good") / "warehouse"
    run_finrag(template, "ingest", "traces-otlp", str(first), str(logs))
    return {"spans": spans, "logs": logs, "lines": lines, "first": first, "template": template,
            "snapshot": snapshot(template)}


@pytest.fixture
def good(home: Path, otlp: dict) -> dict[str, str]:
    copy_home(otlp["template"], home)
    assert snapshot(home) == otlp["snapshot"] and otlp["snapshot"]
    return otlp["snapshot"]


def edited(otlp: dict, tmp_path: Path, line: int, edit) -> Path:
    """spans.jsonl with its `line` (1-based) changed by edit(document)."""
    lines = list(otlp["lines"])
    doc = json.loads(lines[line - 1])
    edit(doc)
    lines[line - 1] = json.dumps(doc)
    path = tmp_path / "spans.jsonl"
    path.write_text("".join(x + "\n" for x in lines))
    return path


def rejected(finrag, home: Path, before: dict[str, str], files: list[Path], line: int | None, field: str,
             verb: str = "traces-otlp", file: Path | None = None) -> str:
    proc = finrag("ingest", verb, *map(str, files), check=False)
    assert proc.returncode == 2, proc.stderr
    errors = [x for x in proc.stderr.splitlines() if x.startswith("error:")]
    assert errors == [x for x in proc.stderr.splitlines() if x.strip()], proc.stderr  # one line, the error alone
    where = f"file {file or files[0]}" + (f", line {line}" if line is not None else "")
    assert errors[0].startswith(f"error: {where}, field '{field}'"), proc.stderr
    assert snapshot(home) == before  # nothing landed; the good run is as it was
    return errors[0]


def spans_of(doc: dict) -> list[dict]:
    return doc["resourceSpans"][0]["scopeSpans"][0]["spans"]


def attribute(span: dict, key: str) -> dict:
    return next(a for a in span["attributes"] if a["key"] == key)


def test_a_file_of_another_format(home, finrag, good, tmp_path) -> None:
    ragas = tmp_path / "results.jsonl"
    ragas.write_text(json.dumps({"user_input": "What was the margin?", "response": "12%"}) + "\n")
    err = rejected(finrag, home, good, [ragas], 1, "resourceSpans")
    assert "not an OTLP/JSON export request (it has user_input, response" in err


def test_spans_without_a_trace_id(home, finrag, good, otlp, tmp_path) -> None:
    def drop(doc: dict) -> None:
        span = spans_of(doc)[3]
        drop.span = span["spanId"]
        del span["traceId"]

    path = edited(otlp, tmp_path, 2, drop)
    err = rejected(finrag, home, good, [path], 2, "resourceSpans[0].scopeSpans[0].spans[3].traceId")
    assert f"span {drop.span}" in err and "has no trace id" in err


def test_an_evaluation_linked_to_a_span_not_in_the_files(home, finrag, good, otlp, tmp_path) -> None:
    doc = json.loads(otlp["logs"].read_text())
    doc["resourceLogs"][0]["scopeLogs"][0]["logRecords"][0]["spanId"] = "00000000000000ab"
    logs = tmp_path / "logs.jsonl"
    logs.write_text(json.dumps(doc) + "\n")
    err = rejected(finrag, home, good, [logs, otlp["spans"]], 1, "resourceLogs[0].scopeLogs[0].logRecords[0].spanId")
    assert "linked to span 00000000000000ab" in err and "in none of the files given" in err


@pytest.mark.parametrize(("key", "value", "expected"), [
    ("gen_ai.usage.input_tokens", {"stringValue": "many"}, "expected a whole number of tokens"),
    ("gen_ai.request.model", {"intValue": "4"}, "expected a string"),
])
def test_attributes_of_the_wrong_type(home, finrag, good, otlp, tmp_path, key, value, expected) -> None:
    def retype(doc: dict) -> None:
        llm = next(s for s in spans_of(doc) if s["name"].startswith("chat"))
        retype.where = spans_of(doc).index(llm)
        retype.span = llm["spanId"]
        attribute(llm, key)["value"] = value

    path = edited(otlp, tmp_path, 1, retype)
    err = rejected(finrag, home, good, [path], 1, f'resourceSpans[0].scopeSpans[0].spans[{retype.where}].'
                                                  f'attributes["{key}"]')
    assert f"span {retype.span}" in err and expected in err


def test_an_evaluation_score_that_is_text(home, finrag, good, otlp, tmp_path) -> None:
    doc = json.loads(otlp["logs"].read_text())
    record = doc["resourceLogs"][0]["scopeLogs"][0]["logRecords"][1]
    attribute(record, "gen_ai.evaluation.score.value")["value"] = {"stringValue": "good"}
    logs = tmp_path / "logs.jsonl"
    logs.write_text(json.dumps(doc) + "\n")
    rejected(finrag, home, good, [logs, otlp["spans"]], 1,
             'resourceLogs[0].scopeLogs[0].logRecords[1].attributes["gen_ai.evaluation.score.value"]')


def test_a_truncated_file(home, finrag, good, otlp, tmp_path) -> None:
    lines = otlp["lines"]
    path = tmp_path / "spans.jsonl"
    path.write_text("".join(x + "\n" for x in lines[:-1]) + lines[-1][: len(lines[-1]) // 2])
    err = rejected(finrag, home, good, [path], len(lines), "<line>")
    assert "malformed JSON (a truncated line?)" in err


def test_ids_in_protobufs_base64_are_not_otlp_json(home, finrag, good, otlp, tmp_path) -> None:
    def base64_ids(doc: dict) -> None:
        span = spans_of(doc)[0]
        span["traceId"] = "AAECAwQFBgcICQoLDA0ODw=="  # protobuf's JSON mapping of bytes

    path = edited(otlp, tmp_path, 1, base64_ids)
    err = rejected(finrag, home, good, [path], 1, "resourceSpans[0].scopeSpans[0].spans[0].traceId")
    assert "OTLP/JSON writes ids as hex, not base64" in err


def rows(home: Path) -> dict[str, list]:
    lake = Lake(home)
    return {t: sorted(map(str, lake.read(t).drop("created_at").rows())) for t in TABLES}


def test_a_runs_files_landed_one_by_one_equal_one_landing(home, finrag, good, otlp, tmp_path) -> None:
    rest = tmp_path / "spans-2.0.jsonl"
    rest.write_text("".join(x + "\n" for x in otlp["lines"][1:]))
    finrag("ingest", "traces-otlp", str(rest))
    again = finrag("ingest", "traces-otlp", str(otlp["first"]), str(otlp["logs"]))
    assert "nothing changes" in again.stderr
    whole = tmp_path / "whole" / "warehouse"
    run_finrag(whole, "ingest", "traces-otlp", str(otlp["spans"]), str(otlp["logs"]))
    assert rows(home) == rows(whole)
    assert Lake(home).read("questions").height == 16


# ---- Langfuse exports ------------------------------------------------------------------------------------------
@pytest.fixture(scope="module")
def langfuse(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out, _ = make_export(tmp_path_factory.mktemp("langfuse"), n_per_version=6, labelled=2, repeated=2)
    return out


def export_copy(langfuse: Path, tmp_path: Path) -> Path:
    out = tmp_path / "export"
    shutil.copytree(langfuse, out)
    return out


def test_langfuse_a_truncated_parquet_file(home, finrag, good, langfuse, tmp_path) -> None:
    out = export_copy(langfuse, tmp_path)
    parquet = out / "observations_v2" / "2026-11-02.parquet"
    parquet.write_bytes(parquet.read_bytes()[: parquet.stat().st_size // 2])
    err = rejected(finrag, home, good, [out], None, "<parquet footer>", "traces-langfuse", file=parquet)
    assert "not a readable Parquet file" in err


def test_langfuse_a_file_of_another_format(home, finrag, good, otlp) -> None:
    err = rejected(finrag, home, good, [otlp["spans"]], 1, "trace_id", "traces-langfuse")
    assert "not a Langfuse export table (columns resourceSpans" in err


def edit_scores(langfuse: Path, tmp_path: Path, index: int, edit) -> tuple[Path, Path]:
    out = export_copy(langfuse, tmp_path)
    scores = out / "scores" / "2026-11-02.jsonl"
    rows = [json.loads(x) for x in scores.read_text().splitlines()]
    edit(rows[index])
    scores.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return out, scores


def test_langfuse_a_score_without_a_trace_id(home, finrag, good, langfuse, tmp_path) -> None:
    out, scores = edit_scores(langfuse, tmp_path, 2, lambda r: r.update(trace_id=None))
    rejected(finrag, home, good, [out], 3, "trace_id", "traces-langfuse", file=scores)


def test_langfuse_a_score_of_the_wrong_type(home, finrag, good, langfuse, tmp_path) -> None:
    out, scores = edit_scores(langfuse, tmp_path, 0, lambda r: r.update(value="high"))
    err = rejected(finrag, home, good, [out], 1, "value", "traces-langfuse", file=scores)
    assert "expected a number" in err


def test_langfuse_a_score_of_a_trace_not_in_the_files(home, finrag, good, langfuse, tmp_path) -> None:
    out, scores = edit_scores(langfuse, tmp_path, 1, lambda r: r.update(trace_id="f" * 32))
    err = rejected(finrag, home, good, [out], 2, "trace_id", "traces-langfuse", file=scores)
    assert "which none of the files holds" in err


def test_langfuse_a_reingest_changes_nothing(home, finrag, good, langfuse) -> None:
    finrag("ingest", "traces-langfuse", str(langfuse))
    landed = snapshot(home)
    again = finrag("ingest", "traces-langfuse", str(langfuse))
    assert "nothing changes" in again.stderr and snapshot(home) == landed


def test_a_score_off_its_declared_scale(home, finrag, good, otlp, tmp_path) -> None:
    """`--metric NAME=MIN..MAX` declares an evaluation's scale: one that contradicts the lake's declaration of the
    metric is refused, and on a fresh home a score outside it is refused where it is."""
    # which record is named first follows the SDK's random trace ids: any of the log line's records
    field = re.compile(rf"error: file {re.escape(str(otlp['logs']))}, line 1, field 'resourceLogs\[0\]"
                       r"\.scopeLogs\[0\]\.logRecords\[\d+\]\.attributes\[\"gen_ai\.evaluation\.score\.value\"\]'")
    args = ["ingest", "traces-otlp", str(otlp["spans"]), str(otlp["logs"]), "--metric", "Correctness=2..5"]
    proc = finrag(*args, check=False)
    assert proc.returncode == 2 and snapshot(home) == good
    assert field.search(proc.stderr), proc.stderr
    assert "as [0, 1] higher is better; this ingest makes it [2, 5] higher is better" in proc.stderr
    fresh = tmp_path / "fresh"
    proc = run_finrag(fresh, *args, check=False)
    assert proc.returncode == 2 and field.search(proc.stderr), proc.stderr
    assert "is off the otlp_correctness scale" in proc.stderr and "declare its scale with --metric" in proc.stderr
    assert not snapshot(fresh)

"""The judges' reply schemas (the response_format of every judge request) against the metric registry and the strict
reading of replies: what the schema admits parses to a score on the scale (or not applicable), what it refuses the
reading refuses too, and the rationale is bounded."""

from __future__ import annotations

import json

import jsonschema
import pytest

from python_jobs.judging.metrics import load_metrics
from python_jobs.judging.verdicts import RATIONALE_MAX_CHARS, parse_reply, reply_format, reply_schema

SPECS = load_metrics()


def valid(schema: dict, obj: object) -> bool:
    return jsonschema.Draft202012Validator(schema).is_valid(obj)


def test_schemas_follow_the_registry_scales() -> None:
    # hand-read from seeds/metrics.csv: acc 0..2 discrete, com 0..2 with -1 not applicable, correctness -1..2
    # continuous, hal 0..1 with -1
    assert reply_schema(SPECS["acc"])["properties"]["score"] == {"type": "integer", "minimum": 0, "maximum": 2}
    assert reply_schema(SPECS["com"])["properties"]["score"] == {
        "anyOf": [{"type": "integer", "minimum": 0, "maximum": 2}, {"const": -1}]}
    assert reply_schema(SPECS["correctness"])["properties"]["score"] == {"type": "number", "minimum": -1,
                                                                         "maximum": 2}
    assert reply_schema(SPECS["hal"])["properties"]["score"] == {
        "anyOf": [{"type": "integer", "minimum": 0, "maximum": 1}, {"const": -1}]}
    fmt = reply_format(SPECS["acc"])
    assert fmt["type"] == "json_schema" and fmt["json_schema"]["name"] == "judge_verdict"
    jsonschema.Draft202012Validator.check_schema(fmt["json_schema"]["schema"])


@pytest.mark.parametrize("metric", sorted(SPECS))
def test_what_the_schema_admits_the_reading_accepts(metric: str) -> None:
    spec, schema = SPECS[metric], reply_schema(SPECS[metric])
    lo, hi = int(spec.scale_min), int(spec.scale_max)
    for score in range(lo - 2, hi + 3):
        reply = {"score": score, "rationale": "the reference says so"}
        verdict = parse_reply(json.dumps(reply), spec)
        if valid(schema, reply):
            assert verdict.status in ("ok", "not_applicable"), (metric, score, verdict)
            assert verdict.status == ("not_applicable" if score == spec.na_value else "ok")
        else:  # off the scale and not the not-applicable value: the reading fails it as well
            assert verdict.status == "failed" and "off the" in (verdict.error or ""), (metric, score, verdict)
    # a continuous metric takes fractions within its scale, a discrete one does not
    half = {"score": lo + 0.5, "rationale": "partly"}
    assert valid(schema, half) == spec.continuous == (parse_reply(json.dumps(half), spec).status == "ok")


def test_rationale_is_bounded_and_required_and_nothing_else_is_allowed() -> None:
    schema = reply_schema(SPECS["acc"])
    assert valid(schema, {"score": 1, "rationale": "x" * RATIONALE_MAX_CHARS})
    assert not valid(schema, {"score": 1, "rationale": "x" * (RATIONALE_MAX_CHARS + 1)})
    assert not valid(schema, {"score": 1})
    assert not valid(schema, {"score": 1, "rationale": "ok", "confidence": 0.9})
    assert not valid(schema, {"score": "N/A", "rationale": "n/a"})  # the schema's not-applicable value is a number

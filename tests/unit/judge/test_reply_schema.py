"""The judges' reply schemas (the response_format of every judge request) against the metric registry and the strict
reading of replies: what the schema admits parses to a score on the scale (or not applicable), what it refuses the
reading refuses too, and the rationale is bounded."""

from __future__ import annotations

import json

import jsonschema
import pytest

from python_jobs.core.metrics import load_metrics
from python_jobs.judge.verdicts import FRAME_TOKENS, RATIONALE_MAX_CHARS, parse_reply, reply_format, reply_schema

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
    # the judge's default budget, 128 tokens: 104 characters of rationale (each at most one token) and the frame
    schema = reply_schema(SPECS["acc"], 128)
    assert 128 - FRAME_TOKENS == 104 < RATIONALE_MAX_CHARS
    assert valid(schema, {"score": 1, "rationale": "2024 " * 20 + "2024"})  # 104 characters, ~104 tokens
    assert not valid(schema, {"score": 1, "rationale": "x" * 105})
    # a larger budget: the cap; a tiny one: an empty rationale
    assert valid(reply_schema(SPECS["acc"], 512), {"score": 1, "rationale": "x" * RATIONALE_MAX_CHARS})
    assert not valid(reply_schema(SPECS["acc"], 512), {"score": 1, "rationale": "x" * (RATIONALE_MAX_CHARS + 1)})
    assert reply_schema(SPECS["acc"], 8)["properties"]["rationale"]["maxLength"] == 0
    # printable ASCII without quotes or backslashes: one token a character at most
    assert not valid(schema, {"score": 1, "rationale": "sales up 5 \u20ac"})
    assert not valid(schema, {"score": 1, "rationale": 'the "reference"'})
    assert valid(schema, {"score": 1, "rationale": "Revenue was $1,577m (FY2018); the answer matches."})
    assert not valid(schema, {"score": 1})
    assert not valid(schema, {"score": 1, "rationale": "ok", "confidence": 0.9})
    assert not valid(schema, {"score": "N/A", "rationale": "n/a"})  # the schema's not-applicable value is a number

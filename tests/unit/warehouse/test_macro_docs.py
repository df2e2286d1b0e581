"""Every macro and generic test under macros/ is documented in macros/_macros.yml or, for generated macros, in the
properties file generated beside them (and nothing there is stale)."""

from __future__ import annotations

import re

import yaml

from support.paths import PROJECT

DEFINITION = re.compile(r"\{%-?\s*(macro|test)\s+([a-z_][a-z0-9_]*)")


def test_every_macro_is_documented() -> None:
    defined = {
        ("test_" if kind == "test" else "") + name
        for path in (PROJECT / "macros").rglob("*.sql")
        for kind, name in DEFINITION.findall(path.read_text())
        if "__" not in name  # an adapter's implementation (duckdb__x) of a dispatched macro x: x is documented
    }
    # every name defined, adapter implementations included: an override of an adapter's own macro (dbt-spark's
    # spark__load_csv_rows) is documented by its full name
    every_name = {
        ("test_" if kind == "test" else "") + name
        for path in (PROJECT / "macros").rglob("*.sql")
        for kind, name in DEFINITION.findall(path.read_text())
    }
    # macros/_macros.yml, and the docs generated beside generated macros (macros/generated/_rules.yml)
    documented = {m["name"]: m for path in sorted((PROJECT / "macros").rglob("_*.yml"))
                  for m in yaml.safe_load(path.read_text())["macros"]}
    assert len(defined) >= 15
    assert sorted(defined - documented.keys()) == [], "macros without an entry in macros/_macros.yml"
    assert sorted(documented.keys() - every_name) == [], "entries in macros/_macros.yml without a macro"
    assert [name for name, m in documented.items() if not str(m.get("description", "")).strip()] == []

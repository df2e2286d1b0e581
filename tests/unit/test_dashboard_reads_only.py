"""The dashboard only reads: every query of the dashboards/data/ modules is a plain select over published marts (no
join, no group by or aggregate, no window, no CTE or subquery, no set operation, no table function, no lake table), no
rule list (granularities, slice dimensions) is spelled under dashboards/, each page reads through its own data module
and the shared ones only, and each page's exposure (models/marts/_dashboard__exposures.yml) names the models the page
reads. Static: parsed with ast and sqlglot."""

from __future__ import annotations

import ast
import re
from pathlib import Path

import sqlglot
import yaml
from sqlglot import exp

from python_jobs.core.rules import RULES
from support.paths import PROJECT

DATA = PROJECT / "dashboards" / "data"
VIEWS = PROJECT / "dashboards" / "views"
# the data modules every page may read besides its own (dashboards/data/<page>.py)
SHARED = {"common", "published", "diagnosis"}
# what a plain select may not hold: each would be a rule, a join or a computation of the dashboard's own
FORBIDDEN = {
    "a join": exp.Join, "a group by": exp.Group, "an aggregate": exp.AggFunc, "a window": exp.Window,
    "a having": exp.Having, "a qualify": exp.Qualify, "a CTE": exp.With, "a subquery": exp.Subquery,
    "a set operation": exp.SetOperation, "a pivot": exp.Pivot, "an unnest": exp.Unnest, "a lateral": exp.Lateral,
}


def published_names() -> set[str]:
    """What a build publishes: every model under models/marts and every seed (dbt_project.yml meta.published)."""
    return ({p.stem for p in (PROJECT / "models" / "marts").rglob("*.sql")}
            | {p.stem for p in (PROJECT / "seeds").glob("*.csv")})


def sql_text(node: ast.expr) -> str:
    """A query's SQL: a string, or an f-string whose placeholders (filters built by in_list) read as `true`."""
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return node.value
    assert isinstance(node, ast.JoinedStr), ast.unparse(node)
    return "".join(v.value if isinstance(v, ast.Constant) else "true" for v in node.values)


def data_modules() -> dict[str, ast.Module]:
    """Every module of the dashboards/data package, by name, parsed."""
    return {p.stem: ast.parse(p.read_text()) for p in sorted(DATA.glob("*.py")) if p.stem != "__init__"}


def data_functions() -> dict[str, tuple[str, ast.FunctionDef]]:
    """Every top-level function of the data package -> (its module, its node). A name is defined once in the package,
    so a call resolves to one function wherever it is imported."""
    found: dict[str, tuple[str, ast.FunctionDef]] = {}
    for module, tree in data_modules().items():
        for node in tree.body:
            if isinstance(node, ast.FunctionDef):
                assert node.name not in found, f"{node.name} in {found[node.name][0]} and {module}"
                found[node.name] = (module, node)
    return found


def queries() -> list[tuple[str, str, list[str]]]:
    """(function, SQL, marts) of every query(...) call in the data package."""
    found = []
    for _, function in data_functions().values():
        for call in ast.walk(function):
            if isinstance(call, ast.Call) and isinstance(call.func, ast.Name) and call.func.id == "query":
                marts = next((k.value for k in call.keywords if k.arg == "marts"), ast.List(elts=[]))
                names = [e.value if isinstance(e, ast.Constant) else f"<not a literal: {ast.unparse(e)}>"
                         for e in (marts.elts if isinstance(marts, ast.List) else [marts])]
                found.append((function.name, sql_text(call.args[1]), names))
    return found


def query_problems(function: str, sql: str, marts: list[str], published: set[str]) -> list[str]:
    """What makes one query more than a select over one published mart (empty: nothing)."""
    statements = sqlglot.parse(sql, read="duckdb")
    if len(statements) != 1 or not isinstance(statements[0], exp.Select):
        return [f"{function}: not one SELECT"]
    select = statements[0]
    problems = [f"{function}: {what}" for what, kind in FORBIDDEN.items() if any(select.find_all(kind))]
    tables = list(select.find_all(exp.Table))
    if len(tables) != 1:
        problems.append(f"{function}: reads {len(tables)} tables ({', '.join(t.sql() for t in tables)})")
    for table in tables:
        if not isinstance(table.this, exp.Identifier):
            problems.append(f"{function}: a table function {table.sql()}")
        elif table.name not in published:
            problems.append(f"{function}: {table.name} is not a published mart or seed")
    if [t.name for t in tables] != marts:
        problems.append(f"{function}: marts={marts} is not the table it reads")
    return problems


def test_every_query_is_a_select_over_marts() -> None:
    found = queries()
    assert len(found) >= 40
    published = published_names()
    problems = [p for function, sql, marts in found for p in query_problems(function, sql, marts, published)]
    assert problems == []


def test_data_reads_nothing_but_the_published_marts() -> None:
    sources = {p.name: p.read_text() for p in DATA.glob("*.py")}
    # no connection of the dashboard's own: published.query() opens the readers' one published connection
    # (python_jobs/marts/published.py: its views over the files the published manifest names)
    for call in ("duckdb.connect(", "read_parquet("):
        assert {name for name, text in sources.items() if call in text} == set()
    assert "published_connection(home, marts)" in sources["published.py"]
    for path in sorted((PROJECT / "dashboards").rglob("*.py")):
        text = path.read_text()
        assert "python_jobs.core.lake" not in text and "inventory" not in text, path
        assert not re.search(r"\blake_\w+|/\s*\"lake\"|'lake'", text), f"{path}: reads the lake"


def string_lists(path: Path) -> list[set[str]]:
    tree = ast.parse(path.read_text())
    return [{e.value for e in node.elts if isinstance(e, ast.Constant) and isinstance(e.value, str)}
            for node in ast.walk(tree) if isinstance(node, (ast.List, ast.Tuple, ast.Set))]


def test_no_rule_lists_in_dashboards() -> None:
    """The granularity order and the slice dimensions (python_jobs/core/rules.yml) are read from marts
    (dim_granularities, dim_slice_dimensions), never spelled here; no pass threshold either (the registry's
    pass_threshold)."""
    granularities = set(RULES.granularity_names)
    assert granularities == {"chunk", "page", "doc"}
    dimensions = {*RULES.slice_dimension_names, *(v.name for v in RULES.slice_crossings)}
    assert {"doc_type", "question_type", "topic_x_task"} <= dimensions
    for path in (PROJECT / "dashboards").rglob("*.py"):
        for strings in string_lists(path):
            assert len(strings & granularities) < 2, f"{path}: a list of granularities {strings}"
            assert len(strings & dimensions) < 2, f"{path}: a list of slice dimensions {strings}"
        assert "THRESHOLD" not in path.read_text(), f"{path}: a threshold of its own"


def called_name(call: ast.Call) -> str | None:
    """The name a call calls: `f(...)` (a function of its own module, or imported by name) or `module.f(...)`."""
    if isinstance(call.func, ast.Name):
        return call.func.id
    if isinstance(call.func, ast.Attribute) and isinstance(call.func.value, ast.Name):
        return call.func.attr
    return None


def data_function_marts() -> dict[str, set[str]]:
    """Data function -> the marts it reads, through the data functions it calls, in its module or another
    (diagnose's conditional reads apart: see below)."""
    functions = {name: node for name, (_, node) in data_functions().items()}
    direct: dict[str, set[str]] = {}
    calls: dict[str, set[str]] = {}
    for name, node in functions.items():
        direct[name] = {m for f, _, marts in queries() if f == name for m in marts}
        calls[name] = {called for c in ast.walk(node) if isinstance(c, ast.Call)
                       and (called := called_name(c)) in functions and called != name}

    def reach(name: str, seen: frozenset[str] = frozenset()) -> set[str]:
        out = set(direct[name])
        for callee in calls[name] - seen:
            out |= reach(callee, seen | {name})
        return out

    return {name: reach(name) for name in functions}


def page_data_calls(page: Path) -> set[str]:
    """The data functions a page calls, through the data modules it imports (`from dashboards.data import leaderboard
    as data, common`: `data.f(...)`, `common.g(...)`); each must be defined in the module it is called on, and a
    page imports its own data module (named like the page) and the shared ones only."""
    tree = ast.parse(page.read_text())
    modules = {alias.asname or alias.name: alias.name for node in ast.walk(tree)
               if isinstance(node, ast.ImportFrom) and node.module == "dashboards.data" for alias in node.names}
    assert set(modules.values()) <= SHARED | {page.stem}, (page.stem, sorted(modules.values()))
    assert not [node.module for node in ast.walk(tree) if isinstance(node, ast.ImportFrom)
                and (node.module or "").startswith("dashboards.data.")], f"{page}: import the module, not its names"
    defined = {name: module for name, (module, _) in data_functions().items()}
    called = set()
    for call in ast.walk(tree):
        if (isinstance(call, ast.Call) and isinstance(call.func, ast.Attribute)
                and isinstance(call.func.value, ast.Name) and call.func.value.id in modules):
            assert defined.get(call.func.attr) == modules[call.func.value.id], (page.stem, ast.unparse(call.func))
            called.add(call.func.attr)
    return called


def page_reads(page: Path, marts_of: dict[str, set[str]]) -> tuple[set[str], set[str]]:
    """(marts the page reads for sure, marts it may read): its data module calls; the diagnose of ui.empty_state
    (and of ui.require, which shows it) reads mart_datasets always and other marts only for some causes."""
    tree = ast.parse(page.read_text())
    called = page_data_calls(page)
    empty_state = any(isinstance(c, ast.Call) and isinstance(c.func, ast.Attribute)
                      and c.func.attr in ("empty_state", "require") for c in ast.walk(tree))
    sure = set().union(*(marts_of[f] for f in called - {"diagnose"})) if called - {"diagnose"} else set()
    if empty_state or "diagnose" in called:
        sure |= marts_of["dataset_counts"]
        return sure, sure | marts_of["diagnose"]
    return sure, sure


def test_exposures_name_what_each_page_reads() -> None:
    exposures = {e["name"]: e for e in yaml.safe_load(
        (PROJECT / "models" / "marts" / "_dashboard__exposures.yml").read_text())["exposures"]}
    marts_of = data_function_marts()
    pages = sorted(VIEWS.glob("*.py"))
    assert set(exposures) == {f"dashboard_{p.stem}" for p in pages}
    for page in pages:
        named = {re.fullmatch(r"ref\('(\w+)'\)", d).group(1) for d in exposures[f"dashboard_{page.stem}"]["depends_on"]}
        sure, possible = page_reads(page, marts_of)
        assert sure <= named <= possible, (page.stem, sorted(sure - named), sorted(named - possible))

"""Each rule has one declared home, python_jobs/core/rules.yml: Python reads it (python_jobs/core/rules.py), dbt reads
the macros generated from it (macros/generated/rules.sql), and no second spelling of a rule appears in the code -
the granularity list, the slice dimensions, what is relevant, what a chunk without page_end covers, the numeric
tolerance. The checker is shown failing on planted spellings of each."""

from __future__ import annotations

import re
from pathlib import Path

import polars as pl
import pytest

from python_jobs.core.rules import RULES, RULES_YML
from python_jobs.warehouse.dbt_codegen import RULES_DIR
from support.paths import PROJECT

# where code lives (tests assert values of their own and are left out); generated files are the rules themselves
CODE = ("python_jobs", "dashboards", "models", "macros", "seeds", "tests/dbt", "dbt_project.yml")
SUFFIXES = (".py", ".sql", ".yml", ".yaml", ".csv", ".md")
# the declaration, its reader and what is generated from it
DECLARED = {RULES_YML.resolve(), RULES_YML.with_suffix(".py").resolve(), (PROJECT / RULES_DIR / "rules.sql").resolve(),
            (PROJECT / RULES_DIR / "_rules.yml").resolve()}

_Q = r"""['"]?"""  # a name quoted or bare


def _sequence(names: tuple[str, ...]) -> re.Pattern[str]:
    return re.compile(r"\b" + r"\s*,\s*".join(_Q + re.escape(n) + _Q for n in names) + r"\b")


SPELLINGS: dict[str, re.Pattern[str]] = {
    "granularities": _sequence(RULES.granularity_names),
    "relevance": re.compile(r"relevance\b['\")\]]*\s*(>=?)\s*\d"),
    "page_coverage": re.compile(r"coalesce\(\s*[\w.]*page_end\s*,|page_end['\"\]]*\)?\.fill_null"),
    # a quoted list of the oracle conditions (SQL `in (...)`, a Python tuple), a quoted calibration method name
    "oracle_bounds": re.compile(r"\s*,\s*".join(r"['\"]" + re.escape(c) + r"['\"]" for c in RULES.oracle_conditions)),
    "calibration_methods": re.compile(r"['\"](" + "|".join(re.escape(m.name) for m in RULES.calibration_methods
                                                          if not m.name.isidentifier()) + r")['\"]"),
    "numeric_tolerance": re.compile(
        r"(tolerance\W{0,6}(:=|=|\bof\b)?\s*" + re.escape(repr(RULES.numeric_tolerance)) + r"\b)|"
        + r"\b" + f"{RULES.numeric_tolerance * 100:g}" + r"\s?%\s*\(?relative"),
}


def slice_dimension_lists(text: str) -> list[str]:
    """Bracketed lists naming four or more slice dimensions."""
    names = set(RULES.slice_dimension_names)
    found = []
    # a [...] list, or a (...) whose items are quoted (a tuple); a SELECT's column list is not a list of dimensions
    groups = re.findall(r"\[([^\[\]]{0,600})\]", text) + [
        g for g in re.findall(r"\(([^()]{0,600})\)", text) if re.fullmatch(r"\s*(['\"][a-z_0-9]+['\"]\s*,?\s*)+", g)]
    for group in groups:
        words = set(re.findall(r"[a-z_0-9]+", group))
        if len(words & names) >= 4:
            found.append(group.strip()[:80])
    return found


def second_spellings(root: Path, paths: tuple[str, ...] = CODE) -> list[str]:
    """`file:line: rule` for every spelling of a rule outside its declaration."""
    out = []
    files = [p for d in paths for p in ([root / d] if (root / d).is_file() else sorted((root / d).rglob("*")))
             if p.is_file() and p.suffix in SUFFIXES and "__pycache__" not in p.parts]
    for path in files:
        if path.resolve() in DECLARED:
            continue
        text = path.read_text(encoding="utf-8", errors="replace")
        if path.suffix in (".yml", ".yaml"):
            # a dbt unit test's given rows are a fixture's data (e.g. the metric registry's rows), not a rule
            text = text.split("\nunit_tests:", 1)[0]
        for rule, pattern in SPELLINGS.items():
            for m in pattern.finditer(text):
                out.append(f"{path.relative_to(root)}:{text.count(chr(10), 0, m.start()) + 1}: {rule}: {m.group(0)}")
        for group in slice_dimension_lists(text):
            out.append(f"{path.relative_to(root)}: slice_dimensions: {group}")
    return out


def test_no_rule_is_spelled_twice() -> None:
    assert second_spellings(PROJECT) == []


def test_the_checker_finds_planted_spellings(tmp_path: Path) -> None:
    (tmp_path / "python_jobs").mkdir()
    (tmp_path / "python_jobs" / "a.py").write_text(
        'GRANS = ("chunk", "page", "doc")\n'
        'rel = frame.filter(pl.col("relevance") > 0)\n'
        'ends = frame["page_end"].fill_null(-1)\n'
        'def f(x, tolerance=0.03): ...\n'
        'DIMS = ["dataset", "question_type", "doc_type", "task"]\n'
        'ORACLE = ("oracle_doc", "oracle_page")\n'
        'label = "PPI++" if method == "ppi++" else "human"\n')
    (tmp_path / "models").mkdir()
    (tmp_path / "models" / "m.sql").write_text(
        "select * from e where relevance > 0 and g in ('chunk', 'page', 'doc')\n"
        "and p between page_start and coalesce(page_end, page_start)\n")
    (tmp_path / "models" / "m.yml").write_text("description: 1 when within 3 % (relative) of the gold\n")
    found = second_spellings(tmp_path, ("python_jobs", "models"))
    rules = sorted({line.split(": ")[1] for line in found})
    assert rules == ["calibration_methods", "granularities", "numeric_tolerance", "oracle_bounds", "page_coverage",
                     "relevance", "slice_dimensions"]
    assert len(found) == 11


def test_the_rules_as_python_and_sql_agree() -> None:
    generated = (PROJECT / RULES_DIR / "rules.sql").read_text()
    assert str(list(RULES.granularity_names)) in generated
    assert f">= {RULES.min_relevance})" in generated
    frame = pl.DataFrame({"relevance": [0, 1, 2, None], "page_start": [3, 3, None, 5], "page_end": [4, None, None, 5]})
    out = frame.select(RULES.is_relevant(pl.col("relevance")).alias("rel"),
                       RULES.last_page(pl.col("page_start"), pl.col("page_end")).alias("last"))
    assert out["rel"].to_list() == [False, True, True, None]
    assert out["last"].to_list() == [4, 3, None, 5]


@pytest.mark.parametrize("missing", ["page_end", "none"])
def test_only_the_declared_page_coverage_loads(tmp_path: Path, missing: str) -> None:
    from python_jobs.core.rules import load

    text = RULES_YML.read_text().replace("missing_page_end: page_start", f"missing_page_end: {missing}")
    (tmp_path / "rules.yml").write_text(text)
    with pytest.raises(ValueError, match="missing_page_end"):
        load(tmp_path / "rules.yml")


def test_oracle_bounds_are_conditions_of_the_contract_and_methods_are_labelled() -> None:
    from python_jobs.core.contracts import contract
    from python_jobs.marts.trust import trust_note

    conditions = contract("retrieval_runs").column("condition").accepted
    assert set(RULES.oracle_conditions) < set(conditions)  # at least one condition is a contender
    generated = (PROJECT / RULES_DIR / "rules.sql").read_text()
    assert f"in {tuple(RULES.oracle_conditions)!r}" in generated.replace('"', "'")
    # the trust wording names each method by its declared label
    row = {"trust_state": "calibrated", "calibrated_mean": 0.5, "calibrated_lower": 0.4, "calibrated_upper": 0.6,
           "label_set": "h", "human_metric": "correctness", "n_labelled": 3, "n_unlabelled": 7}
    for method in RULES.calibration_methods:
        assert f"({method.label}, 3 labelled of 10)" in trust_note({**row, "calibration_method": method.name})
    with pytest.raises(KeyError, match="no calibration method 'ppi'"):
        trust_note({**row, "calibration_method": "ppi"})

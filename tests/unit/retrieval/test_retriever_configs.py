"""The retriever registry and its configs: the lists and stages derived from the registered config classes, configs
built from plain dicts (unknown keys and bad values are InputErrors naming the field), the CLI's options made from
the classes, and each retriever default spelled once: in its config class (or the constant its class names), never
again in the code, the docs or the help texts (`rrf_k=60`, `[--rrf-k 60]`, "`--top-pages` (default 20)"). The
last check reads the tree's text (Python and Markdown) and is shown failing on a planted example."""

from __future__ import annotations

import ast
import inspect
import re
from dataclasses import dataclass
from pathlib import Path

import pytest
from click.testing import CliRunner
from pydantic import Field

from python_jobs import retrieval
from python_jobs.commands.retrieve import command as retrieve_command
from python_jobs.core.errors import InputError
from python_jobs.retrieval import (
    FIRST_STAGES,
    LLM_RETRIEVERS,
    RETRIEVERS,
    RetrieverConfig,
    RetrieverTree,
    register,
    registry,
    stage_names,
)
from python_jobs.retrieval.hybrid import HybridConfig
from python_jobs.retrieval.runs import UNUSED, RetrievalConfig, config_fields, identity, run_retrieval
from support.toy_corpus import DATASET, FLAT

ROOT = Path(__file__).resolve().parents[3]
# where a second spelling of a retriever default would mislead: the code, the dashboard, the benchmarks, the docs
SCANNED = ("python_jobs", "dashboards", "bench", "docs", "README.md", "CONTRIBUTING.md")


# ---- the registry ---------------------------------------------------------------------------------------------
def test_the_lists_and_stages_are_derived_from_the_registered_classes():
    # main's lists, before they were derived (a new retriever adds to them)
    assert set(RETRIEVERS) >= {"bm25", "dense", "hybrid", "rerank", "parent_child", "keywords", "hyde", "multi_hyde",
                               "llm_expand", "page_scorer"}
    assert set(FIRST_STAGES) >= {"bm25", "dense", "hybrid", "keywords", "rerank"} and "parent_child" not in FIRST_STAGES
    assert set(LLM_RETRIEVERS) >= {"hyde", "multi_hyde", "llm_expand"} and "dense" not in LLM_RETRIEVERS
    assert stage_names("hybrid") == ["hybrid", "bm25", "dense"]
    assert stage_names("rerank") == ["rerank", "dense"] and stage_names("keywords") == ["keywords", "bm25"]
    assert stage_names("parent_child", "rerank") == ["parent_child", "rerank", "dense"]
    assert stage_names("rerank", "hybrid") == ["rerank", "hybrid", "bm25", "dense"]
    assert stage_names("hyde") == ["hyde", "dense"] and stage_names("page_scorer") == ["page_scorer", "dense"]
    with pytest.raises(TypeError, match="two retrievers are named 'bm25'"):
        @register
        class Another(RetrieverConfig):
            name = "bm25"


def test_a_registered_retriever_is_listed_staged_built_and_hashed(monkeypatch: pytest.MonkeyPatch, toy):
    class EchoConfig(RetrieverConfig):  # bm25, n results deep (what a new module would declare)
        name = "echo"
        needs = ("bm25",)
        can_be_first_stage = True
        echo_depth: int = Field(7, ge=1, description="Results kept.")

        def build(self, ctx, level, k, tree):
            return tree.build(ctx, k, level, "bm25")

    monkeypatch.setitem(retrieval._REGISTRY, "echo", EchoConfig)
    assert "echo" in retrieval.RETRIEVERS and "echo" in retrieval.FIRST_STAGES
    assert stage_names("echo") == ["echo", "bm25"] and stage_names("rerank", "echo") == ["rerank", "echo", "bm25"]
    cfg = RetrievalConfig.from_dict({"dataset": DATASET, "retriever": "echo", "echo_depth": 3, "chunker_id": FLAT})
    assert config_fields(cfg.retriever, 10) == {**UNUSED, "retriever": "echo", "echo_depth": 3}
    out = run_retrieval(toy, cfg, progress=False)
    assert out["run_id"] == identity(cfg, FLAT)[0] and out["rows"] > 0
    with pytest.raises(InputError, match="greater than or equal to 1") as e:
        RetrievalConfig.from_dict({"dataset": DATASET, "retriever": "echo", "echo_depth": 0})
    assert e.value.field == "echo_depth"
    # the settings it brings enter only its own hash: bm25's stays as it was
    assert config_fields(RetrieverTree.of("bm25"), 10) == {**UNUSED, "retriever": "bm25"}


def test_a_setting_goes_to_the_outermost_stage_that_has_it():
    tree = RetrieverTree.of("keywords", {"first_stage": "rerank", "reranker": "x", "top_n": 50, "n_keywords": 2})
    keywords, rerank, dense = tree.stages
    assert (keywords.first_stage, keywords.n_keywords) == ("rerank", 2)
    assert (rerank.first_stage, rerank.reranker, rerank.top_n) == ("dense", "x", 50)  # its own default first stage
    assert dense.embedder == "all-MiniLM-L6-v2"
    tree = RetrieverTree.of("rerank", {"first_stage": "hybrid", "reranker": "x", "top_n": 200})
    assert tree.stages[1].top_n is None and tree.stages[0].depth(10) == 200 and tree.stages[1].depth(10) == 100


# ---- configs from plain dicts ------------------------------------------------------------------------------------
@pytest.mark.parametrize("values, field, says", [
    ({"retriever": "hybrid", "rrf_k": 0}, "rrf_k", "greater than or equal to 1"),
    ({"retriever": "hybrid", "rrf_k": "60"}, "rrf_k", "valid integer"),
    ({"retriever": "hybrid", "rrf_k": True}, "rrf_k", "valid integer"),
    ({"retriever": "bm25", "rrf_k": 10}, "rrf_k", "not a setting of bm25"),
    ({"retriever": "hybrid", "rrf_kk": 10}, "rrf_kk", "not a setting of hybrid > bm25 > dense"),
    ({"retriever": "nope"}, "retriever", "unknown retriever 'nope'"),
    ({"retriever": "rerank", "reranker": "x", "first_stage": "parent_child"}, "first_stage", "not valid for rerank"),
    ({"retriever": "rerank"}, "reranker", "rerank needs --reranker"),
    ({"retriever": "page_scorer"}, "model_training", "page_scorer needs --model-training"),
    ({"retriever": "dense", "long_text": "all"}, "long_text", "'window' or 'truncate'"),
    ({"retriever": "multi_hyde", "hyde_fusion": "max"}, "hyde_fusion", "'mean' or 'rrf'"),
    ({"retriever": "hyde", "llm_temperature": 3}, "llm_temperature", "less than or equal to 2"),
    ({"retriever": "bm25", "k": 0}, "k", "greater than or equal to 1"),
    ({"retriever": "bm25", "condition": "oracle"}, "condition", "'full', 'oracle_doc' or 'oracle_page'"),
    ({"retriever": "bm25", "batch_size": 64.0}, "batch_size", "valid integer"),
    ({}, "retriever", "required field is missing"),
])
def test_bad_settings_are_input_errors_naming_the_field(values: dict, field: str, says: str):
    with pytest.raises(InputError, match=re.escape(says)) as e:
        RetrievalConfig.from_dict({"dataset": "d", **values}, file="grid.yaml")
    assert e.value.field == field and e.value.file == "grid.yaml"


def test_a_config_from_a_dict_equals_the_one_from_keywords():
    cfg = RetrievalConfig.from_dict({"dataset": "d", "retriever": "hybrid", "k": 5, "rrf_k": 10, "splits": ["test"]})
    assert cfg == RetrievalConfig(dataset="d", retriever=RetrieverTree.of("hybrid", {"rrf_k": 10}), k=5,
                                  splits=("test",))
    assert cfg.retriever.stages[0] == HybridConfig(rrf_k=10) and cfg.retriever.stages[2].long_text == "window"
    loose = RetrievalConfig.from_dict({"dataset": "d", "retriever": "bm25", "rrf_k": 10}, ignore_unknown=True)
    assert loose.retriever.names == ["bm25"] and "rrf_k" not in loose.retriever.keys()


def test_the_cli_options_are_the_settings_with_their_classes_defaults():
    text = " ".join(CliRunner().invoke(retrieve_command, ["--help"], terminal_width=200).output.split())
    declared = {name for cls in registry().values() for name in cls.model_fields}
    for name in declared:
        assert f"--{name.replace('_', '-')} " in text, name
    assert f"Reciprocal rank fusion constant. [default: ({HybridConfig.default('rrf_k')})]" in text
    assert "[default: (hyde 0.0, llm_expand 0.0, multi_hyde 0.7)]" in text
    assert "[default: (hybrid max(100, k), parent_child max(100, 10k), rerank max(20, k))]" in text


# ---- each default spelled once ---------------------------------------------------------------------------------
@dataclass(frozen=True)
class Default:
    setting: str
    value: object
    homes: frozenset[tuple[str, int]]  # (file, line) where it may be spelled: its declarations
    declared: frozenset[tuple[str, int]]  # the homes that spell it in a form the patterns read (the scan must see them)


def python_files(root: Path) -> list[Path]:
    return sorted(p for d in SCANNED if (root / d).is_dir() for p in (root / d).rglob("*.py"))


def constant_lines(root: Path, name: str) -> set[tuple[str, int]]:
    """Where a module-level constant is assigned a literal (`DEFAULT_EMBEDDER = "all-MiniLM-L6-v2"`)."""
    out = set()
    for path in python_files(root):
        for node in ast.parse(path.read_text(encoding="utf-8")).body:
            if (isinstance(node, ast.Assign) and isinstance(node.value, ast.Constant)
                    and any(isinstance(t, ast.Name) and t.id == name for t in node.targets)):
                out.add((path.relative_to(root).as_posix(), node.lineno))
    return out


def retriever_defaults(root: Path) -> list[Default]:
    """Every retriever setting whose default is a value (not None), with the lines that declare it: its config
    classes' field lines, or the constant a field's default names; a first-stage depth's default its min_depth."""
    homes: dict[tuple[str, object], set[tuple[str, int]]] = {}
    declared: dict[tuple[str, object], set[tuple[str, int]]] = {}
    for cls in registry().values():
        path = Path(inspect.getsourcefile(cls))  # type: ignore[arg-type]
        rel = path.relative_to(ROOT).as_posix()
        node = next(n for n in ast.parse(path.read_text(encoding="utf-8")).body
                    if isinstance(n, ast.ClassDef) and n.name == cls.__name__)
        for stmt in node.body:
            if isinstance(stmt, ast.Assign) and any(getattr(t, "id", None) == "min_depth" for t in stmt.targets):
                homes.setdefault(("top_n", cls.min_depth), set()).add((rel, stmt.lineno))
            if not (isinstance(stmt, ast.AnnAssign) and isinstance(stmt.target, ast.Name)
                    and stmt.target.id in cls.model_fields and stmt.value is not None):
                continue
            name, value = stmt.target.id, cls.default(stmt.target.id)
            if value is None:
                continue
            expr = stmt.value
            if isinstance(expr, ast.Call) and getattr(expr.func, "id", None) == "Field" and expr.args:
                expr = expr.args[0]
            if isinstance(expr, ast.Constant):
                where = {(rel, stmt.lineno)}
            elif isinstance(expr, ast.Name):
                where = constant_lines(root, expr.id)
            else:  # another class's default (multi_hyde's rrf_k reads hybrid's): no spelling of its own
                continue
            homes.setdefault((name, value), set()).update(where)
            declared.setdefault((name, value), set()).update(where)
    return [Default(n, v, frozenset(h), frozenset(declared.get((n, v), ()))) for (n, v), h in sorted(
        homes.items(), key=str)]


def patterns(setting: str, value: object) -> list[re.Pattern[str]]:
    """The ways the tree spells a default: `rrf_k=60`, `rrf_k: int = 60` (also `Field(60, ...)`),
    `DEFAULT_RRF_K = 60`, a click option's `default=60`, `[--rrf-k 60]`, and "`--rrf-k` default 60" /
    "`--top-pages` (default 20)" / "`--hyde-n` passages (default 3)" in prose."""
    if isinstance(value, str):
        code, bare = f"[\"']{re.escape(value)}[\"']", re.escape(value)
    elif isinstance(value, float) and value == int(value):
        code = bare = rf"{int(value)}(?:\.0)?"
    else:
        code = bare = re.escape(str(value))
    end = r"(?![\w.|-])"
    opt = "--" + setting.replace("_", "-")
    return [re.compile(p) for p in (
        rf"\b{setting}\s*(?::[^=\n]*)?=\s*(?:Field\(\s*)?{code}{end}",
        rf"\bDEFAULT_{setting.upper()}\s*(?::[^=\n]*)?=\s*{code}{end}",
        rf"[\"']{opt}[\"'][^\n]*\bdefault\s*=\s*{code}{end}",
        rf"\[{opt}[ =]{bare}\]",
        rf"{opt}`?(?:\W+\w+){{0,3}}?\W*\(?\bdefault:?\s+{bare}{end}",
    )]


def second_spellings(root: Path, defaults: list[Default]) -> tuple[list[str], list[str]]:
    """(spellings outside their homes, homes the patterns did not see) in the files under SCANNED."""
    files = [p for d in SCANNED for p in ([root / d] if (root / d).is_file() else
                                           sorted((root / d).rglob("*")) if (root / d).is_dir() else [])
             if p.suffix in (".py", ".md")]
    found, seen = [], set()
    for path in files:
        rel, text = path.relative_to(root).as_posix(), path.read_text(encoding="utf-8")
        for d in defaults:
            for pattern in patterns(d.setting, d.value):
                for m in pattern.finditer(text):
                    line = text.count("\n", 0, m.start()) + 1
                    if (rel, line) in d.homes:
                        seen.add((rel, line))
                    else:
                        found.append(f"{rel}:{line}: {m.group(0)!r} spells the default {d.setting}={d.value!r}")
    unseen = [f"{f}:{n}" for d in defaults for f, n in d.declared if (f, n) not in seen]
    return sorted(set(found)), sorted(unseen)


def test_each_retriever_default_is_spelled_once():
    defaults = retriever_defaults(ROOT)
    assert {d.setting for d in defaults} >= {"rrf_k", "top_n", "n_keywords", "top_pages", "hyde_n", "embedder",
                                             "long_text", "llm_temperature", "first_stage"}  # the check sees them
    found, unseen = second_spellings(ROOT, defaults)
    assert not unseen, f"the patterns miss these declarations of a default: {unseen}"
    assert not found, ("a retriever default is spelled again outside its config class (read it from the class: "
                       "`HybridConfig.default('rrf_k')`; in the docs, point at `finrag retrieve --help`):\n"
                       + "\n".join(found))


def test_the_check_catches_a_second_spelling(tmp_path: Path):
    defaults = retriever_defaults(ROOT)
    (tmp_path / "python_jobs").mkdir()
    (tmp_path / "docs").mkdir()
    (tmp_path / "python_jobs" / "fusion.py").write_text(
        "def fuse(lists, rrf_k: int = 60):\n    return fuse_more(lists, rrf_k=60)\n\nDEFAULT_TOP_PAGES = 20\n"
        '@click.option("--n-keywords", type=int, default=8)\n'
        "def fine(rrf_k: int = 61, top_pages=200, window='window-ish'):\n    pass\n")
    (tmp_path / "docs" / "retrievers.md").write_text(
        "finrag retrieve [--rrf-k 60] [--long-text window]\n\n| `hybrid` | RRF, `--rrf-k` default 60, `--top-n` "
        "(default 100) deep |\n| `multi_hyde` | `--hyde-n` passages (default 3) |\n"
        "Keeps the top `--top-pages` (default 20) pages. `--long-text window|truncate` is a synopsis.\n")
    found, _ = second_spellings(tmp_path, defaults)
    assert [f.split(": ", 1)[0] for f in found] == [
        "docs/retrievers.md:1", "docs/retrievers.md:1", "docs/retrievers.md:3", "docs/retrievers.md:3",
        "docs/retrievers.md:4", "docs/retrievers.md:5",
        "python_jobs/fusion.py:1", "python_jobs/fusion.py:2", "python_jobs/fusion.py:4", "python_jobs/fusion.py:5"]
    assert any("'[--long-text window]' spells the default long_text='window'" in f for f in found)

"""A sweep's grid file (YAML): what `finrag sweep <grid.yaml>` runs.

    dataset: demo_synthetic
    kind: retrieval                    # retrieval (default), or answer: answer runs (e.g. over a retrieval run)
    fixed:                             # settings every configuration shares
      k: 5
      chunk_overlap: 32
    parameters:                        # the settings swept, each with its values: the grid is their product
      chunk_size: [128, 256]
      retriever: [bm25, dense, hybrid]
    exclude:                           # optional: combinations left out (each names some parameters' values)
      - {chunk_size: 128, retriever: hybrid}
    baseline: {chunk_size: 256, retriever: bm25}   # optional: the configuration every run is compared with

Settings are those of the runs' config objects, spelled as `finrag retrieve` / `finrag answer` take them from a
dict: a retrieval run's (RetrievalConfig and its retriever's settings, flat: `retriever`, `k`, `condition`,
`rrf_k`, `embedder`, ...) plus the chunking's, prefixed `chunk_` (ChunkingConfig: `chunk_size`, `chunk_overlap`,
`chunk_preset`, `chunk_parent_size`, ..., `chunk_tokenizer`), or an answer run's (AnswerConfig: `retrieval_run_id`,
`k`, `template`, `max_tokens`, ...). Not `run_id` (a sweep's runs take the ids their configs hash to, so a run is
the same run as the verb's) nor `dataset` (the grid's own key). A value goes to the config as YAML writes it (a
null is None: the default rule of a setting such as top_n), so the configs' checks are the sweep's. A setting the
configuration's retriever does not have is refused as `finrag retrieve`'s registry refuses it: leave such
combinations out with `exclude:`.

Configurations are the parameters' Cartesian product, in the grid's order (the last parameter varies fastest),
less those an `exclude` entry matches (every parameter it names has the value it gives). The baseline names one
configuration (a value for each parameter, or enough of them to pick one).

Every structural error - a missing or unknown key, a key given twice, a parameter without values, a value given
twice, an exclusion or baseline naming an unknown parameter or value - is an InputError naming the file, the line
of the offending key or value and its path (`parameters.retriever[2]`); the runs' own checks are mapped back the
same way (python_jobs/sweeps/runs.py).
"""

from __future__ import annotations

import itertools
import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from python_jobs.core.errors import InputError

KINDS = ("retrieval", "answer")
KEYS = ("dataset", "kind", "fixed", "parameters", "exclude", "baseline")
REQUIRED_KEYS = ("dataset", "parameters")
CHUNK_PREFIX = "chunk_"  # a retrieval grid's chunking settings: chunk_size -> ChunkingConfig.size
# settings a grid may not give, and why
REFUSED = {"run_id": "a sweep's runs take the ids their configs hash to (the ids `finrag retrieve` / `answer` give)",
           "dataset": "the grid's dataset is its top-level `dataset`"}

Path_ = tuple[str | int, ...]  # a place in the grid: ("parameters", "retriever", 2)


def value_text(value: Any) -> str:
    """A setting's value as sweep_runs stores it: a string as written, anything else as JSON."""
    return value if isinstance(value, str) else json.dumps(value, sort_keys=True)


def _same(a: Any, b: Any) -> bool:
    return json.dumps(a, sort_keys=True) == json.dumps(b, sort_keys=True)


@dataclass(frozen=True)
class Point:
    """One configuration of the grid: each parameter's value, and its index in the parameter's list."""

    values: dict[str, Any]
    indices: dict[str, int]

    def describe(self) -> str:
        return ", ".join(f"{name}={value_text(value)}" for name, value in self.values.items())


@dataclass(frozen=True)
class Grid:
    file: str
    dataset: str
    kind: str
    fixed: dict[str, Any]
    parameters: dict[str, list[Any]]  # in the grid's order
    exclude: list[dict[str, Any]]
    baseline: dict[str, Any] | None
    lines: dict[Path_, int] = field(repr=False)  # the (1-based) line of each key and list item

    # -- where things are ------------------------------------------------------------------------------------------
    def line(self, path: Path_) -> int | None:
        """The line of `path`, else of its nearest ancestor the file has."""
        while path and path not in self.lines:
            path = path[:-1]
        return self.lines.get(path)

    def error(self, message: str, path: Path_) -> InputError:
        """An InputError naming the grid file, the line of `path` and `path` itself as the field."""
        return InputError(message, file=self.file, line=self.line(path), field=path_text(path) or None)

    def place(self, setting: str, point: Point | None = None) -> Path_:
        """Where the grid gives `setting` (in `point`): its value in the parameter's list, its fixed key, or (not
        given) the `fixed` mapping it would go in."""
        if setting in self.parameters:
            return ("parameters", setting, point.indices[setting]) if point else ("parameters", setting)
        return ("fixed", setting)

    # -- the configurations -----------------------------------------------------------------------------------------
    def points(self) -> list[Point]:
        """Every configuration, in the grid's order, less the excluded ones."""
        names = list(self.parameters)
        out = []
        for indices in itertools.product(*(range(len(self.parameters[n])) for n in names)):
            point = Point({n: self.parameters[n][i] for n, i in zip(names, indices, strict=True)},
                          dict(zip(names, indices, strict=True)))
            if not any(matches(point, rule) for rule in self.exclude):
                out.append(point)
        return out

    def settings(self, point: Point) -> dict[str, Any]:
        """The point's flat settings: the fixed ones and its parameter values."""
        return {**self.fixed, **point.values}

    def baseline_point(self, points: list[Point]) -> Point | None:
        if self.baseline is None:
            return None
        found = [p for p in points if matches(p, self.baseline)]
        if len(found) != 1:
            every = [p for p in self.points_unexcluded() if matches(p, self.baseline)]
            why = ("is excluded" if every else "matches no configuration") if not found else (
                f"matches {len(found)} configurations: give a value for every parameter")
            raise self.error(f"the baseline {why}", ("baseline",))
        return found[0]

    def points_unexcluded(self) -> list[Point]:
        return Grid(self.file, self.dataset, self.kind, self.fixed, self.parameters, [], None, self.lines).points()

    def as_json(self) -> str:
        """The grid as parsed (what the sweep's id hashes, with its run ids, and sweeps.grid keeps)."""
        return json.dumps({"dataset": self.dataset, "kind": self.kind, "fixed": self.fixed,
                           "parameters": self.parameters, "exclude": self.exclude, "baseline": self.baseline})


def matches(point: Point, rule: Mapping[str, Any]) -> bool:
    return all(_same(point.values[name], value) for name, value in rule.items())


def path_text(path: Path_) -> str:
    out = ""
    for part in path:
        out += f"[{part}]" if isinstance(part, int) else (f".{part}" if out else str(part))
    return out


# ---- reading ------------------------------------------------------------------------------------------------------
def _compose(text: str, file: str) -> tuple[Any, dict[Path_, int]]:
    """The YAML document and the line of every mapping key and list item (yaml's node marks)."""
    loader = yaml.SafeLoader(text)
    try:
        node = loader.get_single_node()
        if node is None:
            raise InputError("the grid file is empty", file=file)
        data = loader.construct_document(node)
        lines: dict[Path_, int] = {}

        def walk(n: yaml.Node, path: Path_) -> None:
            if isinstance(n, yaml.MappingNode):
                seen: set[str] = set()
                for key_node, value_node in n.value:
                    key = loader.construct_object(key_node)
                    if not isinstance(key, str):
                        raise InputError(f"a key is a name, got {key!r}", file=file, line=key_node.start_mark.line + 1,
                                         field=path_text(path) or None)
                    if key in seen:
                        raise InputError("key given twice", file=file, line=key_node.start_mark.line + 1,
                                         field=path_text((*path, key)))
                    seen.add(key)
                    lines[(*path, key)] = key_node.start_mark.line + 1
                    walk(value_node, (*path, key))
            elif isinstance(n, yaml.SequenceNode):
                for i, item in enumerate(n.value):
                    lines[(*path, i)] = item.start_mark.line + 1
                    walk(item, (*path, i))

        walk(node, ())
        return data, lines
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        raise InputError(f"not valid YAML: {exc.problem or exc.context}", file=file,
                         line=mark.line + 1 if mark else None) from None
    except yaml.YAMLError as exc:
        raise InputError(f"not valid YAML: {exc}", file=file) from None
    finally:
        loader.dispose()


def read_grid(path: str | Path) -> Grid:
    """The grid of a YAML file, its structure checked (see the module docstring)."""
    file = str(path)
    try:
        text = Path(path).read_text(encoding="utf-8")
    except OSError as exc:
        raise InputError(f"cannot read the grid file: {exc.strerror}", file=file) from None
    return parse_grid(text, file)


def parse_grid(text: str, file: str) -> Grid:
    data, lines = _compose(text, file)
    shell = Grid(file, "", "", {}, {}, [], None, lines)  # for its error()
    if not isinstance(data, dict):
        raise shell.error(f"a grid is a mapping of {', '.join(KEYS)}", ())
    for key in data:
        if key not in KEYS:
            raise shell.error(f"unknown key; a grid has {', '.join(KEYS)}", (key,))
    for key in REQUIRED_KEYS:
        if key not in data:
            raise shell.error("required key is missing", (key,))
    for key, value in data.items():
        try:
            json.dumps(value)
        except (TypeError, ValueError):
            raise shell.error("a value YAML cannot give as JSON (a date, a set, ...)", (key,)) from None

    dataset, kind = data["dataset"], data.get("kind", KINDS[0])
    if not isinstance(dataset, str) or not dataset:
        raise shell.error("the dataset is a name", ("dataset",))
    if kind not in KINDS:
        raise shell.error(f"kind is one of {', '.join(KINDS)}, got {kind!r}", ("kind",))
    fixed = data.get("fixed") or {}
    if not isinstance(fixed, dict):
        raise shell.error("fixed is a mapping of settings to values", ("fixed",))

    parameters = data["parameters"]
    if not isinstance(parameters, dict) or not parameters:
        raise shell.error("parameters is a mapping of settings to lists of values, at least one", ("parameters",))
    for name, values in parameters.items():
        where = ("parameters", name)
        if not isinstance(values, list) or not values:
            raise shell.error("a parameter's values are a list of at least one value", where)
        for i, value in enumerate(values):
            if any(_same(value, earlier) for earlier in values[:i]):
                raise shell.error(f"value {value_text(value)} is given twice", (*where, i))
        if name in fixed:
            raise shell.error("a setting is fixed or a parameter, not both", ("fixed", name))
    for name, why in REFUSED.items():
        for section, settings in (("fixed", fixed), ("parameters", parameters)):
            if name in settings:
                raise shell.error(f"not a grid setting: {why}", (section, name))

    grid = Grid(file, dataset, kind, fixed, parameters, [], None, lines)
    exclude = data.get("exclude") or []
    if not isinstance(exclude, list):
        raise shell.error("exclude is a list of combinations (mappings of parameters to values)", ("exclude",))
    for i, rule in enumerate(exclude):
        _check_combination(grid, rule, ("exclude", i))
    baseline = data.get("baseline")
    if baseline is not None:
        _check_combination(grid, baseline, ("baseline",))
    grid = Grid(file, dataset, kind, fixed, parameters, exclude, baseline, lines)
    if not grid.points():
        raise grid.error("every configuration is excluded", ("exclude",))
    grid.baseline_point(grid.points())
    return grid


def _check_combination(grid: Grid, rule: Any, where: Path_) -> None:
    if not isinstance(rule, dict) or not rule:
        raise grid.error("a combination is a mapping of parameters to one of their values", where)
    for name, value in rule.items():
        if name not in grid.parameters:
            raise grid.error(f"not a parameter; the parameters: {', '.join(grid.parameters)}", (*where, name))
        if not any(_same(value, v) for v in grid.parameters[name]):
            raise grid.error(f"{value_text(value)} is not one of the parameter's values "
                             f"({', '.join(map(value_text, grid.parameters[name]))})", (*where, name))

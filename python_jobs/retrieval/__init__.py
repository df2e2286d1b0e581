"""Retrievers for `finrag retrieve` (a shared, non-verb package).

Every retriever answers `search(queries, depth) -> [[Hit, ...] per query]`, best first, over one *level* of a chunks
partition: `top` = chunks without a parent (every chunk of a flat chunker; the parents of a parent-child chunker),
`child` = chunks with a parent. Each query carries its condition's `Restriction` (None under `full`), which every
retriever applies *before* ranking (a filter, never a post-hoc cut), so oracle runs rank only the candidate set.

Composition: `hybrid` fuses bm25 + dense; `rerank`, `keywords`, `llm_expand` and `parent_child` wrap a first stage;
`hyde` / `multi_hyde` search dense with LLM-written hypothetical passages (the LLM retrievers share
`Context.rewriter`, the run's one LLM client); `page_scorer` keeps each question's top pages by a fold model of a
`finrag train-page-scorer` training and ranks the chunks on them by dense similarity.

The registry. Each retriever is one module of this package that declares its settings as a config class: a
subclass of `RetrieverConfig` (a frozen pydantic model) with its `name`, its settings and their defaults (the one
place they are spelled: `finrag retrieve`'s options, their help and the config hash read them there), the stages
it always runs on (`needs`), whether it wraps a first stage (it has a `first_stage` setting, whose default is its
default first stage), whether it may be a wrapper's first stage and whether it calls the LLM, and a `build` that
makes its retriever; `@register` enters it. `registry()` imports the package's modules once to find them, and
RETRIEVERS, FIRST_STAGES, LLM_RETRIEVERS, `stage_names` and `RetrieverTree.build` are derived from the registered
classes: adding a retriever is adding its module (and its tests).

A run's retriever is a `RetrieverTree`, the configs of the stages it runs, outermost first, made from flat settings
(`RetrieverTree.of("rerank", {"first_stage": "hybrid", "rrf_k": 10, ...})`: the CLI's options, a sweep's grid).
Each setting goes to the outermost stage that has it, so a wrapped stage keeps the defaults of the settings its
wrapper has too (first_stage, top_n); a setting no stage has is refused (InputError naming it).
"""

from __future__ import annotations

import importlib
import pkgutil
from abc import abstractmethod
from collections.abc import Mapping
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path
from typing import Annotated, Any, ClassVar, Protocol, TypeVar

import numpy as np
import polars as pl
from pydantic import Field

from python_jobs.core.errors import InputError
from python_jobs.core.job_config import JobConfig
from python_jobs.core.rules import RULES
from python_jobs.retrieval.conditions import Restriction

LEVELS = ("top", "child")
FIRST_STAGE = "first_stage"  # the setting that makes a retriever a wrapper: the retriever it wraps
INNER = FIRST_STAGE + "."  # a setting of a cascade's first stage: `first_stage.reranker`, `first_stage.top_n`

# settings several retrievers have: each declares its checks and help once here, its default in its config class
FirstStage = Annotated[str, Field(description="Inner retriever (first stage) of a wrapper.")]
Depth = Annotated[int | None, Field(ge=1, description="First-stage depth: the candidates read per question.")]


@dataclass(frozen=True)
class Query:
    question_id: str
    text: str
    restriction: Restriction | None = None


@dataclass(frozen=True)
class Hit:
    chunk_id: str
    score: float


class Retriever(Protocol):
    uses_dense: bool

    def search(self, queries: list[Query], depth: int) -> list[list[Hit]]: ...


@dataclass
class Corpus:
    """The searchable chunks of one level, in a fixed order (row i of every array is chunk i)."""

    frame: pl.DataFrame  # chunk_id, doc_id, page_start, page_end, text, parent_chunk_id

    @cached_property
    def chunk_ids(self) -> np.ndarray:
        return self.frame["chunk_id"].to_numpy().astype(object)

    @cached_property
    def doc_ids(self) -> np.ndarray:
        return self.frame["doc_id"].to_numpy().astype(object)

    @cached_property
    def page_start(self) -> np.ndarray:
        return self.frame["page_start"].fill_null(-1).to_numpy()

    @cached_property
    def page_end(self) -> np.ndarray:
        # the last page a chunk covers, by the rules' page coverage (-1: none)
        return self.frame.select(RULES.last_page(pl.col("page_start"), pl.col("page_end"))).to_series() \
            .fill_null(-1).to_numpy()

    def mask(self, r: Restriction) -> np.ndarray:
        return r.mask(self.doc_ids, self.page_start, self.page_end)

    def __len__(self) -> int:
        return self.frame.height


@dataclass
class Context:
    """What retrievers share within one run: the chunks partition, lazily built indexes and models."""

    home: Path
    dataset: str
    chunker_id: str
    chunks: pl.DataFrame  # the whole partition
    batch_size: int  # query encoding / search / scoring batch
    progress: bool = True
    rewriter: Any = None  # hyde.Rewriter of the LLM retrievers (hyde, multi_hyde, llm_expand); None otherwise
    _cache: dict = field(default_factory=dict, repr=False)

    def corpus(self, level: str) -> Corpus:
        key = ("corpus", level)
        if key not in self._cache:
            has_parent = pl.col("parent_chunk_id").is_not_null()
            frame = self.chunks.filter(has_parent if level == "child" else ~has_parent).sort(
                "doc_id", "ordinal", "chunk_id"
            )
            if frame.height == 0:
                what = "child chunks (chunk with --parent-size/--parent-overlap)" if level == "child" else "chunks"
                raise InputError(f"chunks partition {self.dataset}.{self.chunker_id} has no {what}", field="chunker_id")
            self._cache[key] = Corpus(
                frame.select("chunk_id", "doc_id", "page_start", "page_end", "text", "parent_chunk_id")
            )
        return self._cache[key]

    @cached_property
    def texts(self) -> dict[str, str]:
        return dict(zip(self.chunks["chunk_id"].to_list(), self.chunks["text"].to_list()))

    def cached(self, key: tuple, build):
        if key not in self._cache:
            self._cache[key] = build()
        return self._cache[key]



class RetrieverConfig(JobConfig):
    """A retriever's settings. Subclass it in the retriever's module, set the class variables, declare the settings
    (a wrapper: `first_stage`; a first-stage depth: `top_n`), write `build`, and decorate it with `@register`."""

    name: ClassVar[str]
    needs: ClassVar[tuple[str, ...]] = ()  # the stages it always runs on (hybrid: bm25 and dense)
    can_be_first_stage: ClassVar[bool] = False  # a wrapper may wrap it (--first-stage)
    uses_llm: ClassVar[bool] = False  # it calls the LLM, through the run's Rewriter (Context.rewriter)
    # it may wrap a stage of its own kind (a cascade: rerank over rerank); that stage's settings are then given as
    # `first_stage.<setting>` (INNER), since its plain names go to the outer stage
    cascades: ClassVar[bool] = False
    # with a `top_n` setting, the default depth: max(min_depth, depth_per_k * k)
    min_depth: ClassVar[int] = 0
    depth_per_k: ClassVar[int] = 1

    @classmethod
    def wraps(cls) -> bool:
        return FIRST_STAGE in cls.model_fields

    @classmethod
    def depth_rule(cls) -> str:
        return f"max({cls.min_depth}, {'' if cls.depth_per_k == 1 else cls.depth_per_k}k)"

    def depth(self, k: int) -> int | None:
        """The first-stage depth for k results: top_n, else the default rule; None without a top_n setting."""
        if "top_n" not in type(self).model_fields:
            return None
        top_n: int | None = self.top_n  # type: ignore[attr-defined]  # declared by the subclass
        return top_n if top_n is not None else max(self.min_depth, self.depth_per_k * k)

    def hashed(self) -> dict[str, Any]:
        """Its settings as they enter the run's config hash and params (an LLM retriever's own go under `llm`)."""
        return self.model_dump()

    def check_inner(self, inner: RetrieverConfig, k: int) -> None:
        """Refuse a first stage this stage cannot run on for k results (InputError naming the setting)."""

    @abstractmethod  # pydantic's model metaclass is an ABCMeta: a config class without build cannot be made
    def build(self, ctx: Context, level: str, k: int, tree: RetrieverTree) -> Retriever:
        """Its retriever at `level` for k results; the stages it runs on are built through `tree.build`."""


C = TypeVar("C", bound=RetrieverConfig)
_REGISTRY: dict[str, type[RetrieverConfig]] = {}
_found = False


def register(cls: type[C]) -> type[C]:
    """Class decorator: enter a retriever's config class into the registry under its name."""
    known = _REGISTRY.get(cls.name)
    if known is not None and known.__qualname__ != cls.__qualname__:
        raise TypeError(f"two retrievers are named {cls.name!r}: {known.__module__} and {cls.__module__}")
    _REGISTRY[cls.name] = cls
    return cls


def registry() -> dict[str, type[RetrieverConfig]]:
    """Name -> config class of every retriever, by name. The package's modules are imported (once) to find them."""
    global _found
    if not _found:
        for module in sorted(m.name for m in pkgutil.iter_modules(__path__)):
            importlib.import_module(f"{__name__}.{module}")
        _found = True
    return dict(sorted(_REGISTRY.items()))


def __getattr__(name: str) -> tuple[str, ...]:
    # the retriever lists, derived from the registry when first asked for (the modules that declare the retrievers
    # import this package, so the lists cannot be computed at its import)
    if name == "RETRIEVERS":
        return tuple(registry())
    if name == "FIRST_STAGES":
        return tuple(n for n, c in registry().items() if c.can_be_first_stage)
    if name == "LLM_RETRIEVERS":
        return tuple(n for n, c in registry().items() if c.uses_llm)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def config_class(retriever: str) -> type[RetrieverConfig]:
    found = registry().get(retriever) if isinstance(retriever, str) else None
    if found is None:
        raise InputError(f"unknown retriever {retriever!r}; one of {tuple(registry())}", field="retriever")
    return found


def stage_names(retriever: str, first_stage: str | None = None, nested: Mapping[str, Any] | None = None) -> list[str]:
    """The retrievers a config runs, outermost first: a wrapper's first stage (default: its own default), then the
    stages it needs. A cascade's first stage is of the wrapper's own kind; its own first stage is `nested`'s
    `first_stage.first_stage` (the settings with INNER before their name)."""
    cls = config_class(retriever)
    inner: list[str] = []
    if cls.wraps():
        name = first_stage or cls.default(FIRST_STAGE)
        valid = tuple(n for n, c in registry().items() if c.can_be_first_stage and (n != retriever or cls.cascades))
        if name not in valid:
            raise InputError(f"--first-stage {name!r} is not valid for {retriever}; one of {valid}", field=FIRST_STAGE)
        deeper = {k[len(INNER):]: v for k, v in (nested or {}).items() if k.startswith(INNER)}
        inner = stage_names(name, deeper.get(FIRST_STAGE), deeper) if name == retriever else stage_names(name)
    return [retriever, *inner, *(n for need in cls.needs for n in stage_names(need))]


def chain_depths(names: list[str]) -> list[int | None]:
    """Each stage's place in the chain of a cascade (0: the outermost; d + 1: the first stage of a cascade stage at
    d); None for the other stages (a wrapper's ordinary first stage, the stages a retriever needs)."""
    out: list[int | None] = [0] + [None] * (len(names) - 1)
    for i in range(len(names) - 1):
        if out[i] is not None and config_class(names[i]).cascades and names[i + 1] == names[i]:
            out[i + 1] = out[i] + 1
    return out


@dataclass(frozen=True)
class RetrieverTree:
    """The retriever of a run: the configs of the stages it runs, outermost first (see the module docstring)."""

    stages: tuple[RetrieverConfig, ...]

    @classmethod
    def of(cls, retriever: str, settings: Mapping[str, Any] | None = None, *,
           ignore_unknown: bool = False) -> RetrieverTree:
        """The tree of `retriever` with flat settings; a setting none of its stages has is an InputError, or left
        out with `ignore_unknown` (the CLI, whose options are every retriever's)."""
        settings = dict(settings or {})
        first = settings.get(FIRST_STAGE) if config_class(retriever).wraps() else None
        names = stage_names(retriever, first, settings)
        depths = chain_depths(names)
        claimed: set[str] = set()
        stages = []
        for name, depth in zip(names, depths, strict=True):
            kind = config_class(name)
            mine = {k: v for k, v in settings.items()
                    if k in kind.model_fields and k not in claimed and not k.startswith(INNER)}
            if depth:  # a cascade's inner stage: its settings are the ones addressed to it
                mine = {k[len(INNER) * depth:]: v for k, v in settings.items()
                        if k.startswith(INNER * depth) and k[len(INNER) * depth:] in kind.model_fields}
                claimed |= {INNER * depth + k for k in mine}
            stages.append(kind(**mine))
            claimed |= set(kind.model_fields) if not depth else set()
        unknown = [k for k in settings if k not in claimed]
        if unknown and not ignore_unknown:
            raise InputError(f"{unknown[0]!r} is not a setting of {' > '.join(names)}; its settings: "
                             f"{', '.join(sorted(claimed)) or 'none'}", field=str(unknown[0]))
        return cls(tuple(stages))

    def depths(self) -> list[int | None]:
        """chain_depths of its stages."""
        return chain_depths(self.names)

    def check(self, k: int) -> None:
        """Every wrapper's check of its first stage for k results (a cascade's inner depth)."""
        for outer, inner in zip(self.stages, self.stages[1:]):
            if outer.wraps():
                outer.check_inner(inner, k)

    def inner(self, stage: RetrieverConfig) -> RetrieverTree:
        """The tree of a wrapper stage's first stage: the stages after it (its first stage, then what they need)."""
        i = next(i for i, s in enumerate(self.stages) if s is stage)
        return RetrieverTree(self.stages[i + 1:])

    @property
    def retriever(self) -> str:
        return self.stages[0].name

    @property
    def names(self) -> list[str]:
        return [s.name for s in self.stages]

    def keys(self) -> frozenset[str]:
        """The names of the settings its stages have (a cascade's inner stage's under their INNER names)."""
        return frozenset(INNER * (d or 0) + k for s, d in zip(self.stages, self.depths(), strict=True)
                         for k in type(s).model_fields)

    def find(self, kind: type[C]) -> C:
        """The config of its stage of that kind (e.g. the dense settings of a hyde run)."""
        found = next((s for s in self.stages if isinstance(s, kind)), None)
        if found is None:
            raise ValueError(f"{self.retriever} runs no {kind.__name__} stage")
        return found

    @property
    def uses_llm(self) -> bool:
        return any(s.uses_llm for s in self.stages)

    def build(self, ctx: Context, k: int, level: str = "top", name: str | None = None) -> Retriever:
        """The retriever of its stage `name` (default: the outermost) at `level`, for k results."""
        cfg = self.stages[0] if name is None else next(s for s in self.stages if s.name == name)
        return cfg.build(ctx, level, k, self)

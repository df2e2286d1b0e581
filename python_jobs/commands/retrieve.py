"""`finrag retrieve`: run a retriever over a dataset's questions and land the run (SPEC §4).

The rules and decisions are documented in python_jobs/retrieval/runs.py. The retrievers' settings are options made
from the registry (python_jobs/retrieval/__init__.py): one per setting, with the type, help and default(s) of the
config classes that declare it.
"""

from __future__ import annotations

import types
from collections.abc import Callable
from typing import Any, Literal, Union, get_args, get_origin

import click

from python_jobs.commands._options import Produced, llm_options, produces, shard_option
from python_jobs.core.console import say
from python_jobs.core.lake import Lake
from python_jobs.core.question_sets import parse_splits
from python_jobs.core.shards import Shard
from python_jobs.llm.config import LLMConfig
from python_jobs.retrieval import FIRST_STAGE, FIRST_STAGES, INNER, RETRIEVERS, RetrieverConfig, registry
from python_jobs.retrieval.conditions import CONDITIONS
from python_jobs.retrieval.runs import RetrievalConfig, run_retrieval


def flag(name: str) -> str:
    return "--" + name.replace("_", "-")


def click_type(annotation: Any) -> Any:
    """The click type of a setting's annotation: its Literal's choices, else int / float / str (None allowed)."""
    if get_origin(annotation) in (Union, types.UnionType):
        annotation = next(a for a in get_args(annotation) if a is not type(None))
    if get_origin(annotation) is Literal:
        return click.Choice(get_args(annotation))
    return annotation


def setting_options(fn: Callable[..., Any]) -> Callable[..., Any]:
    """One option per retriever setting (`--rrf-k` for rrf_k), typed, helped and defaulted by the config classes
    that declare it. Its value is None when not given, and the config class's default applies."""
    declared: dict[str, list[type[RetrieverConfig]]] = {}
    for cls in registry().values():
        for name in cls.model_fields:
            declared.setdefault(name, []).append(cls)
    for name, classes in reversed(declared.items()):  # click lists options in decorator order, top first
        info = classes[0].model_fields[name]
        if name == "top_n":
            shown = ", ".join(f"{c.name} {c.depth_rule()}" for c in classes)
        else:
            defaults = {c.name: c.default(name) for c in classes}
            same = set(map(repr, defaults.values()))
            shown = (repr(next(iter(defaults.values()))).strip("'") if len(same) == 1
                     else ", ".join(f"{n} {d}" for n, d in defaults.items()))
        fn = click.option(flag(name), name,
                          type=click.Choice(FIRST_STAGES) if name == FIRST_STAGE else click_type(info.annotation),
                          default=None, show_default=shown if shown != "None" else False,
                          help=f"{', '.join(c.name for c in classes)}: {info.description or ''}")(fn)
    return fn


CASCADE = "first_stage__"  # the parameter name of a cascade option (click's names cannot hold INNER's dot)


def cascade_options(fn: Callable[..., Any]) -> Callable[..., Any]:
    """`--first-stage-<setting>` for each setting of a retriever that cascades (rerank over rerank): the setting of
    the cascade's first stage (`first_stage.<setting>`; its plain option sets the outer stage's)."""
    for cls in reversed([c for c in registry().values() if c.cascades]):
        for name, info in reversed(cls.model_fields.items()):
            fn = click.option(flag(f"first_stage_{name}"), CASCADE + name,
                              type=click.Choice(FIRST_STAGES) if name == FIRST_STAGE else click_type(info.annotation),
                              default=None, help=f"{cls.name} over {cls.name} (a cascade): the first stage's "
                                                 f"{flag(name)}")(fn)
    return fn


@click.command("retrieve")
@produces
@click.option("--retriever", type=click.Choice(RETRIEVERS), required=True)
@click.option("--dataset", required=True, help="Dataset whose questions are the queries and chunks the corpus.")
@click.option("--k", "k", type=int, default=RetrievalConfig.default("k"), show_default=True,
              help=RetrievalConfig.model_fields["k"].description)
@click.option("--condition", type=click.Choice(CONDITIONS), default=RetrievalConfig.default("condition"),
              show_default=True)
@click.option("--chunker-id", default=None, help=RetrievalConfig.model_fields["chunker_id"].description)
@setting_options
@cascade_options
@click.option("--run-id", default=None, help=RetrievalConfig.model_fields["run_id"].description)
@click.option("--batch-size", type=int, default=RetrievalConfig.default("batch_size"), show_default=True,
              help=RetrievalConfig.model_fields["batch_size"].description)
@llm_options()
@click.option("--split", "split", default=None,
              help="Comma list of question splits to query (default: every split except 'dropped').")
@shard_option("question ids")
def command(retriever: str, dataset: str, k: int, condition: str, chunker_id: str | None, run_id: str | None,
            batch_size: int, llm_config: LLMConfig, split: str | None, shard: Shard | None,
            **settings: Any) -> Produced:
    """Run a retriever over a dataset's questions; land retrieval_runs + retrieval_results."""
    given = {name.replace(CASCADE, INNER): value for name, value in settings.items() if value is not None}
    cfg = RetrievalConfig.from_dict({"dataset": dataset, "retriever": retriever, "k": k, "condition": condition,
                                     "chunker_id": chunker_id, "splits": parse_splits(split), "run_id": run_id,
                                     "batch_size": batch_size, **given}, ignore_unknown=True)
    ignored = [flag(name) for name in given if name not in cfg.retriever.keys()]
    if ignored:  # every retriever's options are the verb's: say which ones this retriever does not read
        say(f"note: {retriever} has no setting {', '.join(ignored)}: ignored")
    out = run_retrieval(Lake(), cfg, llm_config=llm_config if cfg.retriever.uses_llm else None,
                        shard=shard)
    return str(out["run_id"]), out

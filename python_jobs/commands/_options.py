"""Options shared by several verbs (only commands import this module)."""

from __future__ import annotations

import functools
import json
import signal
from collections.abc import Callable
from typing import Any

import click

from python_jobs.core.console import say
from python_jobs.core.errors import InputError
from python_jobs.core.shards import Shard
from python_jobs.llm.config import LLMConfig

TARGETS = ("dev", "spark")  # profiles.yml's outputs


def llm_options(model_flag: str = "--llm-model",
                model_help: str = "Model name at the endpoint (default $FINRAG_LLM_MODEL).") -> Callable[..., Any]:
    """The endpoint options every LLM verb takes, folded into one `llm_config: LLMConfig` argument of the command
    (environment first, the options win)."""
    options = [
        click.option("--llm-base-url", default=None, help="OpenAI-compatible endpoint (default $FINRAG_LLM_BASE_URL; "
                     "none = the embedded SmolLM2). The key is read from $FINRAG_LLM_API_KEY or $OPENAI_API_KEY only."),
        click.option(model_flag, "llm_model", default=None, help=model_help),
        click.option("--concurrency", type=int, default=None,
                     help="Concurrent LLM calls (default 4, $FINRAG_LLM_CONCURRENCY)."),
        click.option("--timeout", type=float, default=None, help="Seconds per LLM HTTP attempt (default 120)."),
        click.option("--max-attempts", type=int, default=None,
                     help="Tries per LLM call, retries included (default 5)."),
    ]

    def decorate(fn: Callable[..., Any]) -> Callable[..., Any]:
        @functools.wraps(fn)
        def command(*args: Any, llm_base_url: str | None, llm_model: str | None, concurrency: int | None,
                    timeout: float | None, max_attempts: int | None, **kwargs: Any) -> Any:
            config = LLMConfig.from_env(base_url=llm_base_url, model=llm_model, concurrency=concurrency,
                                        timeout=timeout, max_attempts=max_attempts)
            return fn(*args, llm_config=config, **kwargs)

        for option in reversed(options):  # click lists the options in decorator order, top first
            command = option(command)
        return command

    return decorate


def shard_option(ids: str, help: str | None = None) -> Callable[..., Any]:
    """`--shard I/N` (python_jobs/core/shards.py), parsed into the command's `shard: Shard | None` argument; `ids`
    names what is sliced (e.g. "question ids"), `help` replaces the help of a verb that slices otherwise."""

    def parse(ctx: click.Context, param: click.Parameter, value: str | None) -> Shard | None:
        if value is None:
            return None
        try:
            return Shard.parse(value)
        except InputError as exc:
            raise click.BadParameter(exc.detail) from None

    return click.option("--shard", callback=parse, default=None, metavar="I/N",
                        help=help or f"Run shard I of N (1 <= I <= N): only the {ids} whose SHA-256 mod N is I-1, "
                        "landed as this shard's part of the same run (run every shard with the same options).")


def sigterm_as_interrupt() -> None:
    """SIGTERM like Ctrl-C: a job's `finally` lands the LLM calls already made and stops an embedded server."""
    signal.signal(signal.SIGTERM, _interrupt)


def _interrupt(signum: int, frame: Any) -> None:
    raise KeyboardInterrupt

def parse_rubrics(values: tuple[str, ...]) -> dict[str, str]:
    out = {}
    for v in values:
        metric, sep, name = v.partition("=")
        if not sep or not metric or not name:
            raise click.UsageError(f"--rubric takes METRIC=TEMPLATE, got {v!r}")
        out[metric.strip()] = name.strip()
    return out

def parse_tasks(value: str) -> tuple[str, ...]:
    """A comma list of tasks, each once (GenerationConfig checks them)."""
    return tuple(dict.fromkeys(t.strip() for t in value.split(",") if t.strip()))


# what a producing verb's command returns: its id (or ids) and a summary (see `produces`)
Produced = tuple[str | list[str], dict[str, object]]


def produces(fn: Callable[..., Any]) -> Callable[..., Any]:
    """The output of a verb that produces something with an id (a run, a load, a training): the command returns
    (id, summary); stdout is the id alone (several ids: one per line), so `RUN=$(finrag retrieve ...)` works, and
    the summary, when it says more than the id, is a note on stderr; with --json, stdout is the summary as one JSON
    object (the id among its keys) instead."""

    @click.option("--json", "as_json", is_flag=True,
                  help="Print the result as one JSON object on stdout instead of the id alone.")
    @functools.wraps(fn)
    def command(*args: Any, as_json: bool, **kwargs: Any) -> None:
        result_id, summary = fn(*args, **kwargs)
        if as_json:
            click.echo(json.dumps(summary, default=str))
            return
        if len(summary) > 1:
            say(" ".join(f"{key}={value}" for key, value in summary.items()))
        click.echo(result_id if isinstance(result_id, str) else "\n".join(result_id))

    return command


def target_option(fn: Callable[..., Any]) -> Callable[..., Any]:
    """`--target`: the profiles.yml output a verb builds or reads (dev: DuckDB; spark: the same project on Spark,
    README "Scaling")."""
    return click.option("--target", type=click.Choice(TARGETS), default="dev", show_default=True,
                        help="The warehouse: dev (DuckDB) or spark (dbt-spark, PySpark local[2]).")(fn)

"""`finrag sweep <grid.yaml>`: run a grid of retrieval (or answer) configurations over one dataset (SPEC §9).

The grid (python_jobs/sweeps/grid.py) expands to configurations; each is the config object the verb builds
(RetrievalConfig, AnswerConfig) and runs through the verb's own library call (run_retrieval, run_answers), so its
run row and run id are exactly those of `finrag retrieve` / `finrag answer` with the same settings.

- Checked whole before anything runs or lands (`plan_sweep`): the grid's structure, then every configuration's
  config object, its chunking, its run id (known from the config hash before running: retrieval.runs /
  generation.runs `planned_run_id`) and that no two configurations are the same run. An error names the grid file,
  the line of the setting's key or value and its path (`parameters.rrf_k[1]`), and the configuration it failed in.
- The sweep's id is `<dataset>-sweep-<hash 10>` of the grid as parsed and the run ids it expands to. Its lake rows
  (`sweeps`: the grid, parameters, baseline run; `sweep_runs`: each run's parameter values) land before the runs,
  whole, by every process of a sharded sweep (the same rows; nothing lands when they are landed already). Parameter
  values live in sweep_runs, not in the run rows: a run stays the verb's run, and one run may belong to several
  sweeps.
- Resumable: a configuration whose run has landed (its partition, every shard of it if it was sharded) is skipped,
  so a killed or re-run sweep runs only what is missing. A run that fails stops the sweep (what landed stays),
  except an answer run whose LLM calls all failed: it lands with its errors (as `finrag answer` does), the sweep
  goes on and exits 1 at the end, and such a run does not count as landed, so the next run of the sweep tries it
  again (the LLM cache keeps what did not fail).
- Chunking per chunk size: chunk_* settings make the configuration's chunking (ChunkingConfig); before the runs, the
  chunkings the pending configurations need are made when their chunks partition is missing (chunks are keyed by
  chunker id, so chunkings coexist) and the chunks their dense stages search are embedded (`index_chunks`:
  incremental, it embeds only what is missing). Sweep processes prepare one at a time (a file lock in the home), so
  shards never chunk or embed the same thing at once.
- Sharded (`--shard I/N`): the configurations are divided, not the questions: shard I runs configurations I, I + N,
  I + 2N, ... of the grid's order (every process expands the grid in the same order). A sweep is many runs: whole
  runs per process need no merging of run rows, and each process loads a run's indexes and models once instead of
  every process loading them for every run; the grid's order balances the slices (a hash of a handful of run ids
  may give one shard all of them). A single large run is sharded by `finrag retrieve --shard` instead.
- LLM runs (answer sweeps, LLM retrievers) on the embedded model share one embedded server for the whole sweep
  (LLMConfig.embedded_url): their run ids stay the embedded model's.
"""

from __future__ import annotations

import hashlib
import json
import re
import subprocess
from collections.abc import Callable
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import polars as pl
from filelock import FileLock

from python_jobs.core.console import progress as console_progress
from python_jobs.core.console import say
from python_jobs.core.contracts import contract
from python_jobs.core.errors import InputError, JobError
from python_jobs.core.lake import Lake, check_id
from python_jobs.core.run_ids import derived_id
from python_jobs.core.shards import SHARDS_KEY, Shard
from python_jobs.corpus.chunking import ChunkerSpec, ChunkingConfig, run_chunk
from python_jobs.corpus.indexing import index_chunks
from python_jobs.corpus.lake_chunks import resolve_chunker
from python_jobs.corpus.tokenizers import LoadedTokenizer
from python_jobs.generation.runs import AnswerConfig, run_answers
from python_jobs.generation.runs import planned_run_id as planned_answer_run_id
from python_jobs.llm.config import LLMConfig
from python_jobs.llm.server import start_embedded_server
from python_jobs.retrieval.dense import DenseConfig
from python_jobs.retrieval.runs import RetrievalConfig, run_retrieval
from python_jobs.retrieval.runs import planned_run_id as planned_retrieval_run_id
from python_jobs.sweeps.grid import CHUNK_PREFIX, Grid, Point, value_text

RUN_TABLES = {"retrieval": "retrieval_runs", "answer": "generation_runs"}
# error fields the jobs name that are not the grid's setting names
FIELD_SETTINGS = {"retrieval_run": "retrieval_run_id"}
PREPARE_LOCK = Path("sweeps") / "prepare.lock"  # under the home


@dataclass(frozen=True)
class Index:
    """The vectors a dense stage searches: a chunks partition embedded by one embedder in one long-text mode."""

    chunker_id: str
    embedder: str
    long_text: str
    ann: bool


@dataclass(frozen=True)
class Configuration:
    point: Point
    config: RetrievalConfig | AnswerConfig
    run_id: str
    chunking: tuple[ChunkerSpec, LoadedTokenizer] | None = None  # a chunk_* configuration's chunker
    index: Index | None = None

    @property
    def uses_llm(self) -> bool:
        return isinstance(self.config, AnswerConfig) or self.config.retriever.uses_llm


@dataclass(frozen=True)
class SweepPlan:
    sweep_id: str
    grid: Grid
    configurations: list[Configuration]
    baseline_run_id: str | None

    def frames(self) -> list[tuple[str, str, pl.DataFrame]]:
        """The sweep's lake rows: its `sweeps` row and its runs' parameter values (`sweep_runs`)."""
        g = self.grid
        sweep = contract("sweeps").frame([{
            "sweep_id": self.sweep_id, "dataset": g.dataset, "kind": g.kind, "grid": g.as_json(), "grid_file": g.file,
            "parameters": list(g.parameters), "n_runs": len(self.configurations),
            "baseline_run_id": self.baseline_run_id}])
        runs = contract("sweep_runs").frame([
            {"sweep_id": self.sweep_id, "run_id": c.run_id, "dataset": g.dataset, "parameter": name,
             "value": value_text(value), "value_order": c.point.indices[name]}
            for c in self.configurations for name, value in c.point.values.items()])
        return [("sweeps", self.sweep_id, sweep), ("sweep_runs", self.sweep_id, runs)]

    def mine(self, shard: Shard | None) -> list[Configuration]:
        """The configurations of `shard`: I, I + N, ... in the grid's order (all of them unsharded)."""
        if shard is None:
            return list(self.configurations)
        return self.configurations[shard.index - 1 :: shard.count]


# ---- planning -----------------------------------------------------------------------------------------------------
def _at(grid: Grid, point: Point, exc: InputError) -> InputError:
    """A job's error about a setting of `point`, as the grid's: its file, the setting's line and path."""
    name = re.split(r"[.\[]", exc.field)[0] if exc.field else None
    name = FIELD_SETTINGS.get(name, name) if name else None
    where = ("dataset",) if name == "dataset" else grid.place(name, point) if name else ("parameters",)
    many = len(grid.parameters) > 1 or any(len(v) > 1 for v in grid.parameters.values())
    return grid.error(f"{exc.detail} (configuration {point.describe()})" if many else exc.detail, where)


def _checked(grid: Grid, point: Point, build: Callable[[], Any]) -> Any:
    try:
        return build()
    except InputError as exc:
        raise _at(grid, point, exc) from None


def _retrieval(lake: Lake, grid: Grid, point: Point, llm_config: LLMConfig | None,
               chunkings: dict[str, tuple[ChunkerSpec, LoadedTokenizer]]) -> Configuration:
    settings = grid.settings(point)
    chunk = {k[len(CHUNK_PREFIX):]: v for k, v in settings.items() if k.startswith(CHUNK_PREFIX)}
    rest = {k: v for k, v in settings.items() if not k.startswith(CHUNK_PREFIX)}
    chunking = None
    if chunk:
        if "chunker_id" in rest:
            raise grid.error("a configuration has a chunking (chunk_*) or a chunker_id, not both",
                             grid.place("chunker_id", point))
        key = json.dumps(chunk, sort_keys=True)
        if key not in chunkings:
            def spec() -> tuple[ChunkerSpec, LoadedTokenizer]:
                try:
                    return ChunkingConfig.from_dict(chunk).spec()
                except InputError as exc:  # the chunking's fields are the grid's chunk_* settings
                    raise InputError(exc.detail, field=f"{CHUNK_PREFIX}{exc.field}" if exc.field else None) from None
            chunkings[key] = _checked(grid, point, spec)
        chunking = chunkings[key]
        rest["chunker_id"] = chunking[0].chunker_id
    cfg: RetrievalConfig = _checked(grid, point, lambda: RetrievalConfig.from_dict({"dataset": grid.dataset, **rest}))
    chunker_id = chunking[0].chunker_id if chunking else _checked(
        grid, point, lambda: resolve_chunker(lake, grid.dataset, cfg.chunker_id))
    llm = llm_config if cfg.retriever.uses_llm else None
    run_id = _checked(grid, point, lambda: planned_retrieval_run_id(cfg, chunker_id, llm))
    dense = next((s for s in cfg.retriever.stages if isinstance(s, DenseConfig)), None)
    index = Index(chunker_id, dense.embedder, dense.long_text, dense.dense_search == "ann") if dense else None
    return Configuration(point, cfg, run_id, chunking, index)


def _answer(lake: Lake, grid: Grid, point: Point, llm_config: LLMConfig) -> Configuration:
    settings = grid.settings(point)
    for name in settings:
        if name not in AnswerConfig.model_fields:
            known = sorted(set(AnswerConfig.model_fields) - {"run_id", "dataset"})
            raise grid.error(f"not a setting of an answer run; its settings: {', '.join(known)}",
                             grid.place(name, point))
    cfg: AnswerConfig = _checked(grid, point, lambda: AnswerConfig.from_dict({"dataset": grid.dataset, **settings}))
    run_id = _checked(grid, point, lambda: planned_answer_run_id(lake, cfg, llm_config))
    return Configuration(point, cfg, run_id)


def plan_sweep(lake: Lake, grid: Grid, llm_config: LLMConfig | None = None) -> SweepPlan:
    """Every configuration of the grid with its config object and run id, checked (nothing runs or lands)."""
    # the check every run makes first (run_retrieval, run_answers), made here: a dry run checks what the run will
    # check, and a real one fails before landing the sweep's rows or chunking anything
    if lake.read("questions", where={"dataset": grid.dataset}, columns=["question_id"]).height == 0:
        raise grid.error(f"no questions for dataset {grid.dataset!r} in the lake: ingest them first", ("dataset",))
    llm_config = llm_config or LLMConfig.from_env()
    chunkings: dict[str, tuple[ChunkerSpec, LoadedTokenizer]] = {}
    points = grid.points()
    configurations = [_retrieval(lake, grid, p, llm_config, chunkings) if grid.kind == "retrieval"
                      else _answer(lake, grid, p, llm_config) for p in points]
    seen: dict[str, Configuration] = {}
    for c in configurations:
        first = seen.setdefault(c.run_id, c)
        if first is not c:
            differ = next(n for n in grid.parameters if first.point.indices[n] != c.point.indices[n])
            raise grid.error(f"configurations {first.point.describe()} and {c.point.describe()} are the same run "
                             f"{c.run_id!r} (a value that is its setting's default, or a setting the configuration "
                             "does not use)", grid.place(differ, c.point))
    baseline = grid.baseline_point(points)
    baseline_run_id = next(c.run_id for c in configurations if c.point == baseline) if baseline else None
    digest = hashlib.sha256(json.dumps({"grid": json.loads(grid.as_json()),
                                        "runs": [c.run_id for c in configurations]}, sort_keys=True).encode())
    sweep_id = check_id(derived_id(grid.dataset, "sweep", digest.hexdigest()), "sweep id")
    return SweepPlan(sweep_id, grid, configurations, baseline_run_id)


# ---- the lake's state ---------------------------------------------------------------------------------------------
def landed_runs(lake: Lake, plan: SweepPlan) -> set[str]:
    """The sweep's runs that have landed whole (a sharded run: every one of its shards)."""
    table = RUN_TABLES[plan.grid.kind]
    planned = {c.run_id for c in plan.configurations}
    out = set()
    for run_id in sorted(planned & set(lake.partitions(table))):
        rows = lake.read_partition(table, run_id)
        if rows.height != 1:
            continue
        shards = json.loads(rows["params"][0] or "{}").get(SHARDS_KEY)
        if isinstance(shards, dict) and shards:  # "I/N" keys: complete when all N have landed
            count = int(str(next(iter(shards))).split("/")[1])
            if len(shards) < count:
                continue
        if table == "generation_runs":  # an answer run whose every LLM call failed is run again
            errors = lake.read_partition("answers", run_id)["error"]
            if errors.len() and errors.is_not_null().all():
                continue
        out.add(run_id)
    return out


def _landed_already(lake: Lake, plan: SweepPlan) -> bool:
    """Whether the sweep's rows are in the lake as `plan` would land them (created_at aside)."""
    for table, partition, frame in plan.frames():
        have = lake.read_partition(table, partition).drop("created_at")
        want = frame.drop("created_at", strict=False).select(have.columns)
        key = list(contract(table).key)
        if have.height != want.height or not have.sort(key).equals(want.sort(key)):
            return False
    return True


# ---- running ------------------------------------------------------------------------------------------------------
def _prepare(lake: Lake, dataset: str, configurations: list[Configuration], progress: bool) -> dict[str, int]:
    """Make the chunkings and vectors the configurations need (see the module docstring)."""
    lock = lake.home / PREPARE_LOCK
    lock.parent.mkdir(parents=True, exist_ok=True)
    chunked = indexed = 0  # chunkings made, chunks embedded
    with FileLock(str(lock)):
        have = set(lake.partitions("chunks"))
        chunkings = {c.chunking[0].chunker_id: c.chunking for c in configurations if c.chunking}
        for chunker_id, (spec, tok) in chunkings.items():
            if f"{dataset}.{chunker_id}" not in have:
                say(f"sweep: chunking {dataset} as {chunker_id}")
                run_chunk(lake, dataset, spec, tok)
                chunked += 1
        for index in dict.fromkeys(c.index for c in configurations if c.index):
            out = index_chunks(lake, dataset, index.chunker_id, index.embedder, index.long_text, ann=index.ann,
                               progress=progress)
            indexed += int(out["embedded"])  # type: ignore[call-overload]
    return {"chunkings_made": chunked, "chunks_embedded": indexed}


def run_sweep(lake: Lake, plan: SweepPlan, llm_config: LLMConfig | None = None, *,
              shard: Shard | None = None, dry_run: bool = False, progress: bool = True) -> dict[str, Any]:
    """Land the sweep's rows and run its configurations of `shard` that have not landed (see the module docstring).
    With `dry_run`, only say what would run."""
    grid = plan.grid
    landed = landed_runs(lake, plan)
    mine = plan.mine(shard)
    todo = [c for c in mine if c.run_id not in landed]
    summary: dict[str, Any] = {
        "sweep_id": plan.sweep_id, "dataset": grid.dataset, "kind": grid.kind,
        "configurations": len(plan.configurations),
        "landed_before": len(landed), "this_process": len(mine), "to_run": len(todo),
        "baseline_run_id": plan.baseline_run_id, **({"shard": str(shard)} if shard else {})}
    if dry_run:
        pending = {c.run_id for c in todo}
        summary["plan"] = [{"run_id": c.run_id, "parameters": c.point.values,
                            "status": "landed" if c.run_id in landed else "to run" if c.run_id in pending
                            else "other shard"} for c in plan.configurations]
        return summary

    if not _landed_already(lake, plan):
        lake.land(plan.frames())
    if not todo:
        say(f"sweep {plan.sweep_id}: every configuration{' of this shard' if shard else ''} has landed")
        return {**summary, "ran": 0}
    summary.update(_prepare(lake, grid.dataset, todo, progress))

    llm_config = llm_config or LLMConfig.from_env()
    server = None
    if any(c.uses_llm for c in todo) and llm_config.embedded and not llm_config.embedded_url:
        server, url = start_embedded_server()  # one model load for every LLM run of the sweep
        llm_config = replace(llm_config, embedded_url=url)
    failed: list[str] = []
    try:
        with console_progress(total=len(todo), desc=f"sweep {plan.sweep_id}", unit="run", enabled=progress) as bar:
            for c in todo:
                bar.set_postfix_str(c.point.describe(), refresh=False)
                say(f"sweep: {c.point.describe()} -> {c.run_id}")
                try:
                    if isinstance(c.config, RetrievalConfig):
                        run_id = str(run_retrieval(lake, c.config, progress=False,
                                                   llm_config=llm_config if c.uses_llm else None)["run_id"])
                    else:
                        run_id = run_answers(lake, c.config, llm_config)
                except JobError as exc:  # an answer run whose calls all failed has landed with its errors
                    failed.append(f"{c.point.describe()} ({exc})")
                    run_id = c.run_id
                if run_id != c.run_id:
                    raise JobError(f"sweep {plan.sweep_id}: configuration {c.point.describe()} landed as run "
                                   f"{run_id!r}, planned as {c.run_id!r}")
                bar.update(1)
    finally:
        if server is not None:
            server.terminate()
            try:
                server.wait(10)
            except subprocess.TimeoutExpired:
                server.kill()
    if failed:
        raise JobError(f"sweep {plan.sweep_id}: {len(failed)} of {len(todo)} runs landed with every LLM call failed, "
                       f"e.g. {failed[0]}; a re-run of the sweep runs them again")
    return {**summary, "ran": len(todo)}

"""Evaluating a gate over the published marts (read-only, one published state): check the gate file against the
metric registry and the runs, resolve the baseline, pair the two runs' per-question scores by slice, and hand them to
python_jobs/gate/verdicts.py. The rules are in python_jobs/gate/__init__.py."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import duckdb
import polars as pl

from python_jobs.core.errors import InputError
from python_jobs.gate.spec import WHOLE_SET, GateFile, GateMetric, read_gate
from python_jobs.gate.verdicts import NOT_TESTED, PAIRED_SCHEMA, gate_statistics, gate_verdict
from python_jobs.marts.comparisons import NO_SCORES, comparison_settings, scored_runs
from python_jobs.marts.published import published_connection, run
from python_jobs.stats.unpaired_tests import PAIRED, UNPAIRED

BEST = "best"
SWEEP = "sweep"
REGRESSED_PER_METRIC = 5  # the questions the Markdown summary lists per metric (the largest losses, whole set)
RETRIEVAL_FAMILY = "retrieval"  # the registry family whose metrics have a granularity and k


@dataclass(frozen=True)
class GateResult:
    gate_file: str
    candidate: str
    dataset: str
    kind: str
    baselines: tuple[str, ...]  # the baseline run(s): one, or each metric's best
    alpha: float
    min_questions: int
    # the values as the statistics ran on them, normalised to [0, 1]: the outputs (python_jobs/gate/reports.py) move
    # them to each metric's own scale, the registry's scale_min..scale_max, which both frames carry
    rows: pl.DataFrame  # verdicts.RESULT_SCHEMA plus `label` (the metric's display name with granularity and k),
    #                     scale_min, scale_max
    regressed: pl.DataFrame  # metric label, question_id, question, value_baseline, value_candidate, delta, scale_min,
    #                          scale_max
    verdict: str

    @property
    def n_tested(self) -> int:
        return self.rows.filter(pl.col("verdict") != NOT_TESTED).height

    @property
    def tests(self) -> tuple[str, ...]:
        """The tests the tested rows used (paired, unpaired or both), in the order of the rule's names."""
        used = set(self.rows.filter(pl.col("verdict") != NOT_TESTED)["test"].drop_nulls())
        return tuple(t for t in (PAIRED, UNPAIRED) if t in used)


@dataclass(frozen=True)
class Resolved:
    """A gate metric checked against the registry: its row of dim_metrics and its baseline run."""

    index: int
    spec: GateMetric
    granularity: str | None
    k: int | None
    higher_is_better: bool
    margin: float  # normalised by the scale's width
    label: str
    baseline: str
    scale_min: float
    scale_max: float


class _Checker:
    """Errors naming the gate file and field, or the command-line option when the value came from there."""

    def __init__(self, file: str) -> None:
        self.file = file

    def gate(self, message: str, field: str) -> InputError:
        return InputError(message, file=self.file, field=field)

    @staticmethod
    def option(message: str, option: str) -> InputError:
        return InputError(message, field=option)


def _resolve_metrics(con: duckdb.DuckDBPyConnection, gate: GateFile, check: _Checker, candidate: str,
                     baseline: str, kind: str, dataset: str) -> list[Resolved]:
    registry = {r["metric"]: r for r in run(con, "select metric, family, label, higher_is_better, scale_min, "
                                                  "scale_max, granularities from dim_metrics").to_dicts()}
    scored = run(con, "select distinct metric, granularity, k from fct_run_metric_stats where run_id = ?",
                  [candidate])
    have = {(m, g, k) for m, g, k in scored.iter_rows()}
    out: list[Resolved] = []
    seen: set[tuple] = set()
    for i, m in enumerate(gate.metrics):
        where = f"metrics[{i}]"
        row = registry.get(m.metric)
        if row is None:
            raise check.gate(f"unknown metric {m.metric!r} (not in the metric registry, dim_metrics)",
                             f"{where}.metric")
        granularity, k = m.granularity, m.k
        if row["family"] == RETRIEVAL_FAMILY:
            grains = list(row["granularities"] or [])
            if granularity is None and len(grains) == 1:
                granularity = grains[0]
            if granularity not in grains:
                raise check.gate(f"{m.metric} is a retrieval metric: give its granularity, one of "
                                 f"{', '.join(grains)}" + (f" (got {granularity!r})" if granularity else ""),
                                 f"{where}.granularity")
            if k is None:
                raise check.gate(f"{m.metric} is a retrieval metric: give its cut-off k (0 = the whole ranking)",
                                 f"{where}.k")
        else:
            for name, value in (("granularity", granularity), ("k", k)):
                if value is not None:
                    raise check.gate(f"{m.metric} is a {row['family']} metric: it has no {name}", f"{where}.{name}")
        width = float(row["scale_max"]) - float(row["scale_min"])
        if m.margin > width:
            raise check.gate(f"margin {m.margin:g} is outside {m.metric}'s scale [{row['scale_min']:g}, "
                             f"{row['scale_max']:g}] (at most its width, {width:g})", f"{where}.margin")
        if (m.metric, granularity, k) not in have:
            at = ", ".join(f"{g}@{kk}" for mm, g, kk in sorted(have, key=str) if mm == m.metric and g is not None)
            raise check.gate(f"candidate {candidate!r} ({kind} run of {dataset!r}) has no {m.metric} scores"
                             + (f" at {granularity} k={k} (it has {at})" if at else ""), f"{where}.metric")
        key = (m.metric, granularity, k)
        if key in seen:
            raise check.gate(f"{m.metric} is in the gate twice", where)
        seen.add(key)
        # not `run`: that is the published marts' query function, which this function calls
        baseline_run = baseline
        if baseline == BEST:  # each metric's best run of the dataset and kind, as mart_run_families ranks them
            # (among the runs that did not see the gold evidence: an oracle bound is never the best)
            best = run(con, "select best_run_id from mart_run_families where dataset = ? and run_kind = ? and "
                             "metric = ? and granularity is not distinct from ? and k is not distinct from ?",
                        [dataset, kind, m.metric, granularity, k])
            baseline_run = best["best_run_id"][0]
            if baseline_run is None:  # the mart's rule, not a second one here: a bound is never a family's best
                raise check.gate(f"no best run to compare {m.metric} with: every {kind} run of {dataset!r} on it is "
                                 "an oracle bound (it saw the gold evidence; mart_run_families)", where)
        label = row["label"] + (f"@{k}" if k else "") + (f" ({granularity})" if granularity else "")
        out.append(Resolved(i, m, granularity, k, bool(row["higher_is_better"]), m.margin / width, label, baseline_run,
                            float(row["scale_min"]), float(row["scale_max"])))
    return out


def _resolve_baseline(con: duckdb.DuckDBPyConnection, gate: GateFile, check: _Checker, candidate: str,
                      cli_baseline: str | None, kind: str, dataset: str) -> str:
    """A run id, or BEST (resolved per metric). Errors name --baseline or the file's `baseline`."""
    given = cli_baseline or gate.baseline
    if given is None:
        raise check.gate("no baseline: give --baseline RUN or the file's `baseline` (a run id, best, sweep or "
                         "sweep:<sweep id>)", "baseline")

    def error(message: str) -> InputError:
        return check.option(message, "--baseline") if cli_baseline else check.gate(message, "baseline")

    if given == BEST:
        return BEST
    if given == SWEEP or given.startswith(f"{SWEEP}:"):
        sweep = given.partition(":")[2]
        frame = run(con, "select distinct sweep_id, run_id, is_baseline from mart_sweep_runs where "
                          + ("sweep_id = ?" if sweep else
                             "sweep_id in (select sweep_id from mart_sweep_runs where run_id = ?)"),
                     [sweep or candidate])
        baselines = sorted(set(frame.filter(pl.col("is_baseline"))["run_id"]))
        if not baselines:
            what = f"sweep {sweep!r}" if sweep else f"no sweep with candidate {candidate!r}"
            raise error(f"{what} has no baseline run in mart_sweep_runs" if sweep else
                        f"{what} has a baseline run in mart_sweep_runs (name it: sweep:<sweep id>)")
        if len(baselines) > 1:
            raise error(f"the candidate's sweeps have several baselines ({', '.join(baselines)}): name the sweep, "
                        "sweep:<sweep id>")
        given = baselines[0]
    found = scored_runs([given], con).get(given)
    if found is None:
        raise error(f"baseline {given!r} {NO_SCORES}")
    if found != (kind, dataset):
        raise error(f"baseline {given!r} is a {found[0]} run of {found[1]!r}; the candidate {candidate!r} is a {kind} "
                    f"run of {dataset!r}: only runs of one kind and dataset are compared")
    return given


def _scores(con: duckdb.DuckDBPyConnection, runs: Sequence[str], metrics: Sequence[str], dataset: str,
            slices: Sequence[str]) -> pl.DataFrame:
    """The runs' per-question scores of the metrics, with the questions' slice values (text) and question text."""
    columns = "".join(f", cast(questions.{s} as varchar) as slice__{s}" for s in slices)
    runs_marks, metric_marks = ", ".join("?" for _ in runs), ", ".join("?" for _ in metrics)
    return run(con, f"""
        select scores.run_id, scores.question_id, scores.metric, scores.granularity, scores.k, scores.value,
               questions.question{columns}
        from fct_question_metric_scores as scores
        left join dim_questions as questions
            on questions.dataset = ? and scores.question_id = questions.question_id
        where scores.run_id in ({runs_marks}) and scores.metric in ({metric_marks})
    """, [dataset, *runs, *metrics])


def _calibrated(con: duckdb.DuckDBPyConnection, pairs: pl.DataFrame, metric: str, candidate: str,
                baseline: str) -> pl.DataFrame:
    """`pairs` (question_id, value_baseline, value_candidate) with both values replaced by the human labels where a
    label set labels both runs' answers (the first such label set and human metric, in name order)."""
    labels = run(con, "select label_set, human_metric, predictor_run_id, question_id, human_score "
                       "from fct_judge_calibration_pairs where predictor = ? and predictor_run_id in (?, ?) "
                       "and is_labelled", [metric, candidate, baseline])
    if labels.is_empty():
        return pairs
    key = ["label_set", "human_metric", "question_id"]
    both = (labels.filter(pl.col("predictor_run_id") == baseline).select(*key, human_baseline="human_score")
            .join(labels.filter(pl.col("predictor_run_id") == candidate).select(*key, human_candidate="human_score"),
                  on=key)
            .sort("label_set", "human_metric").unique("question_id", keep="first"))
    return (pairs.join(both.select("question_id", "human_baseline", "human_candidate"), on="question_id", how="left")
            .with_columns(value_baseline=pl.coalesce("human_baseline", "value_baseline"),
                          value_candidate=pl.coalesce("human_candidate", "value_candidate"))
            .drop("human_baseline", "human_candidate"))


def evaluate_gate(gate_file: str | Path, candidate: str, baseline: str | None = None) -> GateResult:
    """The gate's rows, verdict and most-regressed questions (InputError: the gate cannot be evaluated)."""
    file = str(gate_file)
    gate = read_gate(gate_file)
    check = _Checker(file)
    settings = comparison_settings()
    alpha = gate.alpha if gate.alpha is not None else float(settings["alpha"])
    with published_connection(tables=()) as con:  # `run` makes the views of the tables each query names
        found = scored_runs([candidate], con).get(candidate)  # `run`: an unpublished table is NotPublished
        if found is None:
            raise check.option(f"candidate {candidate!r} {NO_SCORES}", "--candidate")
        kind, dataset = found
        for name, want, have in (("dataset", gate.dataset, dataset), ("kind", gate.kind, kind)):
            if want is not None and want != have:
                raise check.gate(f"the gate is for {name} {want!r}; candidate {candidate!r} is a {kind} run of "
                                 f"{dataset!r}", name)
        base = _resolve_baseline(con, gate, check, candidate, baseline, kind, dataset)
        metrics = _resolve_metrics(con, gate, check, candidate, base, kind, dataset)
        baselines = tuple(dict.fromkeys(m.baseline for m in metrics))
        scores = _scores(con, [candidate, *baselines], [m.spec.metric for m in metrics], dataset, gate.slices)
        paired, regressed = [], []
        for m in metrics:
            one = scores.filter((pl.col("metric") == m.spec.metric) & pl.col("granularity").eq_missing(m.granularity)
                                & pl.col("k").eq_missing(m.k))
            # every question either run scored (the statistics pair the shared ones, or compare each run's own
            # where they share too few: gate_statistics); a question's text and slices are the dataset's
            about = [c for c in one.columns if c == "question" or c.startswith("slice__")]
            base = one.filter(pl.col("run_id") == m.baseline).select("question_id", *about, value_baseline="value")
            if base.is_empty():
                raise check.option(f"baseline {m.baseline!r} has no question scored on {m.label}", "--baseline")
            pairs = (base.join(one.filter(pl.col("run_id") == candidate).select("question_id", *about,
                                                                               value_candidate="value"),
                               on="question_id", how="full", coalesce=True, suffix="__candidate")
                     .with_columns(pl.coalesce(c, f"{c}__candidate").alias(c) for c in about)
                     .drop(f"{c}__candidate" for c in about))
            if kind == "judge":
                pairs = _calibrated(con, pairs, m.spec.metric, candidate, m.baseline)
            pairs = pairs.with_columns(metric=pl.lit(m.spec.metric), granularity=pl.lit(m.granularity, pl.String),
                                       k=pl.lit(m.k, pl.Int64), baseline=pl.lit(m.baseline),
                                       higher_is_better=pl.lit(m.higher_is_better), margin=pl.lit(m.margin))
            slices = [pairs.with_columns(slice=pl.lit(WHOLE_SET), slice_value=pl.lit(WHOLE_SET))]
            for s in gate.slices:
                slices.append(pairs.filter(pl.col(f"slice__{s}").is_not_null())
                              .with_columns(slice=pl.lit(s), slice_value=pl.col(f"slice__{s}")))
            paired.extend(f.select(list(PAIRED_SCHEMA)).cast(PAIRED_SCHEMA) for f in slices)
            sign = 1.0 if m.higher_is_better else -1.0
            regressed.append(pairs.with_columns(delta=pl.col("value_candidate") - pl.col("value_baseline"))
                             .filter(pl.col("delta") * sign < 0).sort(pl.col("delta") * sign, "question_id")
                             .head(REGRESSED_PER_METRIC)
                             .select(pl.lit(m.label).alias("label"), "question_id", "question", "value_baseline",
                                     "value_candidate", "delta", scale_min=pl.lit(m.scale_min, pl.Float64),
                                     scale_max=pl.lit(m.scale_max, pl.Float64)))
    rows = gate_statistics(pl.concat(paired), settings, alpha, gate.min_questions)
    if rows.filter(pl.col("verdict") != NOT_TESTED).is_empty():
        raise check.gate(f"no metric x slice has {gate.min_questions} questions (min_questions: shared ones, or each "
                         "run's own where the runs are compared unpaired): nothing can be tested", "min_questions")
    labels = pl.DataFrame([{"metric": m.spec.metric, "granularity": m.granularity, "k": m.k, "label": m.label,
                            "scale_min": m.scale_min, "scale_max": m.scale_max} for m in metrics],
                          schema={"metric": pl.String, "granularity": pl.String, "k": pl.Int64, "label": pl.String,
                                  "scale_min": pl.Float64, "scale_max": pl.Float64})
    rows = rows.join(labels, on=["metric", "granularity", "k"], how="left", nulls_equal=True, maintain_order="left")
    return GateResult(file, candidate, dataset, kind, baselines, alpha, gate.min_questions, rows,
                      pl.concat(regressed), gate_verdict(rows))

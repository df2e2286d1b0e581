"""Leaderboard: runs on one chosen metric as a sorted chart first (with the 95 % interval of each run's difference
to its family's best run and the runs tied with the best, mart_run_vs_best, at any count of runs), each run against
the best as a table, metric-vs-k curves, then the sortable tables: retrieval, generation and judged (every count per
metric; beside the chosen judged metric's means, how far each can be trusted: mart_judge_trust), filterable by
dataset and by run."""

import altair as alt
import polars as pl
import streamlit as st

from dashboards import ui
from dashboards.data import common, diagnosis
from dashboards.data import leaderboard as data

MAX_COMPARE_LINKS = 8

home = ui.page("Leaderboard")
all_datasets = data.datasets(home)
if not all_datasets:
    ui.empty_state(home, "leaderboard")
    st.stop()
registry = common.metric_registry(home)
metric_labels = dict(zip(registry["metric"], registry["label"], strict=True))
higher_is_better = dict(zip(registry["metric"], registry["higher_is_better"], strict=True))
labels = common.run_labels(home)
bounds = common.oracle_bounds(home)  # runs that saw the gold evidence: reference lines, not contenders
chosen = st.multiselect("Datasets", all_datasets, default=all_datasets, key="datasets")


def run_filter(frame: pl.DataFrame, key: str, column: str = "run_id") -> tuple[pl.DataFrame, list[str]]:
    """A multiselect of the frame's runs shown (all by default): long lists of runs are cut to the ones being
    compared. The frame's rows of the runs shown, and those runs."""
    run_ids = frame[column].unique(maintain_order=True).to_list()
    # chips say what the run is; the id only where two runs share a label (the same configuration re-run)
    shown = [labels.get(r, r) for r in run_ids]
    chip = {r: (common.run_label(labels, r) if shown.count(labels.get(r, r)) > 1 else labels.get(r, r))
            for r in run_ids}
    picked = st.multiselect("Runs", run_ids, default=run_ids, key=key, format_func=chip.get) or run_ids
    return frame.filter(pl.col(column).is_in(picked)), picked


def ranked(frame: pl.DataFrame, metric: str, title: str, versus: pl.DataFrame | None = None,
           compare: dict[str, str] | None = None, key: str = "") -> None:
    """The runs on one metric, best first, as a chart; the best run's number as a tile; with `versus`
    (data.versus_best), each run's interval against its family's best and the tied ones marked, then the table.
    Oracle bounds (runs that saw the gold evidence, dim_runs) are dashed reference lines, never the best."""
    scored = frame.filter(pl.col(metric).is_not_null())
    if scored.is_empty():
        st.info(f"No run of this selection has a {metric_labels.get(metric, metric)} value.")
        return
    scored = scored.sort(metric, descending=higher_is_better.get(metric, True))
    versus = versus.filter(pl.col("run_id").is_in(scored["run_id"].to_list())) if versus is not None else None
    chart_frame = scored.select(
        pl.col("run_id"),
        ui.run_column(labels),
        pl.col(metric).alias("mean"))
    # two runs with one label (the same configuration re-run): keep them apart
    duplicated = chart_frame["run"].is_duplicated()
    chart_frame = chart_frame.with_columns(
        pl.when(duplicated).then(pl.format("{} ({})", "run", "run_id")).otherwise("run").alias("run"))
    is_bound = pl.col("run_id").is_in(sorted(bounds))
    bound_lines, chart_frame = chart_frame.filter(is_bound), chart_frame.filter(~is_bound)
    bound_runs, scored = scored.filter(is_bound), scored.filter(~is_bound)
    if scored.is_empty():
        st.info(f"Every run of this selection with a {metric_labels.get(metric, metric)} value is an oracle bound "
                "(it saw the gold evidence): there is no contender to rank.")
        return
    intervals = False
    if versus is not None and not versus.is_empty():
        # drawn where the best would be: its mean + the interval of (run − best); display arithmetic only
        chart_frame = chart_frame.join(
            versus.select("run_id", (pl.col("ci_low") + pl.col("best_mean")).alias("ci_low"),
                          (pl.col("ci_high") + pl.col("best_mean")).alias("ci_high"), "p_holm", "tied_with_best"),
            on="run_id", how="left")
        intervals = chart_frame["ci_low"].is_not_null().any()
    top = scored.row(0, named=True)
    st.metric(f"Best: {common.run_label(labels, top['run_id'])}", ui.fmt(top[metric]))
    st.altair_chart(ui.ranked_chart(chart_frame, "mean", "run", title, intervals=intervals, bounds=bound_lines),
                    width="stretch")
    if not bound_lines.is_empty():
        st.caption("Dashed lines: oracle bounds - runs that saw the gold evidence (an oracle condition, or an answer "
                   "run built on one), the upper bounds the contenders are measured against, never the best.")
    if compare is not None and scored.height > 1:
        # the way to "why": a run against the best one, question by question (flipped questions link on to the
        # drill-down)
        st.markdown("**Why is a run behind?** Compare it with the best run, question by question:")
        behind = scored.tail(scored.height - 1)
        if "dataset" in behind.columns:  # only runs on the best run's questions have questions to compare
            behind = behind.filter(pl.col("dataset") == top["dataset"])
        for r in behind.head(MAX_COMPARE_LINKS).iter_rows(named=True):
            ui.page_link("run_vs_run", f"{common.run_label(labels, r['run_id'])} vs the best",
                         {"a": r["run_id"], "b": top["run_id"], "metric": metric, **compare},
                         icon=":material/compare_arrows:")
    if compare is not None and not bound_runs.is_empty():
        # how much a retriever leaves on the table: the best contender against each bound, question by question
        st.markdown("**How far below the bound?** Compare the best run with each oracle bound, question by question:")
        if "dataset" in bound_runs.columns:
            bound_runs = bound_runs.filter(pl.col("dataset") == top["dataset"])
        for r in bound_runs.head(MAX_COMPARE_LINKS).iter_rows(named=True):
            ui.page_link("run_vs_run", f"the best vs the oracle bound {common.run_label(labels, r['run_id'])}",
                         {"a": top["run_id"], "b": r["run_id"], "metric": metric, **compare},
                         icon=":material/vertical_align_top:")
    if versus is not None and not versus.is_empty():
        st.caption("Black rule: the best run's mean + the 95 % bootstrap interval of (this run − the best run) over "
                   "the questions both were scored on; the best is the family's (the dataset's runs of this kind on "
                   "this metric). A rule that does not reach the best run's value is a gap the data supports. "
                   "Tied: Tukey's HSD cannot tell the run from the best (mart_run_vs_best).")
        ui.show_dataframe(versus.with_columns(
            ui.run_column(labels),
            pl.when(pl.col("is_oracle_bound")).then(pl.lit("oracle bound"))
            .when(pl.col("tied_with_best")).then(pl.lit("tied with the best")).otherwise(pl.lit(""))
            .alias("vs_best"))
            .select("run", "vs_best", "mean", "delta_vs_best", "ci_low", "ci_high", "p_randomization", "p_holm",
                    "p_tukey", "rank_in_family", "n_runs_in_family", "n_questions_shared", "best_run_id",
                    "best_mean", "dataset", "run_id"),
            key=f"{key}_vs_best")


# ---------------------------------------------------------------------------------------------------- retrieval
st.header("Retrieval")
ks = common.retrieval_ks(home)
if not ks:
    ui.empty_state(home, "retrieval")
else:
    own = common.own_granularity_metrics(home)  # doc_rec / page_rec: shown at their own granularity
    granularities = data.retrieval_granularities(home, chosen) or common.granularities(home)
    retrieval_metrics = common.metric_names(home, "retrieval")
    cols = st.columns(3)
    with cols[0]:
        metric = ui.pick("Metric", retrieval_metrics, key="metric", param="metric", default="ndcg",
                         format_func=lambda m: metric_labels.get(m, m))
    with cols[1]:
        k = ui.pick("k (0 = the whole ranking)", ks, key="k", param="k", default=5)
    with cols[2]:
        # the finest granularity with data by default: a BEIR dataset has no pages, so chunk
        granularity = ui.pick("Granularity of the other metrics", granularities, key="granularity",
                              param="granularity", default=granularities[0])
    if "page" not in granularities:
        reason, command = diagnosis.diagnose(home, "page", chosen)
        st.caption(f"No page granularity: {reason}.")
    board = data.retrieval_leaderboard(home, k, granularity, chosen)
    if board is None or board.is_empty():
        ui.empty_state(home, "retrieval", datasets=chosen)
    else:
        board, shown_runs = run_filter(board, "retrieval_runs")
        # the granularity the metric's values are at on this board: its own for doc_rec / page_rec
        metric_granularity = data.board_metric_granularity(home, metric, granularity) or granularity
        title = f"{metric_labels.get(metric, metric)}@{k} ({metric_granularity} level)"
        versus = data.versus_best(home, "retrieval", metric, metric_granularity, k, chosen)
        st.subheader(title)
        ranked(board, metric, title, versus, compare={"granularity": metric_granularity, "k": str(k)},
               key="retrieval")
        curves = data.retrieval_metric_by_k(home, metric, granularity, chosen)
        if curves is not None and curves.filter(pl.col("run_id").is_in(shown_runs))["k"].n_unique() > 1:
            curves = curves.filter(pl.col("run_id").is_in(shown_runs)).with_columns(ui.run_column(labels))
            st.subheader(f"{metric_labels.get(metric, metric)} against k ({metric_granularity} level)")
            st.altair_chart(
                alt.Chart(curves.to_pandas()).mark_line(point=True).encode(
                    x=alt.X("k:O", title="k", axis=alt.Axis(labelAngle=0)),
                    y=alt.Y("mean:Q", title=metric_labels.get(metric, metric)),
                    color=alt.Color("run:N", legend=alt.Legend(orient="bottom", columns=1, labelLimit=600)),
                    tooltip=["run", "run_id", "k", alt.Tooltip("mean:Q", format=f".{ui.DECIMALS}f"),
                             "n_questions"]).properties(height=280),
                width="stretch")
        overlap = data.evidence_overlap(home, chosen)
        if overlap is not None and overlap.filter(pl.col("run_id").is_in(shown_runs)).height:
            overlap = overlap.filter(pl.col("run_id").is_in(shown_runs)).with_columns(
                ui.run_column(labels),
                pl.col("metric").replace_strict(metric_labels, default=pl.col("metric")).alias("measure"))
            st.subheader("Evidence overlap against k")
            st.caption("How much of the gold evidence text the top-k chunks carry: the mean over questions with "
                       "evidence text of the best chunk's BLEU / ROUGE-L against it (mart_retrieval_evidence_overlap).")
            st.altair_chart(
                alt.Chart(overlap.to_pandas()).mark_line(point=True).encode(
                    x=alt.X("k:O", title="k", axis=alt.Axis(labelAngle=0)), y=alt.Y("mean:Q", title=None),
                    color=alt.Color("run:N", legend=alt.Legend(orient="bottom", columns=1, labelLimit=600)),
                    column=alt.Column("measure:N", title=None),
                    tooltip=["run", "run_id", "measure", "k", alt.Tooltip("mean:Q", format=f".{ui.DECIMALS}f"),
                             "n_questions"]).properties(width=420, height=260))
        st.subheader("Every retrieval metric")
        st.caption("".join(f"{m} = {label}@{k} ({g} level); " for m, g, label in own)
                   + f"the other metrics @{k} at {granularity} level. Means over the questions each run retrieved "
                   "for (mart_retrieval_board). Click a column to sort; the table downloads as CSV.")
        ui.show_dataframe(board.select(ui.run_column(labels), pl.all()), key="retrieval_table")

# ---------------------------------------------------------------------------------------------------- generation
st.header("Generation")
generation = data.generation_leaderboard(home, chosen)
if generation is None or generation.is_empty():
    ui.empty_state(home, "generation", datasets=chosen)
else:
    generation, shown_runs = run_filter(generation, "generation_runs")
    lexical = common.metric_names(home, "lexical")
    lexical_metric = ui.pick("Metric", lexical, key="generation_metric", param="generation_metric",
                             default="rouge_l", format_func=lambda m: metric_labels.get(m, m))
    ranked(generation, lexical_metric, metric_labels.get(lexical_metric, lexical_metric),
           data.versus_best(home, "generation", lexical_metric, None, None, chosen), compare={}, key="generation")
    st.caption("Lexical metrics, mean over scored answers (mart_generation_leaderboard); numeric_match over "
               "questions with a numeric gold.")
    ui.show_dataframe(generation.select(ui.run_column(labels), pl.all()), key="generation_table")

# ---------------------------------------------------------------------------------------------------- judged
st.header("Judged")
judged = data.judge_leaderboard(home, chosen)
if judged is None or judged.is_empty():
    ui.empty_state(home, "judged", datasets=chosen)
else:
    judged, shown_runs = run_filter(judged, "judge_runs", "judge_run_id")
    judged_metrics = [m for m in common.metric_names(home, "judged") if m in set(judged["metric"])]
    judged_metric = ui.pick("Metric", judged_metrics, key="judged_metric", param="judged_metric",
                            default="correctness", format_func=lambda m: metric_labels.get(m, m))
    at_metric = judged.filter(pl.col("metric") == judged_metric).rename({"judge_run_id": "run_id"})
    ranked(at_metric.rename({"mean": judged_metric}), judged_metric, metric_labels.get(judged_metric, judged_metric),
           data.versus_best(home, "judge", judged_metric, None, None, chosen), compare={}, key="judged")
    # each mean's state beside it: calibrated against human labels, uncalibrated, or no better than chance
    trust = common.judge_trust(home, shown_runs, [judged_metric], chosen)
    if trust is not None and not trust.is_empty():
        st.markdown(f"**How far each {metric_labels.get(judged_metric, judged_metric)} mean can be trusted** "
                    "(mart_judge_trust: human labels of the answers judged, `finrag calibrate`):")
        ui.show_trust(trust, lambda r: common.run_label(labels, r["judge_run_id"]))
    all_failed = at_metric.filter(pl.col("all_failed"))
    for r in all_failed.iter_rows(named=True):
        st.warning(f"Every {judged_metric} judgment of {r['run_id']} failed ({r['n_failed']}): no mean. The "
                   f"drill-down shows each judgment's error; re-run `finrag judge --answer-run {r['answer_run_id']} "
                   f"--metrics {judged_metric}` once the endpoint answers, then `finrag build`.")
    st.caption("Normalised judge scores in [0, 1], mean over the ok judgments of each metric; not applicable and "
               "failed counted apart, per metric; beside every mean its trust_state and, where calibrated, the "
               "calibrated mean of the human metric with its interval (mart_judge_trust: one row per calibration).")
    board = common.judge_trust(home, shown_runs, None, chosen)
    if board is not None:
        ui.show_dataframe(board.with_columns(
            ui.run_column(labels, "judge_run_id"))
            .select("run", "metric", "mean", "n_ok", "n_not_applicable", "n_failed", "trust_state",
                    "calibrated_mean", "calibrated_lower", "calibrated_upper", "label_set", "human_metric", "kappa",
                    "kappa_lower", "kappa_upper", "judge_run_id", "answer_run_id", "judge_model", "dataset"),
            key="judged_table")

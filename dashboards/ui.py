"""Shared page helpers: the home, number formatting (one rule for every page: 4 decimals), tables whose text is in the
page (st.table, so a browser and a test can read the values), selectors that take their default from the URL's query
parameters (so a page can be linked with its selection), and the "no data yet" message."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any
from urllib.parse import urlencode

import altair as alt
import polars as pl
import streamlit as st
from streamlit.errors import StreamlitAPIException

from dashboards.data import common, diagnosis, published
from python_jobs.marts.trust import slice_trust_note, trust_note

DECIMALS = 4


def home() -> Path:
    return published.home_path()


def page(title: str) -> Path:
    """A page's start: its title, and the home it reads."""
    st.title(title)
    return home()


def fmt(value: float | None) -> str:
    """How every page shows a metric value."""
    return "—" if value is None else f"{value:.{DECIMALS}f}"


def fmt_p(value: float | None) -> str:
    """A p-value with 3 significant digits (a fixed 4 decimals would show 0.0000 for 2e-06)."""
    return "—" if value is None else f"{value:.3g}"


def formatted(frame: pl.DataFrame) -> pl.DataFrame:
    """Float columns as text with DECIMALS places, so what the page shows is exactly fmt(value); nulls as —."""
    return frame.with_columns(
        pl.col(c).map_elements(fmt, return_dtype=pl.String).fill_null("—") if dtype.is_float()
        else pl.col(c).cast(pl.String).fill_null("—")
        for c, dtype in frame.schema.items() if dtype.is_float() or dtype == pl.String or dtype.is_integer()
    )


def show_table(frame: pl.DataFrame) -> None:
    st.table(formatted(frame).to_pandas())


def show_dataframe(frame: pl.DataFrame, key: str | None = None, height: int | str = "auto") -> None:
    """A sortable, downloadable table (st.dataframe) of the frame's own values, floats shown with DECIMALS places:
    for the long tables (leaderboards) people sort and export; short ones whose text must be in the page use
    show_table."""
    config = {c: st.column_config.NumberColumn(format=f"%.{DECIMALS}f")
              for c, dtype in frame.schema.items() if dtype.is_float()}
    st.dataframe(frame.to_pandas(), hide_index=True, column_config=config, key=key, height=height,
                 width="stretch")


# oracle bounds' reference lines (ranked_chart)
BOUND_COLOUR = "#b45309"


def ranked_chart(frame: pl.DataFrame, value: str, label: str, title: str, intervals: bool = False,
                 domain: tuple[float, float] | None = (0, 1),
                 bounds: pl.DataFrame | None = None) -> alt.LayerChart | alt.Chart:
    """Runs as dots on one metric, sorted best first (frame rows already in that order), one row per run, labelled;
    with intervals, a rule from ci_low to ci_high beside each dot (null: none); a tied_with_best column colours the
    runs tied with the best. `bounds` (the same columns): oracle runs, upper bounds drawn as dashed reference lines
    across the chart at their value, each named, never as contenders' bars."""
    data_ = frame.to_pandas()
    order = frame[label].to_list()
    scale = alt.Scale(domain=list(domain)) if domain else alt.Scale(zero=False)
    base = alt.Chart(data_).encode(y=alt.Y(f"{label}:N", sort=order, title=None,
                                           axis=alt.Axis(labelLimit=520)))
    tooltip = [c for c in data_.columns if c not in ("text", "label_x")]
    dots = base.mark_bar(size=14, opacity=0.8).encode(
        x=alt.X(f"{value}:Q", title=title, scale=scale, stack=None), tooltip=tooltip)
    if "tied_with_best" in data_.columns:  # the runs the data cannot tell from the best, in their own colour
        dots = dots.encode(color=alt.Color("tied_with_best:N", title="tied with the best",
                                           legend=alt.Legend(orient="bottom")))
    # the number right of the bar, or of the interval when it reaches further (never over the rule)
    data_["label_x"] = data_[[value, "ci_high"]].max(axis=1) if intervals and "ci_high" in data_.columns \
        else data_[value]
    labels = base.mark_text(align="left", dx=4).encode(
        x="label_x:Q", text=alt.Text(f"{value}:Q", format=f".{DECIMALS}f"))
    layers = [dots, labels]
    if intervals and "ci_low" in data_.columns:
        layers.append(base.mark_rule(strokeWidth=2, color="black").encode(x="ci_low:Q", x2="ci_high:Q"))
    if bounds is not None and not bounds.is_empty():
        marks = alt.Chart(bounds.select(label, value).to_pandas()).encode(
            x=alt.X(f"{value}:Q", scale=scale), tooltip=[label, alt.Tooltip(f"{value}:Q", format=f".{DECIMALS}f")])
        layers.append(marks.mark_rule(strokeDash=[6, 4], strokeWidth=2, color=BOUND_COLOUR))
        # the name above the plot (clear of the bars), left of the line: a bound sits near the top of the scale
        layers.append(marks.mark_text(align="right", dx=-4, y=-4, baseline="bottom", color=BOUND_COLOUR)
                      .encode(text=f"{label}:N"))
    chart = alt.layer(*layers)
    if "sweep" in data_.columns and data_["sweep"].notna().any():
        # a sweep's runs one series: a diamond in the sweep's colour at each of its runs' values
        swept = base.transform_filter("isValid(datum.sweep)").mark_point(shape="diamond", filled=True, size=110) \
            .encode(x=alt.X(f"{value}:Q"), color=alt.Color("sweep:N", title="sweep", legend=alt.Legend(
                orient="bottom", labelLimit=400)), tooltip=tooltip)
        chart = alt.layer(chart, swept).resolve_scale(color="independent")
    return chart.properties(height=alt.Step(26))


def show_trust(trust: pl.DataFrame, name: Callable[[dict[str, Any]], str]) -> None:
    """One line per judged mean and calibration (common.judge_trust's rows): `name` (the run, the metric), the mean and
    its state in words (python_jobs/marts/trust.py, the wording `finrag report --judged` uses); a warning box where
    the judge is no better than chance, a green one where calibrated."""
    for r in trust.iter_rows(named=True):
        text = f"{name(r)} — mean {fmt(r['mean'])}: {trust_note(r, fmt)}"
        if r["trust_state"] == "no_better_than_chance":
            st.warning(text, icon=":material/warning:")
        elif r["trust_state"] == "calibrated":
            st.success(text, icon=":material/verified:")
        else:
            st.info(text, icon=":material/help:")


def show_slice_trust(calibration: pl.DataFrame, name: Callable[[dict[str, Any]], str]) -> None:
    """One line per calibrated mean of a slice (data.judge_calibration_by_slice's rows: each stratum, then the strata
    combined): `name` (the metric), the row in words (python_jobs/marts/trust.py, the wording `finrag report --judged
    --slice` uses); a green box where calibrated, a grey one where the stratum has too few labels."""
    for r in calibration.iter_rows(named=True):
        text = f"{name(r)} — {slice_trust_note(r, fmt)}"
        if r["calibrated_mean"] is not None:
            st.success(text, icon=":material/verified:")
        else:
            st.info(text, icon=":material/help:")


def no_data(what: str, hint: str = "Run `finrag build` (it publishes the marts) and reload.") -> None:
    st.info(f"No data yet: {what}. {hint}")


def empty_state(h: Path, what: str, datasets: Sequence[str] | None = None) -> None:
    """"Nothing to show" with the real reason (nothing ingested, no pages, no reference answers, every judgment
    failed, not built yet, ...) and the command that fixes it (diagnosis.diagnose)."""
    reason, command = diagnosis.diagnose(h, what, datasets)
    st.info(f"No data: {reason}.  \nFix: `{command}`")


def require(frame: pl.DataFrame | None, h: Path, what: str) -> pl.DataFrame:
    """The frame when it has rows; else the page's empty state (empty_state: the reason and its fix), and the page
    ends there (what follows needs the rows)."""
    if frame is None or frame.is_empty():
        empty_state(h, what)
        st.stop()
    return frame


def run_column(labels: dict[str, str], column: str = "run_id") -> pl.Expr:
    """A `run` column that says what each run of `column` is: its label (common.run_labels), its id when it has
    none."""
    return pl.col(column).map_elements(lambda r: labels.get(r, r), return_dtype=pl.String).alias("run")


def run_choices(labels: dict[str, str], runs: pl.DataFrame, *tags: str) -> dict[str, str]:
    """run id -> how a run selector shows each of `runs`: its label and id (common.run_label), then its `tags`
    columns in brackets ("...  [retrieval, demo_synthetic]")."""
    return {r["run_id"]: f"{common.run_label(labels, r['run_id'])}  [{', '.join(str(r[t]) for t in tags)}]"
            for r in runs.iter_rows(named=True)}


DEFAULT_TOP = 3  # runs a picker holds by default: the page's best ones (a chart of a hundred runs is unreadable)
ANY = "(any)"
NO_SWEEP = "(in no sweep)"


def run_sweeps(catalog: common.RunCatalog) -> dict[str, tuple[str, str]]:
    """run id -> (its sweep, its setting of the sweep's parameters) for the runs of a sweep (catalog.sweeps); a run of
    two sweeps (a shared baseline) is named by the first."""
    return {r["run_id"]: (r["sweep_id"], r["setting"])
            for r in catalog.sweeps.unique("run_id", keep="first", maintain_order=True).iter_rows(named=True)}


def run_names(catalog: common.RunCatalog, run_ids: Sequence[str], with_label: bool = False) -> dict[str, str]:
    """How charts (and, with_label, the picker's chips) name runs: a sweep's run by its setting, the parameters the
    sweep varies (`chunk_size=128, retriever=bm25`; with_label after its dim_runs label), any other run by its
    dim_runs label; the id only where two names coincide."""
    labels, sweeps = catalog.labels, run_sweeps(catalog)
    def name(r: str) -> str:
        if r not in sweeps:
            return labels.get(r, r)
        return f"{labels.get(r, r)} · {sweeps[r][1]}" if with_label else sweeps[r][1]
    names = {r: name(r) for r in run_ids}
    counts: dict[str, int] = {}
    for n in names.values():
        counts[n] = counts.get(n, 0) + 1
    return {r: (f"{n}  ({r})" if counts[n] > 1 else n) for r, n in names.items()}


def series_column(catalog: common.RunCatalog, names: dict[str, str], column: str = "run_id") -> list[pl.Expr]:
    """The columns a chart of many runs draws them by: `run` (run_names) and `series`, a sweep's runs one series (the
    sweep's id), any other run its own (its name)."""
    sweeps = run_sweeps(catalog)
    return [pl.col(column).replace_strict(names, default=pl.col(column)).alias("run"),
            pl.col(column).map_elements(lambda r: sweeps[r][0] if r in sweeps else names.get(r, r),
                                        return_dtype=pl.String).alias("series")]


def _picked_from_url(options: Sequence[str]) -> list[str]:
    """The URL's `?runs=A,B` that are among `options` (a link's runs)."""
    named = [r for r in (st.query_params.get("runs") or "").split(",") if r]
    return [r for r in named if r in options]


def run_picker(catalog: common.RunCatalog, run_ids: Sequence[str], key: str, ranking: pl.DataFrame | None = None,
               default: Sequence[str] | None = None, metric_label: str = "the page's metric",
               label: str = "Runs") -> list[str]:
    """The one run picker: of `run_ids` (the runs the page can show), the ones it shows. Filters by dataset, sweep
    (catalog.sweeps: mart_sweep_runs), kind (retrieval / answer / judge) and text (in the run's label, id, sweep or
    setting); each selector appears when the runs offer a choice. Without `default`, it holds the URL's `?runs=` among
    them, else the best N of each dataset (`Top N`: `?top=`, else DEFAULT_TOP; 0 = every run) in `ranking`'s order
    (rows of run_id, dataset, rank_in_family and is_oracle_bound: mart_run_vs_best's rank of the family on the
    page's metric; the oracle bounds, never the best, are held beside the N as the reference lines), else the first
    N; with `default` (a page that reads the URL itself, e.g. the drill-down with the runs a linked run was
    made from), those. A new filter, N or ranking starts again from the default. Returns the runs picked, in the
    picker's order (the default's: best first where ranked; a run added by hand last)."""
    runs = catalog.runs.filter(pl.col("run_id").is_in(list(run_ids)))
    labels = catalog.labels
    sweeps = catalog.sweeps.filter(pl.col("run_id").is_in(list(run_ids)))
    datasets_ = sorted(runs["dataset"].drop_nulls().unique().to_list())
    kinds = runs["kind"].unique(maintain_order=True).to_list()
    sweep_ids = sweeps["sweep_id"].unique(maintain_order=True).to_list()
    # the selectors the runs offer a choice in, side by side; each one's default from the URL (?dataset=, ?sweep=,
    # ?kind=, ?q=, ?top=), like every selector
    shown_filters = [len(datasets_) > 1, bool(sweep_ids), len(kinds) > 1, True, default is None]
    widths = [w for w, on in zip([2, 3, 2, 3, 1], shown_filters, strict=True) if on]
    cols = iter(st.columns(widths))
    dataset = sweep = kind = ANY
    if len(datasets_) > 1:
        with next(cols):
            dataset = pick("Dataset", [ANY, *datasets_], key=f"{key}_dataset", param="dataset")
    if sweep_ids:
        with next(cols):
            sweep = pick("Sweep", [ANY, *sweep_ids, NO_SWEEP], key=f"{key}_sweep", param="sweep")
    if len(kinds) > 1:
        with next(cols):
            kind = pick("Kind", [ANY, *kinds], key=f"{key}_kind", param="kind")
    with next(cols):
        text = st.text_input("Filter runs by text", key=f"{key}_text", value=st.query_params.get("q") or "",
                             placeholder="label, id, sweep or setting")
    top = 0
    if default is None:
        with next(cols):
            wanted = st.query_params.get("top")
            top = st.number_input("Top N", min_value=0, step=1, key=f"{key}_top",
                                  value=int(wanted) if wanted and wanted.isdigit() else DEFAULT_TOP,
                                  help=f"The best N runs of each dataset by {metric_label} (0: every run)")
    settings = sweeps.group_by("run_id", maintain_order=True).agg(pl.col("sweep_id"), pl.col("setting"))
    in_sweeps = {r["run_id"]: (r["sweep_id"], r["setting"]) for r in settings.iter_rows(named=True)}
    of_run = {r["run_id"]: r for r in runs.iter_rows(named=True)}
    needle = text.strip().lower()
    keep = []
    for r in run_ids:
        row = of_run.get(r, {})
        its_sweeps, its_settings = in_sweeps.get(r, ([], []))
        haystack = " ".join([r, labels.get(r, ""), *its_sweeps, *its_settings]).lower()
        if ((dataset == ANY or row.get("dataset") == dataset) and (kind == ANY or row.get("kind") == kind)
                and (sweep == ANY or (sweep == NO_SWEEP and not its_sweeps) or sweep in its_sweeps)
                and needle in haystack):
            keep.append(r)
    # best first where ranked: the ranking's order, then the runs it does not rank
    ranked: list[str] = []
    if ranking is not None and not ranking.is_empty():
        order = ranking.filter(pl.col("run_id").is_in(keep) & pl.col("rank_in_family").is_not_null()) \
            .sort("rank_in_family", "dataset", "run_id")
        ranked = order["run_id"].unique(maintain_order=True).to_list()
    options = ranked + [r for r in keep if r not in ranked]
    if default is not None:
        chosen = [r for r in default if r in options]
    else:
        if ranking is not None and not ranking.is_empty():
            # the best N contenders; the oracle bounds (is_oracle_bound: runs that saw the gold evidence, never the
            # best) are reference lines beside them, not among the N
            bound = pl.col("is_oracle_bound") if "is_oracle_bound" in order.columns else pl.lit(False)
            contenders = order.filter(~bound)
            best = contenders.group_by("dataset", maintain_order=True).head(top) if top else contenders
            chosen = [*best["run_id"].unique(maintain_order=True), *order.filter(bound)["run_id"].unique(
                maintain_order=True)] or options[:top or None]
        else:
            chosen = options[:top] if top else options
        chosen = _picked_from_url(options) or chosen
    # chips say what the run is (a sweep's run its setting too); the id only where two runs share a name
    shown = run_names(catalog, options, with_label=True)
    # the picked runs follow the filters: a new filter, N or ranking starts from its default again
    signature = (tuple(options), tuple(chosen))
    if st.session_state.get(f"{key}__signature") != signature:
        st.session_state[f"{key}__signature"] = signature
        st.session_state[key] = chosen
    picked = st.multiselect(label, options, key=key, format_func=shown.get)
    st.caption(f"{len(picked)} shown of {len(options)} runs after the filters ({len(run_ids)} in all)"
               + (f"; by default the best {top} of each dataset by {metric_label}, and the oracle bounds"
                  if ranking is not None and top else "") + ".")
    if sweep not in (ANY, NO_SWEEP):
        page_link("sweeps", f"Sweep {sweep}: each parameter's effect", {"sweep": sweep}, icon=":material/tune:")
    return [r for r in picked if r in options]


def pick(label: str, options: Sequence[Any], key: str, param: str | None = None,
         format_func: Callable[[Any], str] = str, default: Any = None) -> Any:
    """A selectbox whose default is the URL's `?param=` value when it is an option, else `default`, else the first."""
    options = list(options)
    wanted = st.query_params.get(param) if param else None
    index = 0
    for candidate in (wanted, default):
        if candidate is None:
            continue
        matches = [i for i, o in enumerate(options) if str(o) == str(candidate)]
        if matches:
            index = matches[0]
            break
    return st.selectbox(label, options, index=index, key=key, format_func=format_func)


def pick_granularity_k(options: pl.DataFrame, granularity_column: Any, k_column: Any,
                       order: Sequence[str] | None = None, k_label: str = "k") -> tuple[str | None, int | None]:
    """The granularity and k of one metric, from its options (rows with granularity and k): two selectors, in the two
    page columns given, page and 5 by default (pick: the URL's first); the granularities in `order` when given,
    else the rows'. (None, None) for a metric without granularity (a lexical or judged one)."""
    present = options["granularity"].drop_nulls().unique(maintain_order=True).to_list()
    if not present:
        return None, None
    with granularity_column:
        granularity = pick("Granularity", [g for g in order if g in present] if order else present,
                           key="granularity", param="granularity", default="page")
    with k_column:
        k = pick(k_label, sorted(options.filter(pl.col("granularity") == granularity)["k"].unique().to_list()),
                 key="k", param="k", default=5)
    return granularity, k


VIEWS = Path(__file__).resolve().parent / "views"


def page_link(page: str, label: str, params: dict[str, str], icon: str | None = None) -> None:
    """A link to another page with its selection in the URL: an in-app page link, or, when the page runs outside
    the app's navigation (a test of one page), a plain link to the same URL."""
    try:
        st.page_link(str(VIEWS / f"{page}.py"), label=label, icon=icon, query_params=params)
    except StreamlitAPIException:
        st.markdown(f"[{label}]({page}?{urlencode(params)})")


def drilldown_link(label: str, question_id: str, dataset: str | None, runs: Sequence[str] = ()) -> None:
    """A link to the drill-down of one question, with the runs to show (the drill-down adds the runs they were made
    from)."""
    params = {"question_id": question_id, **({"dataset": dataset} if dataset else {}),
              **({"runs": ",".join(runs)} if runs else {})}
    page_link("drilldown", label, params, icon=":material/search:")


def sidebar_status(h: Path) -> None:
    manifest = published.export_manifest(h)
    st.sidebar.caption(f"Warehouse home: `{h}`")
    if manifest is None:
        st.sidebar.warning(published.publishing_problem(h) or "No published marts yet: run `dbt build`.")
    else:
        st.sidebar.caption(f"Built {manifest['built_at'][:19]} · published {manifest['published_at'][:19]} · "
                           f"{len(manifest['models'])} marts")

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
from python_jobs.marts.trust import trust_note

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
    return alt.layer(*layers).properties(height=alt.Step(26))


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

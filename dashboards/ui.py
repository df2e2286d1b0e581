"""Shared page helpers: the home, number formatting (one rule for every page: 4 decimals), tables whose text is in the
page (st.table, so a browser and a test can read the values), selectors that take their default from the URL's query
parameters (so a page can be linked with its selection), and the "no data yet" message."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import polars as pl
import streamlit as st

from dashboards import data

DECIMALS = 4


def home() -> Path:
    return data.home_path()


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


def no_data(what: str, hint: str = "Run `finrag build` (it publishes the marts) and reload.") -> None:
    st.info(f"No data yet: {what}. {hint}")


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


def sidebar_status(h: Path) -> None:
    manifest = data.export_manifest(h)
    st.sidebar.caption(f"Warehouse home: `{h}`")
    if manifest is None:
        st.sidebar.warning("No published marts yet: run `finrag build`.")
    else:
        st.sidebar.caption(f"Built {manifest['built_at'][:19]} · published {manifest['published_at'][:19]} · "
                           f"{len(manifest['models'])} marts")

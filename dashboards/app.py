"""FinRAG Warehouse dashboard: `finrag dashboard` (or `make dashboard`) serves it.

Reads only Parquet (the marts `finrag build` publishes under <home>/exports/marts), never the DuckDB file nor the
lake: `dbt build` can run while it serves. One page per file under views/, listed once in dashboards/pages.py; the url
paths are the ones the dbt exposures (models/marts/_dashboard__exposures.yml) name."""

from __future__ import annotations

import streamlit as st

from dashboards import ui
from dashboards.pages import PAGES, VIEWS_DIR

st.set_page_config(page_title="FinRAG Warehouse", page_icon=":material/finance:", layout="wide")
navigation = st.navigation([
    st.Page(str(VIEWS_DIR / page.file), title=page.title, url_path=page.url_path, icon=page.icon, default=(i == 0))
    for i, page in enumerate(PAGES)
])
ui.sidebar_status(ui.home())
navigation.run()

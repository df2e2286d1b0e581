"""FinRAG Warehouse dashboard: `finrag dashboard` (or `make dashboard`) serves it.

Reads only Parquet (the marts `finrag build` publishes under <home>/exports/marts), never the DuckDB file nor the
lake: `dbt build` can run while it serves. One page per file under views/; the url paths are the ones the dbt
exposures (models/marts/_dashboard__exposures.yml) name."""

from __future__ import annotations

from pathlib import Path

import streamlit as st

from dashboards import ui

# not "pages/": a pages/ folder beside the entrypoint puts Streamlit in its legacy multipage mode, where a page URL
# runs the page file alone, without this navigation, layout and sidebar
PAGES_DIR = Path(__file__).resolve().parent / "views"
PAGES = [
    # the root page: every other page has its own url (the exposures' urls), the default one is served at /
    ("overview.py", "Overview", "overview", ":material/home:"),
    ("leaderboard.py", "Leaderboard", "leaderboard", ":material/leaderboard:"),
    ("heatmap.py", "Topic × task", "heatmap", ":material/grid_on:"),
    ("slices.py", "Slices", "slices", ":material/pie_chart:"),
    ("run_vs_run.py", "Run vs run", "run_vs_run", ":material/compare_arrows:"),
    ("sweeps.py", "Sweeps", "sweeps", ":material/tune:"),
    ("judge_agreement.py", "Judge agreement", "judge_agreement", ":material/gavel:"),
    ("drilldown.py", "Drill-down", "drilldown", ":material/search:"),
    ("judged.py", "Judged answers", "judged", ":material/rule:"),
    ("qa_generation.py", "QA generation", "qa_generation", ":material/quiz:"),
    ("costs.py", "Costs", "costs", ":material/payments:"),
]

st.set_page_config(page_title="FinRAG Warehouse", page_icon=":material/finance:", layout="wide")
navigation = st.navigation([
    st.Page(str(PAGES_DIR / file), title=title, url_path=url_path, icon=icon, default=(i == 0))
    for i, (file, title, url_path, icon) in enumerate(PAGES)
])
ui.sidebar_status(ui.home())
navigation.run()

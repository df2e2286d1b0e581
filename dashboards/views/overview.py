"""Overview (the root page): what each page shows, the landing validations (a link to the home's Great Expectations
Data Docs), and which marts are published (rows, build and publish times)."""

import os

import polars as pl
import streamlit as st

from dashboards import ui
from dashboards.data import common, published
from dashboards.data import overview as data
from dashboards.pages import PAGES, VIEWS_DIR

home = ui.page("FinRAG Warehouse")
for page in PAGES[1:]:  # the pages after this one
    st.page_link(str(VIEWS_DIR / page.file), label=f"**{page.title}** — {page.what}")

st.header("What the warehouse holds")
st.caption("Its datasets and runs as the last build saw them (mart_datasets, dim_runs: what `finrag ls` prints); a "
           "run landed since shows after the next `finrag build`.")
counts = common.dataset_counts(home)
if counts is None or counts.is_empty():
    ui.empty_state(home, "overview")
else:
    ui.show_table(counts)
    runs = data.all_runs(home)
    if runs is not None and runs.height:
        st.subheader(f"Runs ({runs.height})")
        ui.show_dataframe(runs, key="runs")

st.header("Landing validations")
# every landing is validated against its table's contract before it lands (Great Expectations); `finrag dashboard`
# serves the home's Data Docs on a port of their own (Streamlit cannot serve them) and passes their URL here
checks = data.landing_validations(home)
docs_url = os.environ.get("FINRAG_DATA_DOCS_URL")
if not checks["n"]:
    st.caption("No landing has been validated in this home yet.")
else:
    summary = f"{checks['n']} validations of landings: {checks['passed']} passed, {checks['failed']} failed"
    if docs_url and checks["docs_index"]:
        st.markdown(f"[**Data Docs** — the passed and failed validations of every landing]({docs_url}) · {summary}")
    else:
        st.caption(f"{summary}. Data Docs: `finrag data-docs --open` (or serve the dashboard with `finrag dashboard`).")
    if checks["latest_failed"]:
        st.caption("Latest failed: " + " · ".join(f"`{x}`" for x in checks["latest_failed"]))

st.header("Published marts")
manifest = published.export_manifest(home)
if manifest is None:
    ui.no_data(published.publishing_problem(home) or f"no marts published under {home / published.EXPORTS}")
    st.stop()
st.caption(f"Built {manifest['built_at']} · published {manifest['published_at']} (build {manifest['build_id']}). "
           "The dashboard reads these Parquet files, never the DuckDB file.")
ui.show_table(pl.DataFrame([{"model": m["name"], "rows": m["rows"], "columns": len(m["columns"])}
                            for m in manifest["models"]]))

"""Costs: what the LLM calls cost - per job run (answer, judge, HyDE retrieval, QA generation) and purpose: calls,
failures, retries, tokens, latency p50 / p95 and USD at the llm_prices seed's prices (mart_llm_costs)."""

import altair as alt
import polars as pl
import streamlit as st

from dashboards import ui
from dashboards.data import costs as data

home = ui.page("Costs")
costs = ui.require(data.llm_costs(home), home, "costs")

jobs = costs["job"].unique().sort().to_list()
chosen = st.multiselect("Jobs", jobs, default=jobs, key="jobs")
costs = costs.filter(pl.col("job").is_in(chosen or jobs))
priced = costs.filter(pl.col("cost_usd").is_not_null())
c = st.columns(6)
c[0].metric("LLM calls", f"{costs['n_calls'].sum():,}")
c[1].metric("Served from the cache", f"{costs['n_cached_calls'].sum():,}")
c[2].metric("Failed calls", f"{costs['n_failed'].sum():,}")
c[3].metric("Prompt tokens", f"{costs['prompt_tokens'].sum():,}")
c[4].metric("Completion tokens", f"{costs['completion_tokens'].sum():,}")
c[5].metric("Cost (USD)", ui.fmt(priced["cost_usd"].sum()) if priced.height else "—")
unpriced = costs.filter(pl.col("cost_usd").is_null())["model"].unique().sort().to_list()
st.caption("Calls made and requests served from the cache, from the llm_calls ledger (a cached answer made no call "
           "and cost nothing). "
           "Cost: tokens at the llm_prices seed's prices"
           + (f"; no price in the seed for {', '.join(unpriced)} (add it to seeds/llm_prices.csv and "
              "`finrag build`)." if unpriced else "."))

# a job run as what it is, when it started, and its id's random tail (two jobs can start in the same minute)
long = costs.with_columns(
    (pl.col("prompt_tokens") + pl.col("completion_tokens")).alias("tokens"),
    pl.format("{} {} · {} · {}", "job", pl.col("job_subject").fill_null(""),
              pl.col("job_started_at").dt.strftime("%m-%d %H:%M"), pl.col("job_run_id").str.slice(-6)).alias("job_run"))
run_order = long.sort("job_started_at", descending=True)["job_run"].unique(maintain_order=True).to_list()

st.header("Per job run")
measure = st.radio("Measure", ["tokens", "n_calls", "n_cached_calls", "cost_usd"], horizontal=True, key="measure",
                   format_func={"tokens": "tokens", "n_calls": "calls", "n_cached_calls": "served from the cache",
                                "cost_usd": "cost (USD)"}.get)
st.altair_chart(
    alt.Chart(long.to_pandas()).mark_bar().encode(
        y=alt.Y("job_run:N", title=None, sort=run_order, axis=alt.Axis(labelLimit=500)),
        x=alt.X(f"sum({measure}):Q", title=measure),
        color=alt.Color("purpose:N"),
        tooltip=["job_run_id", "purpose", "model", "n_calls", "n_cached_calls", "n_failed", "tokens",
                 alt.Tooltip("cost_usd:Q", format=".4f")]).properties(height=alt.Step(24)),
    width="stretch")

st.header("Latency per call")
latency = long.with_columns(pl.format("{} · {}", "job_run", "purpose").alias("job_run_purpose"))
st.altair_chart(
    alt.Chart(latency.to_pandas()).mark_rule(strokeWidth=4).encode(
        y=alt.Y("job_run_purpose:N", title=None, sort=None, axis=alt.Axis(labelLimit=500)),
        x=alt.X("latency_p50_ms:Q", title="ms per call (p50 → p95)"), x2="latency_p95_ms:Q",
        color="purpose:N",
        tooltip=["job_run_id", "purpose", "model", alt.Tooltip("latency_p50_ms:Q", format=".0f"),
                 alt.Tooltip("latency_p95_ms:Q", format=".0f")]).properties(height=alt.Step(20))
    + alt.Chart(latency.to_pandas()).mark_point(filled=True, size=40).encode(
        y=alt.Y("job_run_purpose:N", sort=None), x="latency_p50_ms:Q", color="purpose:N"),
    width="stretch")
st.caption("Each rule runs from the median (the dot) to the 95th percentile of a call's wall time (retries included).")

st.header("Every job run and purpose")
ui.show_dataframe(costs.select("job", "job_subject", "purpose", "model", "n_calls", "n_cached_calls", "n_failed",
                               "n_retried",
                               "prompt_tokens", "completion_tokens", "latency_p50_ms", "latency_p95_ms", "cost_usd",
                               "recorded_cost_usd", "job_run_id"), key="costs_table")

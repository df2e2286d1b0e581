"""The dashboard's data: pure functions from a warehouse home (and filters) to Polars frames, one module per page
(named like its page in dashboards/views/), `common` for what several pages read, `published` for the shared query
helpers and `diagnosis` for the empty states.

The dashboard only reads. Every function here is a `select ... from <mart> where ... order by ...` over the marts
dbt publishes under <home>/exports/marts (the files one manifest names: python_jobs/warehouse/publishing.py), the
same published state `finrag sql`, `report`, `compare` and `ls` read - no join, no aggregate, no window, no rule of
its own (a threshold, a direction, a granularity order, a list of slice dimensions) and no read of the lake: what a
page needs is a mart (models/marts/, e.g. dim_runs, mart_run_pair_questions, the drill-down marts), and
tests/unit/test_dashboard_reads_only.py parses every query here to keep it so. Pivoting a long frame into one
column per metric, in the registry's order, is display. Besides the marts, the overview reads the stored results of
the landing validations under <home>/gx (Great Expectations' own store, not the lake).

Each query runs on its own in-memory DuckDB connection that is closed at once (published.query); the warehouse file
is never opened, so the dashboard can never hold the lock `dbt build` needs. A function returns None when a mart it
needs is not published yet (the page then says why, diagnosis.diagnose).
"""

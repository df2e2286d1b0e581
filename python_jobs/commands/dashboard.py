"""`finrag dashboard`: the Streamlit dashboard over the published marts (dashboards/app.py).

It reads only Parquet (<home>/exports/marts, published by every build), never the
DuckDB file, so `dbt build` can run while it serves. Beside it, on --docs-port, a loopback HTTP server serves the
home's Great Expectations Data Docs (<home>/data_docs: every landing's validation), which the overview page links to
(python_jobs/validation/data_docs_server.py says why Streamlit cannot serve them itself)."""

from __future__ import annotations

import os
import subprocess
import sys

import click

from python_jobs.core.config import HOME_ENV, PROJECT_DIR, data_docs_dir, warehouse_home
from python_jobs.core.console import say
from python_jobs.marts.published import PublishError, read_manifest

APP = PROJECT_DIR / "dashboards" / "app.py"


@click.command("dashboard")
@click.option("--port", type=int, default=8501, show_default=True)
@click.option("--host", default="127.0.0.1", show_default=True, help="Address to listen on (loopback by default).")
@click.option("--docs-port", type=int, default=None,
              help="Port of the Data Docs server (the home's landing validations). [default: --port + 1]")
def command(port: int, host: str, docs_port: int | None) -> None:
    """Serve the dashboard (leaderboard, topic x task heatmap, slices, run vs run, judge agreement, drill-down)."""
    home = warehouse_home()
    try:
        read_manifest(home)
    except PublishError as exc:
        say(f"warning: {exc}; the pages will say so")
    docs_port = port + 1 if docs_port is None else docs_port
    # the child inherits our process group (a Ctrl-C reaches it) and exits when this pid (Streamlit after the
    # exec below) is gone
    subprocess.Popen([sys.executable, "-m", "python_jobs.validation.data_docs_server", "--dir",
                      str(data_docs_dir(home)), "--host", host, "--port", str(docs_port), "--parent", str(os.getpid())],
                     cwd=PROJECT_DIR, stdin=subprocess.DEVNULL)
    docs_url = f"http://{host}:{docs_port}/index.html"
    env = {**os.environ, HOME_ENV: str(home), "STREAMLIT_BROWSER_GATHER_USAGE_STATS": "false",
           "FINRAG_DATA_DOCS_URL": docs_url}
    args = [
        sys.executable, "-m", "streamlit", "run", str(APP),
        "--server.port", str(port),
        "--server.address", host,
        "--server.headless", "true",
        "--browser.gatherUsageStats", "false",
        # the app does not need to watch its own sources; polling the tree costs CPU on a shared machine
        "--server.fileWatcherType", "none",
        "--server.runOnSave", "false",
        "--client.toolbarMode", "minimal",  # no "Deploy" button
    ]
    say(f"dashboard: http://{host}:{port}/  (home {home}); Data Docs: {docs_url}")
    sys.stdout.flush()
    sys.stderr.flush()
    # replace this process: a signal to `finrag dashboard` reaches the server itself
    os.execve(sys.executable, args, env)

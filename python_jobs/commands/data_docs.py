"""`finrag data-docs [--open]`: (re)build the home's Great Expectations Data Docs from every stored validation result.

Landings update the docs as they go (python_jobs/validation/results.py); this rebuilds every page, e.g. after a job was
killed while it wrote them, or to open them without the dashboard."""

from __future__ import annotations

import webbrowser

import click

from python_jobs.core.config import warehouse_home
from python_jobs.validation.results import build_data_docs


@click.command("data-docs")
@click.option("--open", "open_", is_flag=True, help="Open index.html in the default browser.")
def command(open_: bool) -> None:
    """Rebuild the Data Docs of the home's landing validations (<home>/data_docs/index.html) and print its path."""
    index = build_data_docs(warehouse_home())
    click.echo(str(index))
    if open_:
        webbrowser.open(index.as_uri())

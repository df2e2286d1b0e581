"""`finrag llm-serve`: the embedded default LLM (SmolLM2-135M-Instruct) as an OpenAI-compatible server on loopback.

Jobs start it on their own when no endpoint is configured; run it yourself to share one loaded model across jobs:

    finrag llm-serve --port 8008 &
    export FINRAG_LLM_BASE_URL=http://127.0.0.1:8008/v1 FINRAG_LLM_MODEL=smollm2-135m-instruct
"""

from __future__ import annotations

import click

from python_jobs.llm.server import EMBEDDED_MODEL, serve


@click.command("llm-serve")
@click.option("--host", default="127.0.0.1", show_default=True, help="Bind address (keep it on loopback).")
@click.option("--port", type=int, default=8008, show_default=True, help="0 = a free port.")
@click.option("--model-name", default=EMBEDDED_MODEL, show_default=True, help="Name the server answers to.")
@click.option("--threads", type=int, default=None, help="Torch threads (default: up to 2).")
def command(host: str, port: int, model_name: str, threads: int | None) -> None:
    """Serve the embedded default LLM (prints READY <port> once loaded)."""
    serve(host, port, model_name, threads)

"""Serve the home's Great Expectations Data Docs ($FINRAG_HOME/data_docs/) over HTTP on a loopback port.

    python -m python_jobs.validation.data_docs_server --dir DIR --port PORT [--host 127.0.0.1] [--parent PID]

Why a server of its own: the dashboard's overview links to the Data Docs, and a link must open in a real browser.
Streamlit serves only its app (its static file serving sends .html as text/plain, so GX's pages would show as
source), and a browser does not follow a file:// link from an http:// page. So `finrag dashboard` starts this
(stdlib `http.server`, read-only, loopback by default) as a child on another port before Streamlit replaces it, and
passes the URL to the app. With --parent the server exits once that process is gone (a SIGKILLed dashboard leaves
no server behind); a signal to the dashboard's process group (Ctrl-C) reaches both anyway.
"""

from __future__ import annotations

import argparse
import os
import threading
import time
from functools import partial
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path


class _QuietHandler(SimpleHTTPRequestHandler):
    def log_message(self, format: str, *args: object) -> None:  # noqa: A002 - the stdlib's signature
        pass  # one line per request on the dashboard's terminal is noise

    def end_headers(self) -> None:
        # the docs change with every landing: never show a stale index
        self.send_header("Cache-Control", "no-store")
        super().end_headers()


def make_server(directory: Path, host: str = "127.0.0.1", port: int = 0) -> ThreadingHTTPServer:
    """A server of `directory` bound to host:port (port 0: any free port; `server.server_address` says which)."""
    directory.mkdir(parents=True, exist_ok=True)
    return ThreadingHTTPServer((host, port), partial(_QuietHandler, directory=str(directory)))


def serve(directory: Path, host: str, port: int, parent: int | None = None) -> None:
    server = make_server(directory, host, port)
    if parent is not None:
        def watch() -> None:
            while os.getppid() == parent:  # re-parented: the dashboard is gone
                time.sleep(1.0)
            server.shutdown()

        threading.Thread(target=watch, daemon=True).start()
    with server:
        server.serve_forever(poll_interval=0.5)


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description="Serve a Data Docs directory on loopback.")
    ap.add_argument("--dir", type=Path, required=True)
    ap.add_argument("--host", default="127.0.0.1")
    ap.add_argument("--port", type=int, required=True)
    ap.add_argument("--parent", type=int, default=None, help="exit when this process (our parent) is gone")
    args = ap.parse_args(argv)
    try:
        serve(args.dir, args.host, args.port, args.parent)
    except KeyboardInterrupt:
        pass


if __name__ == "__main__":
    main()

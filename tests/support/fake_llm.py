"""A scripted OpenAI-compatible chat server for the tests and bench/llm_client (a real HTTP server on loopback).

Replies: the first `script` rule whose key occurs in the last user message wins, else an echo reply
"fake answer <8 hex of the prompt's md5>" (deterministic, different per prompt). A rule's reply may be a list: the
request's seed s picks its item (s - 1) mod len (no seed: the first), as a sampling judge's repeats differ. Usage
tokens are word counts.

Injected faults, consumed in order per matching request (`faults[substring] = ["429", "500", ...]`), or for every
matching request (`always[substring] = "500"`):
  "429"        429 with Retry-After: 1
  "500"        500 with a JSON error body
  "hang"       sleep `hang_seconds` before answering (past the client's timeout)
  "malformed"  200 with a body that is not JSON
  "drop"       close the connection without any response
  "echo401"    401 whose error message echoes the Authorization header (a careless server)

    python tests/support/fake_llm.py --port 0 --latency 0.2     # prints READY <port>
"""

from __future__ import annotations

import argparse
import hashlib
import json
import socket
import threading
import time
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any


@dataclass
class Behaviour:
    script: dict[str, str | list[str]] = field(default_factory=dict)
    faults: dict[str, list[str]] = field(default_factory=dict)
    always: dict[str, str] = field(default_factory=dict)
    latency: float = 0.0
    hang_seconds: float = 5.0
    refuse_response_format: bool = False  # 400 for a request with response_format, as endpoints without it do
    model: str = "fake-model"
    # what the server saw (for assertions)
    requests: list[dict[str, Any]] = field(default_factory=list)
    auth_headers: list[str] = field(default_factory=list)
    lock: threading.Lock = field(default_factory=threading.Lock)
    # completions being answered at once, now and at most (a request waits out `latency` inside)
    in_flight: int = 0
    max_in_flight: int = 0

    def completions(self) -> list[dict[str, Any]]:
        with self.lock:
            return list(self.requests)


def _last_user(messages: list[dict[str, str]]) -> str:
    users = [m.get("content") or "" for m in messages if m.get("role") == "user"]
    return users[-1] if users else ""


def make_server(behaviour: Behaviour, host: str = "127.0.0.1", port: int = 0) -> ThreadingHTTPServer:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, fmt: str, *args: Any) -> None:
            return

        def setup(self) -> None:
            super().setup()
            # headers and body go out as two writes: without TCP_NODELAY, Nagle + delayed ACK add ~40 ms per reply
            self.connection.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)

        def _send(self, status: int, body: bytes, headers: dict[str, str] | None = None) -> None:
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(body)))
            for k, v in (headers or {}).items():
                self.send_header(k, v)
            self.end_headers()
            self.wfile.write(body)

        def do_GET(self) -> None:  # noqa: N802
            models = {"object": "list", "data": [{"id": behaviour.model, "object": "model"}]}
            self._send(200, json.dumps(models).encode())

        def do_POST(self) -> None:  # noqa: N802
            req = json.loads(self.rfile.read(int(self.headers.get("Content-Length") or 0)))
            prompt = _last_user(req.get("messages", []))
            with behaviour.lock:
                behaviour.requests.append(req)
                behaviour.auth_headers.append(self.headers.get("Authorization") or "")
                fault = next((v for k, v in behaviour.always.items() if k in prompt), None)
                if fault is None:
                    for k, queue in behaviour.faults.items():
                        if k in prompt and queue:
                            fault = queue.pop(0)
                            break
            if behaviour.refuse_response_format and "response_format" in req:
                self._send(400, b'{"error":{"message":"Unrecognized request argument supplied: response_format",'
                                b'"type":"invalid_request_error"}}')
                return
            if behaviour.latency:
                with behaviour.lock:
                    behaviour.in_flight += 1
                    behaviour.max_in_flight = max(behaviour.max_in_flight, behaviour.in_flight)
                time.sleep(behaviour.latency)
                with behaviour.lock:
                    behaviour.in_flight -= 1
            if fault == "429":
                self._send(429, b'{"error":{"message":"slow down","type":"rate_limit"}}', {"Retry-After": "1"})
                return
            if fault == "echo401":  # a careless server that echoes the credentials it got
                auth = self.headers.get("Authorization") or ""
                self._send(401, json.dumps({"error": {"message": f"invalid key {auth}", "type": "auth"}}).encode())
                return
            if fault == "500":
                self._send(500, b'{"error":{"message":"internal failure","type":"server_error"}}')
                return
            if fault == "malformed":
                self._send(200, b'{"id": "x", "choices": [ this is not json')
                return
            if fault == "drop":
                self.close_connection = True
                try:
                    self.connection.shutdown(socket.SHUT_RDWR)
                except OSError:
                    pass
                return
            if fault == "hang":
                time.sleep(behaviour.hang_seconds)
            reply = next((v for k, v in behaviour.script.items() if k in prompt), None)
            if isinstance(reply, list):  # one reply per seed
                reply = reply[((req.get("seed") or 1) - 1) % len(reply)]
            if reply is None:
                reply = f"fake answer {hashlib.md5(prompt.encode()).hexdigest()[:8]}"
            body = {
                "id": f"chatcmpl-{len(behaviour.requests)}", "object": "chat.completion", "created": int(time.time()),
                "model": req.get("model", behaviour.model),
                "choices": [{"index": 0, "message": {"role": "assistant", "content": reply}, "finish_reason": "stop"}],
                "usage": {"prompt_tokens": len(prompt.split()), "completion_tokens": len(reply.split()),
                          "total_tokens": len(prompt.split()) + len(reply.split())},
            }
            self._send(200, json.dumps(body).encode())

    server = ThreadingHTTPServer((host, port), Handler)
    server.daemon_threads = True
    return server


class FakeLLM:
    """The server on a background thread: `with FakeLLM(behaviour) as fake: fake.base_url`."""

    def __init__(self, behaviour: Behaviour | None = None):
        self.behaviour = behaviour or Behaviour()
        self.server = make_server(self.behaviour)
        self.thread = threading.Thread(target=self.server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.server.server_address[1]}/v1"

    def __enter__(self) -> FakeLLM:
        self.thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.server.shutdown()
        self.server.server_close()


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--port", type=int, default=0)
    ap.add_argument("--latency", type=float, default=0.0)
    args = ap.parse_args()
    server = make_server(Behaviour(latency=args.latency), port=args.port)
    print(f"READY {server.server_address[1]}", flush=True)
    server.serve_forever()


if __name__ == "__main__":
    main()

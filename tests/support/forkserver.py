"""A warm interpreter for the `finrag` subprocesses the tests start (support.cli.run_finrag).

Every `finrag` process that lands data imports Great Expectations for its validation (~2 s of CPU) and Polars,
pandas and DuckDB (~0.4 s): about three seconds of the ~four a small landing costs, paid ~400 times a suite. This
module's server (one per pytest process, started on first use) imports them once; each `finrag` call is then a fork
of it, which sets the call's environment, working directory, stdin (/dev/null), stdout and stderr (files the client
reads back), runs `python -m python_jobs.cli` as a fresh interpreter would, and exits through the interpreter's
shutdown (non-daemon threads, atexit handlers, buffered output) but its final teardown: freeing the server's
preloaded objects cost each call about a second (they are frozen, gc.freeze, and the process ends with os._exit once
the shutdown has run; a landing 1.6 s -> 0.75 s). What runs is the same code in a real process; only the imports
were done before the fork.

What the server imports is the project's own code and the libraries every landing imports (the list in `preload`),
and sentence-transformers (torch, transformers: ~5 s of every call that embeds, retrieves densely or runs the
embedded LLM), but nothing that starts a thread when imported (LanceDB's event loop: the child imports it) and no
model (the child loads it). A call whose environment changes how an interpreter starts (a PYTHON* variable) or what
those libraries read when imported (PREFIXES: Hugging Face's cache and offline settings, torch's
threads) runs as a plain subprocess, and so does every call when FINRAG_TEST_FORKSERVER=0; when the test process's
own such variables change, the next call starts a server with them.

A second server does the same for the `dbt` processes `finrag build` starts (`dbt_shim`, below).
"""

from __future__ import annotations

import sys
from pathlib import Path

PROJECT = Path(__file__).resolve().parents[2]
if __name__ == "__main__":
    # as `python -m python_jobs.cli` run in the project sees it: the project first, not tests/support
    sys.path[0] = str(PROJECT)

import atexit  # noqa: E402
import contextlib  # noqa: E402
import gc  # noqa: E402
import importlib  # noqa: E402
import json  # noqa: E402
import os  # noqa: E402
import runpy  # noqa: E402
import select  # noqa: E402
import shutil  # noqa: E402
import signal  # noqa: E402
import socket  # noqa: E402
import subprocess  # noqa: E402
import tempfile  # noqa: E402
import threading  # noqa: E402
from collections.abc import Callable  # noqa: E402

from python_jobs.warehouse.dbt_runner import installed_dbt  # noqa: E402

ENABLE_ENV = "FINRAG_TEST_FORKSERVER"
CLI_MODULE = "python_jobs.cli"


STARTUP_PREFIXES = ("PYTHON",)  # what an interpreter reads when it starts
# and what each server's preloads read when imported: the model stack (huggingface_hub's cache and offline settings,
# transformers', torch's and its OpenMP / MKL libraries'), dbt. Not what the libraries set in the test process when
# a model runs there (torch's TORCHINDUCTOR_CACHE_DIR, the encoders' TOKENIZERS_PARALLELISM): each change of a
# variable here in the test process starts the worker's server again (`_current`)
PREFIXES = {  # by server kind
    "finrag": (*STARTUP_PREFIXES, "HF_", "HUGGINGFACE_", "TRANSFORMERS_", "TORCH_", "OMP_", "MKL_", "XDG_CACHE_HOME"),
    "dbt": (*STARTUP_PREFIXES, "DBT_"),
}


def startup_env(env: dict[str, str], prefixes: tuple[str, ...]) -> dict[str, str]:
    """The variables read when a process starts: a call that changes them cannot be a fork."""
    return {k: v for k, v in env.items() if k.startswith(prefixes)}


# ---- the server ---------------------------------------------------------------------------------------------------
def preload() -> None:
    import duckdb  # noqa: F401
    import openai  # noqa: F401  (the LLM client's library: ~0.3 s of each call that asks an LLM)
    import pandas  # noqa: F401
    import polars  # noqa: F401
    import pyarrow  # noqa: F401
    import sentence_transformers  # noqa: F401  (with torch and transformers: ~5 s a call that uses a model)

    import python_jobs.cli
    import python_jobs.core.lake  # noqa: F401
    from python_jobs.validation.expectations import gx

    gx()
    # every verb's module, which the CLI imports when the verb runs (a qrels landing 0.75 -> 0.68 s as a fork)
    for module in python_jobs.cli.VERBS.values():
        importlib.import_module(module)
    _freeze()


def preload_dbt() -> None:
    """What every `dbt` process of `finrag build` imports: dbt, its DuckDB adapter, the project's plugin, and the
    libraries the registered functions import at their first call (rouge-score's NLTK stemmer alone ~2.4 s)."""
    import dbt.adapters.duckdb  # noqa: F401
    import dbt.cli.main  # noqa: F401
    import rouge_score.rouge_scorer  # noqa: F401
    import sacrebleu  # noqa: F401
    import scipy.stats  # noqa: F401

    import python_jobs.warehouse.dbt_plugin  # noqa: F401

    _freeze()


def _freeze() -> None:
    # what was imported stays for every fork: out of the collector's reach, so no child walks (and copies) it
    # (a child ends without finalizing: _shutdown)
    assert threading.active_count() == 1, "a preload started a thread: forking it would be unsafe"
    gc.collect()
    gc.freeze()


def _send(conn: socket.socket, message: dict) -> None:
    conn.sendall(json.dumps(message).encode() + b"\n")


def _run_cli(request: dict) -> None:
    """In the forked child: become the `finrag` process of `request`; never returns to the server's loop."""
    stdio = [os.open(path, flags) for path, flags in ((os.devnull, os.O_RDONLY), (request["stdout"], os.O_WRONLY),
                                                      (request["stderr"], os.O_WRONLY))]
    _become(request, stdio, ["-m", *request["args"]],
            lambda: runpy.run_module(CLI_MODULE, run_name="__main__", alter_sys=True))


def _run_dbt(request: dict, fds: list[int]) -> None:
    """In the forked child: become the `dbt` process the shim stands in for (its stdin, stdout and stderr are the
    shim's own, passed over the socket); never returns to the server's loop."""
    # dbt's console script, as its shebang would run it
    _become(request, fds, request["argv"], lambda: runpy.run_path(str(DBT_SCRIPT), run_name="__main__"))


def _become(request: dict, stdio: list[int], argv: list[str], main: Callable[[], object]) -> None:
    """The forked child becomes the process of `request`: its own process group (a timeout kills it and what it
    started), `stdio` as its fds 0-2, the request's environment, working directory and `argv`; then `main()` as the
    interpreter would run it, and the exit status the interpreter would give."""
    os.setpgid(0, 0)
    for fd, target in zip((0, 1, 2), stdio, strict=True):
        if target != fd:
            os.dup2(target, fd)
            os.close(target)
    os.environ.clear()
    os.environ.update(request["env"])
    os.chdir(request["cwd"])
    sys.argv = argv
    try:
        main()
        code = 0
    except SystemExit as exc:
        code = _exit_code(exc.code)
    except BaseException:
        sys.excepthook(*sys.exc_info())  # the traceback an uncaught error prints
        code = 1
    _shutdown(code)


def _exit_code(code: object) -> int:
    """The exit status the interpreter gives a SystemExit(code): None 0, an int itself, anything else printed, 1."""
    if code is None:
        return 0
    if isinstance(code, int):
        return code & 0xFF
    print(code, file=sys.stderr)
    return 1


def _shutdown(code: int) -> None:
    """The interpreter's shutdown up to its finalization: non-daemon threads joined, atexit handlers run (logging's
    flush, weakref finalizers, tempfile clean-up), the standard streams flushed; then the process ends. Finalizing
    would free every object the server preloaded (frozen there, so the collector leaves them alone while the call
    runs): about a second of CPU per call, copying the server's pages to free them."""
    threading._shutdown()  # what the interpreter runs first at exit: waits for non-daemon threads
    atexit._run_exitfuncs()
    for stream in (sys.stdout, sys.stderr):
        with contextlib.suppress(Exception):
            stream.flush()
    os._exit(code)


def _reap() -> None:
    """Collect the handlers that finished (not SIGCHLD=SIG_IGN: a `finrag` process would inherit it, and its own
    subprocesses' exit codes would be lost)."""
    with contextlib.suppress(ChildProcessError):
        while os.waitpid(-1, os.WNOHANG)[0] != 0:
            pass


def _wait_while_connected(conn: socket.socket, pid: int) -> int:
    """The exit code of `pid`; killed (its process group) if the shim that asked for it goes away first, as a
    timeout kills the `finrag` process and everything it started."""
    pidfd = os.pidfd_open(pid)
    try:
        if pidfd not in select.select([pidfd, conn], [], [])[0]:  # the shim's end closed
            with contextlib.suppress(ProcessLookupError):
                os.killpg(pid, signal.SIGKILL)
    finally:
        os.close(pidfd)
    _, status = os.waitpid(pid, 0)
    return os.waitstatus_to_exitcode(status)


def serve(path: str, kind: str) -> None:
    (preload_dbt if kind == "dbt" else preload)()
    server = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    server.bind(path)
    server.listen(16)
    server.settimeout(1.0)
    print("ready", flush=True)
    while os.getppid() != 1:  # the pytest process that started it is gone: stop
        _reap()
        try:
            conn, _ = server.accept()
        except TimeoutError:
            continue
        sys.stdout.flush()
        sys.stderr.flush()
        if os.fork() != 0:
            conn.close()
            continue
        # the handler: reads the request, forks the `finrag` (or `dbt`) process, reports its pid (finrag) and then its
        # exit code
        server.close()
        conn.settimeout(None)
        fds = socket.recv_fds(conn, 1, 3)[1] if kind == "dbt" else []
        request = json.loads(conn.makefile("rb").readline())
        pid = os.fork()
        if pid == 0:
            conn.close()
            _run_dbt(request, fds) if kind == "dbt" else _run_cli(request)
        for fd in fds:
            os.close(fd)
        # a client gone meanwhile (a timeout) is not an error of the handler's; it never finalizes either
        with contextlib.suppress(OSError):
            if kind == "dbt":
                returncode = _wait_while_connected(conn, pid)
            else:
                _send(conn, {"pid": pid})
                returncode = os.waitstatus_to_exitcode(os.waitpid(pid, 0)[1])
            _send(conn, {"returncode": returncode})
        os._exit(0)


# ---- the client -----------------------------------------------------------------------------------------------------
class _Server:
    def __init__(self, kind: str = "finrag") -> None:
        self.prefixes = PREFIXES[kind]
        self.dir = tempfile.mkdtemp(prefix=f"finrag-forkserver-{kind}-")
        self.path = os.path.join(self.dir, "socket")
        self.env = dict(os.environ)
        self.proc = subprocess.Popen([sys.executable, __file__, self.path, kind], cwd=PROJECT, env=self.env,
                                     stdout=subprocess.PIPE, text=True)
        if self.proc.stdout is None or self.proc.stdout.readline().strip() != "ready":
            raise RuntimeError(f"the {kind} fork server did not start")
        atexit.register(self.stop)

    def startup(self) -> dict[str, str]:
        return startup_env(self.env, self.prefixes)

    def stop(self) -> None:
        self.proc.kill()
        self.proc.wait()
        shutil.rmtree(self.dir, ignore_errors=True)

    def run(self, args: list[str], env: dict[str, str], cwd: Path, timeout: float) -> subprocess.CompletedProcess:
        with tempfile.TemporaryDirectory(dir=self.dir) as tmp:
            out, err = Path(tmp) / "stdout", Path(tmp) / "stderr"
            out.touch()
            err.touch()
            with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as conn:
                conn.connect(self.path)
                conn.settimeout(timeout)
                _send(conn, {"args": args, "env": env, "cwd": str(cwd), "stdout": str(out), "stderr": str(err)})
                replies = conn.makefile("rb")
                pid = json.loads(replies.readline())["pid"]
                try:
                    returncode = json.loads(replies.readline())["returncode"]
                except TimeoutError:
                    with contextlib.suppress(ProcessLookupError):
                        os.killpg(pid, signal.SIGKILL)
                    raise subprocess.TimeoutExpired(args, timeout, out.read_text(), err.read_text()) from None
            return subprocess.CompletedProcess(args, returncode, out.read_text(), err.read_text())


_server: _Server | None = None
_dbt_server: _Server | None = None
_lock = threading.Lock()


def _current(server: _Server | None, kind: str) -> _Server:
    """`server` if it is running and started with this process's startup variables as they are now, else a new one
    (code run in the test process sets some, e.g. the CLI's HF_HUB_DISABLE_PROGRESS_BARS; an old server serves the
    calls it has under way and stops with this process). Called under `_lock`."""
    if (server is None or server.proc.poll() is not None
            or server.startup() != startup_env(dict(os.environ), PREFIXES[kind])):
        return _Server(kind)
    return server


def usable(env: dict[str, str]) -> bool:
    """Whether a call with `env` can be a fork: forking is on, and `env` starts an interpreter as this process's
    environment does (the server's: `run` makes sure)."""
    if os.environ.get(ENABLE_ENV, "1") == "0":
        return False
    return startup_env(env, PREFIXES["finrag"]) == startup_env(dict(os.environ), PREFIXES["finrag"])


def run_plain(args: list[str], env: dict[str, str], cwd: Path, timeout: float) -> subprocess.CompletedProcess:
    """`python -m python_jobs.cli ARGS` as a plain subprocess."""
    return subprocess.run([sys.executable, "-m", CLI_MODULE, *args], capture_output=True, text=True, env=env,
                          cwd=cwd, timeout=timeout)


def run(args: list[str], env: dict[str, str], cwd: Path, timeout: float) -> subprocess.CompletedProcess:
    """`python -m python_jobs.cli ARGS` as a fork of the warm interpreter (see the module docstring)."""
    global _server
    with _lock:
        _server = server = _current(_server, "finrag")
    return server.run(args, env, cwd, timeout)


# ---- dbt ---------------------------------------------------------------------------------------------------------
# `finrag build` runs dbt as a subprocess (python_jobs/warehouse/dbt_runner.py), ~66 times a suite, each paying dbt's
# imports and the registered functions' (2-4 s of CPU). run_finrag points FINRAG_DBT at a shim: a stdlib-only script
# (python -IS starts in ~20 ms) that hands its argv, environment, working directory and its stdin, stdout and stderr
# themselves (SCM_RIGHTS) to a second server, which preloaded them; the fork runs dbt's console script. A shim whose
# environment would start an interpreter differently (PYTHON*: a project copy's PYTHONPATH; DBT_*, which dbt reads
# when imported) execs the real dbt instead.
DBT_SCRIPT = installed_dbt()
SHIM = """#!{python} -IS
\"\"\"`dbt` as a fork of the test session's warm dbt interpreter (tests/support/forkserver.py).\"\"\"
import json, os, signal, socket, sys

DBT, SOCKET, PREFIXES, STARTUP = {dbt!r}, {socket!r}, {prefixes!r}, {startup!r}
env = dict(os.environ)
if {{k: v for k, v in env.items() if k.startswith(PREFIXES)}} != STARTUP:
    os.execv(DBT, [DBT, *sys.argv[1:]])
with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as conn:
    try:
        conn.connect(SOCKET)
    except OSError:  # the server is gone (its pytest process ended): the real dbt
        os.execv(DBT, [DBT, *sys.argv[1:]])
    socket.send_fds(conn, [b"F"], [0, 1, 2])
    conn.sendall(json.dumps({{"argv": [DBT, *sys.argv[1:]], "env": env, "cwd": os.getcwd()}}).encode() + b"\\n")
    code = json.loads(conn.makefile("rb").readline())["returncode"]
if code < 0:  # killed by a signal: so is the shim, as its parent would see the real dbt
    signal.signal(-code, signal.SIG_DFL)
    os.kill(os.getpid(), -code)
sys.exit(code)
"""


def dbt_shim() -> str:
    """The path of an executable that runs `dbt ARGS` as a fork of this session's warm dbt server (started on first
    use), for FINRAG_DBT."""
    global _dbt_server
    with _lock:
        server = _current(_dbt_server, "dbt")
        shim = Path(server.dir) / "dbt"
        if server is not _dbt_server:
            _dbt_server = server
            shim.write_text(SHIM.format(python=sys.executable, dbt=str(DBT_SCRIPT), socket=server.path,
                                        prefixes=server.prefixes, startup=server.startup()))
            shim.chmod(0o755)
        return str(shim)


if __name__ == "__main__":
    serve(sys.argv[1], sys.argv[2])

"""`make install`'s installer: `uv pip install` into the venv, configured as pip is on this machine.

uv installs the ~200 pinned packages in about half a minute where pip takes a minute and a half, but it reads no
pip configuration: the indexes, find-links (the CPU build of torch on disk), constraints and certificate bundle that
`pip config list` shows (pip.conf files and PIP_* variables) are passed to it here, and, as pip does, every index's
versions are considered together (uv's default takes a package from the first index that has it).

Usage: python tools/uv_install.py <venv python> <uv pip install arguments...>
"""

from __future__ import annotations

import ast
import os
import subprocess
import sys
from pathlib import Path

# pip's option -> uv's (the same meaning; each value a separate flag)
FLAGS = {
    "index-url": "--index-url",
    "extra-index-url": "--extra-index-url",
    "find-links": "--find-links",
    "constraint": "--constraint",
    "trusted-host": "--allow-insecure-host",
}


def pip_settings(python: str) -> dict[str, list[str]]:
    """Every value `pip config list` shows, by option name (all sections and PIP_* variables, in its order)."""
    listed = subprocess.run([python, "-m", "pip", "config", "list"], capture_output=True, text=True, check=True)
    settings: dict[str, list[str]] = {}
    for line in listed.stdout.splitlines():
        key, _, value = line.partition("=")
        name = key.rsplit(".", 1)[-1]
        for item in str(ast.literal_eval(value)).split():  # pip prints each value quoted; lists space-separated
            if item not in settings.setdefault(name, []):
                settings[name].append(item)
    return settings


def uv_arguments(settings: dict[str, list[str]]) -> list[str]:
    args = ["--index-strategy", "unsafe-best-match"]
    for option, flag in FLAGS.items():
        values = settings.get(option, [])
        if option == "index-url":
            values = values[:1]
        for value in values:
            args += [flag, value]
    if settings.get("no-index", ["0"])[0].lower() in ("1", "true", "yes", "on"):
        args.append("--no-index")
    return args


def main() -> None:
    python, *install = sys.argv[1:]
    settings = pip_settings(python)
    env = dict(os.environ)
    if settings.get("cert"):
        env["SSL_CERT_FILE"] = settings["cert"][0]
    if settings.get("default-timeout"):
        env["UV_HTTP_TIMEOUT"] = settings["default-timeout"][0]
    uv = str(Path(python).with_name("uv"))
    os.execve(uv, [uv, "pip", "install", "--python", python, *uv_arguments(settings), *install], env)


if __name__ == "__main__":
    main()

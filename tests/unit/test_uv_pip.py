"""tools/uv-pip (`make install`'s installer) hands uv the options `pip install` itself would run with: a pip.conf
and PIP_* variables, resolved by pip's option parser, become uv's flags and variables."""

from __future__ import annotations

import importlib.machinery
import importlib.util
import os

from support.paths import PROJECT


def load_tool():
    loader = importlib.machinery.SourceFileLoader("uv_pip", str(PROJECT / "tools" / "uv-pip"))
    spec = importlib.util.spec_from_loader("uv_pip", loader)
    module = importlib.util.module_from_spec(spec)
    loader.exec_module(module)
    return module


def test_pip_configuration_becomes_uv_arguments(tmp_path, monkeypatch):
    conf = tmp_path / "pip.conf"
    conf.write_text("[global]\nindex-url = https://mirror.example/simple\n"
                    "extra-index-url = file:///srv/a/simple file:///srv/b/simple\n"
                    "find-links = /srv/wheels\ncert = /srv/ca.pem\ntrusted-host = mirror.example\n"
                    "[install]\nconstraint = /srv/constraints.txt\n")
    for name in list(os.environ):
        if name.startswith("PIP_"):
            monkeypatch.delenv(name)
    # the machine's own pip.conf files are read too, but this file and the variables come last and win
    monkeypatch.setenv("PIP_CONFIG_FILE", str(conf))
    monkeypatch.setenv("PIP_DEFAULT_TIMEOUT", "77")
    monkeypatch.setenv("PYTHONDONTWRITEBYTECODE", "1")  # no process would write bytecode: uv writes it, as pip does
    tool = load_tool()
    options = tool.pip_install_options()
    assert tool.uv_arguments(options) == [
        "--index-strategy", "unsafe-best-match", "--compile-bytecode",
        "--index-url", "https://mirror.example/simple",
        "--extra-index-url", "file:///srv/a/simple", "--extra-index-url", "file:///srv/b/simple",
        "--find-links", "/srv/wheels",
        "--constraint", "/srv/constraints.txt",
        "--allow-insecure-host", "mirror.example",
    ]
    env = tool.uv_environment(options)
    assert env["SSL_CERT_FILE"] == "/srv/ca.pem" and env["UV_HTTP_TIMEOUT"] == "77"


def test_bytecode_is_left_to_python_where_python_writes_it(monkeypatch):
    monkeypatch.delenv("PYTHONDONTWRITEBYTECODE", raising=False)
    tool = load_tool()
    assert "--compile-bytecode" not in tool.uv_arguments(tool.pip_install_options())

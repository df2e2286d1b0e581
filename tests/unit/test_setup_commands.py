"""The README's two set-up commands do all the set-up: CI (`.ci/run`) is the README's test command plus what CI alone
needs, so anything `.ci/run` installs, `make test` installs too (its `install` and `test-deps` recipes, as make
expands them), and a fresh machine running `make test` gets it. The
last test shows the rule failing on a `.ci/run` that installs more than the Makefile."""

from __future__ import annotations

import re
import shlex
import subprocess
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
# a package manager's install command: apt-get / apt / pip / pip3 / python -m pip / uv pip / npm
INSTALL = re.compile(r"\b(?:apt-get|apt|pip3?|npm)\b(?:\s+-\S+)*\s+(?:install|add|i)\b(?P<args>[^;&|}\n]*)")


def readme_commands(readme: str) -> list[str]:
    """The commands of the README's first fenced code block (comments and blank lines left out)."""
    block = readme.split("```", 2)[1].split("\n", 1)[1]
    return [line.split("#", 1)[0].strip() for line in block.splitlines() if line.split("#", 1)[0].strip()]


def make_recipes(*targets: str) -> str:
    """What `make` would run for the targets, expanded by make itself (-n: nothing runs; -B: every recipe shown)."""
    return subprocess.run(["make", "-n", "-B", "--no-print-directory", *targets], cwd=ROOT, check=True,
                          capture_output=True, text=True).stdout


def installed_packages(script: str) -> set[str]:
    """Package names a shell text installs."""
    found: set[str] = set()
    for match in INSTALL.finditer(script.replace("\\\n", " ")):
        try:
            words = shlex.split(match.group("args"))
        except ValueError:
            words = match.group("args").split()
        found |= {w for w in words if not w.startswith(("-", "$", '"', "'")) and "=" not in w.split("==")[0]
                  and w not in (".", "install")}
    return found


def uninstalled_by_make(ci_run: str, make_test: str) -> set[str]:
    return installed_packages(ci_run) - installed_packages(make_test)


def test_readme_first_block_is_demo_then_test():
    assert readme_commands((ROOT / "README.md").read_text()) == ["make demo", "make test"]


def test_ci_runs_the_readme_test_command_last():
    commands = [line.strip() for line in (ROOT / ".ci" / "run").read_text().splitlines()
                if line.strip() and not line.strip().startswith("#")]
    test_command = readme_commands((ROOT / "README.md").read_text())[1]
    assert commands[-1].removeprefix("time ").strip() == test_command


def test_ci_installs_nothing_the_makefile_does_not():
    make_test = make_recipes("install", "test-deps")
    # the Makefile's own install lines are found (else the comparison would pass vacuously)
    assert {"chromium", "chromium-driver", "openjdk-17-jre-headless", "torch==2.13.0"} <= installed_packages(make_test)
    assert uninstalled_by_make((ROOT / ".ci" / "run").read_text(), make_test) == set()


def test_the_rule_fails_on_a_ci_that_installs_more():
    make_test = make_recipes("install", "test-deps")
    ci = ("#!/usr/bin/env bash\nset -e\n"
          "DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends chromium xvfb\n"
          "pip install --quiet duckdb-engine\ntime make test\n")
    assert uninstalled_by_make(ci, make_test) == {"xvfb", "duckdb-engine"}

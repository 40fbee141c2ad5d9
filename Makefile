# Two quick-start targets (see README): `make demo` runs the main job, `make test` runs the test suite.
# `make test-fast` skips the tests marked slow. The suite runs on both cores (pytest-xdist, -n 2).
# Both create .venv with Python 3.11+ and install vqaudit with its dev and report extras on first use.
# The browser tests (tests/report) also need Debian's chromium: `apt-get install -y chromium` (.ci/run does it).
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed

$(STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e '.[dev,report]'
	touch $(STAMP)

.PHONY: demo test test-fast lint
demo: $(STAMP)
	$(BIN)/vqaudit eval --out runs/demo

test: $(STAMP)
	$(BIN)/ruff check src tests benchmarks
	$(BIN)/mypy
	$(BIN)/python -m pytest -n 2

test-fast: $(STAMP)
	$(BIN)/python -m pytest -n 2 -m "not slow"

lint: $(STAMP)
	$(BIN)/ruff check src tests benchmarks
	$(BIN)/mypy

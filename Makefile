# Two quick-start targets (see README): `make demo` runs the main job, `make test` runs the test suite.
# Both create .venv with Python 3.11+ and install vqaudit with its dev and hf extras on first use.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed

$(STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	# torch first, pinned: this machine's pip finds the CPU wheel of 2.13.0 (an unpinned torch is a multi-GB
	# CUDA build); then the hf extra, so the hf backend tests run.
	$(BIN)/python -m pip install --quiet torch==2.13.0
	$(BIN)/python -m pip install --quiet -e '.[dev,hf]'
	touch $(STAMP)

.PHONY: demo test lint
demo: $(STAMP)
	$(BIN)/vqaudit eval --out runs/demo

test: $(STAMP)
	$(BIN)/ruff check src tests benchmarks
	$(BIN)/mypy
	$(BIN)/python -m pytest

lint: $(STAMP)
	$(BIN)/ruff check src tests benchmarks
	$(BIN)/mypy

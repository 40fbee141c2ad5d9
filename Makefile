# Two quick-start targets (see README): `make demo` runs the main job, `make test` runs the test suite.
# `make test-fast` skips the tests marked slow. The suite runs on both cores (pytest-xdist, -n 2).
# Both create .venv with Python 3.11+ and install vqaudit with its dev, report, hf, ocr, inspect, parquet and ray extras on first use (the
# demo runs the OCR chart reader, baseline:chart-reader, beside the reference policies).
# --dist loadgroup keeps the Ray tests (tests/test_ray.py, xdist_group "ray") on one worker: one Ray instance.
# The browser tests (tests/report) also need Debian's chromium: `apt-get install -y chromium` (.ci/run does it).
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
	$(BIN)/python -m pip install --quiet -e '.[dev,report,hf,ocr,inspect,parquet,ray]'
	touch $(STAMP)

.PHONY: demo test test-fast lint
demo: $(STAMP)
	$(BIN)/vqaudit eval --out runs/demo

test: $(STAMP)
	$(BIN)/ruff check src tests benchmarks scripts
	$(BIN)/ruff format --check src tests benchmarks scripts
	$(BIN)/mypy
	$(BIN)/lint-imports
	$(BIN)/python -m pytest -n 2 --dist loadgroup

test-fast: $(STAMP)
	$(BIN)/python -m pytest -n 2 --dist loadgroup -m "not slow"

lint: $(STAMP)
	$(BIN)/ruff check src tests benchmarks scripts
	$(BIN)/ruff format --check src tests benchmarks scripts
	$(BIN)/mypy
	$(BIN)/lint-imports

# Two quick-start targets (see README): `make demo` runs the main job, `make test` runs the test suite.
# Both create .venv with Python 3.11+ and install vqaudit with its dev and ocr extras on first use (the demo runs
# the OCR chart reader, baseline:chart-reader, and its tests need it).
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed

$(STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e '.[dev,ocr]'
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

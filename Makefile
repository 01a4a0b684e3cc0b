# The two commands of the quick start: `make demo` and `make test`.
#
# Outside a virtual environment both install into the project's own `.venv` (created on
# first use): Debian 12 and Ubuntu 24.04 refuse `pip install` into the system Python
# (PEP 668, "externally-managed-environment"). Inside one (activated, or
# `make PYTHON=path/to/venv/bin/python`) they install into that one.
PYTHON ?= python3
VENV := .venv
IN_VENV := $(shell $(PYTHON) -c 'import sys; print(sys.prefix != sys.base_prefix)' 2>/dev/null)
ifeq ($(IN_VENV),True)
PY := $(PYTHON)
ENV_DIR := $(shell $(PYTHON) -c 'import sys; print(sys.prefix)')
NEW_VENV :=
else
PY := $(CURDIR)/$(VENV)/bin/python
ENV_DIR := $(CURDIR)/$(VENV)
NEW_VENV := $(PY)
endif
# Tools the tests look up by name (moto_server, hadolint) come with the environment.
export PATH := $(ENV_DIR)/bin:$(PATH)
PIP := $(PY) -m pip --disable-pip-version-check
export HF_HUB_OFFLINE := 1
export HF_DATASETS_OFFLINE := 1
export TRANSFORMERS_OFFLINE := 1

.PHONY: venv install install-demo wheels services models demo test lint unit bench

# A stock Debian/Ubuntu Python has `venv` but not `ensurepip` until python3-venv is
# installed; say so instead of leaving a half-made .venv behind.
$(CURDIR)/$(VENV)/bin/python:
	@$(PYTHON) -c 'import sys' 2>/dev/null || { echo "make: no $(PYTHON) (Python >= 3.11) found" >&2; exit 1; }
	@$(PYTHON) -c 'import ensurepip' 2>/dev/null || { \
	  echo "make: $(PYTHON) cannot create $(VENV): its ensurepip module is missing." >&2; \
	  echo "  On Debian/Ubuntu: sudo apt install python3-venv" \
	    "(for this Python: $$($(PYTHON) -c 'import sys; print("python3.%d-venv" % sys.version_info[1])'))," >&2; \
	  echo "  or run make inside a virtual environment of your own." >&2; \
	  exit 1; }
	$(PYTHON) -m venv $(VENV) || { rm -rf $(VENV); exit 1; }

venv: $(NEW_VENV)

# Installs are stamped inside the environment, so a second `make demo` starts at once; a
# change to pyproject.toml installs again. torch first and exactly: any other request pulls
# several GB of CUDA wheels.
$(ENV_DIR)/.uxmon-demo: pyproject.toml | $(NEW_VENV)
	$(PIP) install --quiet torch==2.13.0
	$(PIP) install --quiet -e '.[demo]'
	@touch $@

# What the tests need: the demo's packages plus the dev tools.
$(ENV_DIR)/.uxmon-dev: pyproject.toml $(ENV_DIR)/.uxmon-demo
	$(PIP) install --quiet -e '.[demo,dev]'
	@touch $@

install-demo: $(ENV_DIR)/.uxmon-demo
install: $(ENV_DIR)/.uxmon-dev

# `make wheels WHEELHOUSE=dir` puts into dir the wheel of every package that `make demo`
# installs, resolved against the index as its install resolves, and of the build backend its
# editable install needs. `PIP_NO_INDEX=1 PIP_FIND_LINKS=dir make demo` then installs without
# a download (CI's quick-start test does). Not with the index in reach: pip (>= 21) then
# downloads again a version that it also finds in --find-links.
WHEELHOUSE ?=
wheels: | $(NEW_VENV)
	@test -n "$(WHEELHOUSE)" || { echo "make: wheels needs WHEELHOUSE=dir" >&2; exit 1; }
	mkdir -p '$(WHEELHOUSE)'
	$(PY) -c 'import tomllib; print(*tomllib.load(open("pyproject.toml", "rb"))["build-system"]["requires"], sep="\n")' \
	  > '$(WHEELHOUSE)/build-requires.txt'
	$(PIP) wheel --quiet -w '$(WHEELHOUSE)' -r '$(WHEELHOUSE)/build-requires.txt'
	$(PIP) wheel --quiet -w '$(WHEELHOUSE)' torch==2.13.0 '.[demo]'
	rm -f '$(WHEELHOUSE)'/uxmon-*.whl  # the project itself installs from its checkout

# Prometheus, Alertmanager and promtool for the integration and rule tests, stunnel for the
# TLS test, Chromium and a font for the HTML report's browser test (Debian packages).
services:
	@command -v promtool >/dev/null && command -v prometheus-alertmanager >/dev/null \
	  && command -v stunnel4 >/dev/null && command -v chromium >/dev/null || { \
	  apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq \
	    --no-install-recommends prometheus prometheus-alertmanager stunnel4 \
	    chromium fonts-liberation >/dev/null; }

# Assemble/convert the bundled weights once into ~/.cache/uxmon/models (a no-op after).
models: install-demo
	$(PY) -m stream.cli models prepare

# DEMO_ARGS: options of `uxmon demo`, e.g. DEMO_ARGS="--headless --duration 60".
DEMO_ARGS ?=
demo: models
	$(PY) -m stream.cli demo $(DEMO_ARGS)

lint: install
	$(PY) -m ruff check .
	$(PY) -m mypy

# TEST_WORKERS: pytest processes (pytest-xdist); each takes whole test files, so a file's
# services and models start once. Two fit a 2-core, 24 GiB machine: 22.7 min for the suite
# on two (2026-12-03), about 37 on one (the CI run before).
TEST_WORKERS ?= 2
test: services install models lint
	$(PY) -m pytest -n $(TEST_WORKERS) --dist loadfile

unit: install
	$(PY) -m pytest tests/stream tests/benchmark -m "not integration and not models"

bench: install models
	$(PY) bench/pipeline.py
	$(PY) bench/scale_out.py
	$(PY) bench/timers.py
	$(PY) bench/ux_judge.py
	$(PY) bench/grm.py
	$(PY) bench/memory.py

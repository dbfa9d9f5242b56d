# SteerBench-Work analysis: `make paper` rebuilds the paper, `make test` runs the tests.
# Each target creates the project virtual environment (.venv) by itself when needed.

PYTHON ?= $(shell command -v python3.11 || command -v python3)
VENV := .venv
PY := $(VENV)/bin/python
RELEASE_DIR ?= $(abspath ../shared/steerbench-work)
export RELEASE_DIR

ENV_STAMP := $(VENV)/.installed
DATA_STAMP := data/.imported
PAPER_STAMP := paper/.built
PAPER_INPUTS := $(shell find analysis notebooks figures data/runs -type f \
	-not -path '*/__pycache__/*' -not -path '*/.ipynb_checkpoints/*' 2>/dev/null) \
	pyproject.toml requirements.lock

.PHONY: all env data paper test lint lab export clean

all: paper

env: $(ENV_STAMP)

$(ENV_STAMP): pyproject.toml requirements.lock
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --disable-pip-version-check -c requirements.lock -e '.[dev]'
	touch $@

# Import the release from RELEASE_DIR into data/ (verifying every checksum).
data: $(ENV_STAMP)
	$(PY) -m analysis.release import

$(DATA_STAMP): | $(ENV_STAMP)
	$(PY) -m analysis.release import

paper: $(PAPER_STAMP)

$(PAPER_STAMP): $(ENV_STAMP) $(DATA_STAMP) $(PAPER_INPUTS)
	$(PY) -m analysis.build

# The tests install the inspect extra so its tests run; `make test WITH_INSPECT=0` leaves
# it out (its tests are then skipped; a fresh VENV=... tests the base install alone).
WITH_INSPECT ?= 1
INSPECT_STAMP := $(VENV)/.installed-inspect

$(INSPECT_STAMP): $(ENV_STAMP)
	$(PY) -m pip install --quiet --disable-pip-version-check -c requirements.lock -e '.[dev,inspect]'
	touch $@

test: $(ENV_STAMP) $(DATA_STAMP) $(if $(filter 1,$(WITH_INSPECT)),$(INSPECT_STAMP))
	$(PY) -m pytest

lint: $(ENV_STAMP)
	$(VENV)/bin/ruff check analysis tests benchmarks
	$(VENV)/bin/ruff format --check analysis tests benchmarks

lab: $(ENV_STAMP) $(DATA_STAMP)
	$(VENV)/bin/jupyter lab --notebook-dir=notebooks

# Tidy trials, cells, conditions and scenarios as Parquet and CSV under data/processed/.
export: $(ENV_STAMP) $(DATA_STAMP)
	$(PY) -m analysis.export

clean:
	rm -rf paper data/processed

# --- Gate runner ----------------------------------------------------------------------
# `make run GATE=surface-flag` runs a gate into data/runs/local/<gate> (resumable), where the
# per-trial notebooks find it;
# extra steerbench-run options go in RUN_ARGS, e.g.
# RUN_ARGS="--base-url http://127.0.0.1:8000/v1 --model NAME" with GATE=endpoint.
# `make reference-runs` regenerates data/runs/reference-gates/trials.csv.
GATE ?= always-hold
OUT ?= data/runs/local/$(GATE)
RUN_ARGS ?=
REFERENCE_ROOT := $(shell mktemp -u /tmp/steerbench-reference-XXXXXX)

.PHONY: run reference-runs

run: $(ENV_STAMP) $(DATA_STAMP)
	$(VENV)/bin/steerbench-run --gate $(GATE) --out $(OUT) $(RUN_ARGS)

reference-runs: $(ENV_STAMP) $(DATA_STAMP)
	for gate in always-hold always-proceed surface-flag; do \
		$(VENV)/bin/steerbench-run --gate $$gate --out $(REFERENCE_ROOT) \
			--run-id reference-gates --trials 5 --no-progress || exit 1; \
	done
	$(VENV)/bin/steerbench-run export-tidy $(REFERENCE_ROOT) data/runs/reference-gates/trials.csv
	rm -rf $(REFERENCE_ROOT)

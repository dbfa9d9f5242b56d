# SteerBench-Work analysis: `make paper` rebuilds the paper, `make test` runs the tests.
# Each target creates the project virtual environment (.venv) by itself when needed.

PYTHON ?= $(shell command -v python3.11 || command -v python3)
VENV := .venv
PY := $(VENV)/bin/python
RELEASE_DIR ?= $(abspath ../shared/steerbench-work)
export RELEASE_DIR

ENV_STAMP := $(VENV)/.installed
# `data` and `paper` are decided by content, not by make's timestamps: analysis.paper.make
# re-imports when the release's location or pinned content differs from the imported one,
# and rebuilds when the digest of every input differs from the one paper/.built records.
IDENTITY := $(PY) -m analysis.paper.make
LAB_PORT ?= $(or $(STEERBENCH_LAB_PORT),8888)
LAB_ROOT := $(shell [ "$$(id -u)" = 0 ] && echo --allow-root)

.PHONY: all env data paper test test-all docs lint strip lab export clean

all: paper

env: $(ENV_STAMP)

$(ENV_STAMP): pyproject.toml requirements.lock
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --disable-pip-version-check -c requirements.lock -e '.[dev]'
	touch $@

# Import the release from RELEASE_DIR into data/ (verifying every pinned hash) unless
# exactly that release is imported already.
data: $(ENV_STAMP)
	@$(IDENTITY) data

# Build paper/ from the release at RELEASE_DIR, unless nothing it reads has changed.
paper: $(ENV_STAMP)
	@$(IDENTITY) paper

# The tests install the inspect extra so its tests run; `make test WITH_INSPECT=0` leaves
# it out (its tests are then skipped; a fresh VENV=... tests the base install alone).
WITH_INSPECT ?= 1
INSPECT_STAMP := $(VENV)/.installed-inspect
TEST_ENV := $(if $(filter 1,$(WITH_INSPECT)),$(INSPECT_STAMP))

$(INSPECT_STAMP): $(ENV_STAMP)
	$(PY) -m pip install --quiet --disable-pip-version-check -c requirements.lock -e '.[dev,inspect]'
	touch $@

# The documentation site, offline, into docs/_build/html (warnings are errors). Its JupyterLab
# page runs the starter notebook on the imported release, so the release is imported first.
# make test-all builds it too (tests/test_docs.py), so it installs the docs extra.
DOCS_STAMP := $(VENV)/.installed-docs

$(DOCS_STAMP): $(ENV_STAMP)
	$(PY) -m pip install --quiet --disable-pip-version-check -c requirements.lock -e '.[dev,docs]'
	touch $@

docs: data $(DOCS_STAMP)
	$(PY) -m sphinx -W --keep-going -q -b html docs docs/_build/html

# The fast tier (one shared build); `make test-all` adds the slow checks (marker "slow").
# Test files run on TEST_WORKERS processes (pytest-xdist; the tests reading paper/ together,
# beside the build, handed out first); TEST_WORKERS=0 runs them in one.
TEST_WORKERS ?= 2
PYTEST := $(PY) -m pytest -n $(TEST_WORKERS) --dist loadgroup --no-loadscope-reorder

test: data $(TEST_ENV)
	$(PYTEST) -m "not slow"

test-all: data $(TEST_ENV) $(DOCS_STAMP)
	$(PYTEST)

# Ruff over the package, the tests, the benchmarks and the notebooks; notebooks must be
# committed without outputs (`make strip` strips them).
LINTED := analysis tests benchmarks notebooks

lint: $(ENV_STAMP)
	$(VENV)/bin/ruff check $(LINTED)
	$(VENV)/bin/ruff format --check $(LINTED)
	$(PY) -m analysis.paper.notebooks --check notebooks/*.ipynb

# Strip every notebook of outputs, execution counts and run metadata, in place.
strip: $(ENV_STAMP)
	$(PY) -m analysis.paper.notebooks notebooks/*.ipynb

# Headless JupyterLab on port $(LAB_PORT) (STEERBENCH_LAB_PORT or LAB_PORT=...); open the
# URL it prints. As root (the usual case in containers) it adds --allow-root. The Lab's root
# is the project: explore/ (your notebooks, never built, tested or linted), notebooks/ (the
# paper's sections) and paper/notebooks/ (the last build's executed notebooks); it opens on
# explore/start-here.ipynb.
lab: data
	$(VENV)/bin/jupyter lab --no-browser --ip=127.0.0.1 --port=$(LAB_PORT) $(LAB_ROOT) \
		--ServerApp.root_dir=. --ServerApp.default_url=/lab/tree/explore/start-here.ipynb

# Tidy trials, cells, conditions and scenarios as Parquet and CSV under data/processed/.
export: data
	$(PY) -m analysis.exploring.export

clean:
	rm -rf paper paper.previous paper.failed paper.staging data/processed data/.checked-inputs data/.*notebook-seconds.json* docs/_build

# --- Gate runner ----------------------------------------------------------------------
# `make run GATE=surface-flag` runs a gate into data/runs/local/<gate> (resumable), where the
# per-trial notebooks find it;
# extra steerbench-run options go in RUN_ARGS, e.g.
# RUN_ARGS="--base-url http://127.0.0.1:8000/v1 --model NAME" with GATE=endpoint.
# `make reference-runs` remakes data/runs/reference-policies/trials.csv for the imported
# release (importing a release does so too when its inputs give another table).
GATE ?= always-hold
OUT ?= data/runs/local/$(GATE)
RUN_ARGS ?=

.PHONY: run reference-runs

run: data
	$(VENV)/bin/steerbench-run --gate $(GATE) --out $(OUT) $(RUN_ARGS)

reference-runs: data
	$(PY) -m analysis.runner.reference

# --- Comparing two releases -------------------------------------------------------------
# `make compare BASE=<release dir> HEAD=<release dir>` builds each release in its own folder
# under compare/.builds/ (reused while nothing it reads changes) and writes
# compare/<base>..<head>/: index.html, changes.json and CSV tables.
.PHONY: compare

compare: $(ENV_STAMP)
	@test -n "$(BASE)" -a -n "$(HEAD)" || { echo "error: make compare needs BASE=<release dir> HEAD=<release dir>" >&2; exit 2; }
	@$(PY) -m analysis.compare "$(BASE)" "$(HEAD)"

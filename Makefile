# The two commands of the README. Both create .venv (if missing) and install the package into it.
PY ?= python3
VENV ?= .venv
BIN := $(VENV)/bin
# real data for CI and development (no network): the shared folder beside the repository
DATA_MIRROR ?= ../shared/data

.PHONY: run test test-all setup setup-test setup-docs docs lint bench clean ci-workflow refresh-expected

$(BIN)/python:
	$(PY) -m venv $(VENV)
	$(BIN)/python -m pip install --upgrade pip

# the peers extra: graphlearning (Laplace and Poisson learning), whose comparison the main job's report shows
setup: $(BIN)/python
	$(BIN)/python -m pip install -e '.[peers]'

setup-test: $(BIN)/python
	$(BIN)/python -m pip install -e '.[test]'

## Set up and run the main job (default profile, embedded UCI Multiple Features data).
run: setup
	$(BIN)/snakemake --profile profiles/default

## Set up and run the tests: ruff (style and errors, pyproject.toml), the fast tests, then the slow ones.
test: setup-test
	$(BIN)/ruff check .
	$(BIN)/python -m pytest
	$(BIN)/python -m pytest -m slow

setup-docs: $(BIN)/python
	$(BIN)/python -m pip install -e '.[docs]'

## Build the documentation site offline into docs/_build/html (warnings are errors; the gallery runs its
## examples), then check that every internal link and anchor of the built pages exists.
docs: setup-docs
	$(BIN)/python -m sphinx -W --keep-going -n -b html docs docs/_build/html
	$(BIN)/python docs/check_links.py docs/_build/html

lint: setup-test
	$(BIN)/ruff check .
	$(BIN)/snakemake --lint

## Every benchmark, one table of ratios (tens of minutes; see benchmarks/README.md). BENCH_ARGS=--quick: smoke run.
bench: setup-test
	$(BIN)/python benchmarks/run_all.py $(BENCH_ARGS)

## The CI profile, then the results-regression check against results/expected/ci/ and the index page's links.
ci-workflow: setup
	$(BIN)/snakemake --profile profiles/ci --config 'data={mirror: $(DATA_MIRROR), offline: true}'
	$(BIN)/python -m mvl.workflow.regression --summary results/mfeat/summary.csv --expected results/expected/ci/mfeat_summary.csv
	$(BIN)/python -m mvl.workflow.index check results/index.html

## Rewrite the expected CI results on purpose (after an intended change of numbers); commit the diff.
refresh-expected: setup
	$(BIN)/snakemake --profile profiles/ci --config 'data={mirror: $(DATA_MIRROR), offline: true}'
	mkdir -p results/expected/ci
	cp results/mfeat/summary.csv results/expected/ci/mfeat_summary.csv
	git --no-pager diff --stat -- results/expected

clean:
	rm -rf results .snakemake docs/_build docs/auto_examples docs/api/generated docs/sg_execution_times.rst

PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed
# `make run` installs what running needs; the test extras (pytest, mypy, ruff...) come
# with the targets that use them.
RUN_STAMP := $(VENV)/.installed-run

.PHONY: run test test-fast lint mypy pytest install clean bench docs docs-reference docs-serve

$(BIN)/python:
	$(PYTHON) -m venv $(VENV)

$(RUN_STAMP): pyproject.toml | $(BIN)/python
	$(BIN)/pip install --quiet --upgrade pip
	$(BIN)/pip install --quiet -e '.[charts]'
	touch $(RUN_STAMP)

$(STAMP): pyproject.toml | $(BIN)/python
	$(BIN)/pip install --quiet --upgrade pip
	$(BIN)/pip install --quiet -e '.[test,docs,charts]'
	touch $(STAMP) $(RUN_STAMP)

install: $(STAMP)

run: $(RUN_STAMP)
	$(BIN)/trendbot run

lint: $(STAMP)
	$(BIN)/ruff check bot tests bench scripts
	$(BIN)/ruff format --check bot tests bench scripts

mypy: $(STAMP)
	$(BIN)/mypy

# The suite in lanes at once (tests/lanes.py): the end-to-end tests, which mostly wait on
# real processes and clocks, one lane per store; everything else beside them, dealt out
# test by test among four lanes at the lowest CPU priority.
pytest: $(STAMP)
	$(BIN)/python -m tests.lanes

# The documentation site into site/: the reference pages must be what the code generates
# (`make docs-reference` rewrites them), and every link and page is checked (--strict).
docs: $(STAMP)
	$(BIN)/python scripts/gen_docs.py --check
	NO_MKDOCS_2_WARNING=1 $(BIN)/mkdocs build --strict --quiet --site-dir site

docs-reference: $(STAMP)
	$(BIN)/python scripts/gen_docs.py

docs-serve: $(STAMP)
	$(BIN)/mkdocs serve

test: lint mypy docs pytest

# The unit tests (the pure stages; the command core on a SQLite file), for the edit loop.
test-fast: $(STAMP)
	$(BIN)/pytest -q tests/unit

bench: $(STAMP)
	$(BIN)/python bench/scan.py

clean:
	rm -rf $(VENV) data site .pytest_cache .mypy_cache .ruff_cache

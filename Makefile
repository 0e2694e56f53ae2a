# Two commands for a fresh machine: `make run` and `make test`.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed

.PHONY: run test test-fast lint typecheck bench screenshots db-upgrade clean

$(STAMP): pyproject.toml
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install -q --upgrade pip
	$(BIN)/python -m pip install -q -e '.[dev]'
	touch $(STAMP)

db-upgrade: $(STAMP)
	$(BIN)/flask --app app db upgrade

run: db-upgrade
	$(BIN)/flask --app app run --host 127.0.0.1 --port 5000

lint: $(STAMP)
	$(BIN)/ruff check .

typecheck: $(STAMP)
	$(BIN)/mypy

test: lint typecheck
	$(BIN)/pytest

# The quick loop: everything but the tests marked slow (browser, PostgreSQL, builds).
test-fast: lint typecheck
	$(BIN)/pytest -q -m "not slow"

screenshots: $(STAMP)
	SAVE_SCREENSHOTS=1 $(BIN)/pytest -q tests/browser

bench: $(STAMP)
	$(BIN)/python -m bench

clean:
	rm -rf $(VENV) .pytest_cache .ruff_cache .hypothesis

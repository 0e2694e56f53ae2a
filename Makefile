# Two commands for a fresh machine: `make run` and `make test`.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed

.PHONY: run test test-fast lint typecheck bench bench-load bench-scaling screenshots db-upgrade clean verifier

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

# The standalone verifier (a reproducible zipapp); prints its SHA-256.
verifier: $(STAMP)
	$(BIN)/python -m sota_casino.verify.build verify.pyz

bench: $(STAMP)
	$(BIN)/python -m bench

# The JSON API under gunicorn on SQLite and PostgreSQL beside a bare one-insert baseline (~4 min).
bench-load: $(STAMP)
	$(BIN)/python -m bench load --write-docs

bench-scaling: $(STAMP)
	$(BIN)/python -m bench scaling

clean:
	rm -rf $(VENV) .pytest_cache .ruff_cache .hypothesis

# Two commands for a fresh machine: `make run` and `make test`.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed

.PHONY: run test test-fast lint typecheck bench bench-load bench-scaling screenshots db-upgrade clean verifier \
	translations translations-extract translations-update

$(STAMP): pyproject.toml
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install -q --upgrade pip
	$(BIN)/python -m pip install -q -e '.[dev]'
	touch $(STAMP)

# --- the players' languages: English is the source; each other language has a catalogue. ---
LANGS := fi nb pt
CATALOGUES := sota_casino/translations
POT := build/messages.pot
PO := $(foreach lang,$(LANGS),$(CATALOGUES)/$(lang)/LC_MESSAGES/messages.po)
MO := $(PO:.po=.mo)
# Setup is the installed venv plus the compiled catalogues: the app serves from the .mo files.
SETUP := $(STAMP) $(MO)

# A catalogue is compiled again whenever its .po changes (the .mo files are not committed).
$(CATALOGUES)/%/LC_MESSAGES/messages.mo: $(CATALOGUES)/%/LC_MESSAGES/messages.po $(STAMP)
	$(BIN)/pybabel -q compile -d $(CATALOGUES) -l $* -i $<

# Every marked string of the templates, the Python and the scripts, into a template (not kept:
# it is made again from the sources). Locations name the file only, so moving code changes
# no catalogue.
translations-extract: $(STAMP)
	mkdir -p build
	$(BIN)/pybabel -q extract -F babel.cfg -k N_ -k Nn_:1,2 --no-wrap --sort-by-file --add-location=file \
		--project "Sota Casino" --copyright-holder "Sota Casino" -o $(POT) .

# New strings go into the catalogues (to translate), a changed one is marked fuzzy and a
# removed one goes. One language: `make translations-update LANGS=fi`.
translations-update: translations-extract
	for lang in $(LANGS); do \
		$(BIN)/pybabel -q update --no-wrap --ignore-obsolete -i $(POT) -d $(CATALOGUES) -l $$lang \
			|| exit 1; \
	done

translations: $(MO)

db-upgrade: $(SETUP)
	$(BIN)/flask --app app db upgrade

# Served as in production, by gunicorn (gunicorn.conf.py), on this computer only; two workers
# unless WEB_CONCURRENCY says otherwise (the production default, 2 x cores + 1, is for a server).
# It answers for this computer's own names only (a page of another site whose name is made to
# point at 127.0.0.1 is refused), unless TRUSTED_HOSTS in the environment says otherwise.
RUN_PORT ?= 5000
WEB_CONCURRENCY ?= 2
TRUSTED_HOSTS ?= 127.0.0.1,localhost
run: db-upgrade
	HOST=127.0.0.1 PORT=$(RUN_PORT) WEB_CONCURRENCY=$(WEB_CONCURRENCY) TRUSTED_HOSTS=$(TRUSTED_HOSTS) \
		$(BIN)/gunicorn wsgi:app

lint: $(SETUP)
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .

typecheck: $(SETUP)
	$(BIN)/mypy

# The tests' scratch files are in memory where the machine has room for them (/dev/shm with
# 1 GiB free; a full run leaves about 450 MB and pytest keeps the last three): on disk each
# commit of a test's SQLite database waits for the disk (synchronous=FULL). A container's 64 MB
# /dev/shm would fill up, so the usual temporary folder serves there. And Python keeps the
# sources' and tests' compiled code between runs even where the environment says not to
# (PYTHONDONTWRITEBYTECODE): each process, and each server or command a test starts, compiled
# them all again.
SCRATCH = $(or $(shell df --output=avail -B1M /dev/shm 2>/dev/null \
	| awk 'NR == 2 && $$1 >= 1024 { print "/dev/shm" }'),$(TMPDIR))
TEST_ENV = TMPDIR=$(SCRATCH) PYTHONDONTWRITEBYTECODE=

# The tests run in one process per core (pytest-xdist), each with its own PostgreSQL database
# and its own live server for the browser tests. A process that is done takes tests from a busy
# one (worksteal), so a long file does not keep one process at work while the other waits.
# `make test WORKERS=0` runs them in this one process.
WORKERS ?= auto
PYTEST := $(BIN)/pytest -n $(WORKERS) --dist worksteal

test: lint typecheck $(SETUP)
	$(TEST_ENV) $(PYTEST)

# The quick loop: the unit tests, and the web and service tests on SQLite, in English and
# Finnish. It leaves out what tests/conftest.py marks slow: every PostgreSQL run, the browser
# tests, the Norwegian and Portuguese runs of tests run in every language, and the servers,
# processes, builds, migrations and long searches listed there. A little over a minute on two
# cores (2,859 tests in 69 to 70 s on a machine where they took 80 s before the Dec 07 changes;
# `make test` 13 to 14 minutes there).
test-fast: lint typecheck $(SETUP)
	$(TEST_ENV) $(PYTEST) -q -m "not slow"

screenshots: $(SETUP)
	SAVE_SCREENSHOTS=1 $(BIN)/pytest -q tests/browser

# The standalone verifier (a reproducible zipapp); prints its SHA-256.
verifier: $(SETUP)
	$(BIN)/python -m sota_casino.verify.build verify.pyz

bench: $(SETUP)
	$(BIN)/python -m bench

# The JSON API under gunicorn on SQLite and PostgreSQL beside a bare one-insert baseline (~4 min).
bench-load: $(SETUP)
	$(BIN)/python -m bench load --write-docs

bench-scaling: $(SETUP)
	$(BIN)/python -m bench scaling

clean:
	rm -rf $(VENV) .pytest_cache .ruff_cache .hypothesis

"""Shared fixtures: a migrated database per test, on SQLite and (where it answers) PostgreSQL.

SQLite tests get a copy of a file migrated once per run (the same schema as migrating anew,
a tenth of the time). PostgreSQL tests run in a database of their own, created for the test
run and dropped after it; each test starts from empty tables. Without a server they skip with
a clear message, or fail when ``REQUIRE_POSTGRES=1`` (CI).

Passwords are hashed with cheap argon2id parameters in this process, except in the tests
marked ``owasp_hashing``, which check the production parameters themselves; the servers the
tests start (gunicorn, the browser's live server, workers) hash as production does.

The apps of this process share their compiled URL builders, templates and SQL
(``shared_compiles``): most of building an app per test, and of its first pages and
statements, was compiling the same code again.
"""

from __future__ import annotations

import gc
import os
from collections.abc import Iterator
from pathlib import Path

import pytest
import sqlalchemy as sa
from app_support import app_config
from app_support import assert_books_hold
from app_support import copy_of_template
from argon2 import PasswordHasher
from flask import Flask
from hypothesis import settings
from shared_compiles import share_compiled_code
from sqlalchemy.orm import Session

from sota_casino import migrate
from sota_casino.factory import create_app
from sota_casino.services import accounts

POSTGRES_ADMIN_URL = os.environ.get(
    "TEST_POSTGRES_URL", "postgresql+psycopg://postgres@127.0.0.1:5432/test"
)
TEST_PASSWORD = "correct horse battery"

share_compiled_code()
# Each test builds an app of many objects; at the default threshold the collector ran every few
# hundred allocations and walked them all again, about a tenth of the quick loop's time.
gc.set_threshold(50_000, 50, 1_000)
# Hypothesis fails an example that takes over 200 ms; on a machine whose two cores also run
# the other worker, a browser and PostgreSQL, a shuffle of five decks once took 287 ms (and
# 0.45 ms when tried again). Speed is measured in bench/, beside a baseline, never asserted.
settings.register_profile("no_deadline", deadline=None)
settings.load_profile("no_deadline")


@pytest.fixture(scope="session")
def postgres_database() -> Iterator[str]:
    """A fresh, migrated PostgreSQL database for this test run."""
    admin = sa.create_engine(POSTGRES_ADMIN_URL, isolation_level="AUTOCOMMIT")
    try:
        with admin.connect() as connection:
            connection.execute(sa.text("SELECT 1"))
    except sa.exc.OperationalError as exc:
        admin.dispose()
        message = f"PostgreSQL does not answer at {POSTGRES_ADMIN_URL}: {exc.orig}"
        if os.environ.get("REQUIRE_POSTGRES") == "1":
            pytest.fail(f"REQUIRE_POSTGRES=1 but {message}")
        pytest.skip(f"{message} (set TEST_POSTGRES_URL, or REQUIRE_POSTGRES=1 to fail instead)")
    admin.dispose()
    with migrate.scratch_postgres(POSTGRES_ADMIN_URL, f"sota_test_{os.getpid()}") as url:
        yield url


def _empty_postgres(url: str) -> None:
    """Delete every row and restart every sequence. A test leaves a few rows, and deleting them
    takes a quarter of the time of TRUNCATE, which makes new files for each table and index.
    The replica role skips the triggers: the append-only tables' refusals and the foreign keys
    (every table is emptied, in any order)."""
    engine = sa.create_engine(url, poolclass=sa.pool.NullPool)
    with engine.begin() as connection:
        tables = connection.execute(
            sa.text(
                "SELECT tablename FROM pg_tables WHERE schemaname = 'public' "
                "AND tablename <> 'alembic_version'"
            )
        ).scalars()
        sequences = connection.execute(
            sa.text("SELECT sequencename FROM pg_sequences WHERE schemaname = 'public'")
        ).scalars()
        statements = [f'DELETE FROM "{table}"' for table in tables]
        statements += [f'ALTER SEQUENCE "{sequence}" RESTART' for sequence in sequences]
        connection.execute(sa.text("SET LOCAL session_replication_role = replica"))
        connection.execute(sa.text("; ".join(statements)))
    engine.dispose()


@pytest.fixture(scope="session")
def migrated_template(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A SQLite file migrated to head once per run, copied for each test."""
    path = tmp_path_factory.mktemp("template") / "casino.db"
    migrate.upgrade(f"sqlite:///{path}")
    return path


@pytest.fixture(params=["sqlite", "postgres"])
def db_url(request: pytest.FixtureRequest, tmp_path: Path) -> str:
    """A migrated, empty database: a copy of the migrated SQLite file, or the run's PostgreSQL
    database emptied."""
    if request.param == "sqlite":
        return copy_of_template(request.getfixturevalue("migrated_template"), tmp_path)
    url = request.getfixturevalue("postgres_database")
    _empty_postgres(url)
    return url


#: argon2id at its minimum cost: a hash in well under a millisecond instead of tens of them.
QUICK_HASHER = PasswordHasher(time_cost=1, memory_cost=8, parallelism=1)
#: The hash a login with an unknown name is checked against, at the same cost as the players'.
QUICK_STAND_IN_HASH = QUICK_HASHER.hash("no account has this name")


@pytest.fixture(autouse=True)
def quick_password_hashing(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> None:
    """Hash with :data:`QUICK_HASHER` unless the test is marked ``owasp_hashing``. Verifying
    reads the parameters from the hash, so a hash of either kind checks as it would. A login
    with an unknown name checks a stand-in hash of the same cheap cost: the production one took
    8 ms a check, about 500 times in the quick loop."""
    if not request.node.get_closest_marker("owasp_hashing"):
        monkeypatch.setattr(accounts, "HASHER", QUICK_HASHER)
        monkeypatch.setattr(accounts, "STAND_IN_HASH", QUICK_STAND_IN_HASH)


@pytest.fixture
def app(request: pytest.FixtureRequest, db_url: str, tmp_path: Path) -> Iterator[Flask]:
    """The test's app on its own database, whose books must hold after the test (unless it
    tampers with them on purpose)."""
    app = create_app(app_config(db_url, tmp_path))
    yield app
    if not request.node.get_closest_marker("tampers"):
        assert_books_hold(app)
    app.extensions["sota_casino.engine"].dispose()


@pytest.fixture
def session(app: Flask) -> Iterator[Session]:
    """A session of the app's own sessionmaker (carrying its settings and key)."""
    with app.app_context():
        db_session = app.extensions["sota_casino.sessionmaker"]()
        yield db_session
        db_session.close()


# --- what ``make test-fast`` leaves out (``make test`` runs everything) ---------------------
# Every PostgreSQL run of a test (its SQLite twin stays), the browser tests, and the files and
# tests below, each with why. What they check is checked more cheaply in the quick loop where
# said; the rest (servers, processes, builds, migrations) only ``make test`` checks.

#: Files whose every test runs for seconds: processes, servers, builds, long searches.
SLOW_FILES = {
    "test_concurrency.py": "threads and processes racing, a process killed mid-round",
    "test_migrations.py": "every migration up from empty, for drift, and down again",
    "test_ledger_stateful.py": "a Hypothesis state machine over the money services",
    "test_entry_points.py": "starts the app three ways, each a server process",
    "test_fuzz.py": "many malformed requests to every POST endpoint",
    "test_gunicorn.py": "gunicorn masters and workers started and killed",
    "test_consistency_under_signing.py": "gunicorn on each database, players and witnesses racing",
    "test_faults.py": "fault runs under load: workers, the master and connections killed",
    "test_wheel.py": "builds the wheel and installs it into a fresh virtual environment",
    "test_schemathesis.py": "generated requests to every operation as three roles",
    "test_schemathesis_stateful.py": "schemathesis's link-following scenarios per role",
    # Its PostgreSQL tests read the plan's own row counts; the SQLite ones read the plan's index.
    "test_console_at_scale.py": "fills logs and ledgers of thousands of rows to read the plans",
}

#: Single tests that take seconds (file::name); their files' other tests stay quick.
SLOW_TESTS = {
    # Every GET route x 3 visitors x 3 queries (>300 answers) with DEBUG logs kept; the leak
    # checks of single answers (test_security, test_api) stay quick.
    "test_secrets.py::test_no_answer_audit_entry_or_log_line_holds_an_unrevealed_seed_or_a_key": (
        "every route's answers and logs searched"
    ),
    # Its twin for a player's own secrets: the password's quick checks (test_security's
    # test_no_password_is_ever_logged_audited_or_stored_in_clear: the logs, every row, the
    # cookie) and the database logger's (test_secrets) stay quick.
    "test_secrets.py::test_no_answer_audit_entry_or_log_line_holds_a_password_a_token_or_a_"
    "session": "every route's answers as five visitors, and the logs, searched",
    # The check's findings have quick tests of their own in the same file.
    "test_standing_checks.py::test_the_whole_check_and_the_export_stream_in_flat_memory": (
        "a 10,000-entry log checked under tracemalloc"
    ),
    "test_house_report.py::test_the_migration_fills_in_the_figures_of_rounds_settled_before_it": (
        "runs the migrations down and up"
    ),
    "test_no_shared_rows.py::test_migrating_moves_open_stakes_from_the_shared_escrow_and_back": (
        "runs the migrations down and up"
    ),
    "test_audit_sequencer.py::test_migrating_down_refuses_to_drop_entries_waiting_for_the_"
    "integrator": "runs the migrations down",
    # The answers' schemas (test_openapi) and the refusals' wording (test_contract) stay quick.
    "test_contract.py::test_every_operation_agrees_with_its_request_schema_both_ways": (
        "hundreds of bodies from each request schema, to every operation"
    ),
    # The matrix itself (test_every_route_answers_each_role_as_its_class_requires) stays quick.
    "test_operator_access.py::test_an_unprotected_new_route_is_caught": (
        "the whole role x route matrix again, to show it catches a forgotten route"
    ),
    # The tricks' and endings' rules have quick tests.
    "test_sota_games.py::test_every_card_is_in_exactly_one_place_after_every_trick": (
        "Hypothesis, 300 whole Sota games"
    ),
    "test_player_signatures.py::test_the_standalone_verifier_names_a_decision_the_player_did_"
    "not_sign": "builds the zipapp and runs it twice",
    "test_standalone_verifier.py::test_the_zipapp_verifies_real_bundles_in_an_empty_folder_"
    "with_only_cryptography": "builds the zipapp and runs it in a bare Python",
    "test_bench_load.py::test_the_short_load_run_answers_every_request_and_the_checks_pass": (
        "a load run under gunicorn on both databases"
    ),
    # One process's reports, and the bundles' split into jobs, have quick tests in their files.
    "test_verify.py::test_worker_processes_give_the_same_report_as_one_process": (
        "starts worker processes"
    ),
    "test_verify_cli.py::test_jobs_spread_a_large_bundle_over_processes_with_the_same_result": (
        "a large bundle checked in worker processes"
    ),
    # The SQLite statement bound has quick tests in the same file.
    "test_outages.py::test_a_postgres_server_that_never_answers_is_a_503_after_one_connect_"
    "timeout": "waits out a connect timeout against a server that never answers",
    "test_reads_never_block_play.py::test_bets_go_through_while_the_whole_log_is_checked_and_"
    "exported": "fills a big log, then checks and exports it in another process",
    # The same cut under Werkzeug's server, and the command's, have quick tests in the same file.
    "test_cut_downloads.py::test_a_download_whose_database_fails_midway_is_cut_under_gunicorn_"
    "and_logged_in_one_line": "starts gunicorn for each kind of download on both databases",
    # The limits of each text filter (test_a_console_lists_text_over_its_limit_is_refused_naming_it)
    # stay quick, as do the pages' own tests of their queries and forms.
    "test_page_queries.py::test_no_query_string_makes_a_page_fail": (
        "Hypothesis: odd query strings to every page, as three roles"
    ),
    "test_page_queries.py::test_no_form_makes_a_page_fail": (
        "Hypothesis: odd forms to every page, as three roles"
    ),
}

#: A test run in every language (a parameter of these names) runs in English and Finnish in the
#: quick loop, and in Norwegian and Portuguese too in ``make test``: Finnish, with its cases and
#: long words, breaks what the others would, and a catalogue's own entries are each checked in
#: every language by quick tests (test_languages.py: markers, placeholders, plurals).
LANGUAGE_PARAMETERS = frozenset({"language", "lang"})
FULL_RUN_LANGUAGES = frozenset({"nb", "pt"})


def _in_other_languages_too(item: pytest.Item) -> bool:
    """Whether ``item`` is a test's run in a language of :data:`FULL_RUN_LANGUAGES`."""
    params = getattr(getattr(item, "callspec", None), "params", {})
    return any(params.get(name) in FULL_RUN_LANGUAGES for name in LANGUAGE_PARAMETERS)


def _unknown_slow_names() -> list[str]:
    """The entries above that name no file or test (one renamed would join the quick loop)."""
    files = {path.name: path for path in Path(__file__).parent.rglob("test_*.py")}
    unknown = [name for name in SLOW_FILES if name not in files]
    for test in SLOW_TESTS:
        name, function = test.split("::")
        if name not in files or f"def {function}(" not in files[name].read_text():
            unknown.append(test)
    return unknown


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Mark PostgreSQL runs ``postgres``, and what ``make test-fast`` leaves out ``slow``."""
    if unknown := _unknown_slow_names():
        raise pytest.UsageError(f"SLOW_FILES or SLOW_TESTS name no test: {unknown}")
    for item in items:
        on_postgres = getattr(item, "callspec", None) and item.callspec.params.get("db_url")
        if on_postgres == "postgres":
            item.add_marker(pytest.mark.postgres)
        test = f"{item.path.name}::{getattr(item, 'originalname', item.name)}"
        if (
            on_postgres == "postgres"
            or item.get_closest_marker("browser")
            or item.path.name in SLOW_FILES
            or test in SLOW_TESTS
            or _in_other_languages_too(item)
        ):
            item.add_marker(pytest.mark.slow)

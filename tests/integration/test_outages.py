"""A database that cannot serve is a clean 503 with Retry-After (a friendly page on the pages),
never a 500, and the service recovers by itself once the database is back."""

from __future__ import annotations

import contextlib
import logging
import socket
import sqlite3
import threading
import time
from collections.abc import Callable
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import psycopg
import pytest
import sqlalchemy as sa
from app_support import app_config
from app_support import copy_of_template
from flask import Flask
from flask import request
from flask.testing import FlaskClient
from outage_support import Relay
from outage_support import SilentServer
from outage_support import SqliteFault
from outage_support import books
from outage_support import hold_lock
from service_support import PASSWORD
from service_support import assert_books_clean
from sqlalchemy.engine import make_url
from sqlalchemy.orm import Session

from sota_casino import background
from sota_casino import db
from sota_casino.core.errors import Unavailable
from sota_casino.db import KEEPALIVES
from sota_casino.db import TCP_USER_TIMEOUT_MS
from sota_casino.db import connect_timeout
from sota_casino.db import get_session
from sota_casino.db import make_engine
from sota_casino.db import new_session
from sota_casino.factory import create_app
from sota_casino.services import accounts
from sota_casino.services import audit
from sota_casino.services import checks
from sota_casino.services import lists
from sota_casino.services import tx


def signed_in(
    app: Flask, username: str = "alice", *, operator: bool = False
) -> tuple[FlaskClient, dict[str, str]]:
    """A player (or an operator) with a bearer token, and a client whose cookie is logged in."""
    make = accounts.create_operator if operator else accounts.register
    with app.app_context():
        session = app.extensions["sota_casino.sessionmaker"]()
        user = make(session, username, PASSWORD)
        token, _ = accounts.start_session(session, user.id, kind="api")
        web_token, _ = accounts.start_session(session, user.id)
        session.close()
    client = app.test_client()
    with client.session_transaction() as cookie:
        cookie["sid"] = web_token
    return client, {"Authorization": f"Bearer {token}"}


def assert_unavailable(response: Any) -> None:
    assert response.status_code == 503, response.get_data(as_text=True)[:300]
    assert response.get_json()["error"]["code"] == "unavailable"
    assert int(response.headers["Retry-After"]) > 0


def assert_books(app: Flask) -> None:
    with app.app_context():
        session = app.extensions["sota_casino.sessionmaker"]()
        assert_books_clean(session)
        session.close()


@contextlib.contextmanager
def relayed(db_url: str, tmp_path: Path, **settings: Any) -> Iterator[tuple[Flask, Relay]]:
    """An app on PostgreSQL through a :class:`Relay`, with ``settings`` over the tests' own."""
    if not db_url.startswith("postgresql"):
        pytest.skip("the relay stands in front of PostgreSQL")
    url = make_url(db_url)
    relay = Relay((url.host or "127.0.0.1", url.port or 5432))
    app = create_app(
        app_config(url.set(port=relay.port).render_as_string(False), tmp_path, **settings)
    )
    try:
        yield app, relay
    finally:
        relay.cut()
        app.extensions["sota_casino.engine"].dispose()


@pytest.fixture
def relayed_app(db_url: str, tmp_path: Path) -> Iterator[tuple[Flask, Relay]]:
    with relayed(db_url, tmp_path) as app_and_relay:
        yield app_and_relay


@pytest.mark.parametrize("db_url", ["postgres"], indirect=True)
def test_postgres_going_away_is_a_503_and_coming_back_needs_no_restart(
    relayed_app: tuple[Flask, Relay],
) -> None:
    app, relay = relayed_app
    client, token = signed_in(app)
    assert client.get("/api/v1/me", headers=token).status_code == 200
    relay.cut()  # every pooled connection dies and no new one can be made
    assert_unavailable(client.get("/api/v1/me", headers=token))
    assert_unavailable(client.post("/api/v1/casino-war/rounds", json={"bet": 100}, headers=token))
    page = client.get("/lobby")
    assert page.status_code == 503 and "closed for a moment" in page.get_data(as_text=True)
    assert "Retry-After" in page.headers
    relay.restore()
    assert client.get("/api/v1/me", headers=token).status_code == 200
    assert (
        client.post("/api/v1/casino-war/rounds", json={"bet": 100}, headers=token).status_code
        == 201
    )
    assert_books(app)


@pytest.mark.parametrize("db_url", ["postgres"], indirect=True)
def test_a_connection_the_driver_leaves_in_pipeline_mode_is_dropped_without_a_traceback(
    db_url: str, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """A backend terminated while psycopg waits for a pipeline's results (executemany, as the
    audit integrator's) can leave the connection in pipeline mode with a query pending:
    ``cannot exit pipeline mode while busy``, the ``AdminShutdown`` as its context. psycopg
    does not mark it broken, and it cannot even roll back (``PQsendQuery not allowed in
    pipeline mode``): kept, it went back to the pool, whose reset failed and logged
    ``Exception during reset or similar`` with three tracebacks (under gunicorn, with
    ``pg_terminate_backend`` in a loop). It is dropped as a lost connection instead, and the
    use case tried again on a fresh one."""
    app = create_app(app_config(db_url, tmp_path))
    client, token = signed_in(app)
    armed = [True]

    @sa.event.listens_for(app.extensions["sota_casino.engine"], "before_cursor_execute")
    def leave_in_pipeline_mode(connection: Any, _cursor: Any, statement: str, *_: Any) -> None:
        if not (armed and statement.startswith("INSERT")):
            return
        armed.clear()
        pgconn = connection.connection.dbapi_connection.pgconn
        pgconn.enter_pipeline_mode()
        pgconn.send_query_params(b"SELECT 1", None)  # a result the pipeline still waits for
        try:
            raise psycopg.errors.AdminShutdown(
                "terminating connection due to administrator command"
            )
        except psycopg.errors.AdminShutdown:
            raise psycopg.OperationalError("cannot exit pipeline mode while busy")  # noqa: B904

    with caplog.at_level(logging.WARNING):
        answer = client.post("/api/v1/casino-war/rounds", json={"bet": 100}, headers=token)
    assert not armed
    assert answer.status_code == 201, answer.get_data(as_text=True)
    assert [r.getMessage() for r in caplog.records if r.levelno >= logging.ERROR] == []
    assert [r for r in caplog.records if r.exc_info] == []
    assert_books(app)
    app.extensions["sota_casino.engine"].dispose()


@pytest.mark.parametrize("db_url", ["postgres"], indirect=True)
def test_the_drivers_warning_of_a_pipeline_an_outage_cut_is_one_line(
    db_url: str, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """A backend terminated while a pipeline was open (``pg_terminate_backend`` in a loop under
    gunicorn) made psycopg warn ``error ignored terminating <psycopg.Pipeline [BAD] ...>:
    consuming input failed: server closed the connection unexpectedly`` with two more indented
    lines of the server's message, where the log says an outage in one line of its kind
    (docs/operations.md). The service's own line says the outage; the driver's is one line."""
    app = create_app(app_config(db_url, tmp_path))
    address = make_url(db_url).set(drivername="postgresql").render_as_string(hide_password=False)
    with psycopg.connect(address) as doomed, psycopg.connect(address, autocommit=True) as killer:
        with caplog.at_level(logging.WARNING), pytest.raises(RuntimeError):
            with doomed.pipeline():
                doomed.execute("SELECT 1")
                killer.execute("SELECT pg_terminate_backend(%s)", [doomed.info.backend_pid])
                time.sleep(0.2)
                raise RuntimeError("the block failed first")
    warned = [r.getMessage() for r in caplog.records if r.name.startswith("psycopg")]
    assert warned and all(message.startswith("error ignored terminating") for message in warned)
    assert [message for message in warned if "\n" in message] == [], warned
    app.extensions["sota_casino.engine"].dispose()


@pytest.fixture
def sqlite_app(migrated_template: Path, tmp_path: Path) -> Iterator[tuple[Flask, SqliteFault]]:
    url = copy_of_template(migrated_template, tmp_path)
    app = create_app(app_config(url, tmp_path))
    yield app, SqliteFault(app.extensions["sota_casino.engine"])
    app.extensions["sota_casino.engine"].dispose()


@pytest.mark.parametrize("mode", ["readonly", "full"])
def test_a_read_only_or_full_sqlite_database_is_a_503_until_it_is_writable(
    sqlite_app: tuple[Flask, SqliteFault], mode: str
) -> None:
    app, fault = sqlite_app
    client, token = signed_in(app)
    fault.mode = mode
    statuses = set()
    for n in range(30):  # a full file may still have room for a few rows in its free pages
        response = client.post(
            "/api/v1/auth/register", json={"username": f"late{n}", "password": PASSWORD}
        )
        statuses.add(response.status_code)
        if response.status_code == 503:
            assert_unavailable(response)
            break
    assert statuses <= {201, 503} and 503 in statuses, statuses
    fault.clear()
    assert (
        client.post("/api/v1/casino-war/rounds", json={"bet": 100}, headers=token).status_code
        == 201
    )
    assert_books(app)


def make_pooled_connections_read_only(app: Flask) -> None:
    """Make every connection in the app's pool read-only for good, as those are that were made
    while the database was read-only (PostgreSQL's ``ALTER DATABASE ... SET
    default_transaction_read_only``, a standby; a SQLite file its process could not write)."""
    engine = app.extensions["sota_casino.engine"]
    held = [engine.raw_connection() for _ in range(engine.pool.size())]  # type: ignore[attr-defined]
    for pooled in held:
        driver = pooled.driver_connection
        assert driver is not None
        if engine.dialect.name == "sqlite":
            driver.execute("PRAGMA query_only = 1")
        else:
            driver.execute("SET SESSION default_transaction_read_only = on")
            driver.commit()
    for pooled in held:
        pooled.close()


def test_connections_made_while_the_database_was_read_only_do_not_outlast_it(
    db_url: str, tmp_path: Path
) -> None:
    """A connection keeps the read-only state it was made in: a PostgreSQL session its
    database's ``default_transaction_read_only``, a SQLite connection a file it could not open
    for writing. Such pooled connections once refused every write (a 503) after the database
    was writable again, until the app was restarted; a write refused so now replaces the pool,
    and the use case's retry on a new connection writes."""
    app = create_app(app_config(db_url, tmp_path))
    try:
        client, token = signed_in(app)
        make_pooled_connections_read_only(app)
        bet = client.post("/api/v1/casino-war/rounds", json={"bet": 100}, headers=token)
        assert bet.status_code == 201, bet.get_json()
        assert_books(app)
    finally:
        app.extensions["sota_casino.engine"].dispose()


def test_a_sqlite_file_gone_from_its_folder_is_a_503_and_no_empty_database_takes_its_place(
    migrated_template: Path, tmp_path: Path
) -> None:
    """A database file that is gone while its folder is there (deleted, moved away, its disk
    not mounted) is an outage: a 503 with Retry-After on every new connection, and no empty
    database is made in its place (one was, and every request was a 500 on its missing
    tables); once the file is back the service goes on without a restart."""
    db_url = copy_of_template(migrated_template, tmp_path)
    app = create_app(app_config(db_url, tmp_path))
    try:
        client, token = signed_in(app)
        engine = app.extensions["sota_casino.engine"]
        engine.dispose()  # the connections made next are new ones, as a restarted worker's
        path = Path(make_url(db_url).database or "")
        aside = tmp_path / "aside"
        aside.mkdir()
        moved = [f for f in (path, Path(f"{path}-wal"), Path(f"{path}-shm")) if f.exists()]
        for file in moved:
            file.rename(aside / file.name)
        assert_unavailable(client.get("/api/v1/me", headers=token))
        bet = {"json": {"bet": 100}, "headers": {**token, "Idempotency-Key": "gone-1"}}
        assert_unavailable(client.post("/api/v1/casino-war/rounds", **bet))
        assert not path.exists()
        for file in moved:
            (aside / file.name).rename(file)
        assert client.post("/api/v1/casino-war/rounds", **bet).status_code == 201
        assert_books(app)
    finally:
        app.extensions["sota_casino.engine"].dispose()


# --- a lock held too long: a 503 within the wait the settings allow, never a hung worker ----

#: The tests' lock wait (ms): short, so a test takes a second, not the default's five.
LOCK_WAIT_MS = 500
#: The lock wait of the tests that show something does not wait for a lock at all: long, so
#: that a busy machine's slow request is never taken for a wait (a wait costs the whole of it).
PATIENT_WAIT_MS = 4000


@pytest.mark.parametrize(
    ("db_url", "holder"),
    [("sqlite", "gate"), ("sqlite", "shell"), ("postgres", "row")],
    indirect=["db_url"],
)
def test_a_bet_behind_a_held_lock_is_a_503_within_the_lock_wait_and_moves_nothing(
    db_url: str, holder: str, tmp_path: Path
) -> None:
    """A request never waits for the database longer than the lock wait allowed: a bet behind
    a lock held elsewhere (a row lock of psql, a SQLite writer of the service or outside it) is
    a clean 503 once the wait is over, stores nothing, and the client's retry bets once."""
    app = create_app(app_config(db_url, tmp_path, DB_LOCK_TIMEOUT_MS=LOCK_WAIT_MS))
    try:
        client, token = signed_in(app)
        bet = {"json": {"bet": 100}, "headers": {**token, "Idempotency-Key": "held-1"}}
        before = books(db_url)
        user_id = client.get("/api/v1/me", headers=token).get_json()["user"]["id"]
        release = hold_lock(holder, db_url, user_id)
        try:
            started = time.monotonic()
            response = client.post("/api/v1/casino-war/rounds", **bet)
            waited = time.monotonic() - started
        finally:
            release()
        assert_unavailable(response)
        assert LOCK_WAIT_MS / 1000 * 0.8 <= waited < LOCK_WAIT_MS / 1000 + 2.5, waited
        assert books(db_url) == before
        # Nothing of it was stored, so the client's retry with the same key bets once.
        again = client.post("/api/v1/casino-war/rounds", **bet)
        assert again.status_code == 201, again.get_json()
        assert books(db_url)["rounds"] == before["rounds"] + 1
        assert_books(app)
    finally:
        app.extensions["sota_casino.engine"].dispose()


def test_a_writers_gate_that_cannot_be_opened_leaves_sqlites_own_lock_to_decide(
    migrated_template: Path, tmp_path: Path
) -> None:
    """SQLite's writers queue at a file beside the database (``-writers``), which a worker
    opens at its first write. One it could not open (its folder or disk turned read-only, a
    file it may not write) was a 500, and every later write of that worker waited the whole
    lock wait before it began, even once the file could be opened again, until a restart: the
    failed open kept the gate's lock of the process's threads. The gate only orders writers;
    without it a writer goes to SQLite's own lock, which decides (a read-only database is then
    SQLite's outage, a 503), and the next write opens the gate again."""
    db_url = copy_of_template(migrated_template, tmp_path)
    app = create_app(app_config(db_url, tmp_path, DB_LOCK_TIMEOUT_MS=PATIENT_WAIT_MS))
    try:
        client, token = signed_in(app)
        app.extensions["sota_casino.engine"].dispose()  # the gate opens anew, as a new worker's
        gate = Path(f"{make_url(db_url).database}-writers")
        gate.unlink()
        gate.mkdir()  # a file no one can open for writing, whoever runs the tests (root too)
        for n in range(3):
            started = time.monotonic()
            bet = client.post("/api/v1/casino-war/rounds", json={"bet": 100}, headers=token)
            waited = time.monotonic() - started
            assert bet.status_code == 201, bet.get_data(as_text=True)[:300]
            assert waited < PATIENT_WAIT_MS / 1000, f"bet {n} waited {waited:.2f} s"
        gate.rmdir()
        bet = client.post("/api/v1/casino-war/rounds", json={"bet": 100}, headers=token)
        assert bet.status_code == 201, bet.get_json()
        assert gate.is_file()  # opened again, and made anew
        assert_books(app)
    finally:
        app.extensions["sota_casino.engine"].dispose()


@pytest.mark.parametrize(
    "download",
    [
        "/api/v1/operator/audit/export",
        "/api/v1/operator/audit/range-export",
        "/operator/audit/entries?format=jsonl",
    ],
)
def test_an_audit_download_on_sqlite_reads_on_past_a_writer_that_takes_the_lock_midway(
    migrated_template: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, download: str
) -> None:
    """A download of the log reads a chunk per short read, as every read does on SQLite: in
    WAL no writer holds it up. Each chunk once began ``BEGIN IMMEDIATE``, so a writer holding
    the lock longer than the lock wait (the sqlite3 shell, a long migration) cut a download off
    after its 200 had started: the client got half a file and gunicorn logged an error."""
    url = copy_of_template(migrated_template, tmp_path)
    app = create_app(app_config(url, tmp_path, DB_LOCK_TIMEOUT_MS=PATIENT_WAIT_MS))
    monkeypatch.setattr(audit, "CHUNK", 2)  # a few entries make a download of many chunks
    try:
        client, api = signed_in(app, "olga", operator=True)
        player, token = signed_in(app)
        for _ in range(3):
            player.post("/api/v1/casino-war/rounds", json={"bet": 100}, headers=token)
        whole = client.get(download, headers=api)
        assert whole.status_code == 200
        assert whole.get_data(as_text=True).count("\n") > 6

        response = client.get(download, headers=api, buffered=False)
        assert response.status_code == 200
        chunks = iter(response.response)
        first = next(chunks)
        release = hold_lock("shell", url, 0)
        try:
            started = time.monotonic()
            rest = b"".join(chunks)
            waited = time.monotonic() - started
        finally:
            release()
            response.close()
        assert first + rest == whole.get_data()
        assert waited < PATIENT_WAIT_MS / 1000 / 2, waited
    finally:
        app.extensions["sota_casino.engine"].dispose()


#: The rows a download reads at a time in the test below: a size no other read asks for.
TEST_CHUNK = 17


def cut_at_the_first_chunk(app: Flask, relay: Relay) -> None:
    """Cut the relay once, as the first statement asking for a chunk of :data:`TEST_CHUNK`
    rows is sent: the database goes away after a download's checks and before its first rows."""
    done = threading.Event()

    @sa.event.listens_for(app.extensions["sota_casino.engine"], "before_cursor_execute")
    def cut(_conn: Any, _cursor: Any, _statement: str, parameters: Any, *_args: Any) -> None:
        if not done.is_set() and isinstance(parameters, dict) and TEST_CHUNK in parameters.values():
            done.set()
            relay.cut()


@pytest.mark.parametrize("db_url", ["postgres"], indirect=True)
@pytest.mark.parametrize(
    "download",
    [
        "/api/v1/operator/audit/export",
        "/api/v1/operator/audit/range-export",
        "/api/v1/operator/players/{id}/rounds/export?format=jsonl",
        "/api/v1/operator/players/{id}/transfers/export?format=csv",
        "/api/v1/operator/players/{id}/seed-pairs/export?format=csv",
        "/operator/audit/entries?format=csv",
        "/api/v1/operator/audit/entries/export?format=csv&action=money.",
    ],
)
def test_a_download_whose_first_rows_the_database_cannot_serve_is_a_503(
    db_url: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, download: str
) -> None:
    """A download is checked, then streamed a chunk per short read. The first chunk was read
    only once the answer had started: a database gone in between (a restart, a connection
    ended) broke the 200 before its first byte, and gunicorn answered its own HTML 500. The
    first chunk is read before the answer starts, so that is the API's 503 with Retry-After."""
    monkeypatch.setattr(audit, "CHUNK", TEST_CHUNK)
    monkeypatch.setattr(lists, "CHUNK", TEST_CHUNK)
    with relayed(db_url, tmp_path) as (app, relay):
        client, api = signed_in(app, "olga", operator=True)
        player, token = signed_in(app)
        player.post("/api/v1/casino-war/rounds", json={"bet": 100}, headers=token)
        player_id = player.get("/api/v1/me", headers=token).get_json()["user"]["id"]
        url = download.format(id=player_id)
        cut_at_the_first_chunk(app, relay)

        response = client.get(url, headers=api)

        if url.startswith("/api/"):
            assert_unavailable(response)
        else:  # the console's page says the casino is closed for a moment
            assert response.status_code == 503 and int(response.headers["Retry-After"]) > 0
        relay.restore()
        again = client.get(url, headers=api)
        assert again.status_code == 200
        assert again.get_data(as_text=True).strip()


@pytest.mark.parametrize("db_url", ["postgres"], indirect=True)
def test_the_whole_audit_export_behind_a_held_integrator_lock_is_a_503_before_it_starts(
    db_url: str, tmp_path: Path
) -> None:
    """The export sequences the log's waiting entries first, behind any other integrator: a
    wait that runs out is the API's 503 with Retry-After and the console's 503 page, decided
    before the download starts (it was a 200 whose body then failed: gunicorn's HTML 500)."""
    app = create_app(app_config(db_url, tmp_path, DB_LOCK_TIMEOUT_MS=LOCK_WAIT_MS))
    try:
        client, api = signed_in(app, "olga", operator=True)
        engine = sa.create_engine(db_url)
        try:
            with engine.connect() as holder:  # another process's integrator, mid-batch
                holder.execute(sa.select(sa.func.pg_advisory_xact_lock(audit.INTEGRATOR_LOCK)))
                assert_unavailable(client.get("/api/v1/operator/audit/export", headers=api))
                page = client.get("/operator/audit/export")
                assert page.status_code == 503, page.status_code
                assert "closed for a moment" in page.get_data(as_text=True)
                holder.rollback()
        finally:
            engine.dispose()
        export = client.get("/api/v1/operator/audit/export", headers=api)
        assert export.status_code == 200
        assert export.get_data(as_text=True).count("\n") >= 1
    finally:
        app.extensions["sota_casino.engine"].dispose()


@pytest.mark.parametrize("db_url", ["postgres"], indirect=True)
def test_a_statement_that_runs_too_long_is_cut_off_in_a_request_and_not_in_a_command(
    db_url: str, tmp_path: Path
) -> None:
    """A request's statement that outruns ``DB_STATEMENT_TIMEOUT_MS`` (a stall, not a lock) is
    an :class:`Unavailable` at once, not tried again; a command's session is unhurried: the
    whole audit check or a ledger check of a large log must not be cut off."""
    app = create_app(app_config(db_url, tmp_path, DB_STATEMENT_TIMEOUT_MS=300))

    @tx.read_only
    def stall(session: Session) -> int:
        return int(session.execute(sa.text("SELECT 1 FROM pg_sleep(0.8)")).scalar_one())

    try:
        with app.app_context():
            hurried = app.extensions["sota_casino.sessionmaker"]()
            started = time.monotonic()
            with pytest.raises(Unavailable):
                stall(hurried)
            assert time.monotonic() - started < 0.8  # cut off once, not three times over
            hurried.close()
            unhurried = new_session()
            assert stall(unhurried) == 1
            unhurried.close()
    finally:
        app.extensions["sota_casino.engine"].dispose()


# --- a server frozen mid-request: its machine still answers for it, it never does ----------

#: The frozen-server tests' waits (ms): short, so a test waits seconds, not the defaults' ten.
FROZEN_LOCK_MS = 1_000
FROZEN_STATEMENT_MS = 2_000
#: Seconds a request on a frozen server may take before a test gives up on it: well past the
#: statement's bound, well short of hanging the suite.
GIVE_UP_AFTER = FROZEN_STATEMENT_MS / 1000 + 8


def answer_within(seconds: float, call: Callable[[], Any]) -> Any:
    """Return what ``call()`` returns (or raise what it raises), run in a thread of its own;
    fail the test if it is still waiting after ``seconds`` (what cuts the relay lets it go)."""
    outcome: list[Any] = []

    def run() -> None:
        try:
            outcome.append((True, call()))
        except BaseException as exc:  # handed to the test's thread
            outcome.append((False, exc))

    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    thread.join(seconds)
    if thread.is_alive():
        pytest.fail(f"no answer after {seconds:g} s: the request still waits for the database")
    answered, value = outcome[0]
    if not answered:
        raise value
    return value


def bet_on_a_frozen_server(
    db_url: str, tmp_path: Path, key: str, arm: Callable[[Flask, Relay], Callable[[], None]]
) -> None:
    """Bet once ``arm`` has set the relay to freeze (it returns what disarms it): the bet is a
    503 with Retry-After once its answer is overdue, nothing moved; once the server thaws, the
    client's retry with the same key bets once."""
    with relayed(
        db_url,
        tmp_path,
        DB_LOCK_TIMEOUT_MS=FROZEN_LOCK_MS,
        DB_STATEMENT_TIMEOUT_MS=FROZEN_STATEMENT_MS,
    ) as (app, relay):
        client, token = signed_in(app)
        bet = {"json": {"bet": 100}, "headers": {**token, "Idempotency-Key": key}}
        before = books(db_url)
        disarm = arm(app, relay)
        started = time.monotonic()
        response = answer_within(
            GIVE_UP_AFTER, lambda: client.post("/api/v1/casino-war/rounds", **bet)
        )
        waited = time.monotonic() - started
        disarm()
        assert_unavailable(response)
        overdue = FROZEN_STATEMENT_MS / 1000 + db.ANSWER_GRACE
        assert overdue <= waited < overdue + 1.5, waited
        assert books(db_url) == before  # held by the frozen server, not committed
        relay.thaw()  # a frozen COMMIT may take effect now: the retry finds the bet, or bets
        again = client.post("/api/v1/casino-war/rounds", **bet)
        assert again.status_code == 201, again.get_json()
        assert books(db_url)["rounds"] == before["rounds"] + 1
        assert_books(app)


@pytest.mark.parametrize("db_url", ["postgres"], indirect=True)
def test_a_bet_on_a_frozen_postgres_server_is_a_503_once_its_statement_is_overdue(
    db_url: str, tmp_path: Path
) -> None:
    """A server frozen while its machine runs on (SIGSTOP, a hung backend, a stalled VM) never
    answers, and nothing of its own cuts the wait short: its kernel answers the keepalives and
    acknowledges the statement, its statement_timeout cannot fire. A request sent to it is a 503
    with Retry-After once its statement is overdue, not a worker gunicorn kills; nothing moved,
    and once the server thaws the client's retry bets once."""

    def freeze_now(_app: Flask, relay: Relay) -> Callable[[], None]:
        relay.freeze()
        return lambda: None

    bet_on_a_frozen_server(db_url, tmp_path, "frozen-1", freeze_now)


@pytest.mark.parametrize("db_url", ["postgres"], indirect=True)
def test_a_commit_on_a_frozen_postgres_server_is_a_503_once_it_is_overdue(
    db_url: str, tmp_path: Path
) -> None:
    """A server that freezes just as a bet commits leaves the COMMIT unanswered: the request is
    a 503 with Retry-After once it is overdue. Whether the COMMIT took effect is unknown (a
    server that thaws may still commit it), so the client retries with its key: one bet."""
    commits: list[str] = []

    def freeze_at_a_writing_commit(app: Flask, relay: Relay) -> Callable[[], None]:
        def freeze(connection: Any) -> None:
            if connection.get_execution_options().get(tx.WRITES):
                commits.append("writes")
                relay.freeze()

        engine = app.extensions["sota_casino.engine"]
        sa.event.listen(engine, "commit", freeze)
        return lambda: sa.event.remove(engine, "commit", freeze)

    bet_on_a_frozen_server(db_url, tmp_path, "frozen-2", freeze_at_a_writing_commit)
    assert commits == ["writes"]


@pytest.mark.parametrize("db_url", ["postgres"], indirect=True)
def test_an_unanswered_statement_is_cut_off_in_a_request_and_not_in_a_command(
    db_url: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """On a frozen server a request's statement is cut off once it is overdue; a command's
    (an unhurried session's) waits on, past that deadline, as its statements may rightly run
    long, and has its answer once the server thaws."""
    monkeypatch.setattr(db, "ANSWER_GRACE", 0.2)
    overdue = 0.3 + 0.2
    with relayed(db_url, tmp_path, DB_STATEMENT_TIMEOUT_MS=300) as (app, relay):

        @tx.read_only
        def read(session: Session) -> int:
            return int(session.execute(sa.text("SELECT 1")).scalar_one())

        engine = app.extensions["sota_casino.engine"]
        with engine.connect(), engine.connect():
            pass  # two connections in the pool: a frozen server would take no new one
        with app.app_context():
            hurried = app.extensions["sota_casino.sessionmaker"]()
            unhurried = new_session()
            relay.freeze()
            answer: list[int] = []
            command = threading.Thread(target=lambda: answer.append(read(unhurried)), daemon=True)
            command.start()
            started = time.monotonic()
            with pytest.raises(Unavailable):
                answer_within(GIVE_UP_AFTER, lambda: read(hurried))
            assert overdue <= time.monotonic() - started < overdue + 1.0
            command.join(2 * overdue)
            assert command.is_alive() and not answer  # still waiting, long past the deadline
            relay.thaw()
            command.join(GIVE_UP_AFTER)
            assert answer == [1]
            hurried.close()
            unhurried.close()


def test_a_postgres_server_that_never_answers_is_a_503_after_one_connect_timeout(
    tmp_path: Path,
) -> None:
    """A server that accepts the connection and never answers (hung, or a dead path behind
    something that still completes TCP) makes a connection attempt fail once the connect
    timeout, derived from the lock wait, is over, instead of waiting forever; a request is
    answered 503 with Retry-After after that one attempt, not after three of them."""
    limit = connect_timeout(LOCK_WAIT_MS)
    with SilentServer() as server:
        url = f"postgresql+psycopg://postgres@127.0.0.1:{server.port}/test"
        engine = make_engine(url, lock_timeout_ms=LOCK_WAIT_MS, statement_timeout_ms=1_000)
        started = time.monotonic()
        with pytest.raises(sa.exc.OperationalError, match="connection timeout expired"):
            engine.connect()
        waited = time.monotonic() - started
        engine.dispose()
        assert limit * 0.9 <= waited < limit + 1.5, (waited, limit)

        app = create_app(app_config(url, tmp_path, DB_LOCK_TIMEOUT_MS=LOCK_WAIT_MS))
        tried_before = server.accepted
        try:
            started = time.monotonic()
            response = app.test_client().get(
                "/api/v1/me", headers={"Authorization": "Bearer any-token"}
            )
            waited = time.monotonic() - started
        finally:
            app.extensions["sota_casino.engine"].dispose()
        assert_unavailable(response)
        assert server.accepted - tried_before == 1  # not tried again: it would wait as long
        assert limit * 0.9 <= waited < limit + 1.5, (waited, limit)


@pytest.mark.parametrize("db_url", ["postgres"], indirect=True)
def test_postgres_connections_probe_a_silent_peer_and_give_up_on_a_dead_one(
    db_url: str, tmp_path: Path
) -> None:
    """The app's PostgreSQL connections carry TCP keepalives and (Linux) a user timeout, so a
    server whose machine or network path died is found instead of waited for forever."""
    app = create_app(app_config(db_url, tmp_path))
    engine = app.extensions["sota_casino.engine"]
    try:
        with engine.connect() as connection:
            fd = connection.connection.driver_connection.pgconn.socket  # type: ignore[union-attr]
            sock = socket.fromfd(fd, socket.AF_INET, socket.SOCK_STREAM)  # a duplicate of it
            try:
                found = {
                    "keepalives": sock.getsockopt(socket.SOL_SOCKET, socket.SO_KEEPALIVE),
                    "keepalives_idle": sock.getsockopt(socket.IPPROTO_TCP, socket.TCP_KEEPIDLE),
                    "keepalives_interval": sock.getsockopt(
                        socket.IPPROTO_TCP, socket.TCP_KEEPINTVL
                    ),
                    "keepalives_count": sock.getsockopt(socket.IPPROTO_TCP, socket.TCP_KEEPCNT),
                }
                user_timeout = sock.getsockopt(socket.IPPROTO_TCP, socket.TCP_USER_TIMEOUT)
            finally:
                sock.close()
    finally:
        engine.dispose()
    assert found == KEEPALIVES
    assert user_timeout == TCP_USER_TIMEOUT_MS


#: The SQLite tests' statement bound (ms), and a statement that runs many times as long on any
#: machine: counting through a recursive CTE, 17 VM instructions a row (about a second here).
SQLITE_STATEMENT_MS = 50
LONG_COUNT = 2_000_000


def count_to(n: int) -> sa.TextClause:
    return sa.text(
        "WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c WHERE x < :n) "
        "SELECT count(*) FROM c"
    ).bindparams(n=n)


@pytest.mark.parametrize("db_url", ["sqlite"], indirect=True)
def test_a_sqlite_statement_that_runs_too_long_is_cut_off_in_a_request_and_not_in_a_command(
    db_url: str, tmp_path: Path
) -> None:
    """SQLite has no statement_timeout of its own: a request's statement that outruns
    ``DB_STATEMENT_TIMEOUT_MS`` is interrupted and is an :class:`Unavailable` at once, sent
    once and not tried again; a command's unhurried session runs the same statement to its
    end."""
    app = create_app(app_config(db_url, tmp_path, DB_STATEMENT_TIMEOUT_MS=SQLITE_STATEMENT_MS))
    engine = app.extensions["sota_casino.engine"]
    sent: list[str] = []
    sa.event.listen(engine, "before_cursor_execute", lambda *args: sent.append(args[2]))

    @tx.read_only
    def count(session: Session) -> int:
        return int(session.execute(count_to(LONG_COUNT)).scalar_one())

    try:
        with app.app_context():
            unhurried = new_session()
            started = time.monotonic()
            assert count(unhurried) == LONG_COUNT
            ran = time.monotonic() - started
            unhurried.close()
            # Else the statement would not show that the bound cuts anything off.
            assert ran > 4 * SQLITE_STATEMENT_MS / 1000, ran

            sent.clear()
            hurried = app.extensions["sota_casino.sessionmaker"]()
            started = time.monotonic()
            with pytest.raises(Unavailable) as refused:
                count(hurried)
            cut_off = time.monotonic() - started
            hurried.close()
        assert cut_off < ran / 2, (cut_off, ran)
        assert sum("RECURSIVE" in statement for statement in sent) == 1  # not tried again
        cause = refused.value.__cause__
        assert isinstance(cause, sa.exc.OperationalError)
        assert cause.orig.sqlite_errorcode == sqlite3.SQLITE_INTERRUPT  # type: ignore[union-attr]
    finally:
        engine.dispose()


@pytest.mark.parametrize("db_url", ["sqlite"], indirect=True)
def test_a_sqlite_statement_cut_off_in_a_request_is_a_503_with_retry_after_and_keeps_nothing(
    db_url: str, tmp_path: Path
) -> None:
    """A request whose SQLite statement is interrupted is answered 503 with Retry-After, by a
    use case and by a statement that escaped the services alike, and what its transaction wrote
    before is rolled back; a short statement on the same connections still runs."""
    app = create_app(app_config(db_url, tmp_path, DB_STATEMENT_TIMEOUT_MS=SQLITE_STATEMENT_MS))
    engine = app.extensions["sota_casino.engine"]
    with engine.begin() as connection:
        connection.execute(sa.text("CREATE TABLE writes (n INTEGER)"))

    @tx.transactional
    def write_then_count(session: Session, n: int) -> int:
        session.execute(sa.text("INSERT INTO writes VALUES (:n)"), {"n": n})
        return int(session.execute(count_to(n)).scalar_one())

    def through_a_use_case() -> dict[str, int]:
        return {"count": write_then_count(get_session(), request.args.get("n", 0, type=int))}

    def outside_the_services() -> dict[str, int]:
        n = request.args.get("n", 0, type=int)
        return {"count": int(get_session().execute(count_to(n)).scalar_one())}

    app.add_url_rule("/api/v1/slow-write", "slow_write", through_a_use_case)
    app.add_url_rule("/api/v1/slow-read", "slow_read", outside_the_services)
    client = app.test_client()
    try:
        for path in ("/api/v1/slow-write", "/api/v1/slow-read", "/api/v1/slow-write"):
            assert_unavailable(client.get(path, query_string={"n": LONG_COUNT}))
        with engine.connect() as connection:
            assert connection.scalar(sa.text("SELECT count(*) FROM writes")) == 0
        answer = client.get("/api/v1/slow-write", query_string={"n": 10})
        assert answer.status_code == 200 and answer.get_json() == {"count": 10}
        with engine.connect() as connection:
            assert connection.scalars(sa.text("SELECT n FROM writes")).all() == [10]
    finally:
        engine.dispose()


def test_the_standing_checks_run_in_unhurried_sessions(
    app: Flask, monkeypatch: pytest.MonkeyPatch
) -> None:
    seen: list[dict[str, object]] = []
    monkeypatch.setattr(checks, "run_all", lambda session, _owner: seen.append(session.info))
    background.start(app, 3600)
    deadline = time.monotonic() + 10
    while not seen and time.monotonic() < deadline:
        time.sleep(0.01)
    app.extensions["sota_casino.checks_stop"].set()
    assert seen and seen[0].get(tx.UNHURRIED) is True


def test_background_work_that_meets_an_outage_logs_one_line_and_a_bug_its_traceback(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """A traceback at every attempt of the standing checks (or of the audit's integration after
    each commit) buried the log during an outage, which is expected and said by its kind; a bug
    keeps its traceback."""
    gone = sa.create_engine(f"sqlite:///file:{tmp_path / 'gone.db'}?mode=rw&uri=true")

    def outage(session: Session) -> None:
        session.execute(sa.text("SELECT 1"))  # no such file: the disk is not mounted, say

    def bug(_session: Session) -> None:
        raise KeyError("a bug")

    for step in (outage, bug):
        stop = threading.Event()

        def once(
            session: Session, step: Callable[[Session], None] = step, stop: Any = stop
        ) -> None:
            stop.set()
            step(session)

        background._loop(lambda: Session(gone), once, 0, stop, "checks")
    found = [r for r in caplog.records if r.name == background.__name__]
    assert [(r.levelname, r.getMessage(), r.exc_info is None) for r in found] == [
        (
            "WARNING",
            "checks: a step failed; trying again later: the database is unavailable "
            "(OperationalError)",
            True,
        ),
        ("ERROR", "checks: a step failed; trying again later", False),
    ]
    gone.dispose()


#: The rows a download reads at a time in the test below: a size no other read asks for.
DROP_CHUNK = 7


@pytest.mark.parametrize("db_url", ["postgres"], indirect=True)
@pytest.mark.parametrize(
    "download",
    [
        "/api/v1/operator/audit/export",
        "/api/v1/operator/audit/range-export",
        "/operator/audit/entries?format=csv",
        "/api/v1/operator/players/{id}/rounds/export?format=jsonl",
    ],
)
def test_a_download_whose_connection_drops_midway_reads_on_from_a_new_one(
    db_url: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, download: str
) -> None:
    """Each chunk of a download is a short read-only transaction of its own, so a connection
    the database drops between two chunks (a restart, ``pg_terminate_backend``) is replaced as
    any use case's is, and the download goes on to its end. The log's chunks were read on bare
    connections, with no second try: such a drop cut the download off after its 200."""
    monkeypatch.setattr(audit, "CHUNK", DROP_CHUNK)
    monkeypatch.setattr(lists, "CHUNK", DROP_CHUNK)
    with relayed(db_url, tmp_path) as (app, relay):
        client, api = signed_in(app, "olga", operator=True)
        player, token = signed_in(app)
        for _ in range(2 * DROP_CHUNK):
            played = player.post("/api/v1/casino-war/rounds", json={"bet": 100}, headers=token)
            if played.get_json()["status"] != "settled":
                decision = f"/api/v1/casino-war/rounds/{played.get_json()['id']}/decision"
                player.post(decision, json={"choice": "war"}, headers=token)
        player_id = player.get("/api/v1/me", headers=token).get_json()["user"]["id"]
        url = download.format(id=player_id)
        whole = client.get(url, headers=api)
        assert whole.status_code == 200

        chunks = 0

        @sa.event.listens_for(app.extensions["sota_casino.engine"], "before_cursor_execute")
        def drop(_conn: Any, _cursor: Any, _statement: str, parameters: Any, *_args: Any) -> None:
            nonlocal chunks
            if isinstance(parameters, dict) and DROP_CHUNK in parameters.values():
                chunks += 1
                if chunks == 2:  # the answer has begun with the first
                    relay.cut()  # the connection in use dies; the next one finds it back
                    relay.restore()

        again = client.get(url, headers=api)
        read = again.get_data()  # the body streams as it is read

        assert chunks > 2, "the download was read in chunks"
        assert again.status_code == 200
        assert read == whole.get_data()


@pytest.mark.parametrize("db_url", ["postgres"], indirect=True)
def test_the_consoles_pages_in_an_outage_say_when_to_try_again(
    relayed_app: tuple[Flask, Relay],
) -> None:
    """The console answers its refusals with a handler of its own (beside the form, or on its
    own page); for an outage that page is the 503 every page answers, with ``Retry-After``."""
    app, relay = relayed_app
    client, _ = signed_in(app, "olga", operator=True)
    assert client.get("/operator/audit").status_code == 200
    relay.cut()
    for page in ("/operator/audit", "/operator/players", "/operator/ledger"):
        answer = client.get(page)
        assert answer.status_code == 503, page
        assert int(answer.headers["Retry-After"]) > 0, page
        assert "closed for a moment" in answer.get_data(as_text=True)
    relay.restore()
    assert client.get("/operator/audit").status_code == 200


def test_an_adjustment_applied_in_an_outage_is_the_503_that_says_when_to_try_again(
    sqlite_app: tuple[Flask, SqliteFault],
) -> None:
    """The adjustment shows a refusal at its last step beside its form; an outage there is no
    refusal of what was typed, and answers as every page does in one: 503 with Retry-After."""
    app, fault = sqlite_app
    signed_in(app, "pat")
    olga, _ = signed_in(app, "olga", operator=True)
    with olga.session_transaction() as cookie:
        cookie["csrf"] = "known-token"
    held = books(app.config["DATABASE_URL"])
    fault.mode = "readonly"
    form = {"csrf_token": "known-token", "currency": "chips", "amount": "500", "reason": "prize"}
    answer = olga.post("/operator/players/1/adjust", data=form)
    assert answer.status_code == 503
    assert int(answer.headers["Retry-After"]) > 0
    assert "closed for a moment" in answer.get_data(as_text=True)
    fault.clear()
    assert books(app.config["DATABASE_URL"]) == held


#: Pages and forms that read the database after they know their visitor, each with who asks
#: and what the form sends: a page of its own, a refusal's page (a staff page turned away, a
#: page not there at all), a refusal shown beside its form.
VISITORS_PAGES = [
    ("player", "GET", "/lobby", {}),
    ("player", "GET", "/history", {}),
    ("player", "POST", "/lobby/topup", {"currency": "chips"}),
    ("player", "GET", "/operator", {}),
    ("player", "GET", "/no-such-page", {}),
    ("player", "POST", "/casino-war/rounds", {"bet": "many"}),
    ("player", "POST", "/auth/register", {"username": "x"}),
    ("operator", "POST", "/operator/me/time-zone", {"time_zone": "Nowhere/Land"}),
    ("operator", "POST", "/operator/alerts/rules", {"kind": "no-such-kind", "currency": "chips"}),
    ("operator", "POST", "/operator/players/1/adjust/preview", {"currency": "pebbles"}),
]


@pytest.mark.parametrize("db_url", ["postgres"], indirect=True)
@pytest.mark.parametrize(("who", "method", "page", "form"), VISITORS_PAGES)
def test_a_page_whose_database_goes_away_once_its_visitor_is_known_is_a_503(
    relayed_app: tuple[Flask, Relay], who: str, method: str, page: str, form: dict[str, str]
) -> None:
    """The database goes away after the visitor was read from their cookie. Whatever page was
    to answer (the page asked for, a refusal's, a form shown again beside its refusal) reads
    it again, and fails too: the answer is the 503 that says when to try again, drawn without
    the database (not a player's balances in its header), never the 500 of an error handler
    that failed."""
    app, relay = relayed_app
    signed_in(app, "pat")  # the player of the console's forms
    operator = who == "operator"
    client, _ = signed_in(app, "olga", operator=True) if operator else signed_in(app, "pam")
    with client.session_transaction() as cookie:
        cookie["csrf"] = "known-token"
    home = "/operator/audit" if operator else "/lobby"
    assert client.get(home).status_code == 200

    @sa.event.listens_for(app.extensions["sota_casino.engine"], "before_cursor_execute")
    def cut(_conn: Any, _cursor: Any, statement: str, *_args: Any) -> None:
        if "FROM users" not in statement and "FROM user_sessions" not in statement:
            relay.cut()

    answer = client.open(page, method=method, data={"csrf_token": "known-token", **form})
    assert answer.status_code == 503, answer.get_data(as_text=True)[:300]
    assert int(answer.headers["Retry-After"]) > 0
    assert "closed for a moment" in answer.get_data(as_text=True)
    sa.event.remove(app.extensions["sota_casino.engine"], "before_cursor_execute", cut)
    relay.restore()
    assert client.get(home).status_code == 200


@pytest.mark.parametrize("db_url", ["postgres"], indirect=True)
def test_a_request_that_finds_every_pooled_connection_busy_is_a_503(
    db_url: str, tmp_path: Path
) -> None:
    """The pool hands out a connection or, past its timeout, raises its own TimeoutError, which
    is no driver's error: it answered 500. Every connection busy elsewhere (a leak, or more
    threads than the pool holds) is a wait that ran out, the 503 of an outage."""
    app = create_app(app_config(db_url, tmp_path))
    client, bearer = signed_in(app)
    engine = app.extensions["sota_casino.engine"]
    engine.pool.dispose()
    engine.pool = engine.pool.recreate()
    engine.pool._timeout = 0.1  # type: ignore[attr-defined]  # a short wait, not 30 s
    held = [engine.connect() for _ in range(engine.pool.size() + engine.pool._max_overflow)]  # type: ignore[attr-defined]
    try:
        assert_unavailable(client.get("/api/v1/me", headers=bearer))
        page = client.get("/lobby")
        assert page.status_code == 503
        assert int(page.headers["Retry-After"]) > 0
        ready = client.get("/readyz")
        assert ready.status_code == 503
        assert ready.get_json()["database"] == "unreachable"
    finally:
        for connection in held:
            connection.close()
    assert client.get("/api/v1/me", headers=bearer).status_code == 200
    engine.dispose()

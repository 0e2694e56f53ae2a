"""Time every console page and operator endpoint on a database:
``python -m bench.console_pages DATABASE_URL``.

Build the large one first with ``python -m bench.large_log 1000000 DATABASE_URL``. This adds
what a console has to show beside the log, through the service layer (once: players who
played, adjustments, an alert rule, a pending proposal, the stored tree), then requests every
GET route of ``/operator`` and ``/api/v1/operator`` as an operator, in one process, and prints
a Markdown table: the median and slowest of three requests, and for a download the time to
its first bytes (a download streams, so that is what the reader waits for) and to its end.
"""

from __future__ import annotations

import statistics
import sys
import time
from typing import Any
from typing import Final

from flask import Flask
from flask.testing import FlaskClient

from sota_casino import migrate
from sota_casino.factory import create_app
from sota_casino.services import accounts
from sota_casino.services import alerts
from sota_casino.services import audit
from sota_casino.services import money
from sota_casino.services import rounds
from sota_casino.web.security import CSRF_KEY
from sota_casino.web.visitor import SESSION_KEY

PASSWORD: Final = "bench console password"
PLAYERS: Final = 20
ROUNDS_EACH: Final = 40
RUNS: Final = 3


def _queries(size: int) -> dict[str, str]:
    """Query strings by route, at points of a log of ``size`` entries: a filter keeps the whole
    log out of a download's figure, a range of 2,000 entries from the middle."""
    middle = size // 2
    ranged = f"?from_seq={middle}&to_seq={middle + 2000}"
    sizes = f"?old_size={size * 2 // 5}&new_size={size * 9 // 10}"
    return {
        "/operator/audit/entries": "?format=csv&actor=user:7&since=2000-01-01",
        "/operator/ledger/math": "?format=csv",
        "/operator/audit/range-export": ranged,
        "/api/v1/operator/audit/range-export": ranged,
        "/api/v1/operator/audit/consistency": sizes,
    }


def _extra(size: int) -> tuple[str, ...]:
    """Filtered pages an auditor uses, timed beside the plain ones."""
    return (
        "/operator/audit?actor=user:7",
        f"/operator/audit?subject=round:{size * 3 // 4}",
        "/operator/audit?since=2026-01-01T00:00:00&order=oldest",
        f"/operator/audit?from_seq={size * 2 // 3}",
        "/operator/audit?text=bench.event",
        "/operator/audit?text=no-such-word",
        "/operator/audit?order=oldest",
    )


#: Streams over the whole log: their figure is the time to the first bytes.
WHOLE: Final = ("/operator/audit/export", "/api/v1/operator/audit/export")


def _seed(app: Flask) -> dict[str, Any]:
    """Players, rounds, adjustments, a rule and a proposal, once; return ids for the URLs."""
    session = app.extensions["sota_casino.sessionmaker"]()
    try:
        found = accounts.find_users(session, "benchop")
        if found:
            olga = found[0].id
        else:
            olga = accounts.create_operator(session, "benchop", PASSWORD).id
            accounts.create_operator(session, "benchop2", PASSWORD)
            alerts.create_rule(session, olga, "large_win", "chips", 10_000, 24)
            alerts.create_rule(session, olga, "player_adjustments", "chips", 1_000, 24)
            for n in range(PLAYERS):
                player = accounts.register(
                    session, f"benchp{n}", PASSWORD, address=f"10.9.{n}.1"
                ).id
                for _ in range(ROUNDS_EACH):
                    round_ = rounds.place_casino_war_bet(session, player, 500, 0)
                    if round_.status == "awaiting_decision":
                        rounds.decide_casino_war(session, player, round_.id, "war")
                money.adjust(session, olga, player, "chips", 2_500, "bench credit")
            money.propose_adjustment(session, olga, player, "chips", 500_000, "bench proposal")
            audit.checkpoint(session)
        while audit.extend_tree(session) < (audit.current_size(session) >> 6 << 6):
            pass
        player = accounts.find_users(session, "benchp1")[0].id
        rule = alerts.rules(session).rules[0].id
        alert = next((found.id for found in alerts.listing(session, limit=1).alerts), 1)
        return {"operator": olga, "user_id": player, "rule_id": rule, "alert_id": alert}
    finally:
        session.close()


def _client(app: Flask, user_id: int) -> FlaskClient:
    session = app.extensions["sota_casino.sessionmaker"]()
    try:
        token, _ = accounts.start_session(session, user_id)
        api, _ = accounts.start_session(session, user_id, kind="api")
    finally:
        session.close()
    client = app.test_client()
    with client.session_transaction() as cookie:
        cookie[CSRF_KEY], cookie[SESSION_KEY] = "bench", token
    client.environ_base["HTTP_AUTHORIZATION"] = f"Bearer {api}"
    return client


def _urls(app: Flask, ids: dict[str, Any], size: int) -> list[str]:
    queries = _queries(size)
    args = ids | {"seq": size // 2, "name": "casino_war", "list_name": "rounds", "approval_id": 1}
    found = []
    for rule in app.url_map.iter_rules():
        if "GET" not in (rule.methods or ()) or not rule.rule.startswith(
            ("/operator", "/api/v1/operator")
        ):
            continue
        values = {a: args[a] for a in rule.arguments}
        url = rule.build(values, append_unknown=False)[1]  # type: ignore[index]
        default = "?format=csv" if rule.rule.endswith("/export") and url not in WHOLE else ""
        found.append(url + queries.get(rule.rule, default))
        if rule.rule.endswith("/checks/<name>"):
            found[-1] = url.replace("casino_war", "audit")
    return sorted(set(found)) + list(_extra(size))


def _time(client: FlaskClient, url: str) -> tuple[int, float, float]:
    """Status, and the milliseconds to the first bytes and to the end of one request."""
    started = time.perf_counter()
    response = client.get(url, buffered=False)
    chunks = iter(response.response)
    next(chunks, b"")
    first = time.perf_counter() - started
    if url.split("?")[0] not in WHOLE:
        for _ in chunks:
            pass
    whole = time.perf_counter() - started
    response.close()
    return response.status_code, first * 1000, whole * 1000


def main(argv: list[str]) -> None:
    if not argv:
        raise SystemExit(__doc__)
    migrate.upgrade(argv[0])
    app = create_app({"DATABASE_URL": argv[0], "CHECK_INTERVAL_SECONDS": 0, "CHECKPOINT_EVERY": 0})
    with app.app_context():
        ids = _seed(app)
        client = _client(app, ids["operator"])
        session = app.extensions["sota_casino.sessionmaker"]()
        size = audit.current_size(session)
        session.close()
        print(f"{size:,} audit entries\n")
        print("| route | status | median | slowest | first bytes |")
        print("| --- | ---: | ---: | ---: | ---: |")
        for url in _urls(app, ids, size):
            runs = [_time(client, url) for _ in range(RUNS)]
            status = runs[-1][0]
            wholes = [r[2] for r in runs]
            firsts = [r[1] for r in runs]
            note = " (first bytes only: streams the whole log)" if url in WHOLE else ""
            print(
                f"| `{url}`{note} | {status} | {statistics.median(wholes):.0f} ms | "
                f"{max(wholes):.0f} ms | {statistics.median(firsts):.0f} ms |"
            )


if __name__ == "__main__":
    main(sys.argv[1:])

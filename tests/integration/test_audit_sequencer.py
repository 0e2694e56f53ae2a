"""The audit log's sequencer on PostgreSQL: a use case writes its entries, unsequenced, into
``audit_pending`` in its own transaction; one integrator at a time (under an advisory lock)
gives them their sequence numbers and hashes. See docs/scaling.md for the invariants."""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Any

import pytest
from flask import Flask
from sqlalchemy.orm import Session

from sota_casino.services import audit
from sota_casino.services import money
from sota_casino.services import rounds

ON_POSTGRES = pytest.mark.parametrize("db_url", ["postgres"], indirect=True)


# SQLite has one writer at a time: there every round waits for the one before.
@ON_POSTGRES
def test_a_round_paused_after_writing_its_entries_stalls_no_other_player(
    app: Flask, session: Session, register: Callable[..., int]
) -> None:
    first, second = register(), register()
    for user_id in (first, second):  # each player's own accounts exist, the key is registered
        rounds.play_sota(session, user_id, 1, preset="nordic")
    written = threading.Event()
    release = threading.Event()
    holding = threading.local()
    append = audit.record_all

    def append_then_pause(*args: Any, **kwargs: Any) -> Any:
        result = append(*args, **kwargs)
        if getattr(holding, "pause", False) and not written.is_set():
            written.set()  # the first player's entries are written, its transaction open
            assert release.wait(30)
        return result

    def hold_a_round() -> None:
        holding.pause = True
        with app.app_context():
            own = app.extensions["sota_casino.sessionmaker"]()
            rounds.play_sota(own, first, 1, preset="nordic")
            own.close()

    audit.record_all = append_then_pause  # one thread pauses after it
    try:
        held = threading.Thread(target=hold_a_round)
        held.start()
        assert written.wait(30)
        done = threading.Event()

        def other_round() -> None:
            with app.app_context():
                own = app.extensions["sota_casino.sessionmaker"]()
                rounds.play_sota(own, second, 1, preset="nordic")
                money.balances(own, second)
                own.close()
            done.set()

        threading.Thread(target=other_round).start()
        assert done.wait(10), "the second player's round waited for the first's log entries"
        release.set()
        held.join(30)
    finally:
        audit.record_all = append
        release.set()

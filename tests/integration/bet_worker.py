"""A separate process that places Casino War bets: ``bet_worker.py CONFIG_JSON``.

CONFIG_JSON holds the app settings, ``user_id``, ``bets``, ``bet`` and, for the crash tests,
``hang_file``: then the process hangs inside its first bet's transaction (after the postings)
and writes that file, waiting to be killed; or ``hang_after_commit_file``: then it hangs right
after its first bet commits, before its log entries are sequenced (PostgreSQL). Prints
``{"accepted": n, "refused": m}``.
"""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path

from sota_casino.core.errors import InsufficientFunds
from sota_casino.factory import create_app
from sota_casino.services import audit
from sota_casino.services import rounds


def main() -> None:
    config = json.loads(sys.argv[1])
    app = create_app(config["app"])
    if hang_file := config.get("hang_file"):
        real_record = audit.record_all

        def record_then_hang(session, specs, **kwargs):  # type: ignore[no-untyped-def]
            seqs = real_record(session, specs, **kwargs)
            if any(spec.action == "round.bet" for spec in specs):
                session.flush()
                Path(hang_file).write_text("inside the transaction")
                time.sleep(60)
            return seqs

        audit.record_all = record_then_hang
    if hang_after_commit_file := config.get("hang_after_commit_file"):

        def hang_before_integrating(*_args, **_kwargs):  # type: ignore[no-untyped-def]
            Path(hang_after_commit_file).write_text("committed, not sequenced")
            time.sleep(60)

        audit._integrate_after_commit = hang_before_integrating
    accepted = refused = 0
    with app.app_context():
        session = app.extensions["sota_casino.sessionmaker"]()
        for _ in range(config["bets"]):
            try:
                rounds.place_casino_war_bet(session, config["user_id"], config["bet"])
                accepted += 1
            except InsufficientFunds:
                refused += 1
    print(json.dumps({"accepted": accepted, "refused": refused}))


if __name__ == "__main__":
    main()

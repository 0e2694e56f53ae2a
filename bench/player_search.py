"""Time the console's search of players by part of a name on PostgreSQL, with the names'
trigram index and without it: ``python -m bench.player_search SERVER_URL [PLAYERS]``.

A scratch database of ``PLAYERS`` (100,000 by default) is made on the server at ``SERVER_URL``
and dropped afterwards. Each search is a page of the players' list (``lists.page``, as the
console and its API read it) of a name matched by one player, by none, by every player (the
list's newest page), and a text of two characters (too short for a trigram). The index is
dropped and made again between rounds (without, with, without, with), each measured on new
connections, and beside each search, in the same round, the baseline: the list's first page
with no search.
"""

from __future__ import annotations

import sys
from typing import Final

import sqlalchemy as sa

from sota_casino import migrate
from sota_casino.factory import create_app
from sota_casino.services import lists

from .__main__ import machine_info
from .timing import median_ms
from .timing import runs_table

INDEX: Final = "ix_users_username_trigrams"
MAKE_INDEX: Final = f"CREATE INDEX {INDEX} ON users USING gin (lower(username) gin_trgm_ops)"
ROUNDS: Final = 2
RUNS: Final = 5
SEARCHES: Final = {
    "no search (the baseline)": "",
    "a name of one player": "rare_one",
    "a name of none": "no-such-name",
    "a part of every name": "player",
    "two characters": "zq",
}


def main(argv: list[str]) -> None:
    if not argv:
        raise SystemExit(__doc__)
    players = int(argv[1]) if len(argv) > 1 else 100_000
    with migrate.scratch_postgres(argv[0], "bench_search") as url:
        app = create_app({"DATABASE_URL": url, "CHECK_INTERVAL_SECONDS": 0})
        engine = app.extensions["sota_casino.engine"]
        with engine.begin() as connection:
            connection.execute(
                sa.text(
                    "INSERT INTO users (username, password_hash, role, locked, created_at) "
                    "SELECT 'player' || lpad(n::text, 6, '0'), '-', 'player', false, now() "
                    "FROM generate_series(1, :players) AS n"
                ),
                {"players": players - 1},
            )
            connection.execute(
                sa.text(
                    "INSERT INTO users (username, password_hash, role, locked, created_at) "
                    "VALUES ('The_Rare_One', '-', 'player', false, now())"
                )
            )
        with engine.connect() as connection:
            connection.execution_options(isolation_level="AUTOCOMMIT").execute(
                sa.text("VACUUM ANALYZE users")
            )
        session = app.extensions["sota_casino.sessionmaker"]()
        rows: dict[str, list[float]] = {}
        for _ in range(ROUNDS):
            for indexed in (False, True):
                with engine.begin() as connection:
                    connection.execute(sa.text(MAKE_INDEX if indexed else f"DROP INDEX {INDEX}"))
                # New connections: a statement psycopg prepared keeps PostgreSQL's choice of a
                # plan for any text, made while the index was not there.
                engine.dispose()
                for name, text in SEARCHES.items():

                    def search(text: str = text) -> None:
                        lists.page(session, "users", lists.Paging(), q=text)

                    key = f"{name}, {'with' if indexed else 'without'} the index (ms)"
                    rows.setdefault(key, []).append(median_ms(search, RUNS))
        session.close()
        engine.dispose()
    print(machine_info())
    print(f"\n{players:,} players; each figure the median of {RUNS} searches\n")
    print(runs_table("search", dict(sorted(rows.items(), key=lambda row: row[0]))))


if __name__ == "__main__":
    main(sys.argv[1:])

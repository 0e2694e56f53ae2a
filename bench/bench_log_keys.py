"""The log's keys and server seeds in the whole check: what a chunk's cost beside reading and
chaining it.

A log shaped like play, built with ``bench.large_log``'s bulk writer: 300 players' rounds (each
bet, then settled; one in 13 a Casino War tie whose decision and settlement are logged a
thousand rounds later; one in 7 a Sota game with two Prisoners of War moves), and after every
50th round the next pair activated and a new one committed (its entry logging its commitment),
and the pair finished 1,100 rounds before revealed (its server seed logged; its ties settled by
then: a pair with a round open is not revealed). At each size, on SQLite and (when it answers)
PostgreSQL, for a chunk of 2,000 entries at the log's start, middle and end, the best of 7
runs of:

- *read + chain*: reading the chunk and checking its hash chain, what the whole check did
  before the keys;
- *keys*: looking up in the database the keys taken before the chunk under its subjects, and
  the rule over the chunk (``anchors.first_key_problem``);
- *seeds*: looking up the pairs committed to the chunk's commitments, the rows of the pairs it
  commits and the commitment entries of the pairs it reveals, and the rules over the chunk
  (``anchors.seed_reused``, the rows' rewrites, ``anchors.other_seed_revealed``).

*whole check*: one ``audit.verify`` (``flask audit verify``) over the whole log. The cost of
appending (a bet's path) is not here: the keys add no index and no write (the seeds, a unique
index on the pairs' commitments, written once a pair).

On PostgreSQL the log is analyzed after it is built, as autovacuum does for a table that grew:
without statistics (a table just bulk-loaded, before autovacuum reaches it) the planner scans
the table for the lookup instead of probing the index on subject.
"""

from __future__ import annotations

import functools
import hashlib
import itertools
import time
from collections import deque
from collections.abc import Callable
from collections.abc import Iterator
from pathlib import Path
from typing import Any
from typing import Final

import sqlalchemy as sa
from sqlalchemy.orm import Session

from bench.large_log import Event
from bench.large_log import fill
from bench.timing import on_both_databases
from bench.timing import seconds
from sota_casino.core import anchors
from sota_casino.core import audit_chain
from sota_casino.factory import create_app
from sota_casino.services import audit

SIZES: Final = (20_000, 300_000)
RUNS: Final = 7
#: Rounds between a tie's bet and its decision and settlement.
TIE_WAIT: Final = 1_000
#: Rounds between a pair's last bet and its reveal: past its last tie's settlement.
PAIR_ROUNDS: Final = 50
REVEAL_WAIT: Final = 1_100


def play_events() -> Iterator[Event]:
    """The entries of 300 players' play, in log order (see the module's description)."""
    ties: deque[tuple[str, str]] = deque()
    pair = 0
    # The pairs the first rounds are bet on, committed before them as the service commits them.
    yield "user:1", "seed_pair.created", "seed_pair:1", _created(1, "active")
    yield "user:1", "seed_pair.created", "seed_pair:2", _created(2, "next")
    for number in itertools.count(1):
        actor, subject = f"user:{number % 300 + 1}", f"round:{number}"
        bet = {"game": "casino_war", "seed_pair_id": pair + 1, "nonce": (number - 1) % PAIR_ROUNDS}
        yield actor, "round.bet", subject, bet
        if number % 13 == 0:
            ties.append((actor, subject))
        elif number % 7 == 0:
            yield actor, "round.move", subject, {"cards": ["AS"]}
            yield actor, "round.move", subject, {"cards": ["2C", "3D"]}
            yield actor, "round.settled", subject, {"game": "sota", "payout": 0}
        else:
            yield actor, "round.settled", subject, {"game": "casino_war", "payout": 200}
        if len(ties) > TIE_WAIT // 13:
            actor, subject = ties.popleft()
            yield actor, "round.decision", subject, {"choice": "war"}
            yield actor, "round.settled", subject, {"game": "casino_war", "payout": 400}
        if number % PAIR_ROUNDS == 0:
            pair += 1
            yield actor, "seed_pair.client_seed_set", f"seed_pair:{pair + 1}", {"client_seed": "s"}
            yield actor, "seed_pair.created", f"seed_pair:{pair + 2}", _created(pair + 2, "next")
            if (done := pair - REVEAL_WAIT // PAIR_ROUNDS) > 0:
                revealed = {"server_seed": _server_seed(done), "rounds": PAIR_ROUNDS}
                yield actor, "seed_pair.rotated", f"seed_pair:{done}", revealed


def _server_seed(pair: int) -> str:
    """The server seed of pair ``pair``, as a reveal entry logs it: one of its own."""
    return hashlib.sha256(b"bench server seed %d" % pair).hexdigest()


def _created(pair: int, status: str) -> dict[str, str]:
    """A commitment entry's data, as the service logs it: the pair's commitment."""
    return {"commitment": anchors.seed_commitment(_server_seed(pair)), "status": status}


def _best_ms(action: Callable[[], Any]) -> float:
    """The fastest of :data:`RUNS` runs, in milliseconds: the least disturbed by other work."""
    fastest = float("inf")
    for _ in range(RUNS):
        started = time.perf_counter()
        action()
        fastest = min(fastest, time.perf_counter() - started)
    return fastest * 1000


def _read_and_chain(connection: sa.Connection, after: int, prev_hash: str) -> None:
    chunk = audit._entry_chunk(connection, after)
    audit_chain.verify_chain(chunk, start_seq=after + 1, prev_hash=prev_hash)


def _check_keys(connection: sa.Connection, after: int, entries: list[Any]) -> None:
    taken = audit._keys_taken(connection, after, entries)
    # A chunk alone: the pairs and rounds begun before it are not carried here, as the whole
    # check carries them from chunk to chunk.
    alone = anchors.PairsInPlay(from_start=False)
    assert anchors.first_key_problem(entries, taken, alone) is None


def _check_seeds(connection: sa.Connection, entries: list[Any]) -> None:
    committed = audit._pairs_committed_to(connection, entries)
    held = audit._rows_of_pairs(connection, entries)
    commitments = audit._commitments_revealed(connection, entries)
    found = anchors.first_found(
        anchors.seed_reused(entries, committed),
        audit._row_rewritten(entries, held),
        anchors.other_seed_revealed(entries, commitments),
    )
    assert found is None, found


def _per_chunk(session: Session, size: int) -> tuple[float, float, float]:
    """Milliseconds per chunk (the mean of three places) of read + chain, of the keys and of
    the server seeds."""
    base = keys = seeds = 0.0
    places = (audit.CHUNK, size // 2, size - audit.CHUNK)  # after the first chunk: keys before
    bind = session.get_bind()
    assert isinstance(bind, sa.Engine)
    with bind.connect() as connection:
        for after in places:
            entries = audit._entry_chunk(connection, after)
            prev_hash = entries[0]["prev_hash"]
            base += _best_ms(functools.partial(_read_and_chain, connection, after, prev_hash))
            keys += _best_ms(functools.partial(_check_keys, connection, after, entries))
            seeds += _best_ms(functools.partial(_check_seeds, connection, entries))
    return base / len(places), keys / len(places), seeds / len(places)


def _measure(url: str, workdir: Path) -> list[tuple[int, float, float, float, float]]:
    app = create_app(
        {
            "DATABASE_URL": url,
            "SECRET_KEY": "bench",
            "SIGNING_KEY_FILE": str(workdir / "key.pem"),
            "CHECK_INTERVAL_SECONDS": 0,
        }
    )
    rows = []
    events = play_events()
    try:
        with app.app_context():
            session = app.extensions["sota_casino.sessionmaker"]()
            size = 0
            for target in SIZES:
                size = fill(session, target - size, events=events)
                if session.get_bind().dialect.name == "postgresql":
                    with session.begin():  # as autovacuum does for a table that grew
                        session.execute(sa.text("ANALYZE audit_entries"))
                assert audit.verify(session).ok  # a check that stopped early times nothing
                whole = seconds(lambda: audit.verify(session))
                rows.append((size, whole, *_per_chunk(session, size)))
            session.close()
    finally:
        app.extensions["sota_casino.engine"].dispose()
    return rows


def main() -> None:
    results = on_both_databases(_measure, "sota_bench_log_keys")
    print("## The log's keys in the whole check\n")
    print(__doc__.split("\n\n", 1)[1].strip())
    print()
    print(
        "| database | entries | whole check (s) | µs per entry | read + chain per chunk (ms) "
        "| keys per chunk (ms) | keys / (read + chain) | seeds per chunk (ms) "
        "| seeds / (read + chain) |"
    )
    print("| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |")
    for label, rows in results:
        for size, whole, base, keys, seeds in rows:
            print(
                f"| {label} | {size:,} | {whole:.1f} | {whole * 1e6 / size:.0f} | {base:.1f} "
                f"| {keys:.1f} | {keys / base:.1%} | {seeds:.1f} | {seeds / base:.1%} |"
            )


if __name__ == "__main__":
    main()

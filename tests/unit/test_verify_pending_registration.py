"""A player's key registration that no signed checkpoint covers yet is pending, as a round's
documents are, and held to the same bound (docs/fairness.md, "The bound"): dated by its audit
entry's ``time``, it fails once a signed checkpoint of the bundle, the time the bundle was
fetched or the verifier's clock is past that and the bound, and when it is dated past the fetch
time or the verifier's clock and the bound. Else a casino could keep a registration pending for
good: never proved in the log, never shown left out of it."""

from __future__ import annotations

from datetime import UTC
from datetime import datetime
from pathlib import Path
from typing import Any

import bundles
from test_verify_player_log_order import KEY_HEX
from test_verify_player_log_order import KEY_ID
from test_verify_player_log_order import PAIR
from test_verify_player_log_order import REPLACED_KEY
from test_verify_player_log_order import _registered_first
from test_verify_player_log_order import _with_registration
from test_verify_player_log_order import key_registration
from test_verify_signed_bets import ROUNDS
from test_verify_signed_bets import player_signed

from sota_casino.core import audit_chain
from sota_casino.core.fairness import signed
from sota_casino.verify import PENDING
from sota_casino.verify import verify_bundle

#: The bundle's one checkpoint is signed at :data:`bundles.CHECKPOINT_AT`: 18:00:05.
SIGNED = _with_registration(
    bundles.bundle(ROUNDS, pair=PAIR, make_round=player_signed()), _registered_first
)
#: A registration the checkpoint is not past the bound of: its bound ends at 18:30.
WITHIN = "2025-04-01T17:30:00.000000Z"
#: When a bundle holding a registration dated :data:`AHEAD_OF_THE_FETCH` was fetched.
FETCHED_AT = "2025-04-01T18:10:00.000000Z"
AHEAD_OF_THE_FETCH = "2025-04-01T19:10:00.000001Z"


#: The pair's rounds, played before the player registered a key, logged and anchored.
PLAYED = bundles.anchored(bundles.bundle(ROUNDS, pair=PAIR), PAIR.key)
#: Where the log took a registration after them: past the bundle's one checkpoint.
PENDING_SEQ = max(anchor["entry"]["seq"] for anchor in PLAYED["anchors"]) + 1


def registration_pending(registered_at: str) -> dict[str, Any]:
    """:data:`PLAYED` with its player's key registered, dated ``registered_at``, logged after
    the checkpoint (at :data:`PENDING_SEQ`) and served as the service serves one no signed
    checkpoint covers yet: its entry alone, without an anchor."""
    last = max((anchor["entry"] for anchor in PLAYED["anchors"]), key=lambda e: e["seq"])
    _, entry = key_registration(at=registered_at)
    linked = audit_chain.linked_entry(last["hash"], {**entry, "seq": PENDING_SEQ})
    return {**PLAYED, "player_keys": [{"entry": linked}]}


def registration_unanchored(registered_at: str) -> dict[str, Any]:
    """:data:`SIGNED` with its player's key registration dated ``registered_at`` and served
    without its anchor, though the bundle's checkpoint covers its entry (entry 2)."""
    entry = {**SIGNED["player_keys"][0]["entry"], "time": registered_at}
    linked = audit_chain.linked_entry(entry["prev_hash"], entry)
    return {**SIGNED, "player_keys": [{"entry": linked}]}


#: When the checkpoint a later registration carries is signed: after the bundle's own.
LATER_CHECKPOINT_AT = "2025-04-01T18:00:06.000000Z"


def registration_pending_beside_a_later_one_anchored(registered_at: str) -> dict[str, Any]:
    """:func:`registration_pending` with a second registration logged right after it (another
    key, retiring the first) and anchored, carrying its own checkpoint over both: signed
    after the bundle's one checkpoint, it covers the first registration's entry too."""
    pending = registration_pending(registered_at)
    first = pending["player_keys"][0]["entry"]
    _, entry = key_registration(REPLACED_KEY, KEY_ID + 1, registered_at, retires=[KEY_ID])
    second = audit_chain.linked_entry(first["hash"], {**entry, "seq": PENDING_SEQ + 1})
    entries = sorted((a["entry"] for a in PLAYED["anchors"]), key=lambda e: e["seq"])
    tree = audit_chain.entries_tree([*entries, first, second])
    size = PENDING_SEQ + 1
    document = audit_chain.checkpoint_document(size, tree.root(size).hex(), LATER_CHECKPOINT_AT)
    anchored = {
        "entry": second,
        "anchor": {
            "leaf_index": size - 1,
            "checkpoint_size": size,
            "proof": [node.hex() for node in tree.inclusion_proof(size - 1, size)],
        },
        "checkpoint": signed(PAIR.key, document),
    }
    return {**pending, "player_keys": [{"entry": first}, anchored]}


def still_pending(fetched_at: str) -> str:
    """Why a registration still pending in a bundle fetched at ``fetched_at``, past its time
    and the bound, fails (after its time, as both verifiers say it)."""
    return (
        f"still pending in the bundle fetched at {fetched_at} by this computer's clock, past the "
        "bound of 1 hour: the service signs a checkpoint over the whole log when a bundle is "
        "fetched, so it was left out of the log, or the log's checkpoints were withheld"
    )


def dated_past_the_fetch(fetched_at: str) -> str:
    """Why a registration still pending dated past ``fetched_at`` and the bound fails."""
    return (
        f"past the time the bundle was fetched ({fetched_at}, by this computer's clock) and the "
        "bound of 1 hour: the registration is dated ahead, which would keep it left out of the "
        "log within the bound"
    )


#: Each registration past its bound: when it is dated, when its bundle was fetched, and why it
#: fails after its time: fetched past the bound, dated past the fetch time and the bound, dated
#: past the verifier's clock and the bound, or pending beside a checkpoint past the bound.
PAST_THE_BOUND = (
    (WITHIN, "2025-04-01T18:30:00.000001Z", still_pending("2025-04-01T18:30:00.000001Z")),
    (AHEAD_OF_THE_FETCH, FETCHED_AT, dated_past_the_fetch(FETCHED_AT)),
    ("2025-04-01T17:00:00.000000Z", FETCHED_AT, "not in the checkpoint signed at "),
    ("2099-01-01T00:00:00.000000Z", None, "past this computer's clock ("),
)
#: The same within it, each waiting: at the end of the bound of the fetch time, or of its time.
WITHIN_THE_BOUND = (
    (WITHIN, "2025-04-01T18:30:00.000000Z"),
    ("2025-04-01T19:10:00.000000Z", FETCHED_AT),
)


#: A registration pending as both verifiers name it.
PENDING_NAMED = f"key registration #1 (entry {PENDING_SEQ})"


def named(registered_at: str, reason: str) -> str:
    """A registration's failure as both verifiers name it."""
    return f"{PENDING_NAMED}: registered at {registered_at}, {reason}"


#: Why a registration a later one's checkpoint covers fails pending, whatever its dates.
COVERED_BY_A_LATER_ONE = (
    f"{PENDING_NAMED}: pending, though the checkpoint signed at {LATER_CHECKPOINT_AT} (size "
    f"{PENDING_SEQ + 1}) covers entry {PENDING_SEQ}: a signed checkpoint holds every entry up "
    "to its size, and the service anchors them in it, so it was left out of the log, or its "
    "anchor was withheld"
)

#: Why a registration the bundle's checkpoint covers fails pending, whatever its dates.
COVERED = (
    "key registration #1 (entry 2): pending, though the checkpoint signed at "
    f"{bundles.CHECKPOINT_AT} (size {len(SIGNED['anchors']) + 1}) covers entry 2: a signed "
    "checkpoint holds every entry up to its size, and the service anchors them in it, so it was "
    "left out of the log, or its anchor was withheld"
)


def test_a_key_registration_still_pending_past_its_bound_fails(tmp_path: Path) -> None:
    """A registration pending in a bundle fetched past its time and the bound, dated past the
    fetch time or this computer's clock and the bound, or beside a checkpoint signed past its
    time and the bound, was left out of the log: the bundle fails (exit 1), naming it."""
    assert bundles.run_verifier(tmp_path, KEY_HEX, SIGNED)[0] == 0
    said = {}
    for registered_at, fetched_at, reason in PAST_THE_BOUND:
        fetched = ("--fetched-at", fetched_at) if fetched_at else ()
        code, out = bundles.run_verifier(
            tmp_path, KEY_HEX, registration_pending(registered_at), *fetched
        )
        said[registered_at] = (code, f"bundle: player: {named(registered_at, reason)}" in out)
    assert said == {registered_at: (1, True) for registered_at, _, _ in PAST_THE_BOUND}


def test_a_key_registration_still_pending_within_its_bound_waits(tmp_path: Path) -> None:
    """Within the bound of the fetch time and of its own, a registration no checkpoint covers
    yet is not yet anchored (exit 4), as a round is; checked without the time it was fetched,
    the verifier's clock long past it, it waits, saying how long."""
    for registered_at, fetched_at in WITHIN_THE_BOUND:
        code, out = bundles.run_verifier(
            tmp_path, KEY_HEX, registration_pending(registered_at), "--fetched-at", fetched_at
        )
        assert code == 4, out
    clock = datetime(2025, 4, 4, 18, 0, tzinfo=UTC)
    report = verify_bundle(registration_pending(WITHIN), KEY_HEX, now=clock)
    assert report.ok and report.not_yet_anchored, report.failures
    assert [f.message for f in report.findings if f.status == PENDING] == [
        f"{PENDING_NAMED} is not in a signed checkpoint yet: ask for the bundle "
        f"again later to prove it is in the log; registered at {WITHIN}, 3 days before this "
        "computer's clock: fetch the bundle again and verify it with --fetched-at now, which "
        "fails it if it is still pending"
    ]


def test_a_key_registration_pending_though_a_signed_checkpoint_covers_its_entry_fails(
    tmp_path: Path,
) -> None:
    """The service anchors a registration once a checkpoint covers its entry (its ``seq`` at
    most the checkpoint's size), in the same transaction that serves the bundle's checkpoints:
    one listed as pending beside a checkpoint over its entry was left out of the log (another
    entry holds its place) or had its anchor withheld, whatever its dates, which were within
    the bound of the checkpoint, of the fetch and of this computer's clock."""
    for registered_at, fetched_at in WITHIN_THE_BOUND:
        covered = registration_unanchored(registered_at)
        code, out = bundles.run_verifier(tmp_path, KEY_HEX, covered, "--fetched-at", fetched_at)
        assert code == 1 and f"bundle: player: {COVERED}" in out, out
        report = verify_bundle(covered, KEY_HEX, now=datetime(2025, 4, 1, 18, 10, tzinfo=UTC))
        assert [f.message for f in report.failures] == [COVERED]


def test_a_key_registration_pending_though_a_later_ones_checkpoint_covers_it_fails(
    tmp_path: Path,
) -> None:
    """A later registration of the bundle is anchored in a checkpoint of its own, newer than the
    bundle's, which covers the earlier registration's entry too: that checkpoint was not
    counted, and the earlier one, listed as pending, waited. Each signed checkpoint a bundle
    carries is counted."""
    for registered_at, fetched_at in WITHIN_THE_BOUND:
        covered = registration_pending_beside_a_later_one_anchored(registered_at)
        code, out = bundles.run_verifier(tmp_path, KEY_HEX, covered, "--fetched-at", fetched_at)
        assert code == 1 and f"bundle: player: {COVERED_BY_A_LATER_ONE}" in out, out

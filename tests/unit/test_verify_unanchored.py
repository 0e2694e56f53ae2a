"""A bundle proves its documents in the signed log only with their anchors: one stripped of
them fails the ``log`` check, and documents the bundle lists as pending are never called
proven (the verdict says to fetch the bundle again later, with an exit code of its own)."""

from __future__ import annotations

import copy
import json
from datetime import UTC
from datetime import datetime
from datetime import timedelta
from pathlib import Path
from typing import Any

import bundles

from sota_casino.core import anchors
from sota_casino.core.fairness import format_time
from sota_casino.core.fairness import parse_time
from sota_casino.core.fairness import public_key_hex
from sota_casino.verify import FAIL
from sota_casino.verify import PENDING
from sota_casino.verify import verify_bundle

PAIR = bundles.Pair()
KEY_HEX = public_key_hex(PAIR.key)
GOOD = bundles.bundle(6, pair=PAIR)


def _stripped(bundle: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in bundle.items() if k not in ("anchors", "checkpoints")}


def _all_pending(bundle: dict[str, Any]) -> dict[str, Any]:
    """The bundle with no anchor, every document listed as waiting for a checkpoint."""
    waiting = [anchors.commitment_of(PAIR.seed_pair_id), anchors.reveal_of(PAIR.seed_pair_id)]
    waiting += [
        anchors.settlement_of(signed["document"]["round_id"]) for signed in bundle["rounds"]
    ]
    pending = [{"of": of, "reason": "not in a checkpoint yet", "retry_after": 5} for of in waiting]
    return {**_stripped(bundle), "anchors": [], "checkpoints": [], "pending_anchors": pending}


def test_the_helper_bundles_are_anchored_and_pass_the_log_check() -> None:
    report = verify_bundle(GOOD, KEY_HEX)
    assert report.ok and not report.pending, [f.text() for f in report.findings]
    assert {row.statuses["log"] for row in (report.documents[0], *report.rounds)} == {"pass"}


def test_a_bundle_stripped_of_its_anchors_fails_the_log_check(tmp_path: Path) -> None:
    report = verify_bundle(_stripped(GOOD), KEY_HEX)
    assert not report.ok
    assert {f.check for f in report.failures} == {"log"}
    texts = [f.text() for f in report.failures]
    assert (
        "bundle: log: unanchored: the bundle proves none of its documents in the signed log"
        in (texts[0])
    )
    # Every document shows the failure, not a "not applicable".
    assert {row.statuses["log"] for row in (report.documents[0], *report.rounds)} == {FAIL}
    code, out = bundles.run_verifier(tmp_path, KEY_HEX, _stripped(GOOD))
    assert code == 1 and out.splitlines()[-1].startswith("Result: FAILED"), out


def test_a_rewritten_round_stripped_of_its_anchors_does_not_pass() -> None:
    """An operator with the key and the database rewrites a round, signs it, and hands out the
    bundle without the anchors that would contradict it."""
    forged = _stripped(GOOD)
    forged["rounds"] = list(forged["rounds"])
    forged["rounds"][2] = bundles.resign(
        PAIR, forged["rounds"][2], settled_at="2025-04-01T11:30:00.000000Z"
    )
    assert not verify_bundle(forged, KEY_HEX).ok


def test_documents_listed_as_pending_are_not_called_proven(tmp_path: Path) -> None:
    from sota_casino.verify import EXIT_NOT_ANCHORED

    bundle = _all_pending(GOOD)
    report = verify_bundle(bundle, KEY_HEX)
    assert report.ok and report.not_yet_anchored
    assert {row.statuses["log"] for row in (*report.documents, *report.rounds)} == {PENDING}
    code, out = bundles.run_verifier(tmp_path, KEY_HEX, bundle)
    assert code == EXIT_NOT_ANCHORED == 4, out
    last = out.splitlines()[-1]
    assert last.startswith("Result: NOT YET ANCHORED:"), out
    assert "fetch the bundle again later" in last and "(exit 4)" in last
    assert "OK" not in last
    assert "Pending until the server seed is revealed" not in out
    assert "Not yet in the signed log (fetch the bundle again later): log (8)" in out
    code, out = bundles.run_verifier(tmp_path, KEY_HEX, bundle, "--json")
    answer = json.loads(out)
    assert code == 4 and answer["ok"] is False and answer["not_yet_anchored"] is True
    assert answer["bundles"][0]["not_yet_anchored"] is True


def test_a_bundle_pending_only_the_reveal_is_still_ok_so_far(tmp_path: Path) -> None:
    code, out = bundles.run_verifier(
        tmp_path, KEY_HEX, bundles.bundle(4, pair=PAIR, revealed=False)
    )
    assert code == 0 and out.splitlines()[-1].startswith("Result: OK so far:"), out


#: A pair still in play: only its last round can be pending alone, as the log takes every
#: round before the pair's reveal and each bet before the next nonce's.
ACTIVE = bundles.bundle(6, pair=PAIR, revealed=False)
#: The last round of :data:`ACTIVE`, settled at 11:00:05.25: the bound ends an hour later.
TAKEN = ACTIVE["rounds"][5]["document"]
AT_THE_BOUND = "2025-04-01T12:00:05.250000Z"
PAST_THE_BOUND = "2025-04-01T12:00:05.250001Z"


def test_a_round_taken_out_of_the_log_fails_once_a_checkpoint_is_dated_past_the_bound(
    tmp_path: Path,
) -> None:
    """An operator with the database took the round's entries out of the log before a
    checkpoint covered them and serves it as pending: a checkpoint the trusted key signed past
    its settlement and the bound shows the round left out, however long it is fetched again."""
    bundle = bundles.taken_out(ACTIVE, TAKEN["round_id"], PAST_THE_BOUND)
    size = bundle["checkpoints"][0]["document"]["size"]
    report = verify_bundle(bundle, KEY_HEX)
    said = (
        f"round {TAKEN['round_id']} (nonce 5): log: settled at {TAKEN['settled_at']}, not in the "
        f"checkpoint signed at {PAST_THE_BOUND} (size {size}), past the bound of 1 hour: the "
        "round was left out of the log"
    )
    assert not report.ok and [f.text() for f in report.failures] == [said]
    code, out = bundles.run_verifier(tmp_path, KEY_HEX, bundle)
    assert code == 1 and said in out and out.splitlines()[-1].startswith("Result: FAILED"), out


def test_every_checkpoint_of_the_bundle_dates_the_bound_also_two_over_the_same_entries(
    tmp_path: Path,
) -> None:
    """A bundle that carries the checkpoint dated past the bound and, after it, the same tree
    signed again dated back within the bound still fails the round: any of its checkpoints
    signed by the trusted key dates the bound, not only the last one listed at a size."""
    bundle = bundles.taken_out(ACTIVE, TAKEN["round_id"], PAST_THE_BOUND)
    (late,) = bundle["checkpoints"]
    back = {**late["document"], "time": AT_THE_BOUND}
    bundle["checkpoints"] = [late, bundles.signed(bundles.KEY, back)]
    report = verify_bundle(bundle, KEY_HEX)
    (row,) = [row for row in report.rounds if row.round_id == TAKEN["round_id"]]
    assert not report.ok and row.statuses["log"] == FAIL
    said = (
        f"round {TAKEN['round_id']} (nonce 5): log: settled at {TAKEN['settled_at']}, not in the "
        f"checkpoint signed at {PAST_THE_BOUND} (size {late['document']['size']}), past the "
        "bound of 1 hour: the round was left out of the log"
    )
    assert said in [f.text() for f in report.failures]
    code, out = bundles.run_verifier(tmp_path, KEY_HEX, bundle)
    assert code == 1 and said in out, out


def test_a_round_pending_within_the_bound_stays_not_yet_anchored(tmp_path: Path) -> None:
    bundle = bundles.taken_out(ACTIVE, TAKEN["round_id"], AT_THE_BOUND)
    report = verify_bundle(bundle, KEY_HEX)
    assert report.ok and report.not_yet_anchored, [f.text() for f in report.failures]
    (row,) = [row for row in report.rounds if row.round_id == TAKEN["round_id"]]
    assert row.statuses["log"] == PENDING
    code, out = bundles.run_verifier(tmp_path, KEY_HEX, bundle)
    assert code == 4 and out.splitlines()[-1].startswith("Result: NOT YET ANCHORED"), out


def test_only_a_checkpoint_signed_by_the_trusted_key_dates_the_bound() -> None:
    """A checkpoint dated past the bound under another key proves nothing: it fails as such,
    and the round stays pending, not left out."""
    other = bundles.Pair(key=bundles.new_signing_key())
    bundle = bundles.taken_out(ACTIVE, TAKEN["round_id"], AT_THE_BOUND)
    late = bundles.taken_out(ACTIVE, TAKEN["round_id"], PAST_THE_BOUND, key=other.key)
    bundle["checkpoints"] = [*bundle["checkpoints"], late["checkpoints"][0]]
    report = verify_bundle(bundle, KEY_HEX)
    texts = [f.text() for f in report.failures]
    assert texts and all("not signed by the trusted key" in text for text in texts), texts
    (row,) = [row for row in report.rounds if row.round_id == TAKEN["round_id"]]
    assert row.statuses["log"] == PENDING


def test_two_signed_checkpoints_over_the_same_entries_that_differ_fail_the_bundle(
    tmp_path: Path,
) -> None:
    """The service signs one checkpoint a size: a bundle carrying two over the same entries
    with another root (a fork) or another time (one dated back) holds the casino's own proof
    of it, and fails, naming both; the same checkpoint listed twice is no finding."""
    (signed,) = GOOD["checkpoints"]
    doc = signed["document"]
    assert verify_bundle({**GOOD, "checkpoints": [signed, signed]}, KEY_HEX).ok
    for other in ({"root": "ab" * 32}, {"time": "2020-01-01T00:00:00.000000Z"}):
        twin = bundles.signed(bundles.KEY, {**doc, **other})
        bundle = {**GOOD, "checkpoints": [signed, twin]}
        report = verify_bundle(bundle, KEY_HEX)
        second = {**doc, **other}
        said = (
            f"bundle: log: two signed checkpoints over {doc['size']} entries differ: root "
            f"{doc['root']} at {doc['time']}, root {second['root']} at {second['time']}: one of "
            "them forks or back-dates the log"
        )
        assert not report.ok and said in [f.text() for f in report.failures], report.failures
        code, out = bundles.run_verifier(tmp_path, KEY_HEX, bundle)
        assert code == 1 and said in out, out


def test_a_checkpoint_dated_before_one_over_fewer_entries_fails_the_bundle(tmp_path: Path) -> None:
    """The service signs each checkpoint over the whole log as it is then, so one over more
    entries is never older: a bundle carrying one dated before a checkpoint over fewer entries
    holds the casino's own proof of a back-dating (new checkpoints dated back to keep a round
    it left out of the log within the bound), and fails, naming both; the same two dated in
    order pass."""
    pending = bundles.taken_out(ACTIVE, TAKEN["round_id"], "2025-04-01T11:50:00.000000Z")
    latest = pending["checkpoints"][0]["document"]
    in_order = bundles.with_earlier_checkpoint(pending, 5, "2025-04-01T11:40:00.000000Z")
    assert (
        bundles.run_verifier(tmp_path, KEY_HEX, in_order)[0] == 4
    )  # not yet anchored, within the bound
    back = bundles.with_earlier_checkpoint(pending, 5, "2025-04-01T11:55:00.000000Z")
    smaller = back["checkpoints"][0]["document"]
    said = (
        f"bundle: log: the signed checkpoint of size {latest['size']} (root {latest['root']}) is "
        f"dated 2025-04-01T11:50:00.000000Z, before the one of size 5 (root {smaller['root']}) "
        "at 2025-04-01T11:55:00.000000Z, over fewer entries: one of them back-dates the log"
    )
    report = verify_bundle(back, KEY_HEX)
    assert not report.ok and said in [f.text() for f in report.failures], report.failures
    code, out = bundles.run_verifier(tmp_path, KEY_HEX, back)
    assert code == 1 and said in out, out


def _left_out(tmp_path: Path, bundle: dict[str, Any], said: str) -> None:
    report = verify_bundle(bundle, KEY_HEX)
    assert not report.ok and said in [f.text() for f in report.failures], report.failures
    code, out = bundles.run_verifier(tmp_path, KEY_HEX, bundle)
    assert code == 1 and said in out and out.splitlines()[-1].startswith("Result: FAILED"), out


def test_a_round_left_out_of_a_revealed_pairs_log_fails_however_it_is_dated(
    tmp_path: Path,
) -> None:
    """The log takes every round of a pair before its reveal, so a checkpoint holding the reveal
    holds them all: a round served as pending beside the reveal's anchor was left out, though
    no checkpoint is dated past its settlement and the bound (the bound alone would let a
    casino that dated the receipt ahead keep it pending for as long)."""
    taken = GOOD["rounds"][5]["document"]
    bundle = bundles.taken_out(GOOD, taken["round_id"], "2025-04-01T11:00:10.000000Z")
    reveal = bundles.leaf_of(bundle, anchors.reveal_of(PAIR.seed_pair_id))
    said = (
        f"round {taken['round_id']} (nonce 5): log: pending, though the signed log holds the "
        f"pair's reveal at leaf {reveal}, which the log takes after it: it was left out of the log"
    )
    _left_out(tmp_path, bundle, said)


def test_a_round_left_out_before_a_later_bet_of_its_pair_fails(tmp_path: Path) -> None:
    """The log takes a pair's bets in the order of their nonces: a round served as pending
    beside the anchored bet of a later nonce was left out of the log."""
    taken, after = (ACTIVE["rounds"][i]["document"] for i in (2, 3))
    bundle = bundles.taken_out(ACTIVE, taken["round_id"], "2025-04-01T11:00:10.000000Z")
    bet = bundles.leaf_of(bundle, anchors.bet_of(after["round_id"]))
    said = (
        f"round {taken['round_id']} (nonce 2): log: pending, though the signed log holds the bet "
        f"of round {after['round_id']} (nonce 3) at leaf {bet}, which the log takes after it: "
        "it was left out of the log"
    )
    _left_out(tmp_path, bundle, said)


def test_a_bet_pending_beside_its_anchored_settlement_fails(tmp_path: Path) -> None:
    last = ACTIVE["rounds"][5]["document"]
    bundle = bundles.listed_pending(ACTIVE, anchors.bet_of(last["round_id"]))
    settled = bundles.leaf_of(bundle, anchors.settlement_of(last["round_id"]))
    said = (
        f"round {last['round_id']} (nonce 5): log: pending, though the signed log holds its "
        f"settlement at leaf {settled}, which the log takes after its bet: its bet was left out "
        "of the log"
    )
    _left_out(tmp_path, bundle, said)


def test_a_commitment_pending_beside_its_pairs_anchored_rounds_fails(tmp_path: Path) -> None:
    bundle = bundles.listed_pending(ACTIVE, anchors.commitment_of(PAIR.seed_pair_id))
    first = ACTIVE["rounds"][0]["document"]["round_id"]
    bet = bundles.leaf_of(bundle, anchors.bet_of(first))
    said = (
        f"commitment document: log: pending, though the signed log holds an entry of round "
        f"{first} at leaf {bet}, which the log takes after it: it was left out of the log"
    )
    _left_out(tmp_path, bundle, said)


def test_a_round_left_out_of_the_log_and_dated_ahead_fails_by_the_verifiers_clock(
    tmp_path: Path,
) -> None:
    """The bound runs from the receipt's ``settled_at``, which the casino writes: the pair's
    last round, taken out of the log and its receipt signed again dated years ahead, would stay
    within the bound until then. No casino can have settled a round past the verifier's clock
    and the bound, so it fails; one at the bound of the clock stays not yet anchored."""
    ahead = "2099-01-01T00:00:00.000000Z"
    dated = copy.deepcopy(ACTIVE)
    dated["rounds"][5] = bundles.resign(PAIR, dated["rounds"][5], settled_at=ahead)
    bundle = bundles.taken_out(dated, TAKEN["round_id"], "2025-04-01T11:00:10.000000Z")
    clock = datetime(2098, 12, 31, 22, 59, 59, 999999, tzinfo=UTC)
    report = verify_bundle(bundle, KEY_HEX, now=clock)
    said = (
        f"round {TAKEN['round_id']} (nonce 5): log: settled at {ahead}, past this computer's "
        "clock (2098-12-31T22:59:59.999999Z) and the bound of 1 hour: the receipt is dated "
        "ahead, which would keep a round left out of the log within the bound"
    )
    assert not report.ok and [f.text() for f in report.failures] == [said]
    code, out = bundles.run_verifier(tmp_path, KEY_HEX, bundle)  # this computer's clock
    assert code == 1 and "the receipt is dated ahead" in out, out
    at_the_bound = verify_bundle(bundle, KEY_HEX, now=clock + timedelta(microseconds=1))
    assert at_the_bound.ok and at_the_bound.not_yet_anchored, at_the_bound.failures


#: A pair committed and never played: the log takes nothing of it after its commitment.
UNPLAYED = bundles.bundle(0, pair=PAIR, revealed=False)
#: When :data:`UNPLAYED` was committed, and when :data:`GOOD` was revealed: each bound ends an
#: hour later.
COMMITTED_AT, REVEALED_AT = bundles.CREATED_AT, bundles.REVEALED_AT


def test_a_commitment_left_out_of_the_log_fails_once_a_checkpoint_is_dated_past_the_bound(
    tmp_path: Path,
) -> None:
    """A casino that re-committed a pair nobody played yet, or never logged its commitment,
    serves it as pending: nothing the log takes after it is anchored, but a checkpoint the
    trusted key signed past its ``created_at`` and the bound shows it left out, however long
    the bundle is fetched again; at the bound it is not yet anchored."""
    for late in ("2025-04-01T11:00:00.000001Z", "2025-04-05T10:00:00.000000Z"):
        bundle = bundles.pair_documents_taken_out(UNPLAYED, ["commitment"], late)
        size = bundle["checkpoints"][0]["document"]["size"]
        said = (
            f"commitment document: log: created at {COMMITTED_AT}, not in the checkpoint signed "
            f"at {late} (size {size}), past the bound of 1 hour: it was left out of the log"
        )
        report = verify_bundle(bundle, KEY_HEX)
        assert not report.ok and [f.text() for f in report.failures] == [said], report.failures
        _left_out(tmp_path, bundle, said)
    waiting = bundles.pair_documents_taken_out(
        UNPLAYED, ["commitment"], "2025-04-01T11:00:00.000000Z"
    )
    code, out = bundles.run_verifier(tmp_path, KEY_HEX, waiting)
    assert code == 4 and out.splitlines()[-1].startswith("Result: NOT YET ANCHORED"), out


def test_a_reveal_left_out_of_the_log_fails_once_a_checkpoint_is_dated_past_the_bound(
    tmp_path: Path,
) -> None:
    """The log takes nothing of a pair after its reveal, so only the bound shows a reveal left
    out of it (a seed the log never saw, revealed to the player alone): a checkpoint the trusted
    key signed past its ``revealed_at`` and the bound; at the bound it is not yet anchored."""
    for late in ("2025-04-01T19:00:00.000001Z", "2025-04-08T18:00:00.000000Z"):
        bundle = bundles.pair_documents_taken_out(GOOD, ["reveal"], late)
        size = bundle["checkpoints"][0]["document"]["size"]
        said = (
            f"reveal document: log: revealed at {REVEALED_AT}, not in the checkpoint signed at "
            f"{late} (size {size}), past the bound of 1 hour: it was left out of the log"
        )
        report = verify_bundle(bundle, KEY_HEX)
        assert not report.ok and [f.text() for f in report.failures] == [said], report.failures
        _left_out(tmp_path, bundle, said)
    waiting = bundles.pair_documents_taken_out(GOOD, ["reveal"], "2025-04-01T19:00:00.000000Z")
    report = verify_bundle(waiting, KEY_HEX)
    assert report.ok and report.not_yet_anchored, report.failures
    assert report.documents[1].statuses["log"] == PENDING


def test_a_commitment_or_reveal_left_out_and_dated_ahead_fails_by_the_verifiers_clock(
    tmp_path: Path,
) -> None:
    """The bound runs from the ``created_at`` or ``revealed_at`` the casino signs: dated years
    ahead, a commitment or a reveal left out of the log would stay within it until then. No
    casino can have made either past the verifier's clock and the bound, so it fails; one at
    the bound of the clock stays not yet anchored."""
    ahead = "2099-01-01T00:00:00.000000Z"
    clock = datetime(2098, 12, 31, 22, 59, 59, 999999, tzinfo=UTC)
    committed = {
        **UNPLAYED,
        "commitment": bundles.resign(PAIR, UNPLAYED["commitment"], created_at=ahead),
    }
    revealed = {**GOOD, "reveal": bundles.resign(PAIR, GOOD["reveal"], revealed_at=ahead)}
    cases = (
        (committed, "commitment", "created at", "the commitment"),
        (revealed, "reveal", "revealed at", "the reveal"),
    )
    for dated, kind, said_at, document in cases:
        bundle = bundles.pair_documents_taken_out(dated, [kind], "2025-04-01T19:00:00.000000Z")
        said = (
            f"{kind} document: log: {said_at} {ahead}, past this computer's clock "
            f"(2098-12-31T22:59:59.999999Z) and the bound of 1 hour: {document} is dated ahead, "
            "which would keep it left out of the log within the bound"
        )
        report = verify_bundle(bundle, KEY_HEX, now=clock)
        assert not report.ok and [f.text() for f in report.failures] == [said], report.failures
        code, out = bundles.run_verifier(tmp_path, KEY_HEX, bundle)  # this computer's clock
        assert code == 1 and f"{document} is dated ahead" in out, out
        at_the_bound = verify_bundle(bundle, KEY_HEX, now=clock + timedelta(microseconds=1))
        assert at_the_bound.ok and at_the_bound.not_yet_anchored, at_the_bound.failures


def test_a_round_still_pending_in_a_bundle_fetched_past_the_bound_fails(tmp_path: Path) -> None:
    """A casino that left a round out of the log and signs no more checkpoints (or serves only
    ones dated within the round's bound, one signed at the fetch dated back) keeps it pending
    by the checkpoints alone. The service signs a checkpoint over the whole log when a bundle is
    fetched, so a bundle fetched past the round's ``settled_at`` and the bound (by the
    verifier's own clock, ``--fetched-at``) that still lists it shows it left out; at the bound
    it waits, and so does a file checked without the time it was fetched, saying how long."""
    bundle = bundles.taken_out(ACTIVE, TAKEN["round_id"], "2025-04-01T12:00:05.000000Z")
    said = (
        f"round {TAKEN['round_id']} (nonce 5): log: settled at {TAKEN['settled_at']}, still "
        f"pending in the bundle fetched at {PAST_THE_BOUND} by this computer's clock, past the "
        "bound of 1 hour: the service signs a checkpoint over the whole log when a bundle is "
        "fetched, so the round was left out of the log, or the log's checkpoints were withheld"
    )
    fetched = datetime(2025, 4, 1, 12, 0, 5, 250001, tzinfo=UTC)
    report = verify_bundle(bundle, KEY_HEX, fetched_at=fetched)
    assert [f.text() for f in report.failures] == [said]
    code, out = bundles.run_verifier(tmp_path, KEY_HEX, bundle, "--fetched-at", PAST_THE_BOUND)
    assert code == 1 and said in out, out
    assert bundles.run_verifier(tmp_path, KEY_HEX, bundle, "--fetched-at", AT_THE_BOUND)[0] == 4

    clock = datetime(2025, 4, 4, 13, 0, tzinfo=UTC)
    report = verify_bundle(bundle, KEY_HEX, now=clock)
    assert report.ok and report.not_yet_anchored, report.failures
    (row,) = [row for row in report.rounds if row.round_id == TAKEN["round_id"]]
    assert [f.message for f in row.findings if f.check == "log"] == [
        "not yet anchored: the log holds no entry of it yet; ask again shortly; settled at "
        f"{TAKEN['settled_at']}, 3 days before this computer's clock: fetch the bundle again "
        "and verify it with --fetched-at now, which fails it if it is still pending"
    ]
    # Fetched now (this computer's clock, years after it settled), it fails.
    code, out = bundles.run_verifier(tmp_path, KEY_HEX, bundle, "--fetched-at", "now")
    assert code == 1 and "still pending in the bundle fetched at" in out, out


#: When :func:`dated_past_the_fetch`'s bundles were fetched, and when their documents are dated:
#: 17 hours later.
FETCHED_AT = "2025-04-01T12:00:00.000000Z"
AFTER_THE_FETCH = "2025-04-02T05:00:00.000000Z"


def dated_past_the_fetch(
    dated_at: str = AFTER_THE_FETCH,
) -> list[tuple[str, dict[str, Any], str]]:
    """A round (the last of :data:`GOOD`), a commitment (of a pair revealed unplayed) and a
    reveal (of :data:`GOOD`) left out of the log, each signed again dated ``dated_at`` (and the
    reveal after the first two, a minute later, left out too) and served as pending: each kind,
    its bundle, and why it fails if fetched at :data:`FETCHED_AT`, as both verifiers say it
    after naming the document. (Revealed, so that the page, which verifies a revealed pair
    only, checks them too.)"""
    later = format_time(parse_time(dated_at) + timedelta(minutes=1))
    checkpoint_at = "2025-04-01T11:00:10.000000Z"
    found = []
    for kind, pair, field in (
        ("round", GOOD, "settled_at"),
        ("commitment", bundles.bundle(0, pair=PAIR), "created_at"),
        ("reveal", GOOD, "revealed_at"),
    ):
        dated = copy.deepcopy(pair)
        if kind == "round":
            dated["rounds"][5] = bundles.resign(PAIR, dated["rounds"][5], settled_at=dated_at)
        else:
            dated[kind] = bundles.resign(PAIR, dated[kind], **{field: dated_at})
        if kind != "reveal":
            dated["reveal"] = bundles.resign(PAIR, dated["reveal"], revealed_at=later)
        if kind == "round":
            bundle = bundles.taken_out(dated, TAKEN["round_id"], checkpoint_at, reveal_too=True)
        else:
            bundle = bundles.pair_documents_taken_out(
                dated,
                ["commitment", "reveal"] if kind == "commitment" else ["reveal"],
                checkpoint_at,
            )
        by = anchors.DATED_BY[kind]
        said = (
            f"{by.said} {dated_at}, past the time the bundle was fetched ({FETCHED_AT}, by this "
            f"computer's clock) and the bound of 1 hour: {by.document} is dated ahead, which would "
            f"keep {by.kept} left out of the log within the bound"
        )
        found.append((kind, bundle, said))
    return found


def test_a_document_still_pending_dated_past_the_fetch_time_and_the_bound_fails(
    tmp_path: Path,
) -> None:
    """A bundle fetched at T holds no document made after T: a round still pending, its
    receipt signed again dated 17 hours after the bundle was fetched, fails by the fetch time as
    it would by the verifier's clock (the bound's slack allowed), though the clock is long past
    it; dated within the bound of the fetch time, it waits. So do the commitment and the
    reveal."""
    named = {"round": f"round {TAKEN['round_id']} (nonce 5)"}
    for kind, bundle, said in dated_past_the_fetch():
        code, out = bundles.run_verifier(tmp_path, KEY_HEX, bundle, "--fetched-at", FETCHED_AT)
        assert code == 1 and f"{named.get(kind, f'{kind} document')}: log: {said}" in out, out
    for kind, bundle, _ in dated_past_the_fetch("2025-04-01T12:59:00.000000Z"):
        assert (
            bundles.run_verifier(tmp_path, KEY_HEX, bundle, "--fetched-at", FETCHED_AT)[0] == 4
        ), kind


def test_a_fetch_time_past_the_verifiers_clock_or_of_another_form_is_refused(
    tmp_path: Path,
) -> None:
    """No bundle was fetched after this computer's clock: a fetch time there would fail an
    honest casino's documents still within their bound, so the command line refuses it."""
    for odd in ("2099-01-01T00:00:00.000000Z", "2025-04-01T12:00:05Z", "yesterday"):
        try:
            bundles.run_verifier(tmp_path, KEY_HEX, GOOD, "--fetched-at", odd)
        except SystemExit as exc:
            assert exc.code == 2, odd
        else:
            raise AssertionError(f"--fetched-at {odd} was taken")

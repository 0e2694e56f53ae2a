"""The verifier with the player's records of rotations: the client seed sent to start each seed
pair, after its signed commitment was recorded. A casino that holds the key and the database
can make a pair once the client seed is known (a server seed chosen to make the player lose),
start it instead of the pair it committed to, and sign and log everything; every check of the
bundle passes, and only the records tell."""

from __future__ import annotations

import hashlib
from typing import Any

import bundles
import pytest
from bundles import Pair

from sota_casino.verify import FAIL
from sota_casino.verify import PASS
from sota_casino.verify import SKIP
from sota_casino.verify import Records
from sota_casino.verify import verify_bundle
from sota_casino.verify.records import RecordsError

SENT = "my own seed"
#: The pair committed (and shown, signed) before the player sent ``SENT`` to start it.
COMMITTED = Pair(seed_pair_id=12, client_seed=SENT)
#: The pair the casino made once ``SENT`` was known, and started instead.
MADE_AFTER = Pair(
    seed_pair_id=14,
    client_seed=SENT,
    server_seed=hashlib.sha256(b"chosen once the client seed was known").digest(),
    created_at="2025-04-01T10:30:00.000000Z",
)
KEY = COMMITTED.key.public_key().public_bytes_raw().hex()


def _records(*rotations: dict[str, Any], commitments: tuple[Pair, ...] = (COMMITTED,)) -> Records:
    data: dict[str, Any] = {
        "format": "sota-casino-records",
        "v": 1,
        "public_key_hex": KEY,
        "commitments": [bundles.commitment(pair) for pair in commitments],
        "actions": [],
    }
    if rotations:
        data["rotations"] = list(rotations)
    return Records.parse(data)


SENT_FOR_12 = {"seed_pair_id": 12, "client_seed": SENT}


def _records_failures(bundle: dict[str, Any], records: Records) -> list[str]:
    report = verify_bundle(bundle, KEY, records=records)
    return [f.text() for f in report.failures if f.check == "records"]


def test_the_pair_started_with_the_recorded_client_seed_passes_revealed_or_not() -> None:
    records = _records(SENT_FOR_12)
    for revealed in (True, False):
        report = verify_bundle(
            bundles.bundle(4, pair=COMMITTED, revealed=revealed), KEY, records=records
        )
        assert report.ok, [f.text() for f in report.failures]
        assert report.documents[0].statuses["records"] == PASS


def test_the_committed_pair_dealing_another_client_seed_fails_naming_both_seeds() -> None:
    other = Pair(seed_pair_id=12, client_seed="the casino's choice")
    expected = (
        "commitment document: records: seed pair 12 deals with the client seed \"the casino's "
        'choice", but you sent "my own seed" to start it (recorded)'
    )
    # Once revealed the reveal's client seed counts; before it, the one the receipts share.
    for revealed in (True, False):
        bundle = bundles.bundle(4, pair=other, revealed=revealed)
        assert _records_failures(bundle, _records(SENT_FOR_12)) == [expected]


def test_a_pair_made_after_the_client_seed_was_known_fails_though_every_other_check_passes() -> (
    None
):
    made = bundles.bundle(5, pair=MADE_AFTER)
    # Signed with the real key and logged from the start: nothing in the bundle tells.
    assert verify_bundle(made, KEY).ok
    # Records kept only after the seed was sent hold the made pair's commitment "before play".
    late = _records(commitments=(COMMITTED, MADE_AFTER))
    assert verify_bundle(made, KEY, records=late).ok
    expected = (
        "commitment document: records: seed pair 14 deals with the client seed you sent to "
        "start seed pair 12 (whose commitment you recorded before play): a pair committed "
        "after your client seed was known"
    )
    for records in (
        _records(SENT_FOR_12),
        _records(SENT_FOR_12, commitments=(COMMITTED, MADE_AFTER)),
    ):
        for revealed in (True, False):
            bundle = bundles.bundle(5, pair=MADE_AFTER, revealed=revealed)
            report = verify_bundle(bundle, KEY, records=records)
            assert [f.text() for f in report.failures] == [expected]
            assert report.documents[0].statuses["records"] == FAIL
    # Records holding the rotation but not the commitment say no more than they know.
    bare = Records.parse(
        {"format": "sota-casino-records", "v": 1, "public_key_hex": KEY, "rotations": [SENT_FOR_12]}
    )
    assert _records_failures(made, bare) == [
        "commitment document: records: seed pair 14 deals with the client seed you sent to "
        "start seed pair 12: a pair committed after your client seed was known"
    ]


def test_a_client_seed_sent_again_for_a_later_pair_is_no_alarm_when_both_are_recorded() -> None:
    later = Pair(seed_pair_id=13, client_seed=SENT)
    records = _records(SENT_FOR_12, {"seed_pair_id": 13, "client_seed": SENT})
    assert verify_bundle(bundles.bundle(3, pair=later), KEY, records=records).ok
    # A pair the records know nothing about, with a seed they do not hold, is not compared.
    unrelated = Pair(seed_pair_id=9, client_seed="older seed")
    report = verify_bundle(bundles.bundle(3, pair=unrelated), KEY, records=records)
    assert report.ok and report.documents[0].statuses["records"] == SKIP


def test_records_without_rotations_still_load_and_the_last_seed_sent_for_a_pair_counts() -> None:
    old = _records()
    assert old.rotations == {} and 12 in old.commitments
    records = _records({"seed_pair_id": 12, "client_seed": "refused, then"}, SENT_FOR_12)
    assert records.rotations == {12: SENT}


@pytest.mark.parametrize(
    ("rotations", "says"),
    [
        ({}, "rotations is not a list"),
        ([{"client_seed": SENT}], "rotations[0] has no seed_pair_id"),
        ([{"seed_pair_id": "12", "client_seed": SENT}], "rotations[0] has no seed_pair_id"),
        ([{"seed_pair_id": 12, "client_seed": ""}], "rotations[0]: client_seed is the text sent"),
        ([{"seed_pair_id": 12}], "rotations[0]: client_seed is the text sent"),
        (["12"], "rotations[0] has no seed_pair_id"),
    ],
)
def test_a_rotation_record_of_another_shape_makes_the_records_unusable(
    rotations: Any, says: str
) -> None:
    data = {"format": "sota-casino-records", "v": 1, "public_key_hex": None, "rotations": rotations}
    with pytest.raises(RecordsError, match=says.replace("[", r"\[").replace("]", r"\]")):
        Records.parse(data)


@pytest.mark.parametrize("pair_id", ["12", "seed pair 12", None, True, [12]])
def test_a_pair_recommitted_under_its_id_written_otherwise_fails_and_is_not_another_pair(
    pair_id: Any,
) -> None:
    """The records find a pair's commitment by its id, an integer. A casino that re-commits the
    pair (a new server seed, every round dealt again, all signed and logged) and writes its id
    as the text "12" in every document would escape the comparison with the recorded commitment
    of pair 12, while the log's subject, ``seed_pair:12``, reads the same: an id that is not an
    integer fails the pair."""
    recommitted = Pair(
        seed_pair_id=pair_id,
        server_seed=hashlib.sha256(b"dealt again after play").digest(),
    )
    report = verify_bundle(bundles.bundle(4, pair=recommitted), KEY, records=_records())

    assert not report.ok
    assert report.documents[0].statuses["pair"] == FAIL
    assert f"the commitment document's seed_pair_id {pair_id!r} is not an integer" in [
        f.message for f in report.failures
    ], [f.text() for f in report.failures]


def test_a_user_id_that_is_not_an_integer_fails_the_pair() -> None:
    report = verify_bundle(bundles.bundle(2, pair=Pair(user_id="7")), KEY)  # type: ignore[arg-type]

    assert [f.text() for f in report.failures] == [
        "commitment document: pair: the commitment document's user_id '7' is not an integer"
    ]

"""The offline verifier on real bundles: what passes, and every way to cheat, named."""

from __future__ import annotations

import copy
import hashlib
from typing import Any

import bundles
import pytest
from bundles import Pair

from sota_casino.core import sota
from sota_casino.core.fairness import new_signing_key
from sota_casino.core.fairness import public_key_hex
from sota_casino.verify import FAIL
from sota_casino.verify import PASS
from sota_casino.verify import PENDING
from sota_casino.verify import SKIP
from sota_casino.verify import BundleError
from sota_casino.verify import Report
from sota_casino.verify import verify_bundle

PAIR = Pair()
ROUNDS = 20
GOOD = bundles.bundle(ROUNDS, pair=PAIR)
UNREVEALED = bundles.bundle(ROUNDS, pair=PAIR, revealed=False)


def _failures(report: Report) -> list[str]:
    return [f.text() for f in report.failures]


def _with_round(bundle: dict[str, Any], nonce: int, envelope: dict[str, Any]) -> dict[str, Any]:
    """Return ``bundle`` with ``envelope`` in place of its receipt at ``nonce``, logged and
    anchored from the start as if the service had made it: only the checks other than ``log``
    can catch it (test_verify_unanchored.py and tests/web/test_transparency.py show what the
    log catches)."""
    changed = copy.deepcopy(bundle)
    changed["rounds"][nonce] = envelope
    return bundles.anchored(changed, PAIR.key)


def _tampered(position: int, bundle: dict[str, Any] = GOOD, **changes: Any) -> dict[str, Any]:
    """Return ``bundle`` with the receipt at ``position`` changed and signed again by the
    service's key (a dishonest service can sign anything, and log it)."""
    envelope = bundles.resign(PAIR, bundle["rounds"][position], **changes)
    return _with_round(bundle, position, envelope)


def _passes_without_records(statuses: dict[str, str]) -> bool:
    """Every check passed, ``log`` included; ``records`` was not compared (no records given)."""
    return statuses.pop("records") == SKIP and set(statuses.values()) == {PASS}


def _doc(nonce: int) -> dict[str, Any]:
    return GOOD["rounds"][nonce]["document"]


# --- what passes ------------------------------------------------------------------------------


def test_an_honest_revealed_bundle_passes_every_check_of_every_round() -> None:
    report = verify_bundle(GOOD)
    assert report.ok and not report.pending and report.findings == []
    assert len(report.rounds) == ROUNDS
    assert all(_passes_without_records(row.statuses) for row in report.rounds)
    assert [row.nonce for row in report.rounds] == list(range(ROUNDS))
    # The bundle really covers both decisions on a tie, and a tie bet that won.
    outcomes = {_doc(n)["outcome"]["result"] for n in range(ROUNDS)}
    assert {"win", "lose", "surrender"} <= outcomes
    assert outcomes & {"war_win", "war_tie", "war_lose"}
    assert any(_doc(n)["outcome"]["tie_bet_won"] for n in range(ROUNDS))


def test_an_unrevealed_bundle_passes_what_it_can_and_leaves_the_seed_checks_pending() -> None:
    report = verify_bundle(UNREVEALED)
    assert report.ok and report.pending and not report.revealed
    for row in report.rounds:
        statuses = row.statuses
        assert statuses["commitment"] == statuses["cards"] == PENDING
        assert statuses["signature"] == statuses["pair"] == statuses["outcome"] == PASS
    assert {f.message for f in report.findings} == {"pending (not revealed)"}


def test_the_pinned_public_key_is_used_and_a_bundle_naming_another_key_fails() -> None:
    assert verify_bundle(GOOD, PAIR.key.public_key().public_bytes_raw().hex()).ok
    other = public_key_hex(new_signing_key())
    report = verify_bundle(GOOD, other)
    failures = _failures(report)
    assert failures[0].startswith("bundle: signature: KEY CHANGED: the bundle names public key")
    # Every document is checked against the pinned key, so every signature fails too.
    assert all(row.statuses["signature"] == FAIL for row in report.rounds)


def test_a_bundle_of_sota_games_passes_including_in_game_shuffles_and_prisoners_moves() -> None:
    kinds = [
        sota.SotaRules(),
        sota.SotaRules(seats=3, won_cards="won_pile", gather="shuffled"),
        sota.SotaRules.from_preset("pjanitsa"),
        sota.SotaRules(seats=4, teams=True, war_down="by_rank", max_tricks=300),
    ]

    def make(pair: Pair, nonce: int) -> dict[str, Any]:
        if nonce == 4:
            rules = sota.SotaRules(prisoners_of_war=True, max_tricks=40)
            return bundles.sota_moves_receipt(pair, nonce, rules)
        return bundles.sota_receipt(pair, nonce, kinds[nonce % len(kinds)])

    revealed = bundles.bundle(5, make_round=make)
    assert revealed["rounds"][4]["document"]["actions"]
    report = verify_bundle(revealed)
    assert report.ok, _failures(report)
    assert all(_passes_without_records(row.statuses) for row in report.rounds)
    # Before the reveal, a game that shuffles during play (won_pile, gather shuffled) waits
    # for the seed; the others, prisoners' moves included, replay on the receipt's own deck.
    hidden = verify_bundle(bundles.bundle(5, make_round=make, revealed=False))
    assert hidden.ok
    assert [row.statuses["outcome"] for row in hidden.rounds] == [PASS, PENDING, PASS, PASS, PASS]


# --- every way to cheat, named ----------------------------------------------------------------


def test_revealing_another_server_seed_fails_the_commitment_in_all_three_documents() -> None:
    other = Pair(server_seed=hashlib.sha256(b"another seed").digest())
    bundle = {**GOOD, "reveal": bundles.reveal(other, ROUNDS)}
    report = verify_bundle(bundle)
    failures = _failures(report)
    assert failures[0].startswith(
        "commitment document: commitment: the commitment document commits to "
        f"{PAIR.commitment[:16]}…, but sha256 of the revealed server seed is "
        f"{other.commitment[:16]}…"
    )
    assert f"round 100 (nonce 0): commitment: the receipt commits to {PAIR.commitment[:16]}…" in (
        " ".join(failures)
    )
    assert all(row.statuses["commitment"] == FAIL for row in report.rounds)
    assert any(row.statuses["cards"] == FAIL for row in report.rounds)


def test_a_reveal_keeping_the_commitment_but_showing_another_seed_fails() -> None:
    other_seed = hashlib.sha256(b"another seed").hexdigest()
    bundle = {**GOOD, "reveal": bundles.resign(PAIR, GOOD["reveal"], server_seed=other_seed)}
    report = verify_bundle(bundle)
    reveal_row = report.documents[1]
    assert reveal_row.statuses["commitment"] == FAIL
    assert any(
        t.startswith("reveal document: commitment: the reveal commits to")
        for t in _failures(report)
    )


def test_a_commitment_document_that_does_not_match_the_pair_fails() -> None:
    forged = bundles.resign(PAIR, GOOD["commitment"], commitment="ab" * 32)
    report = verify_bundle({**GOOD, "commitment": forged})
    failures = _failures(report)
    assert failures[0].startswith(
        "commitment document: commitment: the commitment document commits to abababab"
    )
    assert (
        "reveal document: pair: the reveal is of another pair: its commitment is "
        f"{PAIR.commitment!r}, the commitment document's is {'ab' * 32!r}"
    ) in failures
    assert (
        f"round 103 (nonce 3): pair: the receipt's commitment {PAIR.commitment[:16]}… "
        "is not the pair's abababababababab…"
    ) in failures
    # Before the reveal the receipts already disagree with the commitment shown to the player.
    hidden = verify_bundle({**UNREVEALED, "commitment": forged})
    assert all(row.statuses["pair"] == FAIL for row in hidden.rounds)


def test_a_changed_card_is_named_with_its_position() -> None:
    cards = list(_doc(0)["cards"])
    replaced = "2C" if cards[1] != "2C" else "3C"
    report = verify_bundle(_tampered(0, cards=[cards[0], replaced]))
    assert _failures(report) == [
        f"round 100 (nonce 0): cards: receipt has {replaced} at position 1, replay gives {cards[1]}"
    ]


def test_a_changed_card_that_changes_the_result_fails_before_the_reveal_too() -> None:
    doc = UNREVEALED["rounds"][0]["document"]
    player, dealer = doc["cards"]
    report = verify_bundle(
        _tampered(0, UNREVEALED, cards=["AS" if player[0] != "A" else "2S", dealer])
    )
    assert any(
        t.startswith("round 100 (nonce 0): outcome: outcome result is") for t in _failures(report)
    )


def test_a_changed_payout_fails_the_outcome() -> None:
    payout = _doc(2)["payout"]
    report = verify_bundle(_tampered(2, payout=payout + 100))
    assert _failures(report) == [
        f"round 102 (nonce 2): outcome: payout is {payout + 100}, replay gives {payout}"
    ]


def test_a_changed_outcome_or_a_raise_without_a_war_fails_the_outcome() -> None:
    outcome = {**_doc(0)["outcome"], "result": "war_win"}
    assert "outcome result is" in " ".join(_failures(verify_bundle(_tampered(0, outcome=outcome))))
    stakes = {**_doc(0)["stakes"], "raise": _doc(0)["stakes"]["bet"]}
    (failure,) = _failures(verify_bundle(_tampered(0, stakes=stakes)))
    assert failure.startswith("round 100 (nonce 0): outcome: stakes say raise 500, replay gives 0")


def test_a_decision_on_a_round_that_did_not_tie_cannot_be_replayed() -> None:
    report = verify_bundle(_tampered(0, actions=["war"]))
    (failure,) = _failures(report)
    assert failure.startswith("round 100 (nonce 0): outcome: the round cannot be replayed")


def test_a_tie_shown_without_its_war_cards_fails() -> None:
    war_nonce = next(n for n in range(ROUNDS) if _doc(n)["actions"] == ["war"])
    doc = _doc(war_nonce)
    report = verify_bundle(_tampered(war_nonce, cards=doc["cards"][:2]))
    assert f"round {100 + war_nonce} (nonce {war_nonce}): cards: receipt shows 2 cards" in (
        " ".join(_failures(report))
    )


def test_a_reused_nonce_is_named_in_both_rounds_and_the_one_it_replaced_is_missing() -> None:
    report = verify_bundle(_tampered(4, nonce=3))
    failures = _failures(report)
    assert (
        "round 103 (nonce 3): nonces: nonce 3 is used by 2 receipts (rounds 103, 104)" in failures
    )
    assert (
        "round 104 (nonce 3): nonces: nonce 3 is used by 2 receipts (rounds 103, 104)" in failures
    )
    assert (
        "bundle: nonces: no receipt for nonce 4: the reveal says 20 rounds were played "
        "(nonces 0..19)"
    ) in failures


def test_a_skipped_nonce_fails_once_revealed_and_is_pending_before() -> None:
    skipped = copy.deepcopy(GOOD)
    del skipped["rounds"][5]
    assert _failures(verify_bundle(skipped)) == [
        "bundle: nonces: no receipt for nonce 5: the reveal says 20 rounds were played "
        "(nonces 0..19)"
    ]
    hidden = copy.deepcopy(UNREVEALED)
    del hidden["rounds"][5]
    report = verify_bundle(hidden)
    assert report.ok and any("no receipt yet for nonce 5" in f.message for f in report.findings)


def test_a_huge_nonce_or_round_count_is_reported_without_listing_every_missing_nonce() -> None:
    hidden = verify_bundle(_tampered(3, UNREVEALED, nonce=10**30))
    (pending,) = [f.message for f in hidden.bundle_findings]
    assert pending.startswith("pending (not revealed): no receipt yet for nonce 3, 20, 21,")
    assert f"28 and {10**30 - 29} more (a round still open?)" in pending
    reveal = bundles.resign(PAIR, GOOD["reveal"], rounds=10**30)
    (missing,) = [f.text() for f in verify_bundle({**GOOD, "reveal": reveal}).bundle_findings]
    assert missing.startswith(
        f"bundle: nonces: no receipt for nonce 20, 21, 22, 23, 24, 25, 26, 27, 28, 29 and "
        f"{10**30 - 30} more: the reveal says {10**30} rounds were played"
    )


def test_a_nonce_beyond_the_revealed_count_fails() -> None:
    report = verify_bundle(_tampered(19, nonce=20))
    assert (
        "round 119 (nonce 20): nonces: nonce 20 is beyond the 20 rounds the reveal declares "
        "(nonces 0..19)"
    ) in _failures(report)


def test_a_receipt_signed_by_another_key_fails_its_signature() -> None:
    forger = Pair(key=new_signing_key())
    bundle = _with_round(GOOD, 6, bundles.war_receipt(forger, 6))
    assert _failures(verify_bundle(bundle)) == [
        "round 106 (nonce 6): signature: the signature is not valid for the public key"
    ]


def test_an_edited_receipt_that_was_not_signed_again_fails_its_signature() -> None:
    bundle = copy.deepcopy(GOOD)
    bundle["rounds"][7]["document"]["payout"] += 1
    failures = _failures(verify_bundle(bundle))
    assert (
        "round 107 (nonce 7): signature: the signature is not valid for the public key" in failures
    )


def test_another_signed_document_passed_off_as_a_receipt_fails() -> None:
    report = verify_bundle(_with_round(GOOD, 0, GOOD["commitment"]))
    assert (
        "receipt #1: signature: the signed document is of type 'commitment' v 1, not 'round' v 1"
    ) in _failures(report)


def test_a_swapped_client_seed_is_named() -> None:
    report = verify_bundle(_tampered(8, client_seed="not mine"))
    assert (
        "round 108 (nonce 8): pair: client seed 'not mine' is not the pair's client seed "
        "'lucky seven'"
    ) in _failures(report)
    hidden = verify_bundle(_tampered(8, UNREVEALED, client_seed="not mine"))
    assert _failures(hidden) == [
        "round 108 (nonce 8): pair: client seed 'not mine' is not the pair's client seed "
        "'lucky seven' (the one of its other receipts)"
    ]


def test_the_reveal_of_another_pair_is_named() -> None:
    other = Pair(server_seed=hashlib.sha256(b"pair 13").digest(), seed_pair_id=13)
    report = verify_bundle({**GOOD, "reveal": bundles.reveal(other, ROUNDS)})
    assert (
        "reveal document: pair: the reveal is of another pair: its seed_pair_id is 13, "
        "the commitment document's is 12"
    ) in _failures(report)


def test_a_receipt_dated_before_its_commitment_fails() -> None:
    report = verify_bundle(_tampered(9, settled_at="2025-04-01T09:59:59.999999Z"))
    assert _failures(report) == [
        "round 109 (nonce 9): pair: settled at 2025-04-01T09:59:59.999999Z, before the "
        "commitment was signed (2025-04-01T10:00:00.000000Z)"
    ]


def test_a_receipt_dated_after_the_reveal_or_of_another_pair_fails() -> None:
    late = verify_bundle(_tampered(9, settled_at="2025-04-02T00:00:00.000000Z"))
    assert _failures(late)[0].startswith(
        "round 109 (nonce 9): pair: settled at 2025-04-02T00:00:00.000000Z, after the server seed"
    )
    other = verify_bundle(_tampered(9, seed_pair_id=99))
    assert _failures(other) == ["round 109 (nonce 9): pair: the receipt is of seed pair 99, not 12"]


def test_invalid_rules_or_stakes_in_a_receipt_fail_the_outcome() -> None:
    rules = {**_doc(0)["rules"], "decks": True}
    (failure,) = _failures(verify_bundle(_tampered(0, rules=rules)))
    assert failure.startswith("round 100 (nonce 0): outcome: the rules are not valid Casino War")
    stakes = {"bet": 500}
    (failure,) = _failures(verify_bundle(_tampered(0, stakes=stakes)))
    assert "stakes must be {bet, tie_bet, raise}" in failure
    # A game of no known kind has no decision entries to compare with the log, either.
    failure, logged = _failures(verify_bundle(_tampered(0, game="poker")))
    assert (
        failure == "round 100 (nonce 0): outcome: unknown game 'poker'; expected casino_war or sota"
    )
    assert logged.startswith(
        "round 100 (nonce 0): log: the receipt has no game or no list of actions to compare"
    )


#: Each way docs/fairness.md (check 6) says a Casino War receipt's rules, stakes or outcome is
#: not one a table plays, and the start of the failure it names.
_NOT_A_TABLES_ROUND = [
    ({"stakes": {"bet": 150}}, "the round cannot be replayed"),  # not whole chips
    ({"stakes": {"bet": 60000}}, "the round cannot be replayed"),  # above max_bet
    ({"rules": {"extra": 1}}, "the rules are not valid"),  # an option of no table
    ({"rules": {"bonus": None}}, "the rules are not valid"),
    ({"rules": {"min_bet": 150}}, "the rules are not valid"),  # not whole chips
    ({"rules": {"burn": 6}}, "the rules are not valid"),
    ({"rules": {"tie_payout": 0}, "stakes": {"tie_bet": 100}}, "the round cannot be replayed"),
    ({"outcome": {"extra": 1}}, "outcome extra is 1"),
]


@pytest.mark.parametrize(("change", "named"), _NOT_A_TABLES_ROUND)
def test_a_casino_war_receipt_not_of_a_table_fails_its_outcome(
    change: dict[str, dict[str, Any]], named: str
) -> None:
    doc = _doc(0)
    assert doc["game"] == "casino_war"
    changed = {
        field: {k: v for k, v in {**doc[field], **values}.items() if v is not None}
        for field, values in change.items()
    }
    (failure,) = _failures(verify_bundle(_tampered(0, **changed)))
    assert failure.startswith(f"round 100 (nonce 0): outcome: {named}"), failure


def test_a_sota_receipt_with_a_changed_winner_deck_or_payout_fails() -> None:
    def make(pair: Pair, nonce: int) -> dict[str, Any]:
        return bundles.sota_receipt(pair, nonce)

    bundle = bundles.bundle(2, make_round=make)
    doc = bundle["rounds"][0]["document"]
    winner = doc["outcome"]["winner"]

    def failures_after(**changes: Any) -> list[str]:
        changed = _with_round(bundle, 0, bundles.resign(PAIR, bundle["rounds"][0], **changes))
        return _failures(verify_bundle(changed))

    outcome = {**doc["outcome"], "winner": 1 - winner}
    assert failures_after(outcome=outcome) == [
        f"round 100 (nonce 0): outcome: outcome winner: recorded {1 - winner}, replay {winner}"
    ]
    assert failures_after(payout=doc["payout"] + 3) == [
        f"round 100 (nonce 0): outcome: payout is {doc['payout'] + 3}, replay gives {doc['payout']}"
    ]
    cards = list(doc["cards"])
    cards[0], cards[1] = cards[1], cards[0]
    (failure, *_) = failures_after(cards=cards)
    assert failure == (
        f"round 100 (nonce 0): cards: receipt has {cards[0]} at position 0, replay gives "
        f"{cards[1]} (2 of 52 cards differ)"
    )
    assert failures_after(cards=cards[:51])[0] == (
        "round 100 (nonce 0): cards: the receipt's cards are not one whole standard52 deck"
    )


# --- unusable input, and the parallel path ---------------------------------------------------


@pytest.mark.parametrize(
    ("bundle", "message"),
    [
        ([], "a bundle is a JSON object"),
        ({"public_key_hex": "00" * 32}, "the bundle lacks commitment, reveal, rounds"),
        ({**GOOD, "public_key_hex": "xyz"}, "public_key_hex is not 64"),
        ({**GOOD, "commitment": {"document": {}}}, "commitment is not a signed document"),
        ({**GOOD, "reveal": 5}, "reveal is neither null nor a signed document"),
        ({**GOOD, "rounds": {}}, "rounds is not a list"),
    ],
)
def test_input_that_is_not_a_bundle_is_refused_with_a_reason(bundle: Any, message: str) -> None:
    with pytest.raises(BundleError, match=message):
        verify_bundle(bundle)


def test_a_malformed_receipt_inside_a_bundle_fails_that_round() -> None:
    report = verify_bundle(_with_round(GOOD, 3, {"document": "x"}))
    assert _failures(report) == [
        "bundle: nonces: no receipt for nonce 3: the reveal says 20 rounds were played "
        "(nonces 0..19)",
        "receipt #4: signature: the receipt is not a signed document {document, signature}",
    ]


def test_worker_processes_give_the_same_report_as_one_process() -> None:
    big = bundles.bundle(600, pair=PAIR)
    big = _tampered(321, big, payout=1)
    progress: list[tuple[int, int]] = []
    one = verify_bundle(big)
    two = verify_bundle(big, jobs=2, progress=lambda done, total: progress.append((done, total)))
    assert one == two
    assert _failures(two) == [
        f"round 421 (nonce 321): outcome: payout is 1, replay gives {_payout(321)}"
    ]
    assert progress[-1] == (600, 600) and len(progress) > 1


def _payout(nonce: int) -> int:
    return bundles.default_round(PAIR, nonce)["document"]["payout"]


@pytest.mark.parametrize("field", sorted(_doc(13)))
def test_any_odd_value_in_any_receipt_field_fails_that_round_without_a_crash(field: str) -> None:
    original = _doc(13)[field]
    for odd in (None, [], {}, "x", -1, 1.5, True, [["AS"]], {"a": [1]}, 10**30):
        if odd == original and type(odd) is type(original):
            continue
        if field == "round_id" and type(odd) is int:
            continue  # any whole number is a valid id: it only names the round
        report = verify_bundle(_tampered(13, **{field: odd}))
        round_13 = next(row for row in report.rounds if row.index == 13)
        assert not round_13.ok, (field, odd)


def test_rules_that_leave_out_an_option_or_values_of_another_type_fail() -> None:
    rules = {k: v for k, v in _doc(0)["rules"].items() if k != "burn"}
    (failure,) = _failures(verify_bundle(_tampered(0, rules=rules)))
    assert failure == (
        "round 100 (nonce 0): outcome: the rules are not valid Casino War rules: every option "
        "must be listed, defaults included; missing: burn"
    )
    outcome = {**_doc(0)["outcome"], "tie_bet_won": 0}  # equal to false in Python, not in JSON
    (failure,) = _failures(verify_bundle(_tampered(0, outcome=outcome)))
    assert failure == "round 100 (nonce 0): outcome: outcome tie_bet_won is 0, replay gives false"
    (failure,) = _failures(verify_bundle(_tampered(0, v=True)))
    assert failure.endswith("the signed document is of type 'round' v True, not 'round' v 1")


def test_a_sota_winner_of_another_json_type_fails() -> None:
    bundle = bundles.bundle(1, make_round=lambda pair, nonce: bundles.sota_receipt(pair, nonce))
    doc = bundle["rounds"][0]["document"]
    winner = doc["outcome"]["winner"]
    odd = {0: False, 1: True}[winner]  # equal in Python, not in JSON
    outcome = {**doc["outcome"], "winner": odd}
    changed = _with_round(bundle, 0, bundles.resign(PAIR, bundle["rounds"][0], outcome=outcome))
    assert _failures(verify_bundle(changed)) == [
        f"round 100 (nonce 0): outcome: outcome winner is {str(odd).lower()}, replay gives {winner}"
    ]


def test_a_sota_receipt_writing_lead_off_as_the_word_off_fails() -> None:
    """A request may say ``"lead": "off"``, but a signed document writes an option that is off
    as ``null`` (docs/fairness.md, the receipt's ``rules``): a receipt in a form the service
    never signs is not the service's, and its readers may differ on what ``"off"`` means."""
    bundle = bundles.bundle(1, make_round=lambda pair, nonce: bundles.sota_receipt(pair, nonce))
    rules = bundle["rounds"][0]["document"]["rules"]
    assert rules["lead"] is None and verify_bundle(bundle).ok
    worded = {**rules, "lead": "off"}
    changed = _with_round(bundle, 0, bundles.resign(PAIR, bundle["rounds"][0], rules=worded))
    assert _failures(verify_bundle(changed)) == [
        'round 100 (nonce 0): outcome: the rules are not valid Sota rules: lead is "off", a '
        "form no signed document holds: the service signs it as null"
    ]

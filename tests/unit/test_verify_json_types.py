"""A receipt's values are compared with the replay's as JSON values, at any depth: ``false`` is
not ``0`` nor ``true`` ``1``, though Python's bool is an int. The fairness page compares them
as canonical JSON, and the two verifiers' verdicts must agree."""

from __future__ import annotations

import copy

import bundles
from test_verify_cli import KEY_HEX
from test_verify_cli import PAIR

from sota_casino.verify import verify_bundle

SOTA = bundles.bundle(1, pair=PAIR, make_round=bundles.sota_receipt)


def test_a_sota_trick_logged_with_false_for_its_0_wars_is_not_the_trick_replayed() -> None:
    """A Sota receipt's trick log with ``"wars": false`` for a trick without a war, signed
    again: the page finds the trick differs from the replay (static/js/verify.js,
    ``outcomeDifference``, comparing each trick's canonical JSON); offline, Python's
    ``False == 0`` passed the outcome and the bundle."""
    assert verify_bundle(SOTA, KEY_HEX).ok
    outcome = copy.deepcopy(SOTA["rounds"][0]["document"]["outcome"])
    assert outcome["tricks"][0]["wars"] == 0
    outcome["tricks"][0]["wars"] = False
    forged = copy.deepcopy(SOTA)
    forged["rounds"][0] = bundles.resign(PAIR, forged["rounds"][0], outcome=outcome)
    forged = bundles.anchored(forged, PAIR.key)
    report = verify_bundle(forged, KEY_HEX)
    assert not report.ok
    said = [f.message for f in report.findings if f.check == "outcome"]
    assert said and said[0].startswith("outcome trick 1: recorded "), said

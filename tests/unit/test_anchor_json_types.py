"""An anchor's entry and its document are compared as JSON values: ``true`` is not ``1`` and
``false`` is not ``0`` (Python's bool is an int; the page's JavaScript compares with ``===``);
and an entry of another action or subject anchors nothing."""

from __future__ import annotations

from sota_casino.core import anchors


def test_booleans_are_not_the_numbers_python_takes_them_for_at_any_depth() -> None:
    assert anchors.same_json([["AS", 1]], [["AS", 1]]) and anchors.same_json({"a": 0}, {"a": 0})
    assert not anchors.same_json(True, 1) and not anchors.same_json(0, False)
    assert not anchors.same_json([["AS", True]], [["AS", 1]])
    assert not anchors.same_json({"a": [False]}, {"a": [0]})
    assert not anchors.same_json({"a": 1}, {"a": 1, "b": 1})


def test_a_reveal_or_a_decision_logged_with_a_boolean_anchors_nothing() -> None:
    reveal = {"seed_pair_id": 3, "user_id": 7, "server_seed": "ab" * 32, "rounds": 1}
    entry = {
        "actor": "user:7",
        "action": anchors.REVEAL_ACTION,
        "subject": anchors.pair_subject(3),
        "data": {"server_seed": "ab" * 32, "rounds": 1},
    }
    assert anchors.reveal_problem(entry, reveal) is None
    forged = {**entry, "data": {"server_seed": "ab" * 32, "rounds": True}}
    assert anchors.reveal_problem(forged, reveal) == (
        "the log recorded rounds True when the pair was revealed, the reveal says 1"
    )
    receipt = {"round_id": 5, "game": "casino_war", "actions": [1]}
    decision = {"action": "round.decision", "subject": anchors.round_subject(5)}
    assert anchors.decisions_problem([{**decision, "data": {"choice": 1}}], receipt) is None
    assert anchors.decisions_problem([{**decision, "data": {"choice": True}}], receipt)


def test_an_entry_of_another_action_or_subject_anchors_no_document_and_says_which_it_is() -> None:
    reveal = {"seed_pair_id": 3, "user_id": 7}
    receipt = {"round_id": 5}
    checks = [
        (anchors.reveal_problem, reveal, anchors.REVEAL_ACTION, anchors.pair_subject(3)),
        (anchors.settlement_problem, receipt, anchors.SETTLEMENT_ACTION, "round:5"),
        (anchors.bet_problem, receipt, anchors.BET_ACTION, "round:5"),
    ]
    for problem, document, action, subject in checks:
        other = {"actor": "user:7", "action": action, "subject": "round:6", "data": {}}
        assert problem(other, document) == (
            f"the entry is {action!r} of 'round:6', not ({action!r}, {subject!r})"
        )

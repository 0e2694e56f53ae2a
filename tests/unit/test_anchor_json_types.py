"""An anchor's entry and its document are compared as JSON values: ``true`` is not ``1`` and
``false`` is not ``0`` (Python's bool is an int; the page's JavaScript compares with ``===``);
and an entry of another action or subject anchors nothing."""

from __future__ import annotations

import copy
from collections.abc import Callable

import bundles
import pytest
from test_verify_cli import GOOD
from test_verify_cli import KEY_HEX
from test_verify_cli import PAIR

from sota_casino.core import anchors
from sota_casino.core import audit_chain
from sota_casino.core.fairness import signed
from sota_casino.verify import verify_bundle
from sota_casino.verify.player_signatures import anchor_problem


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


def test_a_checkpoint_signed_with_true_for_its_version_1_is_no_checkpoint() -> None:
    """A checkpoint is ``v`` 1, a number: the page refuses one signed with ``"v": true``
    (static/js/transparency.js, ``isCheckpoint``: ``doc.v === 1``), so its anchors prove
    nothing there. Offline, Python's ``True == 1`` took it for a checkpoint and passed the
    bundle the page failed."""
    checkpoint = copy.deepcopy(GOOD["checkpoints"][0])
    assert audit_chain.checkpoint_shape_problem(checkpoint) is None
    loose = bundles.resign(PAIR, checkpoint, v=True)
    assert audit_chain.checkpoint_shape_problem(loose) == (
        'is not a checkpoint document (type "checkpoint", v 1)'
    )
    forged = {**GOOD, "checkpoints": [loose]}
    report = verify_bundle(forged, KEY_HEX)
    assert not report.ok
    assert any(
        'checkpoint 1 is not a checkpoint document (type "checkpoint", v 1)' in finding.message
        for finding in report.findings
    )


def test_an_anchor_naming_checkpoint_size_true_names_no_checkpoint_of_size_1() -> None:
    """A logged item's anchor names its checkpoint by size, a number: the page finds an anchor
    naming ``"checkpoint_size": true`` to name another checkpoint than the one of size 1 it
    carries (static/js/verify.js, ``entryAnchorProblem``: ``anchor.checkpoint_size !==
    checkpoint.document.size``). Offline, Python's ``True == 1`` proved the entry with it."""
    entry = {
        "seq": 1,
        "time": "2025-04-01T10:00:00.000000Z",
        "actor": "user:7",
        "action": "player_key.registered",
        "subject": "user:7",
        "data": {"user_id": 7, "key_id": 1, "public_key_hex": KEY_HEX},
    }
    entries = audit_chain.link_entries([entry])
    root = audit_chain.entries_tree(entries).root(1).hex()
    checkpoint = signed(
        PAIR.key, audit_chain.checkpoint_document(1, root, "2025-04-01T10:00:01.000000Z")
    )
    item = {"entry": entries[0], "checkpoint": checkpoint}
    anchor = {"leaf_index": 0, "checkpoint_size": 1, "proof": []}
    assert anchor_problem({**item, "anchor": anchor}, [KEY_HEX]) is None
    loose = {**anchor, "checkpoint_size": True}
    assert anchor_problem({**item, "anchor": loose}, [KEY_HEX]) == (
        "names another checkpoint than the one it carries"
    )


def logged_with(
    field: str, value: object, position: int = 0
) -> Callable[[bundles.Logged], bundles.Logged]:
    """What :func:`bundles.anchored` logs instead: the entry at ``position`` (the commitment's,
    leaf 0, by default) logged with ``field`` set to ``value``, and hashed so."""

    def rewritten(logged: bundles.Logged) -> bundles.Logged:
        of, entry = logged[position]
        changed = [*logged]
        changed[position] = (of, {**entry, field: value})
        return changed

    return rewritten


#: Entry fields the log's own check refuses (``audit_chain.entry_shape_problem``) that no other
#: check of the commitment's entry reads: ``true - 1`` is 0, the commitment's leaf.
UNLOGGABLE = [("seq", True), ("time", "2025-04-01T10:00:00Z"), ("time", 0)]


@pytest.mark.parametrize(("field", "value"), UNLOGGABLE)
def test_an_entry_the_log_refuses_anchors_no_document_though_a_signed_checkpoint_holds_it(
    field: str, value: object
) -> None:
    """The casino holds the key: it signs a checkpoint over a tree whose leaf 0 is the pair's
    commitment entry logged with ``"seq": true``, its proof of leaf ``true - 1 == 0`` held.
    Only a check of the whole log named it; a bundle proved the commitment with it."""
    forged = bundles.anchored(GOOD, PAIR.key, logged_as=logged_with(field, value))
    anchor = forged["anchors"][0]
    assert anchor["of"]["kind"] == "commitment" and anchor["leaf_index"] == 0
    found = audit_chain.entry_shape_problem(anchor["entry"])
    assert found is not None
    shape = found.text()
    assert anchors.proof_problem(anchor, forged["checkpoints"][0]["document"]) == (
        f"the anchor's entry is not a whole audit entry: it {shape}"
    )
    report = verify_bundle(forged, KEY_HEX)
    assert not report.ok
    assert any(shape in finding.message for finding in report.findings), report.findings

"""Decisions the player signs, end to end through the service: registering and replacing a key,
refusing unsigned and badly signed decisions and moves (changing nothing), and the verifier
catching an operator who, with the database and the service key, puts into a receipt a
decision the player did not sign, or hides the key registration that shows it."""

from __future__ import annotations

import copy
import json
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from bet_signing import bet_signature
from bet_signing import played_rules
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey
from flask import Flask
from service_support import install_seed
from service_support import seed_dealing
from service_support import verify_with_known_key
from sqlalchemy import func
from sqlalchemy import select
from sqlalchemy.orm import Session

from sota_casino.core import casino_war
from sota_casino.core import fairness
from sota_casino.core.audit_chain import entry_hash
from sota_casino.core.cards import canonical_shoe
from sota_casino.core.errors import Conflict
from sota_casino.core.errors import SignatureInvalid
from sota_casino.core.errors import SignatureRequired
from sota_casino.factory import create_app
from sota_casino.models import AuditEntry
from sota_casino.services import audit
from sota_casino.services import fairness as fairness_service
from sota_casino.services import ledger
from sota_casino.services import player_keys
from sota_casino.services import rounds
from sota_casino.services.context import context_of
from sota_casino.services.results import CasinoWarRound
from sota_casino.services.results import PlayerKeys
from sota_casino.services.results import SotaGame
from sota_casino.verify import verify_bundle
from sota_casino.verify.build import build


def _register(session: Session, player: int) -> tuple[Ed25519PrivateKey, int]:
    key = Ed25519PrivateKey.generate()
    registered = player_keys.register_key(session, player, fairness.public_key_hex(key))
    current = registered.current_key_id
    assert current is not None
    return key, current


def _sign(
    key: Ed25519PrivateKey, round_: CasinoWarRound | SotaGame, index: int, choice: Any
) -> str:
    return fairness.sign(
        key,
        fairness.action_document(
            game=round_.game,
            round_id=round_.id,
            seed_pair_id=round_.seed_pair_id,
            nonce=round_.nonce,
            index=index,
            choice=choice,
        ),
    )


def _signed_bet(
    session: Session, player: int, key: Ed25519PrivateKey, key_id: int, game: str, **sent: Any
) -> dict[str, Any]:
    """The seed pair, nonce and signature of the player's next bet of ``game`` as ``sent``."""
    pair = fairness_service.active_seed_pair(session, player)
    shown = {
        "seed_pair_id": pair.seed_pair_id,
        "next_nonce": pair.next_nonce,
        "commitment_document": pair.commitment_document,
    }
    if game == casino_war.GAME:
        stakes = {"bet": sent["bet"], "tie_bet": sent.get("tie_bet", 0)}
        return bet_signature(key, key_id, shown, game, stakes, played_rules(game))
    rules = played_rules(game, sent.get("rules"), sent.get("preset"))
    return bet_signature(key, key_id, shown, game, {"stake": sent["stake"]}, rules)


def _war_bet(
    session: Session, player: int, key: Ed25519PrivateKey, key_id: int, bet: int = 200
) -> CasinoWarRound:
    """A Casino War bet of ``bet``, signed with the player's key."""
    signed = _signed_bet(session, player, key, key_id, casino_war.GAME, bet=bet)
    return rounds.place_casino_war_bet(session, player, bet, **signed)


def _signed_decision(
    session: Session, player: int, key: Ed25519PrivateKey, key_id: int, choice: str
) -> CasinoWarRound:
    tie = _war_bet(session, player, key, key_id)
    assert tie.status == casino_war.AWAITING_DECISION
    signature = _sign(key, tie, 0, choice)
    return rounds.decide_casino_war(session, player, tie.id, choice, signature, key_id)


def _revealed_bundle(session: Session, player: int) -> dict[str, Any]:
    pair = fairness_service.active_seed_pair(session, player).seed_pair_id
    fairness_service.rotate(session, player)
    return fairness_service.bundle(session, player, pair)


def _service_key(session: Session) -> tuple[Ed25519PrivateKey, str]:
    key = context_of(session).signing_key
    return key, fairness.public_key_hex(key)


def _player_failures(report: Any) -> list[str]:
    return [f.text() for f in report.failures if f.check == "player"]


def test_a_key_registration_is_audited_and_a_replacement_keeps_the_old_key(
    session: Session, player: int
) -> None:
    assert player_keys.keys(session, player) == PlayerKeys(keys=[], current_key_id=None)
    first, first_id = _register(session, player)
    second, second_id = _register(session, player)
    shown = player_keys.keys(session, player)
    assert shown.current_key_id == second_id
    assert [(k.key_id, k.status) for k in shown.keys] == [
        (first_id, "retired"),
        (second_id, "current"),
    ]
    assert shown.keys[0].retired_at == shown.keys[1].registered_at
    with session.begin():
        entries = session.scalars(
            select(AuditEntry).where(AuditEntry.action == "player_key.registered")
        ).all()
    assert [e.actor for e in entries] == [f"user:{player}"] * 2
    assert [json.loads(e.data) for e in entries] == [
        {
            "user_id": player,
            "key_id": first_id,
            "public_key_hex": fairness.public_key_hex(first),
            "retires": [],
        },
        {
            "user_id": player,
            "key_id": second_id,
            "public_key_hex": fairness.public_key_hex(second),
            "retires": [first_id],
        },
    ]
    with pytest.raises(Conflict):  # a retired key never comes back
        player_keys.register_key(session, player, fairness.public_key_hex(first))


def test_an_unsigned_or_badly_signed_decision_is_refused_and_changes_nothing(
    session: Session, player: int, rig: Callable
) -> None:
    rig(player, ["tie"])
    key, key_id = _register(session, player)
    tie = _war_bet(session, player, key, key_id)
    with session.begin():
        before = (
            ledger.player_balances(session, player),
            session.scalar(select(func.max(AuditEntry.seq))),
        )
    other = Ed25519PrivateKey.generate()
    attempts: list[tuple[type[Exception], tuple[Any, Any]]] = [
        (SignatureRequired, (None, None)),
        (SignatureInvalid, (_sign(key, tie, 0, "war"), key_id)),  # signed the other choice
        (SignatureInvalid, (_sign(other, tie, 0, "surrender"), key_id)),  # another key
        (SignatureInvalid, (_sign(key, tie, 1, "surrender"), key_id)),  # another position
        (SignatureInvalid, (_sign(key, tie, 0, "surrender"), key_id + 1)),  # another key id
    ]
    for refusal, (signature, named) in attempts:
        with pytest.raises(refusal):
            rounds.decide_casino_war(session, player, tie.id, "surrender", signature, named)
    assert rounds.get_round(session, player, tie.id).status == casino_war.AWAITING_DECISION
    with session.begin():
        after = (
            ledger.player_balances(session, player),
            session.scalar(select(func.max(AuditEntry.seq))),
        )
    assert after == before


def test_a_signed_decision_is_kept_in_the_receipt_and_its_audit_entry_and_verifies(
    session: Session, player: int, rig: Callable
) -> None:
    rig(player, ["tie"])
    key, key_id = _register(session, player)
    settled = _signed_decision(session, player, key, key_id, "war")
    receipt = rounds.receipt(session, player, settled.id)["document"]
    [signed] = receipt["signed_actions"]
    assert signed["key_id"] == key_id and signed["document"]["choice"] == "war"
    with session.begin():
        entry = session.scalars(
            select(AuditEntry).where(AuditEntry.action == "round.decision")
        ).one()
    assert json.loads(entry.data)["signed"] == signed
    bundle = _revealed_bundle(session, player)
    report = verify_bundle(bundle, _service_key(session)[1])
    assert report.ok, report.failures
    assert all(row.statuses["player"] == "pass" for row in report.rounds)


def _forge_choice(
    bundle: dict[str, Any], service_key: Ed25519PrivateKey, choice: str, *, keep_signed: bool
) -> dict[str, Any]:
    """What an operator with the database and the service key makes of a decided round: the
    other choice, replayed honestly from the revealed seeds, re-signed with the service key."""
    forged = copy.deepcopy(bundle)
    envelope = forged["rounds"][0]
    doc = envelope["document"]
    rules = casino_war.TableRules.from_dict(doc["rules"])
    seeds = fairness.Seeds(
        bytes.fromhex(forged["reveal"]["document"]["server_seed"]), doc["client_seed"], doc["nonce"]
    )
    shoe = fairness.PartialShuffle(
        canonical_shoe("standard52", rules.decks), fairness.Stream(seeds)
    )
    stakes = {**doc["stakes"], "raise": 0}
    state = casino_war.replay(rules, shoe.prefix, stakes, [choice])
    doc.update(
        actions=[choice],
        cards=list(state.cards),
        stakes=state.stakes,
        outcome=state.receipt_outcome(),
        payout=state.payout,
    )
    if not keep_signed:
        del doc["signed_actions"]
    envelope["signature"] = fairness.sign(service_key, doc)
    return forged


@pytest.mark.parametrize("keep_signed", [True, False], ids=["signed-kept", "signature-dropped"])
def test_a_surrender_rewritten_into_a_war_and_re_signed_is_caught(
    session: Session, player: int, rig: Callable, keep_signed: bool
) -> None:
    rig(player, ["tie"])
    key, key_id = _register(session, player)
    _signed_decision(session, player, key, key_id, "surrender")
    bundle = _revealed_bundle(session, player)
    service_key, service_hex = _service_key(session)
    assert verify_bundle(bundle, service_hex).ok

    forged = _forge_choice(bundle, service_key, "war", keep_signed=keep_signed)
    report = verify_bundle(forged, service_hex)
    assert not report.ok
    # Everything else holds: only the player's signature gives the forgery away.
    assert {f.check for f in report.failures} == {"player"}
    [failure] = _player_failures(report)
    if keep_signed:
        assert 'signed choice "surrender", but the receipt\'s choice is "war"' in failure
    else:
        assert "is unsigned, but the player's key" in failure and "registered" in failure


def test_a_key_registration_hidden_from_the_bundle_or_the_log_is_noticed(
    session: Session, player: int, rig: Callable
) -> None:
    rig(player, ["tie"])
    key, key_id = _register(session, player)
    _signed_decision(session, player, key, key_id, "surrender")
    bundle = _revealed_bundle(session, player)
    service_hex = _service_key(session)[1]

    omitted = {**bundle, "player_keys": []}
    # Both the decision and the bet name the key no registration of the bundle names.
    failures = _player_failures(verify_bundle(omitted, service_hex))
    assert len(failures) == 2, failures
    assert any(f"action 0 is signed by key {key_id}, which no registration" in f for f in failures)
    assert any(f"the bet is signed by key {key_id}, which no registration" in f for f in failures)

    # An entry made up to name another key does not hash to the hash it shows.
    altered = copy.deepcopy(bundle)
    altered["player_keys"][0]["entry"]["data"]["public_key_hex"] = "ab" * 32
    failures = _player_failures(verify_bundle(altered, service_hex))
    assert any("does not hash to the hash it shows" in f for f in failures)
    assert any("no registration of this player in the log names" in f for f in failures)

    # Once a signed checkpoint covers it, the registration is proved into the log, and an
    # entry rewritten with a fresh hash contradicts the checkpoint the casino signed.
    assert "anchor" not in bundle["player_keys"][0]
    audit.sign_if_due(session)
    pair = bundle["commitment"]["document"]["seed_pair_id"]
    anchored = fairness_service.bundle(session, player, pair)
    assert anchored["player_keys"][0]["anchor"]["proof"] is not None
    assert verify_bundle(anchored, service_hex).ok
    rewritten = copy.deepcopy(anchored)
    entry = rewritten["player_keys"][0]["entry"]
    entry["data"]["public_key_hex"] = "ab" * 32
    entry["hash"] = entry_hash(entry["prev_hash"], entry)
    failures = _player_failures(verify_bundle(rewritten, service_hex))
    assert any("is not shown to be in the log: the inclusion proof" in f for f in failures)


def test_a_replaced_key_keeps_old_receipts_verifiable_and_signs_nothing_new(
    session: Session, player: int, rig: Callable
) -> None:
    rig(player, ["tie", "tie", "tie"])
    old, old_id = _register(session, player)
    _signed_decision(session, player, old, old_id, "war")
    new, new_id = _register(session, player)
    tie = _war_bet(session, player, new, new_id)
    with pytest.raises(SignatureInvalid):
        rounds.decide_casino_war(session, player, tie.id, "war", _sign(old, tie, 0, "war"), old_id)
    rounds.decide_casino_war(session, player, tie.id, "war", _sign(new, tie, 0, "war"), new_id)
    bundle = _revealed_bundle(session, player)
    report = verify_bundle(bundle, _service_key(session)[1])
    assert report.ok, report.failures
    signers = [r["document"]["signed_actions"][0]["key_id"] for r in bundle["rounds"]]
    assert signers == [old_id, new_id]

    # The old key's signature on a round settled after the replacement is refused.
    later = bundle["rounds"][1]
    later["document"]["signed_actions"][0] = {
        "document": later["document"]["signed_actions"][0]["document"],
        "signature": fairness.sign(old, later["document"]["signed_actions"][0]["document"]),
        "key_id": old_id,
    }
    later["signature"] = fairness.sign(_service_key(session)[0], later["document"])
    [failure] = _player_failures(verify_bundle(bundle, _service_key(session)[1]))
    assert f"signed by key {old_id}, which the player had replaced by key {new_id}" in failure


def test_a_key_registered_before_the_service_key_changed_registers_it_in_bundles_after(
    app: Flask, session: Session, player: int, tmp_path: Path
) -> None:
    """Honest: the player's key, registered and proved under the old service key, signs a
    decision after `flask keys rotate`; a worker not yet restarted signs the latest
    checkpoint with the retired key, as the key change allows, and the bundle proves the
    registration into it. A verifier that follows the key change from the old key passes it."""
    key, key_id = _register(session, player)
    audit.checkpoint(session)
    old_key = _service_key(session)[1]
    assert app.test_cli_runner().invoke(args=["keys", "rotate"]).exit_code == 0
    restarted = create_app(dict(app.config))  # it signs with the new key
    with restarted.app_context():
        fresh = restarted.extensions["sota_casino.sessionmaker"]()
        # Twice: the next pair was committed under the old key, the one after under the new.
        fairness_service.rotate(fresh, player)
        fairness_service.rotate(fresh, player)
        pair = fairness_service.active_seed_pair(fresh, player)
        install_seed(fresh, player, seed_dealing(["tie"], pair.client_seed, pair.next_nonce))
        _signed_decision(fresh, player, key, key_id, "war")
        fresh.close()
        audit.checkpoint(session)  # the worker not yet restarted: the retired key signs it
        fresh = restarted.extensions["sota_casino.sessionmaker"]()
        bundle = fairness_service.bundle(fresh, player, pair.seed_pair_id)
        fresh.close()
    restarted.extensions["sota_casino.engine"].dispose()
    assert bundle["player_keys"][0]["checkpoint"]["public_key_hex"] == old_key
    assert not bundle["pending_anchors"]
    code, output, _ = verify_with_known_key(bundle, old_key, tmp_path)
    assert code == 0, output
    assert "KEY CHANGED: the bundle's key" in output


def test_prisoners_of_war_moves_are_signed_and_a_changed_move_is_caught(
    session: Session, player: int
) -> None:
    key, key_id = _register(session, player)
    for _ in range(40):
        prisoners = {"prisoners_of_war": True}
        signed = _signed_bet(session, player, key, key_id, "sota", stake=1, rules=prisoners)
        game = rounds.play_sota(session, player, 1, rules=prisoners, **signed)
        moves = 0
        while game.status == "awaiting_move":
            pending = game.pending
            cards = sorted(pending.options)[: pending.count]
            with pytest.raises(SignatureRequired):
                rounds.sota_move(session, player, game.id, cards)
            signature = _sign(key, game, moves, cards)
            game = rounds.sota_move(session, player, game.id, cards, signature, key_id)
            moves += 1
        if moves:
            break
    assert moves, "no Prisoners of War game needed a move in 40 games"
    bundle = _revealed_bundle(session, player)
    service_key, service_hex = _service_key(session)
    assert verify_bundle(bundle, service_hex).ok
    [envelope] = [r for r in bundle["rounds"] if r["document"]["actions"]]
    doc = envelope["document"]
    assert [s["key_id"] for s in doc["signed_actions"]] == [key_id] * moves
    doc["signed_actions"][-1]["document"]["choice"] = ["2C"]  # what the player "chose"
    envelope["signature"] = fairness.sign(service_key, doc)
    failures = _player_failures(verify_bundle(bundle, service_hex))
    assert any('signed choice ["2C"], but the receipt\'s choice is' in f for f in failures)
    assert any("the signature is not valid for the player's key" in f for f in failures)


def test_the_standalone_verifier_names_a_decision_the_player_did_not_sign(
    session: Session, player: int, rig: Callable, tmp_path: Path
) -> None:
    rig(player, ["tie"])
    key, key_id = _register(session, player)
    settled = _signed_decision(session, player, key, key_id, "surrender")
    pair = _revealed_bundle(session, player)["commitment"]["document"]["seed_pair_id"]
    # As the bundle endpoint does: a checkpoint over every entry first, so the real bundle is
    # proven in the log (with documents still pending it would exit 4, not yet anchored).
    audit.sign_if_due(session)
    bundle = fairness_service.bundle(session, player, pair)
    assert not bundle["pending_anchors"]
    service_key, service_hex = _service_key(session)
    (tmp_path / "verify.pyz").write_bytes(build())
    (tmp_path / "real.json").write_text(json.dumps(bundle))
    forged = _forge_choice(bundle, service_key, "war", keep_signed=True)
    (tmp_path / "forged.json").write_text(json.dumps(forged))

    def run(name: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [sys.executable, "verify.pyz", name, "--public-key", service_hex, "-q"],
            cwd=tmp_path,
            capture_output=True,
            text=True,
            encoding="utf-8",
            check=False,
        )

    assert run("real.json").returncode == 0
    caught = run("forged.json")
    assert caught.returncode == 1, caught.stdout + caught.stderr
    assert (
        f"round {settled.id} (nonce 0): player: action 0: the player signed choice "
        '"surrender", but the receipt\'s choice is "war"' in caught.stdout
    )

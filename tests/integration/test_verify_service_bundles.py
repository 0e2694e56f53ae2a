"""The offline verifier passes the bundles the service really hands out, before and after the
reveal, for both games, war, surrender and Prisoners of War moves included."""

from __future__ import annotations

from collections.abc import Callable

from sqlalchemy.orm import Session

from sota_casino.services import audit
from sota_casino.services import fairness as fairness_service
from sota_casino.services import rounds
from sota_casino.verify import FAIL
from sota_casino.verify import PENDING
from sota_casino.verify import verify_bundle


def _play_everything(session: Session, player: int, rig: Callable) -> None:
    rig(player, ["tie", "win", "tie", "lose"])
    for choice in ("war", None, "surrender", None):
        opened = rounds.place_casino_war_bet(session, player, 200, 100)
        if choice is not None:
            rounds.decide_casino_war(session, player, opened.id, choice)
    rounds.play_sota(session, player, 3, preset="nordic")
    rounds.play_sota(session, player, 2, rules={"seats": 3, "won_cards": "won_pile"})
    for _ in range(40):  # a Prisoners of War game that needs the player's moves
        game = rounds.play_sota(session, player, 1, rules={"prisoners_of_war": True})
        while game.status == "awaiting_move":
            pending = game.pending
            cards = sorted(pending.options)[: pending.count]
            game = rounds.sota_move(session, player, game.id, cards)
        if rounds.receipt(session, player, game.id)["document"]["actions"]:
            break


def test_the_services_bundle_verifies_before_and_after_the_reveal(
    session: Session, player: int, rig: Callable
) -> None:
    _play_everything(session, player, rig)
    pair = fairness_service.active_seed_pair(session, player)
    key = fairness_service.public_key_info(session).public_key_hex
    audit.sign_if_due(session)  # as the bundle's endpoints do: its rounds are anchored

    active = verify_bundle(fairness_service.bundle(session, player, pair.seed_pair_id), key)
    assert active.ok and active.pending and not active.revealed, active.failures
    games = [row.game for row in active.rounds]
    assert games.count("casino_war") == 4 and games.count("sota") >= 3
    assert all(row.statuses["cards"] == PENDING for row in active.rounds)

    fairness_service.rotate(session, player)
    audit.checkpoint(session)  # over the rotation, whose entry anchors the reveal
    revealed = verify_bundle(fairness_service.bundle(session, player, pair.seed_pair_id), key)
    assert revealed.ok and not revealed.pending and revealed.revealed, revealed.failures
    assert not any(FAIL in row.statuses.values() for row in revealed.rounds)
    actions = [action for row in revealed.rounds for action in _actions(session, player, row)]
    assert "war" in actions and "surrender" in actions and any(isinstance(a, list) for a in actions)


def _actions(session: Session, player: int, row) -> list:  # type: ignore[no-untyped-def]
    return rounds.receipt(session, player, row.round_id)["document"]["actions"]

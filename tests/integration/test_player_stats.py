"""A player's statistics equal the sums of their own rounds, recomputed here from the signed
receipts (on SQLite and PostgreSQL); other players' rounds never count."""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable
from fractions import Fraction
from typing import Any

import pytest
from sqlalchemy.orm import Session

from sota_casino.core import odds
from sota_casino.core.errors import Forbidden
from sota_casino.core.errors import NotFound
from sota_casino.services import accounts
from sota_casino.services import money
from sota_casino.services import rounds
from sota_casino.services import settings
from sota_casino.services import stats
from sota_casino.services.results import Figure

PASSWORD = "correct horse battery"


def play_rounds(session: Session, user_id: int, rig: Callable[[int, list[str]], bytes]) -> None:
    """Casino War with ties met by war and by surrender, tie bets, and Sota at 2, 3 and 4 seats."""
    rig(user_id, ["tie", "tie", "tie"])  # then three rounds as they come; later ties: war
    choices = iter(["war", "surrender", "war"])
    for bet, tie_bet in [(500, 100), (200, 200), (700, 100), (300, 0), (100, 0), (400, 0)]:
        played = rounds.place_casino_war_bet(session, user_id, bet, tie_bet)
        if played.status == "awaiting_decision":
            rounds.decide_casino_war(session, user_id, played.id, next(choices, "war"))
    rounds.play_sota(session, user_id, 3, preset="nordic")
    rounds.play_sota(session, user_id, 2, preset="english")
    rounds.play_sota(session, user_id, 4, rules={"seats": 3})
    rounds.play_sota(session, user_id, 1, rules={"seats": 4, "teams": True})
    rounds.play_sota(session, user_id, 5, rules={"seats": 4})


def receipts_of(session: Session, user_id: int) -> list[dict[str, Any]]:
    """The signed receipt documents of every settled round of the player."""
    listed = rounds.list_rounds(session, user_id, limit=100).rounds
    return [
        rounds.receipt(session, user_id, r.id)["document"] for r in listed if r.status == "settled"
    ]


def expected_from(receipts: list[dict[str, Any]]) -> dict[str, Any]:
    """What the statistics must say, added up from the receipts alone."""
    war = [r for r in receipts if r["game"] == "casino_war"]
    games = [r for r in receipts if r["game"] == "sota"]

    def net(r: dict[str, Any]) -> int:
        return int(r["payout"] - sum(r["stakes"].values()))

    def tie_net(r: dict[str, Any]) -> int:
        tie_bet = r["stakes"]["tie_bet"]
        return tie_bet * r["rules"]["tie_payout"] if r["outcome"]["tie_bet_won"] else -tie_bet

    outcomes = Counter(r["outcome"]["result"] for r in war)
    antes = sum(r["stakes"]["bet"] for r in war)
    main_net = sum(net(r) - tie_net(r) for r in war)
    ties = [r["actions"][0] for r in war if r["actions"]]
    share = Fraction(ties.count("war"), len(ties))
    decks, bonus = war[0]["rules"]["decks"], war[0]["rules"]["bonus"]
    mixed = share * odds.house_edge(decks, "war", bonus) + (1 - share) * odds.house_edge(
        decks, "surrender", bonus
    )
    by_seats: dict[tuple[int, bool], dict[str, int]] = {}
    for r in games:
        key = (r["rules"]["seats"], r["rules"]["teams"])
        line = by_seats.setdefault(key, {"games": 0, "wins": 0, "draws": 0, "losses": 0, "net": 0})
        winner = r["outcome"]["winner"]
        line["games"] += 1
        line["net"] += net(r)
        line["wins" if winner in (0, "team_0") else "draws" if winner == "draw" else "losses"] += 1
    days: Counter[tuple[str, str]] = Counter()
    for r in receipts:
        days[(r["settled_at"][:10], r["game"])] += net(r)
    return {
        "war": {
            "rounds": len(war),
            "handle": sum(sum(r["stakes"].values()) for r in war),
            "net": sum(net(r) for r in war),
            "antes": antes,
            "tie_net": sum(tie_net(r) for r in war),
            "outcomes": outcomes,
            "wars": outcomes["war_win"] + outcomes["war_tie"] + outcomes["war_lose"],
            "surrenders": outcomes["surrender"],
            "realized": Fraction(-main_net, antes),
            "expected": mixed,
            "share": share,
        },
        "sota": {
            "rounds": len(games),
            "handle": sum(r["stakes"]["stake"] for r in games),
            "net": sum(net(r) for r in games),
            "by_seats": by_seats,
        },
        "days": dict(days),
    }


def exact(figure: Figure | None) -> Fraction:
    assert figure is not None
    return Fraction(figure["exact"])


def test_statistics_equal_the_sums_of_the_players_own_receipts(
    session: Session, register: Callable[..., int], rig: Callable[[int, list[str]], bytes]
) -> None:
    alice, bob = register("alice"), register("bob")
    play_rounds(session, alice, rig)
    play_rounds(session, bob, rig)  # another player's rounds must never count
    rounds.place_casino_war_bet(session, bob, 5000, 0)
    figures = stats.player_stats(session, alice)
    want = expected_from(receipts_of(session, alice))

    war = figures.casino_war
    for key in ("rounds", "handle", "net", "antes", "tie_net", "wars", "surrenders"):
        assert getattr(war, key) == want["war"][key], key
    assert war.outcomes == {o: want["war"]["outcomes"][o] for o in war.outcomes}
    assert war.wars >= 2 and war.surrenders == 1
    assert exact(war.realized_edge) == want["war"]["realized"]
    assert exact(war.expected_edge) == want["war"]["expected"]
    interval = war.interval
    assert interval is not None
    assert interval.low < float(want["war"]["expected"]) < interval.high
    assert interval.inside == (interval.low <= float(want["war"]["realized"]) <= interval.high)
    assert [s.rounds for s in war.settings] == [6]
    assert exact(war.settings[0].war_share) == want["war"]["share"] >= Fraction(2, 3)

    game = figures.sota
    for key in ("rounds", "handle", "net"):
        assert getattr(game, key) == want["sota"][key], key
    assert exact(game.expected_edge) == 0
    assert exact(game.realized_edge) == Fraction(-want["sota"]["net"], want["sota"]["handle"])
    fields = ("games", "wins", "draws", "losses", "net")
    shown = {
        (line.seats, line.teams): {k: getattr(line, k) for k in fields} for line in game.by_seats
    }
    assert shown == want["sota"]["by_seats"]
    assert sorted(shown) == [(2, False), (3, False), (4, False), (4, True)]
    assert {(d.day, d.game): d.net for d in figures.days} == want["days"]

    history = figures.balance_history
    assert history.chips[-1].balance == money.balances(session, alice).chips
    assert history.sweets[-1].balance == money.balances(session, alice).sweets


def test_settings_played_are_kept_apart_and_weighed_by_antes(
    session: Session, register: Callable[..., int]
) -> None:
    alice = register("alice")
    olga = accounts.create_operator(session, "olga", PASSWORD, role="operator").id

    def play(bet: int) -> None:  # every tie is taken to war: the edge of always war
        played = rounds.place_casino_war_bet(session, alice, bet)
        if played.status == "awaiting_decision":
            rounds.decide_casino_war(session, alice, played.id, "war")

    for _ in range(3):
        play(100)
    settings.update_table(session, olga, "casino_war", {"decks": 1, "bonus": "ante"})
    play(300)
    war = stats.player_stats(session, alice).casino_war
    weights = {(s.decks, s.bonus): s.antes for s in war.settings}
    assert weights == {(1, "ante"): 300, (6, "none"): 300}
    assert [s.rounds for s in war.settings] == [1, 3]
    always_war = {key: odds.house_edge(key[0], "war", key[1]) for key in weights}
    assert exact(war.expected_edge) == (always_war[(1, "ante")] + always_war[(6, "none")]) / 2
    for line in war.settings:
        assert exact(line.expected_edge) == always_war[(line.decks, line.bonus)]


def test_staff_and_unknown_users_have_no_statistics(session: Session) -> None:
    olga = accounts.create_operator(session, "olga", PASSWORD, role="auditor").id
    with pytest.raises(Forbidden):
        stats.player_stats(session, olga)
    with pytest.raises(NotFound):
        stats.player_stats(session, 999_999)


def test_a_long_history_is_thinned_to_the_drawn_points_keeping_the_last(
    session: Session, register: Callable[..., int], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(stats, "BALANCE_POINTS", 12)
    alice = register("alice")
    for _ in range(15):  # 15 bets, and a settlement for each round not lost: over 12 moves
        played = rounds.place_casino_war_bet(session, alice, 100)
        if played.status == "awaiting_decision":
            rounds.decide_casino_war(session, alice, played.id, "surrender")
    history = stats.player_stats(session, alice).balance_history.chips
    assert len(history) == 12
    assert history[0].balance == 100_000
    assert history[-1].balance == money.balances(session, alice).chips
    assert [p.time for p in history] == sorted(p.time for p in history)

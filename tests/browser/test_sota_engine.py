"""The browser's Sota engine (static/js/sota_engine.js) against the Python core.

The page calls a Sota round verified only after replaying it with its own engine, so that
engine must be a faithful second implementation: thousands of random rule sets (every option,
Prisoners of War with random legal moves, unfinished games waiting for a move) and seeds are
played through both, and every receipt must be identical, trick log included.
"""

from __future__ import annotations

import hashlib
import random
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from sota_casino.core import fairness
from sota_casino.core import sota

pytestmark = pytest.mark.browser

ENGINE = Path(__file__).resolve().parents[2] / "sota_casino" / "static" / "js" / "sota_engine.js"
GAMES = 2400
STAKE = 7
# Client seeds with multi-byte UTF-8, a line separator and a character outside the BMP: the
# stream hashes the seed's UTF-8 bytes.
CLIENT_SEEDS = ("lucky", "héllo wörld", "line\u2028sep", "🂡 ace", "x" * 64, "a:b:c", "0")

#: Canonical JSON in the page (sorted keys, no spaces), hashed with the engine's own SHA-256,
#: whose digests the test checks against hashlib's.
PLAY_ALL = """games => {
    const E = window.SotaEngine;
    const canon = (v) => Array.isArray(v) ? "[" + v.map(canon).join(",") + "]"
        : v !== null && typeof v === "object"
        ? "{" + Object.keys(v).sort()
            .map((k) => JSON.stringify(k) + ":" + canon(v[k])).join(",") + "}"
        : JSON.stringify(v);
    const hex = (bytes) => Array.from(bytes, (b) => b.toString(16).padStart(2, "0")).join("");
    return games.map((g) => {
        const stream = new E.Stream(g.server_seed, g.client_seed, g.nonce);
        let game;
        try {
            game = E.playGame(g.rules, { stream, moves: g.moves });
        } catch (error) {
            return "the engine refused the game: " + error.message;
        }
        const receipt = {
            cards: game.deck, status: game.status, pending: game.pending,
            outcome: { winner: game.winner, tricks: game.tricks, ended_by: game.ended_by },
            payout: game.status === "settled" ? E.payout(g.rules, game.winner, g.stake) : null,
        };
        const text = canon(receipt);
        return g.full ? text : hex(E.sha256(new TextEncoder().encode(text)));
    });
}"""


def random_rules(rng: random.Random) -> sota.SotaRules:
    """A rule set with every option drawn at random (presets included now and then)."""
    if rng.random() < 0.1:
        return sota.SotaRules.from_preset(rng.choice(list(sota.PRESETS)))
    options: dict[str, Any] = {
        name: rng.choice(values) for name, values in sota.NAMED_VALUES.items()
    }
    options["seats"] = rng.choice(sota.SEAT_COUNTS)
    options["war_down"] = rng.choice(sota.WAR_DOWN_VALUES)
    # Mostly short games, so that thousands run quickly; the default limit now and then.
    options["max_tricks"] = rng.choice((2000, rng.randint(1, 40), rng.randint(40, 400)))
    options["lead"] = rng.choice((None, None, rng.randint(1, 12), rng.randint(12, 54)))
    for name in sota.SWITCHES:
        options[name] = rng.random() < 0.35
    if options["teams"]:
        options["seats"] = 4
    return sota.SotaRules.from_dict(options)


def legal_move(rng: random.Random, count: int, options: list[str]) -> list[str]:
    """Any legal Prisoners of War move: ``count`` distinct won cards in any order."""
    return rng.sample(options, count)


def play_with_random_moves(
    rules: sota.SotaRules, seeds: fairness.Seeds, rng: random.Random
) -> list[list[str]]:
    """Play a game to its end, answering every move the player is asked for at random.

    Each answer extends the moves and the game is played again from the start (a game is a
    replay of its moves), which is how the service itself continues one.
    """
    moves: list[list[str]] = []
    while True:
        result = sota.play_game(rules, stream=fairness.Stream(seeds), choices=moves)
        if result.pending is None:
            return moves
        moves.append(legal_move(rng, result.pending["count"], result.pending["options"]))


def random_games(count: int, seed: int) -> Iterator[dict[str, Any]]:
    """Random games with the Python core's receipt of each (canonical JSON)."""
    rng = random.Random(seed)
    for number in range(count):
        rules = random_rules(rng)
        if rules.prisoners_of_war:  # every move is a full replay: keep these games short
            rules = sota.SotaRules.from_dict({**rules.to_dict(), "max_tricks": rng.randint(1, 120)})
        seeds = fairness.Seeds(rng.randbytes(32), rng.choice(CLIENT_SEEDS), rng.randrange(0, 10**6))
        moves = play_with_random_moves(rules, seeds, rng) if rules.prisoners_of_war else []
        if moves and rng.random() < 0.2:  # stop before the last moves: a game waiting for one
            moves = moves[: rng.randrange(len(moves))]
        result = sota.play_game(rules, stream=fairness.Stream(seeds), choices=moves)
        settled = result.status == sota.SETTLED
        receipt = {
            "cards": list(result.deck),
            "status": result.status,
            "pending": result.pending,
            "outcome": result.receipt_outcome(),
            "payout": sota.payout(rules, result.winner, STAKE) if settled else None,
        }
        yield {
            "number": number,
            "rules": rules.to_dict(),
            "server_seed": seeds.server_seed.hex(),
            "client_seed": seeds.client_seed,
            "nonce": seeds.nonce,
            "moves": moves,
            "stake": STAKE,
            "receipt": fairness.canonical_json(receipt).decode(),
        }


@pytest.fixture
def engine_page(chromium: Any) -> Iterator[Any]:
    """A blank page with only the engine loaded."""
    page = chromium.new_page()
    errors: list[str] = []
    page.on("pageerror", lambda error: errors.append(str(error)))
    page.goto("about:blank")
    page.add_script_tag(path=str(ENGINE))
    yield page
    page.close()
    assert errors == []


def first_difference(python: str, javascript: str) -> str:
    at = next(
        (i for i, (a, b) in enumerate(zip(python, javascript, strict=False)) if a != b),
        min(len(python), len(javascript)),
    )
    around = slice(max(at - 80, 0), at + 80)
    return f"at character {at}: Python …{python[around]}… JS …{javascript[around]}…"


def test_random_rule_sets_and_seeds_give_the_same_receipts_in_both_engines(
    engine_page: Any,
) -> None:
    games = list(random_games(GAMES, seed=20261201))
    kinds = {
        "prisoners_of_war": sum(g["rules"]["prisoners_of_war"] for g in games),
        "moves": sum(len(g["moves"]) for g in games),
        "awaiting": sum('"status":"awaiting_move"' in g["receipt"] for g in games),
    }
    # The sample really exercises what it claims to (a broken generator must not pass quietly).
    assert kinds["prisoners_of_war"] >= 300 and kinds["moves"] >= 1000 and kinds["awaiting"] >= 20
    for option, values in sota.NAMED_VALUES.items():
        assert {g["rules"][option] for g in games} == set(values), option
    for name in ("seats", "war_down"):
        assert len({g["rules"][name] for g in games}) == 3
    endings = {g["receipt"].split('"ended_by":', 1)[1].split(",", 1)[0] for g in games}
    assert {'"last_seat"', '"no_cards"', '"max_tricks"', '"lead"', '"single_pass"'} <= endings

    digests = engine_page.evaluate(PLAY_ALL, [{**g, "receipt": None} for g in games])
    mismatched = [
        g
        for g, digest in zip(games, digests, strict=True)
        if digest != hashlib.sha256(g["receipt"].encode()).hexdigest()
    ]
    if mismatched:
        shown = mismatched[0]
        text = engine_page.evaluate(PLAY_ALL, [{**shown, "full": True}])[0]
        pytest.fail(
            f"{len(mismatched)} of {len(games)} games differ; game {shown['number']} with rules "
            f"{shown['rules']} and moves {shown['moves']}: "
            f"{first_difference(shown['receipt'], text)}"
        )


def test_the_engine_hashes_as_hashlib_does(engine_page: Any) -> None:
    messages = ["", "abc", "a" * 55, "a" * 56, "a" * 64, "é🂡\u2028" * 40]
    digests = engine_page.evaluate(
        """messages => messages.map((m) => Array.from(
            window.SotaEngine.sha256(new TextEncoder().encode(m)),
            (b) => b.toString(16).padStart(2, "0")).join(""))""",
        messages,
    )
    assert digests == [hashlib.sha256(m.encode()).hexdigest() for m in messages]


def test_the_engine_refuses_the_moves_the_core_refuses(engine_page: Any) -> None:
    rules = sota.SotaRules(prisoners_of_war=True, war_down=1, max_tricks=600)
    seeds = fairness.Seeds(bytes(range(32)), "moves", 0)
    moves = play_with_random_moves(rules, seeds, random.Random(5))
    wide = next(i for i, move in enumerate(moves) if len(move) >= 2)
    before, move, after = moves[:wide], moves[wide], moves[wide + 1 :]
    bad_moves = {
        "a card twice": [*before, [move[0]] * len(move), *after],
        "a card not won": [*before, [*move[:-1], "ZZ"], *after],
        "a card too many": [*before, [*move, "2C"], *after],
        "a move too many": [*moves, moves[-1]],
    }
    for bad in bad_moves.values():
        with pytest.raises((sota.InvalidInput, sota.InvalidAction)):
            sota.play_game(rules, stream=fairness.Stream(seeds), choices=bad)
    refusals = engine_page.evaluate(
        """([rules, seed, moveSets]) => Object.fromEntries(
            Object.entries(moveSets).map(([name, moves]) => {
                const stream = new window.SotaEngine.Stream(seed, "moves", 0);
                try {
                    window.SotaEngine.playGame(rules, { stream, moves });
                    return [name, null];
                } catch (error) { return [name, error.message]; }
            }))""",
        [rules.to_dict(), seeds.server_seed.hex(), bad_moves],
    )
    assert all(refusals.values()), refusals
    accepted = engine_page.evaluate(
        """([rules, seed, moves]) => window.SotaEngine.playGame(
            rules, { stream: new window.SotaEngine.Stream(seed, "moves", 0), moves }).status""",
        [rules.to_dict(), seeds.server_seed.hex(), moves],
    )
    assert accepted == "settled"

"""The published test vectors of ``docs/vectors/fairness-vectors.json``, for implementations in
any language: canonical bytes and Ed25519 signatures of every document type, Casino War rounds
with their receipts, and a Sota game for every value of every rule option with its full receipt.

Everything is fixed (seeds, times, ids and a published test key), so the file is the same bytes
whenever it is generated: ``python -m sota_casino.vectors [OUT]`` writes it, and a test holds
the implementation to it.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import sys
from collections.abc import Callable
from collections.abc import Iterator
from pathlib import Path
from typing import Any
from typing import Final

from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

from .core import anchors
from .core import audit_chain
from .core import cards
from .core import casino_war
from .core import sota
from .core.cards import canonical_shoe
from .core.fairness import PartialShuffle
from .core.fairness import Seeds
from .core.fairness import Stream
from .core.fairness import action_document
from .core.fairness import bet_document
from .core.fairness import canonical_json
from .core.fairness import commitment_document
from .core.fairness import commitment_of
from .core.fairness import key_change_document
from .core.fairness import public_key_hex
from .core.fairness import reveal_document
from .core.fairness import round_document
from .core.fairness import signed

Doc = dict[str, Any]

PATH: Final = Path(__file__).resolve().parents[1] / "docs" / "vectors" / "fairness-vectors.json"
#: The test key's 32-byte seed: published, so it proves nothing; never used for anything real.
TEST_KEY_SEED: Final = hashlib.sha256(b"sota-casino published test key (never trust it)").digest()
SERVER_SEED: Final = hashlib.sha256(b"sota-casino vectors server seed").digest()
CLIENT_SEED: Final = "vectors"
CREATED_AT: Final = "2025-04-01T10:00:00.000000Z"
SETTLED_AT: Final = "2025-04-01T11:00:00.250000Z"
REVEALED_AT: Final = "2025-04-01T18:00:00.000000Z"
SEED_PAIR_ID: Final = 12
USER_ID: Final = 7

#: Client seeds whose bytes an implementation must get exactly right.
CLIENT_SEEDS: Final = {
    "ascii": "player-chosen seed",
    "control characters": "tab\there\x01\x1f\x7f end",
    "quote, backslash, slash": 'say "hi" \\ / ok',
    "line separators": "a\u2028b\u2029c\u0085d\x0be\x0cf\x1cg",
    "emoji": "🂡 lucky 🍀",
    "non-BMP": "𝔖𝔬𝔱𝔞 \U0010fffd \U0001f0df",
    "combining, not normalised": "e\u0301 vs \u00e9",
}


def test_key() -> Ed25519PrivateKey:
    return Ed25519PrivateKey.from_private_bytes(TEST_KEY_SEED)


def _canonical_case(name: str, document: Doc, key: Ed25519PrivateKey) -> Doc:
    data = canonical_json(document)
    return {
        "name": name,
        "document": document,
        "canonical_hex": data.hex(),
        "signature": signed(key, document)["signature"],
    }


def _receipt(
    *,
    nonce: int,
    game: str,
    rules: Doc,
    actions: list[Any],
    cards: list[str],
    outcome: Doc,
    stakes: dict[str, int],
    payout: int,
    client_seed: str = CLIENT_SEED,
) -> Doc:
    return round_document(
        round_id=100 + nonce,
        game=game,
        seed_pair_id=SEED_PAIR_ID,
        commitment=commitment_of(SERVER_SEED),
        client_seed=client_seed,
        nonce=nonce,
        rules=rules,
        actions=actions,
        cards=cards,
        outcome=outcome,
        stakes=stakes,
        payout=payout,
        settled_at=SETTLED_AT,
    )


def _war_receipt(
    rules: casino_war.TableRules,
    nonce: int,
    bet: int,
    tie_bet: int,
    choice: str,
    client_seed: str = CLIENT_SEED,
) -> Doc:
    shoe = PartialShuffle(
        canonical_shoe("standard52", rules.decks), Stream(Seeds(SERVER_SEED, client_seed, nonce))
    )
    played = casino_war.play(rules, shoe.prefix, bet, tie_bet, choice)
    return _receipt(
        nonce=nonce,
        game=casino_war.GAME,
        rules=rules.to_dict(),
        actions=list(played.actions),
        cards=list(played.cards),
        outcome=played.receipt_outcome(),
        stakes=played.stakes,
        payout=played.payout,
        client_seed=client_seed,
    )


def documents(key: Ed25519PrivateKey) -> list[Doc]:
    """One case per document type, and a reveal per tricky client seed."""
    commitment = commitment_of(SERVER_SEED)
    cases = [
        _canonical_case(
            "commitment",
            commitment_document(
                seed_pair_id=SEED_PAIR_ID,
                user_id=USER_ID,
                commitment=commitment,
                created_at=CREATED_AT,
            ),
            key,
        )
    ]
    for label, client_seed in CLIENT_SEEDS.items():
        reveal = reveal_document(
            seed_pair_id=SEED_PAIR_ID,
            user_id=USER_ID,
            server_seed=SERVER_SEED,
            client_seed=client_seed,
            rounds=3,
            revealed_at=REVEALED_AT,
        )
        cases.append(_canonical_case(f"reveal, client seed: {label}", reveal, key))
    rules = casino_war.TableRules()
    cases.append(
        _canonical_case("round (casino_war)", _war_receipt(rules, 0, 500, 100, "war"), key)
    )
    game = sota.play_game(
        sota.SotaRules(max_tricks=3), stream=Stream(Seeds(SERVER_SEED, CLIENT_SEED, 1))
    )
    sota_doc = _receipt(
        nonce=1,
        game=sota.GAME,
        rules=sota.SotaRules(max_tricks=3).to_dict(),
        actions=[],
        cards=list(game.deck),
        outcome=game.receipt_outcome(),
        stakes={"stake": 3},
        payout=sota.payout(sota.SotaRules(max_tricks=3), game.winner, 3),
    )
    cases.append(_canonical_case("round (sota)", sota_doc, key))
    cases += _signed_action_cases(rules, key)
    cases.append(
        _canonical_case(
            "checkpoint",
            {
                "type": "checkpoint",
                "v": 1,
                "size": 1234,
                "root": hashlib.sha256(b"root").hexdigest(),
                "time": REVEALED_AT,
            },
            key,
        )
    )
    cases.append(
        _canonical_case(
            "key_change",
            key_change_document(
                old_public_key_hex=public_key_hex(key),
                new_public_key_hex=public_key_hex(Ed25519PrivateKey.from_private_bytes(bytes(32))),
                changed_at=REVEALED_AT,
            ),
            key,
        )
    )
    return cases


def _signed_action_cases(rules: casino_war.TableRules, key: Ed25519PrivateKey) -> list[Doc]:
    """A decision, a move and a bet as the player signs them, a receipt holding a signed
    decision, and one holding its signed bet too. The test key stands for the player's key
    too (key id 3). The decision and the bet are those of the first round of the vectors' pair
    that ties, so the receipt holding them lists the decision in its `actions`; the move is the
    published Prisoners of War game's first."""
    receipts = (_war_receipt(rules, n, 500, 100, "war") for n in range(100_000))
    war = next(receipt for receipt in receipts if receipt["actions"] == ["war"])
    decision = action_document(
        game=casino_war.GAME,
        round_id=war["round_id"],
        seed_pair_id=SEED_PAIR_ID,
        nonce=war["nonce"],
        index=0,
        choice="war",
    )
    # The first move of the vectors' Prisoners of War game, as its receipt's actions list it.
    played, _, moves = _short_game(sota.SotaRules(prisoners_of_war=True), lambda game: True)
    move = action_document(
        game=sota.GAME,
        round_id=100 + played,
        seed_pair_id=SEED_PAIR_ID,
        nonce=played,
        index=0,
        choice=moves[0],
    )
    receipt = {
        **war,
        "signed_actions": [
            {"document": decision, "signature": signed(key, decision)["signature"], "key_id": 3}
        ],
    }
    bet = bet_document(
        user_id=USER_ID,
        game=casino_war.GAME,
        seed_pair_id=SEED_PAIR_ID,
        nonce=war["nonce"],
        stakes={"bet": war["stakes"]["bet"], "tie_bet": war["stakes"]["tie_bet"]},
        rules=war["rules"],
    )
    with_bet = {
        **receipt,
        "signed_bet": {"document": bet, "signature": signed(key, bet)["signature"], "key_id": 3},
    }
    return [
        _canonical_case("action (casino_war decision)", decision, key),
        _canonical_case("action (sota move)", move, key),
        _canonical_case("round (casino_war, signed decision)", receipt, key),
        _canonical_case("bet (casino_war)", bet, key),
        _canonical_case("round (casino_war, signed bet and decision)", with_bet, key),
    ]


def war_rounds(key: Ed25519PrivateKey) -> list[Doc]:
    """Casino War rounds: every result, the tie bet won and lost, both bonus modes."""
    wanted = [
        ("win", "none", "war"),
        ("lose", "none", "war"),
        ("surrender", "none", "surrender"),
        ("war_win", "none", "war"),
        ("war_lose", "none", "war"),
        ("war_tie", "none", "war"),
        ("war_tie", "ante", "war"),
        ("war_win", "ante", "war"),
    ]
    cases = []
    for result, bonus, choice in wanted:
        rules = casino_war.TableRules(bonus=bonus)
        for nonce in range(100_000):
            doc = _war_receipt(rules, nonce, 500, 100, choice)
            if doc["outcome"]["result"] == result:
                break
        cases.append(
            {
                "name": f"{result}, bonus {bonus}",
                "server_seed": SERVER_SEED.hex(),
                "client_seed": CLIENT_SEED,
                "nonce": nonce,
                "decision": choice if doc["actions"] else None,
                "receipt": signed(key, doc),
            }
        )
    return cases


def _variants() -> Iterator[tuple[str, Doc, Callable[[sota.GameResult], bool]]]:
    """Each value of each rule option (other options at their defaults, unless it needs them),
    with what a game must show to be worth publishing."""
    anything: Callable[[sota.GameResult], bool] = lambda game: True  # noqa: E731
    yield "defaults (nordic)", {}, anything
    yield "seats 3", {"seats": 3}, anything
    yield "seats 4", {"seats": 4}, anything
    for deck in cards.DECK_KINDS[1:]:
        yield f"deck {deck}", {"deck": deck}, anything
    yield "war_down 1", {"war_down": 1}, anything
    yield "war_down by_rank", {"war_down": "by_rank"}, anything
    yield "won_cards won_pile", {"won_cards": "won_pile"}, anything
    yield "gather table", {"gather": "table"}, anything
    yield "gather shuffled", {"gather": "shuffled"}, anything
    yield "short last_card_up", {"short": "last_card_up"}, anything

    def returned(game: sota.GameResult) -> bool:
        return any("returned" in t for t in game.tricks.to_list())

    yield "multi_tie tied_only_return", {"seats": 3, "multi_tie": "tied_only_return"}, returned
    yield "multi_tie all", {"seats": 3, "multi_tie": "all"}, anything

    def ended(how: str) -> Callable[[sota.GameResult], bool]:
        return lambda game: game.ended_by == how

    yield "end single_pass", {"end": "single_pass"}, ended(sota.SINGLE_PASS)
    yield (
        "end single_pass, a draw with no cards",
        {"deck": "piquet32", "end": "single_pass"},
        ended(sota.NO_CARDS),
    )
    yield "max_tricks 50", {"max_tricks": 50}, ended(sota.MAX_TRICKS)
    yield "lead 6", {"lead": 6}, ended(sota.LEAD)
    yield "peace", {"peace": True}, anything
    yield "auto_war_twos", {"auto_war_twos": True}, anything
    yield "underdog", {"underdog": True}, anything
    yield "prisoners_of_war", {"prisoners_of_war": True}, lambda game: True
    yield (
        "teams (the player's team wins: even money)",
        {"seats": 4, "teams": True},
        (lambda game: game.winner == sota.TEAM_0),
    )


def _play(rules: sota.SotaRules, seeds: Seeds) -> tuple[sota.GameResult, list[list[str]]]:
    """Play a game; under Prisoners of War the player lays the first offered cards."""
    moves: list[list[str]] = []
    while True:
        game = sota.play_game(rules, stream=Stream(seeds), choices=moves)
        if game.status == sota.SETTLED:
            return game, moves
        assert game.pending is not None
        moves.append(list(game.pending["options"][: game.pending["count"]]))


def _short_game(
    rules: sota.SotaRules, worth: Callable[[sota.GameResult], bool]
) -> tuple[int, sota.GameResult, list[list[str]]]:
    """The first nonce of the vectors' pair whose game under ``rules`` is short and ``worth``
    showing (with a move under Prisoners of War); its game and moves."""
    for nonce in range(2000):
        game, moves = _play(rules, Seeds(SERVER_SEED, CLIENT_SEED, nonce))
        short = len(game.tricks) <= 120
        if worth(game) and short and (not rules.prisoners_of_war or moves):
            return nonce, game, moves
    raise AssertionError(f"no short game for {rules}")


def sota_games(key: Ed25519PrivateKey) -> list[Doc]:
    """A short game for each rule option value, with its full receipt."""
    cases = []
    for name, options, worth in _variants():
        rules = sota.SotaRules.from_dict(options)
        nonce, game, moves = _short_game(rules, worth)
        doc = _receipt(
            nonce=nonce,
            game=sota.GAME,
            rules=rules.to_dict(),
            actions=moves,
            cards=list(game.deck),
            outcome=game.receipt_outcome(),
            stakes={"stake": 3},
            payout=sota.payout(rules, game.winner, 3),
        )
        cases.append(
            {
                "name": name,
                "server_seed": SERVER_SEED.hex(),
                "client_seed": CLIENT_SEED,
                "nonce": nonce,
                "receipt": signed(key, doc),
            }
        )
    return cases


LOG_TIMES: Final = ("2025-04-01T12:00:00.000000Z", "2025-04-01T12:00:05.000000Z")
NOTE_ORIGIN: Final = "sota-casino/audit-log"


def anchored_log(key: Ed25519PrivateKey, war: list[Doc]) -> Doc:
    """A small audit log holding a pair's commitment and a war round, two signed checkpoints
    over it, the round's anchors (docs/fairness.md, "Anchors") and the consistency proof."""
    receipt = next(case["receipt"] for case in war if case["decision"] == "war")
    doc = receipt["document"]
    subject, pair = anchors.round_subject(doc["round_id"]), anchors.pair_subject(SEED_PAIR_ID)
    actor = f"user:{USER_ID}"
    raw = [
        (
            CREATED_AT,
            actor,
            anchors.COMMITMENT_ACTION,
            pair,
            {"commitment": doc["commitment"], "status": "next"},
        ),
        (CREATED_AT, actor, "seed_pair.client_seed_set", pair, {"client_seed": CLIENT_SEED}),
        (
            SETTLED_AT,
            actor,
            "round.bet",
            subject,
            {
                "game": "casino_war",
                "nonce": doc["nonce"],
                "seed_pair_id": SEED_PAIR_ID,
                "stakes": {
                    "bet": doc["stakes"]["bet"],
                    "raise": 0,
                    "tie_bet": doc["stakes"]["tie_bet"],
                },
            },
        ),
        (SETTLED_AT, actor, "round.decision", subject, {"choice": "war"}),
        (
            SETTLED_AT,
            actor,
            anchors.SETTLEMENT_ACTION,
            subject,
            {
                "receipt": anchors.receipt_hash(doc),
                "game": "casino_war",
                "staked": sum(doc["stakes"].values()),
                "payout": doc["payout"],
                "net": doc["payout"] - sum(doc["stakes"].values()),
                "currency": "chips",
            },
        ),
        (SETTLED_AT, "user:8", "user.registered", "user:8", {"username": "other", "address": ""}),
        (SETTLED_AT, "system", "key.created", "key:test", {"public_key_hex": public_key_hex(key)}),
    ]
    entries = audit_chain.link_entries(
        {"seq": i, "time": t, "actor": a, "action": act, "subject": sub, "data": data}
        for i, (t, a, act, sub, data) in enumerate(raw, start=1)
    )
    tree = audit_chain.entries_tree(entries)
    checkpoints = [
        signed(key, audit_chain.checkpoint_document(size, tree.root(size).hex(), time))
        for size, time in zip((3, len(entries)), LOG_TIMES, strict=True)
    ]
    size = len(entries)

    def anchor(of: Doc, seq: int) -> Doc:
        proof = tree.inclusion_proof(seq - 1, size)
        return {
            "of": of,
            "entry": entries[seq - 1],
            "leaf_index": seq - 1,
            "checkpoint_size": size,
            "proof": [node.hex() for node in proof],
        }

    return {
        "entries": entries,
        "checkpoints": checkpoints,
        "note": audit_chain.checkpoint_note(key, NOTE_ORIGIN, size, tree.root().hex()),
        "receipt": receipt,
        "receipt_hash": anchors.receipt_hash(doc),
        "anchors": [
            anchor(anchors.commitment_of(SEED_PAIR_ID), 1),
            anchor(anchors.bet_of(doc["round_id"]), 3),
            anchor(anchors.decision_of(doc["round_id"], 0), 4),
            anchor(anchors.settlement_of(doc["round_id"]), 5),
        ],
        "consistency": {
            "old_size": 3,
            "new_size": size,
            "proof": [node.hex() for node in tree.consistency_proof(3, size)],
        },
    }


def vectors() -> Doc:
    key = test_key()
    war = war_rounds(key)
    return {
        "format": "sota-casino-vectors",
        "v": 1,
        "about": (
            "Test vectors of docs/fairness.md. The test key is published: a signature by it "
            "proves nothing. canonical_hex is the UTF-8 of the canonical JSON of document; "
            "signature is Ed25519 over those bytes. Receipts replay from server_seed, "
            "client_seed and nonce."
        ),
        "test_key": {
            "private_key_seed_hex": TEST_KEY_SEED.hex(),
            "public_key_hex": public_key_hex(key),
        },
        "documents": documents(key),
        "casino_war": war,
        "sota": sota_games(key),
        "anchored_log": anchored_log(key, war),
    }


def render() -> bytes:
    """Return the vectors file's bytes: ASCII-only JSON, so any reader gets every character."""
    return (json.dumps(vectors(), ensure_ascii=True, indent=1, sort_keys=True) + "\n").encode()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m sota_casino.vectors", description="Write the published test vectors."
    )
    parser.add_argument("out", nargs="?", default=str(PATH), help=f"default {PATH}")
    args = parser.parse_args(argv)
    Path(args.out).parent.mkdir(parents=True, exist_ok=True)
    Path(args.out).write_bytes(render())
    print(f"wrote {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())

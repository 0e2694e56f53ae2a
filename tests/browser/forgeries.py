"""A cheating casino's forgeries of a real bundle, each signed so that nothing inside the bundle
gives it away: the page must catch them with the key it pinned and the player's own records.

Every changed round is dealt and played again by the core from the (possibly new) seeds, so a
forged receipt is exactly what an honest service would have signed for those seeds and choices.
"""

from __future__ import annotations

import copy
import hashlib
import random
from typing import Any

from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

from sota_casino.core import casino_war
from sota_casino.core import fairness
from sota_casino.core import sota
from sota_casino.core.cards import canonical_shoe

Bundle = dict[str, Any]


def sign_all(bundle: Bundle, key: Ed25519PrivateKey) -> Bundle:
    """Sign every document of the bundle again with ``key``, naming its public key."""
    forged = copy.deepcopy(bundle)
    forged["public_key_hex"] = fairness.public_key_hex(key)
    for signed in [forged["commitment"], forged["reveal"], *forged["rounds"]]:
        signed["signature"] = fairness.sign(key, signed["document"])
    return forged


def _seeds(bundle: Bundle, doc: dict[str, Any]) -> fairness.Seeds:
    server_seed = bytes.fromhex(bundle["reveal"]["document"]["server_seed"])
    return fairness.Seeds(server_seed, doc["client_seed"], doc["nonce"])


def _replayed(doc: dict[str, Any], seeds: fairness.Seeds) -> dict[str, Any]:
    """The receipt an honest service signs for these seeds and the receipt's choices."""
    if doc["game"] == "casino_war":
        rules = casino_war.TableRules.from_dict(doc["rules"])
        shuffler = fairness.PartialShuffle(
            canonical_shoe("standard52", rules.decks), fairness.Stream(seeds)
        )
        state = casino_war.replay(rules, shuffler.prefix, doc["stakes"], doc["actions"])
        return {
            **doc,
            "cards": list(state.cards),
            "stakes": state.stakes,
            "outcome": state.receipt_outcome(),
            "payout": state.payout,
        }
    rules = sota.SotaRules.from_dict(doc["rules"])
    game = sota.play_game(rules, stream=fairness.Stream(seeds), choices=doc["actions"])
    return {
        **doc,
        "cards": list(game.deck),
        "outcome": game.receipt_outcome(),
        "payout": sota.payout(rules, game.winner, doc["stakes"]["stake"]),
    }


def war_into_surrender(bundle: Bundle, key: Ed25519PrivateKey) -> tuple[Bundle, int]:
    """Turn the first war into a surrender; returns the forged bundle and the round's id."""
    forged = copy.deepcopy(bundle)
    for signed in forged["rounds"]:
        doc = signed["document"]
        if doc["game"] == "casino_war" and doc["actions"] == ["war"]:
            stakes = {**doc["stakes"], "raise": 0}
            signed["document"] = _replayed(
                {**doc, "actions": ["surrender"], "stakes": stakes}, _seeds(forged, doc)
            )
            return sign_all(forged, key), doc["round_id"]
    raise AssertionError("the bundle has no war to forge")


def other_moves(doc: dict[str, Any], seeds: fairness.Seeds, rng: random.Random) -> list[list[str]]:
    """Other legal Prisoners of War moves for the same game (the first one differs)."""
    rules = sota.SotaRules.from_dict(doc["rules"])
    moves: list[list[str]] = []
    while True:
        game = sota.play_game(rules, stream=fairness.Stream(seeds), choices=moves)
        if game.pending is None:
            return moves
        count, options = game.pending["count"], game.pending["options"]
        move = rng.sample(options, count)
        if len(moves) < len(doc["actions"]) and move == doc["actions"][len(moves)]:
            move = move[::-1] if count > 1 else [o for o in options if o != move[0]][:1]
        moves.append(move)


def moves_replaced(bundle: Bundle, key: Ed25519PrivateKey) -> tuple[Bundle, int]:
    """Replace the moves of the first Sota game that has any by other legal moves."""
    forged = copy.deepcopy(bundle)
    for signed in forged["rounds"]:
        doc = signed["document"]
        if doc["game"] == "sota" and doc["actions"]:
            seeds = _seeds(forged, doc)
            moves = other_moves(doc, seeds, random.Random(11))
            signed["document"] = _replayed({**doc, "actions": moves}, seeds)
            return sign_all(forged, key), doc["round_id"]
    raise AssertionError("the bundle has no Sota game with moves")


def _redealt(doc: dict[str, Any], seeds: fairness.Seeds) -> dict[str, Any]:
    if doc["game"] == "sota" and doc["actions"]:
        doc = {**doc, "actions": other_moves(doc, seeds, random.Random(3))}
    return _replayed(doc, seeds)


def recommitted(bundle: Bundle, key: Ed25519PrivateKey) -> Bundle:
    """A new server seed for the whole pair: a new commitment, every round dealt again.

    The new seed is one whose Casino War rounds tie exactly where the real ones did, so every
    decision still fits; a Prisoners of War game gets legal moves for its new deal.
    """
    forged = copy.deepcopy(bundle)
    reveal = forged["reveal"]["document"]
    client_seed = reveal["client_seed"]
    for attempt in range(100_000):
        seed = hashlib.sha256(f"forged {attempt}".encode()).digest()
        try:
            redone = [
                _redealt(s["document"], fairness.Seeds(seed, client_seed, s["document"]["nonce"]))
                for s in forged["rounds"]
            ]
        except (
            sota.InvalidInput,
            sota.InvalidAction,
            casino_war.RoundSettled,
            casino_war.DecisionNotDue,
        ):
            continue  # a tie where there was none, or moves that do not fit: try another
        commitment = fairness.commitment_of(seed)
        forged["commitment"]["document"]["commitment"] = commitment
        reveal.update(server_seed=seed.hex(), commitment=commitment)
        for signed, doc in zip(forged["rounds"], redone, strict=True):
            signed["document"] = {**doc, "commitment": commitment}
        return sign_all(forged, key)
    raise AssertionError("no seed re-deals these rounds with the same choices")


def trick_log_tampered(bundle: Bundle, key: Ed25519PrivateKey) -> tuple[Bundle, int]:
    """Give the first decided trick of the first Sota game to another seat, and sign it."""
    forged = copy.deepcopy(bundle)
    for signed in forged["rounds"]:
        doc = signed["document"]
        if doc["game"] != "sota":
            continue
        decided = [t for t in doc["outcome"]["tricks"] if t["winner"] is not None]
        if decided:
            decided[0]["winner"] = (decided[0]["winner"] + 1) % doc["rules"]["seats"]
            return sign_all(forged, key), doc["round_id"]
    raise AssertionError("the bundle has no Sota game")


def worse_tie_payout(bundle: Bundle, key: Ed25519PrivateKey) -> tuple[Bundle, int]:
    """Settle the first Casino War war at a tie payout of 8 to 1 instead of the table's: the
    cards and the decision stay, the payout follows the receipt's rules."""
    forged = copy.deepcopy(bundle)
    for signed in forged["rounds"]:
        doc = signed["document"]
        if doc["game"] == "casino_war" and doc["actions"]:
            rules = {**doc["rules"], "tie_payout": 8}
            assert rules != doc["rules"], "the table already paid 8 to 1"
            signed["document"] = _replayed({**doc, "rules": rules}, _seeds(forged, doc))
            return sign_all(forged, key), doc["round_id"]
    raise AssertionError("the bundle has no tied Casino War round")


def larger_stake(bundle: Bundle, key: Ed25519PrivateKey, game: str) -> tuple[Bundle, int, str]:
    """Settle the first round of ``game`` on twice the ante or stake the player sent, paid as
    the receipt's stakes say (the ledger debits them too, so the player's balance simply ends
    lower); returns the forged bundle, the round's id and the amount's name."""
    forged = copy.deepcopy(bundle)
    name = "bet" if game == "casino_war" else "stake"
    for signed in forged["rounds"]:
        doc = signed["document"]
        if doc["game"] == game:
            stakes = {**doc["stakes"], name: 2 * doc["stakes"][name]}
            signed["document"] = _replayed({**doc, "stakes": stakes}, _seeds(forged, doc))
            return sign_all(forged, key), doc["round_id"], name
    raise AssertionError(f"the bundle has no {game} round")


def round_left_out(bundle: Bundle, key: Ed25519PrivateKey) -> tuple[Bundle, int]:
    """Leave out the first round the player only bet in (a Casino War round without a tie),
    the reveal signed again with one round fewer."""
    forged = copy.deepcopy(bundle)
    hidden = next(
        signed["document"]
        for signed in forged["rounds"]
        if signed["document"]["game"] == "casino_war" and not signed["document"]["actions"]
    )
    forged["rounds"] = [s for s in forged["rounds"] if s["document"] is not hidden]
    forged["reveal"]["document"]["rounds"] -= 1
    return sign_all(forged, key), hidden["round_id"]

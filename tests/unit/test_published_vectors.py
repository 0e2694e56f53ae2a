"""The published vectors (docs/vectors/fairness-vectors.json) hold the implementation: the file
regenerates to the same bytes, an encoder written from docs/fairness.md alone (not json.dumps)
gives every canonical byte, every signature verifies by the test key, and every receipt passes
the verifier's checks replayed from its seeds."""

from __future__ import annotations

import json
from typing import Any

import pytest

from sota_casino import vectors
from sota_casino.core.fairness import canonical_json
from sota_casino.core.fairness import commitment_document
from sota_casino.core.fairness import commitment_of
from sota_casino.core.fairness import reveal_document
from sota_casino.core.fairness import verify_signature
from sota_casino.verify import check_round
from sota_casino.verify.checks import _pair_context

PUBLISHED = json.loads(vectors.PATH.read_text(encoding="ascii"))
KEY = PUBLISHED["test_key"]["public_key_hex"]
SHORT_ESCAPES = {
    '"': '\\"',
    "\\": "\\\\",
    "\b": "\\b",
    "\f": "\\f",
    "\n": "\\n",
    "\r": "\\r",
    "\t": "\\t",
}


def spec_encode(value: Any) -> str:
    """The canonical JSON exactly as docs/fairness.md words it, without the json module."""
    if value is None:
        return "null"
    if value is True:
        return "true"
    if value is False:
        return "false"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, str):
        out = []
        for char in value:
            if char in SHORT_ESCAPES:
                out.append(SHORT_ESCAPES[char])
            elif ord(char) < 0x20:
                out.append(f"\\u{ord(char):04x}")
            else:
                out.append(char)
        return '"' + "".join(out) + '"'
    if isinstance(value, list):
        return "[" + ",".join(spec_encode(item) for item in value) + "]"
    if isinstance(value, dict):
        keys = sorted(value)  # code point order (every key is ASCII)
        return "{" + ",".join(f"{spec_encode(k)}:{spec_encode(value[k])}" for k in keys) + "}"
    raise TypeError(f"a document holds no {type(value).__name__}")


def test_regenerating_the_vectors_gives_the_same_bytes() -> None:
    assert vectors.render() == vectors.PATH.read_bytes()


@pytest.mark.parametrize("case", PUBLISHED["documents"], ids=lambda c: c["name"])
def test_canonical_bytes_and_signatures_of_every_document_type(case: dict[str, Any]) -> None:
    data = bytes.fromhex(case["canonical_hex"])
    assert canonical_json(case["document"]) == data
    assert spec_encode(case["document"]).encode("utf-8") == data
    assert verify_signature(KEY, case["document"], case["signature"])


def test_the_documents_cover_every_type_and_the_tricky_client_seeds() -> None:
    types = {case["document"]["type"] for case in PUBLISHED["documents"]}
    assert types == {"commitment", "reveal", "round", "checkpoint", "key_change", "action", "bet"}
    text = "".join(case["document"].get("client_seed", "") for case in PUBLISHED["documents"])
    for char in ("\t", "\x01", "\x1f", "\u2028", "\u2029", "\u0085", "🍀", "\U0010fffd", '"', "\\"):
        assert char in text


def _receipts() -> list[dict[str, Any]]:
    return [*PUBLISHED["casino_war"], *PUBLISHED["sota"]]


def _context(rounds: int):  # type: ignore[no-untyped-def]
    seed = bytes.fromhex(_receipts()[0]["server_seed"])
    commitment = commitment_document(
        seed_pair_id=vectors.SEED_PAIR_ID,
        user_id=vectors.USER_ID,
        commitment=commitment_of(seed),
        created_at=vectors.CREATED_AT,
    )
    reveal = reveal_document(
        seed_pair_id=vectors.SEED_PAIR_ID,
        user_id=vectors.USER_ID,
        server_seed=seed,
        client_seed=vectors.CLIENT_SEED,
        rounds=rounds,
        revealed_at=vectors.REVEALED_AT,
    )
    return _pair_context((KEY,), commitment, reveal, seed)


@pytest.mark.parametrize("case", _receipts(), ids=lambda c: c["name"])
def test_every_published_receipt_replays_from_its_seeds(case: dict[str, Any]) -> None:
    envelope = case["receipt"]
    context = _context(max(c["receipt"]["document"]["nonce"] for c in _receipts()) + 1)
    row = check_round(context, 0, envelope)
    assert row.findings == (), [f.text() for f in row.findings]
    assert spec_encode(envelope["document"]).encode() == canonical_json(envelope["document"])


def test_the_sota_games_cover_every_rule_option_value_and_every_ending() -> None:
    games = [case["receipt"]["document"] for case in PUBLISHED["sota"]]
    endings = {game["outcome"]["ended_by"] for game in games}
    assert endings == {"last_seat", "no_cards", "max_tricks", "lead", "single_pass"}
    defaults = games[0]["rules"]
    changed = {(k, json.dumps(v)) for g in games for k, v in g["rules"].items() if v != defaults[k]}
    assert {
        ("seats", "3"),
        ("seats", "4"),
        ("deck", '"jokers54"'),
        ("deck", '"pjanitsa36"'),
        ("deck", '"piquet32"'),
        ("war_down", "1"),
        ("war_down", '"by_rank"'),
        ("won_cards", '"won_pile"'),
        ("gather", '"table"'),
        ("gather", '"shuffled"'),
        ("short", '"last_card_up"'),
        ("multi_tie", '"tied_only_return"'),
        ("multi_tie", '"all"'),
        ("end", '"single_pass"'),
        ("peace", "true"),
        ("auto_war_twos", "true"),
        ("underdog", "true"),
        ("prisoners_of_war", "true"),
        ("teams", "true"),
    } <= changed
    assert any(game["actions"] for game in games)  # Prisoners of War moves
    assert any("returned" in trick for game in games for trick in game["outcome"]["tricks"])
    team_game = next(game for game in games if game["rules"]["teams"])
    assert team_game["outcome"]["winner"] == "team_0" and team_game["payout"] == 2 * 3


def test_a_receipt_holding_signed_actions_signs_each_of_its_actions_at_its_position() -> None:
    """docs/fairness.md: `signed_actions` has one entry per entry of `actions`, each the action
    document of the receipt's game, round, pair, nonce, index and choice."""
    receipts = [
        case["document"]
        for case in PUBLISHED["documents"]
        if case["document"]["type"] == "round" and "signed_actions" in case["document"]
    ]
    assert receipts
    for doc in receipts:
        assert doc["actions"]
        assert len(doc["signed_actions"]) == len(doc["actions"])
        for index, (signed, choice) in enumerate(
            zip(doc["signed_actions"], doc["actions"], strict=True)
        ):
            assert signed["document"] == {
                "choice": choice,
                "game": doc["game"],
                "index": index,
                "nonce": doc["nonce"],
                "round_id": doc["round_id"],
                "seed_pair_id": doc["seed_pair_id"],
                "type": "action",
                "v": 1,
            }
            assert verify_signature(KEY, signed["document"], signed["signature"])


def test_the_decision_bytes_quoted_in_the_docs_are_the_published_decisions() -> None:
    decision = next(
        case for case in PUBLISHED["documents"] if case["name"] == "action (casino_war decision)"
    )
    text = vectors.PATH.parent.parent.joinpath("fairness.md").read_text(encoding="utf-8")
    quoted = bytes.fromhex(decision["canonical_hex"]).decode("utf-8")
    assert "\n" + quoted + "\n" in text


@pytest.mark.parametrize("name", ["action (casino_war decision)", "action (sota move)"])
def test_each_published_action_is_the_one_its_rounds_published_receipt_lists(name: str) -> None:
    """An action vector is a real action: a published receipt of its round (the vectors play
    one nonce under several rules) lists this choice at this index of its ``actions``."""
    action = next(case["document"] for case in PUBLISHED["documents"] if case["name"] == name)
    receipts = [case["document"] for case in PUBLISHED["documents"]] + [
        case["receipt"]["document"] for case in PUBLISHED["casino_war"] + PUBLISHED["sota"]
    ]
    played = [
        doc
        for doc in receipts
        if doc["type"] == "round"
        and (doc["game"], doc["round_id"], doc["nonce"], doc["seed_pair_id"])
        == (action["game"], action["round_id"], action["nonce"], action["seed_pair_id"])
    ]
    assert played, f"no published receipt of round {action['round_id']}"
    index = action["index"]
    assert [action["choice"]] in [doc["actions"][index : index + 1] for doc in played]

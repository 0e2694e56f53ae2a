"""The player's records against a cheating casino, end to end with the real service and its
real key: a re-committed seed pair, a war turned into a surrender and Prisoners of War moves
replaced by other legal moves are each re-signed with the service's key, so they pass every
check a bundle allows — and each is caught by ``--records``, naming the round and what differs."""

from __future__ import annotations

import copy
import hashlib
import io
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey
from flask import Flask
from sqlalchemy.orm import Session

from sota_casino.core import casino_war
from sota_casino.core import sota
from sota_casino.core.cards import canonical_shoe
from sota_casino.core.fairness import PartialShuffle
from sota_casino.core.fairness import Seeds
from sota_casino.core.fairness import Stream
from sota_casino.core.fairness import commitment_of
from sota_casino.core.fairness import load_private_key
from sota_casino.core.fairness import signed
from sota_casino.services import audit
from sota_casino.services import fairness as fairness_service
from sota_casino.services import rounds
from sota_casino.verify import main

Doc = dict[str, Any]


def _run(*args: str) -> tuple[int, str]:
    out = io.StringIO()
    code = main(list(args), out, io.StringIO())
    return code, out.getvalue()


def _write(folder: Path, name: str, data: Any) -> str:
    path = folder / name
    path.write_text(json.dumps(data, ensure_ascii=False), encoding="utf-8")
    return str(path)


class Player:
    """Plays through the service and keeps records exactly as the browser does."""

    def __init__(self, session: Session, user_id: int) -> None:
        self.session, self.user_id = session, user_id
        self.commitments: list[Doc] = []
        self.actions: list[Doc] = []

    def keep_commitment(self) -> int:
        """Save the commitment document shown before the first round (the API recipe)."""
        pair = fairness_service.active_seed_pair(self.session, self.user_id)
        self.commitments.append({"document": pair.commitment_document, "signature": pair.signature})
        return int(pair.seed_pair_id)

    def decide(self, round_: Doc, choice: str) -> Doc:
        settled = rounds.decide_casino_war(self.session, self.user_id, round_.id, choice)
        self.actions.append(
            {
                "round_id": round_.id,
                "seed_pair_id": None,  # a record may leave these out
                "nonce": None,
                "game": "casino_war",
                "action": choice,
            }
        )
        return settled

    def prisoners_game(self) -> Doc:
        """Play Prisoners of War games until one needs the player's moves."""
        for _ in range(60):
            game = rounds.play_sota(self.session, self.user_id, 1, rules={"prisoners_of_war": True})
            move = 0
            while game.status == "awaiting_move":
                pending = game.pending
                cards = sorted(pending.options)[: pending.count]
                self.actions.append(
                    {
                        "round_id": game.id,
                        "seed_pair_id": game.seed_pair_id,
                        "nonce": game.nonce,
                        "game": "sota",
                        "move": move,
                        "cards": cards,
                    }
                )
                game = rounds.sota_move(self.session, self.user_id, game.id, cards)
                move += 1
            if move:
                return game
        raise AssertionError("no Prisoners of War game needed a move")

    def records(self, public_key_hex: str) -> Doc:
        return {
            "format": "sota-casino-records",
            "v": 1,
            "public_key_hex": public_key_hex,
            "commitments": self.commitments,
            "actions": self.actions,
        }


@pytest.fixture
def played(session: Session, player: int, rig: Callable) -> tuple[Player, Doc, str]:
    """A revealed seed pair with a war, a surrender, plain rounds, Sota games and a Prisoners
    of War game with moves; the player's records; the service's key."""
    me = Player(session, player)
    rig(player, ["tie", "win", "tie"])  # the test's own seed, committed before play
    seed_pair_id = me.keep_commitment()
    wars = [rounds.place_casino_war_bet(session, player, 200, 100) for _ in range(3)]
    me.decide(wars[0], "war")
    me.decide(wars[2], "surrender")
    rounds.play_sota(session, player, 2, preset="nordic")
    me.prisoners_game()
    fairness_service.rotate(session, player)
    audit.sign_if_due(session)  # as the bundle's endpoints do: its rounds are anchored
    bundle = fairness_service.bundle(session, player, seed_pair_id)
    key = fairness_service.public_key_info(session).public_key_hex
    return me, bundle, key


def _service_key(app: Flask) -> Ed25519PrivateKey:
    return load_private_key(Path(app.config["SIGNING_KEY_FILE"]).read_bytes())


def _war_receipt(doc: Doc, seeds: Seeds, actions: list[str]) -> Doc:
    rules = casino_war.TableRules.from_dict(doc["rules"])
    shoe = PartialShuffle(canonical_shoe("standard52", rules.decks), Stream(seeds))
    played = casino_war.replay(rules, shoe.prefix, doc["stakes"], actions)
    return doc | {
        "actions": list(played.actions),
        "cards": list(played.cards),
        "outcome": played.receipt_outcome(),
        "stakes": played.stakes,
        "payout": played.payout,
    }


def _sota_receipt(doc: Doc, seeds: Seeds, choose: Callable[[Doc, int], list[str]]) -> Doc:
    rules = sota.SotaRules.from_dict(doc["rules"])
    moves: list[list[str]] = []
    while True:
        result = sota.play_game(rules, stream=Stream(seeds), choices=moves)
        if result.status == sota.SETTLED:
            break
        assert result.pending is not None
        moves.append(choose(result.pending, len(moves)))
    return doc | {
        "actions": moves,
        "cards": list(result.deck),
        "outcome": result.receipt_outcome(),
        "payout": sota.payout(rules, result.winner, doc["stakes"]["stake"]),
    }


def _seeds(bundle: Doc, nonce: int) -> Seeds:
    reveal = bundle["reveal"]["document"]
    return Seeds(bytes.fromhex(reveal["server_seed"]), reveal["client_seed"], nonce)


def _recommitted(bundle: Doc, key: Ed25519PrivateKey) -> Doc:
    """The whole pair on a new server seed: new commitment, every round re-dealt, re-signed."""
    forged = copy.deepcopy(bundle)
    seed = hashlib.sha256(b"the casino's other server seed").digest()
    commitment = commitment_of(seed)
    forged["commitment"] = signed(
        key, bundle["commitment"]["document"] | {"commitment": commitment}
    )
    reveal = bundle["reveal"]["document"] | {"commitment": commitment, "server_seed": seed.hex()}
    forged["reveal"] = signed(key, reveal)
    new_rounds = []
    for envelope in bundle["rounds"]:
        doc = envelope["document"] | {"commitment": commitment}
        seeds = Seeds(seed, doc["client_seed"], doc["nonce"])
        if doc["game"] == casino_war.GAME:
            rules = casino_war.TableRules.from_dict(doc["rules"])
            shoe = PartialShuffle(canonical_shoe("standard52", rules.decks), Stream(seeds))
            first = casino_war.deal(rules, shoe.prefix, doc["stakes"]["bet"], 0)
            doc = _war_receipt(doc, seeds, ["war"] if first.status != casino_war.SETTLED else [])
        else:
            doc = _sota_receipt(
                doc, seeds, lambda pending, _: pending["options"][: pending["count"]]
            )
        new_rounds.append(signed(key, doc))
    forged["rounds"] = new_rounds
    return forged


def _war_turned_to_surrender(bundle: Doc, key: Ed25519PrivateKey) -> tuple[Doc, int]:
    forged = copy.deepcopy(bundle)
    for i, envelope in enumerate(bundle["rounds"]):
        doc = envelope["document"]
        if doc["actions"] == ["war"]:
            changed = _war_receipt(doc, _seeds(bundle, doc["nonce"]), ["surrender"])
            assert changed["payout"] < doc["payout"] or changed["payout"] != doc["payout"]
            forged["rounds"][i] = signed(key, changed)
            return forged, doc["round_id"]
    raise AssertionError("no war in the bundle")


def _moves_replaced(bundle: Doc, key: Ed25519PrivateKey) -> tuple[Doc, int]:
    """The Prisoners of War moves replaced by other legal moves (the highest cards instead)."""
    forged = copy.deepcopy(bundle)
    for i, envelope in enumerate(bundle["rounds"]):
        doc = envelope["document"]
        if doc["game"] == sota.GAME and doc["actions"]:

            def other(pending: Doc, index: int) -> list[str]:
                ranked = sorted(pending["options"], reverse=True)
                return ranked[: pending["count"]]

            changed = _sota_receipt(doc, _seeds(bundle, doc["nonce"]), other)
            assert changed["actions"] != doc["actions"]
            forged["rounds"][i] = signed(key, changed)
            return forged, doc["round_id"]
    raise AssertionError("no Prisoners of War moves in the bundle")


def test_the_honest_bundle_agrees_with_the_players_records(
    played: tuple[Player, Doc, str], tmp_path: Path
) -> None:
    me, bundle, key = played
    records = _write(tmp_path, "records.json", me.records(key))
    code, out = _run(_write(tmp_path, "b.json", bundle), "--records", records)
    assert code == 0, out
    assert "Key pinned by the records file." in out
    assert out.splitlines()[-1].startswith("Result: OK:")


def _without_anchors(bundle: Doc) -> Doc:
    """The bundle stripped of the anchors that would contradict it, by an operator who holds
    the signing key and the database."""
    return {k: v for k, v in bundle.items() if k not in ("anchors", "checkpoints")}


UNANCHORED = "bundle: log: unanchored: the bundle proves none of its documents in the signed log"


def _assert_proves_nothing_unanchored(tmp_path: Path, forged_bundle: Doc, key: str) -> None:
    """Without its anchors, the forged bundle proves nothing in the signed log."""
    bare = _write(tmp_path, "bare.json", _without_anchors(forged_bundle))
    code, out = _run(bare, "--public-key", key)
    assert code == 1 and UNANCHORED in out, out


def _run_with_records(tmp_path: Path, bundle: str, key: str, me: Player) -> tuple[int, str]:
    """The verifier on ``bundle`` trusting ``key``, with the records the player kept."""
    return _run(
        bundle, "--public-key", key, "--records", _write(tmp_path, "r.json", me.records(key))
    )


def test_a_recommitted_pair_passes_every_bundle_check_but_not_the_records_nor_the_log(
    app: Flask, played: tuple[Player, Doc, str], tmp_path: Path
) -> None:
    me, bundle, key = played
    forged_bundle = _recommitted(bundle, _service_key(app))
    _assert_proves_nothing_unanchored(tmp_path, forged_bundle, key)
    forged = _write(tmp_path, "forged.json", forged_bundle)
    code, out = _run(forged, "--public-key", key)
    assert code == 1, out
    (line,) = [line for line in out.splitlines() if "commitment document: log:" in line]
    logged = bundle["commitment"]["document"]["commitment"]
    assert f"the log recorded commitment {logged[:16]}… for this pair" in line
    assert f"in the checkpoint over {bundle['checkpoints'][0]['document']['size']} entries" in line
    assert f"signed by {key[:16]}…" in line
    code, out = _run_with_records(tmp_path, forged, key, me)
    assert code == 1, out
    (line,) = [line for line in out.splitlines() if "commitment document: records:" in line]
    seed_pair_id = bundle["commitment"]["document"]["seed_pair_id"]
    assert f"seed pair {seed_pair_id}: the commitment differs from the one recorded" in line
    assert 'commitment is "' in line and "signed by the same key" in line


def test_a_war_turned_into_a_surrender_is_caught_by_the_records_and_the_log_only(
    app: Flask, played: tuple[Player, Doc, str], tmp_path: Path
) -> None:
    me, bundle, key = played
    forged_bundle, round_id = _war_turned_to_surrender(bundle, _service_key(app))
    _assert_proves_nothing_unanchored(tmp_path, forged_bundle, key)
    forged = _write(tmp_path, "forged.json", forged_bundle)
    code, out = _run(forged, "--public-key", key)
    assert code == 1 and (
        f"round {round_id} (nonce " in out
        and "log: the log recorded the player's actions ['war'], the receipt lists ['surrender']"
        in out
    ), out
    code, out = _run_with_records(tmp_path, forged, key, me)
    assert code == 1
    assert (
        f"round {round_id} (nonce " in out
        and 'records: the receipt\'s actions are ["surrender"], but the player sent "war"' in out
    ), out


def test_prisoners_moves_replaced_by_other_legal_moves_are_caught_by_the_records_and_the_log_only(
    app: Flask, played: tuple[Player, Doc, str], tmp_path: Path
) -> None:
    me, bundle, key = played
    forged_bundle, round_id = _moves_replaced(bundle, _service_key(app))
    _assert_proves_nothing_unanchored(tmp_path, forged_bundle, key)
    forged = _write(tmp_path, "forged.json", forged_bundle)
    code, out = _run(forged, "--public-key", key)
    assert code == 1 and f"round {round_id} (nonce " in out and "the round was rewritten" in out
    code, out = _run_with_records(tmp_path, forged, key, me)
    assert code == 1
    failures = [line for line in out.splitlines() if f"round {round_id} (nonce" in line]
    failures = [line for line in failures if ": log: " not in line]  # as without records
    assert failures and all(": records: move " in line for line in failures), out
    assert "in the receipt, but the player sent" in failures[0]


def test_a_round_the_player_acted_in_but_missing_from_the_bundle_fails(
    played: tuple[Player, Doc, str], tmp_path: Path
) -> None:
    me, bundle, key = played
    war_round = next(a["round_id"] for a in me.actions if a["game"] == "casino_war")
    cut = copy.deepcopy(bundle)
    cut["rounds"] = [r for r in cut["rounds"] if r["document"]["round_id"] != war_round]
    records = me.records(key)
    for action in records["actions"]:
        action["seed_pair_id"] = bundle["commitment"]["document"]["seed_pair_id"]
    code, out = _run(
        _write(tmp_path, "cut.json", cut), "--records", _write(tmp_path, "r.json", records)
    )
    assert code == 1
    pair_id = bundle["commitment"]["document"]["seed_pair_id"]
    assert f"bundle: records: round {war_round}: the player played it on seed pair {pair_id}" in out

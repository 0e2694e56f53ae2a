"""Build real receipt bundles from the core, as the service would, for the verifier's tests.

A bundle is the API's ``{"public_key_hex", "commitment", "reveal", "rounds", "anchors",
"checkpoints", "pending_anchors"}``: a signed commitment document, the signed reveal (or
``None``), signed round receipts whose cards come from the real stream, and each document's
anchor in a real audit log (:func:`anchored`) proved into a checkpoint the pair's key signed.
With the default seeds the Casino War rounds include ties (nonces 1, 3, 13, 14, 19), so both
war and surrender are played. Each pair has a server seed of its own, as the service's have
(:func:`server_seed_of`): one seed committed for two pairs fails them when they are compared.

A test that changes a document and signs it again calls :func:`anchored` on the result when it
plays a dishonest service that logged what it signed from the start (which only the other
checks can catch); left with the old anchors, the changed document contradicts the log.
"""

from __future__ import annotations

import hashlib
import io
import json
from collections.abc import Callable
from collections.abc import Iterable
from collections.abc import Mapping
from collections.abc import Sequence
from dataclasses import dataclass
from dataclasses import field
from pathlib import Path
from typing import Any

from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

from sota_casino.core import anchors
from sota_casino.core import audit_chain
from sota_casino.core import casino_war
from sota_casino.core import sota
from sota_casino.core.cards import canonical_shoe
from sota_casino.core.fairness import KEY_CHANGED
from sota_casino.core.fairness import PartialShuffle
from sota_casino.core.fairness import Seeds
from sota_casino.core.fairness import Stream
from sota_casino.core.fairness import canonical_json
from sota_casino.core.fairness import commitment_document
from sota_casino.core.fairness import commitment_of
from sota_casino.core.fairness import new_signing_key
from sota_casino.core.fairness import public_key_hex
from sota_casino.core.fairness import reveal_document
from sota_casino.core.fairness import round_document
from sota_casino.core.fairness import signed
from sota_casino.verify import main

Doc = dict[str, Any]

KEY = new_signing_key()
SERVER_SEED = hashlib.sha256(b"sota-casino test server seed").digest()  # pair 12's
CLIENT_SEED = "lucky seven"
TIE_NONCES = (1, 3, 13, 14, 19)  # the first two cards tie for these nonces with the seeds above
CREATED_AT = "2025-04-01T10:00:00.000000Z"
REVEALED_AT = "2025-04-01T18:00:00.000000Z"
#: When the checkpoint of :func:`anchored` is signed: after every document it covers.
CHECKPOINT_AT = "2025-04-01T18:00:05.000000Z"


def server_seed_of(seed_pair_id: object) -> bytes:
    """The server seed of a :class:`Pair` given none: :data:`SERVER_SEED` for pair 12, another
    one for each other pair id."""
    if seed_pair_id == 12 and type(seed_pair_id) is int:
        return SERVER_SEED
    return hashlib.sha256(f"sota-casino test server seed {seed_pair_id!r}".encode()).digest()


def settled_at(nonce: int) -> str:
    """Return a settlement time after the commitment and before the reveal."""
    return f"2025-04-01T{11 + nonce // 3600:02d}:{nonce // 60 % 60:02d}:{nonce % 60:02d}.250000Z"


@dataclass(frozen=True)
class Pair:
    """A seed pair and the key that signs its documents; its server seed, unless given, is
    its own (:func:`server_seed_of`)."""

    key: Ed25519PrivateKey = KEY
    server_seed: bytes = b""
    client_seed: str = CLIENT_SEED
    seed_pair_id: int = 12
    user_id: int = 7
    created_at: str = CREATED_AT
    war_rules: casino_war.TableRules = field(default_factory=casino_war.TableRules)

    def __post_init__(self) -> None:
        if not self.server_seed:
            object.__setattr__(self, "server_seed", server_seed_of(self.seed_pair_id))

    @property
    def commitment(self) -> str:
        return commitment_of(self.server_seed)

    def seeds(self, nonce: int) -> Seeds:
        return Seeds(self.server_seed, self.client_seed, nonce)

    def sign(self, doc: Doc) -> Doc:
        return signed(self.key, doc)


def commitment(pair: Pair) -> Doc:
    """Return the pair's signed commitment document."""
    return pair.sign(
        commitment_document(
            seed_pair_id=pair.seed_pair_id,
            user_id=pair.user_id,
            commitment=pair.commitment,
            created_at=pair.created_at,
        )
    )


def reveal(pair: Pair, rounds: int, revealed_at: str = REVEALED_AT) -> Doc:
    """Return the pair's signed reveal after ``rounds`` nonces were used."""
    return pair.sign(
        reveal_document(
            seed_pair_id=pair.seed_pair_id,
            user_id=pair.user_id,
            server_seed=pair.server_seed,
            client_seed=pair.client_seed,
            rounds=rounds,
            revealed_at=revealed_at,
        )
    )


def war_round(
    pair: Pair, nonce: int, *, bet: int = 500, tie_bet: int = 100, choice: str = "war"
) -> casino_war.WarRound:
    """Play a Casino War round on the pair's real stream."""
    shoe = PartialShuffle(
        canonical_shoe("standard52", pair.war_rules.decks), Stream(pair.seeds(nonce))
    )
    return casino_war.play(pair.war_rules, shoe.prefix, bet, tie_bet, choice)


def receipt(
    pair: Pair,
    nonce: int,
    *,
    game: str,
    rules: Doc,
    actions: Sequence[Any],
    cards: Sequence[str],
    outcome: Doc,
    stakes: dict[str, int],
    payout: int,
) -> Doc:
    """Return the signed receipt of a settled round."""
    return pair.sign(
        round_document(
            round_id=100 + nonce,
            game=game,
            seed_pair_id=pair.seed_pair_id,
            commitment=pair.commitment,
            client_seed=pair.client_seed,
            nonce=nonce,
            rules=rules,
            actions=list(actions),
            cards=list(cards),
            outcome=outcome,
            stakes=stakes,
            payout=payout,
            settled_at=settled_at(nonce),
        )
    )


def war_receipt(pair: Pair, nonce: int, **play: Any) -> Doc:
    """Return the signed receipt of a Casino War round played on the pair's stream."""
    played = war_round(pair, nonce, **play)
    return receipt(
        pair,
        nonce,
        game=casino_war.GAME,
        rules=pair.war_rules.to_dict(),
        actions=played.actions,
        cards=played.cards,
        outcome=played.receipt_outcome(),
        stakes=played.stakes,
        payout=played.payout,
    )


def sota_receipt(
    pair: Pair, nonce: int, rules: sota.SotaRules | None = None, stake: int = 3
) -> Doc:
    """Return the signed receipt of a whole Sota game played on the pair's stream."""
    rules = rules or sota.SotaRules()
    result = sota.play_game(rules, stream=Stream(pair.seeds(nonce)))
    return receipt(
        pair,
        nonce,
        game=sota.GAME,
        rules=rules.to_dict(),
        actions=[],
        cards=result.deck,
        outcome=result.receipt_outcome(),
        stakes={"stake": stake},
        payout=sota.payout(rules, result.winner, stake),
    )


def _alternating_choice(nonce: int) -> str:
    """War on the first tie, surrender on the next, and so on."""
    ties_before = sum(1 for t in TIE_NONCES if t < nonce)
    return "surrender" if ties_before % 2 else "war"


RoundMaker = Callable[[Pair, int], Doc]


def default_round(pair: Pair, nonce: int) -> Doc:
    """Casino War rounds, a tie bet on every other one, alternating war and surrender."""
    tie_bet = 100 if nonce % 2 else 0
    return war_receipt(pair, nonce, tie_bet=tie_bet, choice=_alternating_choice(nonce))


def bundle(
    rounds: int = 20,
    *,
    pair: Pair | None = None,
    revealed: bool = True,
    make_round: RoundMaker = default_round,
) -> Doc:
    """Return a bundle of ``rounds`` receipts (nonces 0..rounds-1), revealed or not."""
    pair = pair or Pair()
    made = {
        "public_key_hex": public_key_hex(pair.key),
        "commitment": commitment(pair),
        "reveal": reveal(pair, rounds) if revealed else None,
        "rounds": [make_round(pair, nonce) for nonce in range(rounds)],
    }
    return anchored(made, pair.key)


def _document(envelope: object) -> Doc | None:
    doc = envelope.get("document") if isinstance(envelope, dict) else None
    return doc if isinstance(doc, dict) else None


#: The documents' entries of a log, each with what it anchors: ``[(of, entry), ...]``.
Logged = list[tuple[Doc, Doc]]


def logged_entries(bundle: Doc) -> Logged:
    """The entries a service logs for the bundle's documents, in order, each with the
    document it anchors (``of``): the commitment, each round's actions and settlement, then
    the reveal."""
    logged: Logged = []
    pair_doc = _document(bundle.get("commitment"))
    if pair_doc is not None:
        of = anchors.commitment_of(pair_doc.get("seed_pair_id"))  # type: ignore[arg-type]
        entry = {
            "time": pair_doc.get("created_at"),
            "actor": f"user:{pair_doc.get('user_id')}",
            "action": anchors.COMMITMENT_ACTION,
            "subject": anchors.pair_subject(pair_doc.get("seed_pair_id")),
            "data": {"commitment": pair_doc.get("commitment"), "status": "active"},
        }
        logged.append((of, entry))
    for envelope in bundle.get("rounds") or []:
        doc = _document(envelope)
        if doc is None or "round_id" not in doc:
            continue  # a receipt no service would have made: nothing to log
        round_id, subject = doc["round_id"], anchors.round_subject(doc["round_id"])
        actor = f"user:{pair_doc.get('user_id') if pair_doc else None}"
        bet = {name: doc.get(name) for name in anchors.BET_FIELDS}
        logged.append(
            (
                anchors.bet_of(round_id),
                {
                    "time": doc.get("settled_at"),
                    "actor": actor,
                    "action": anchors.BET_ACTION,
                    "subject": subject,
                    "data": {**bet, "stakes": doc.get("stakes")},
                },
            )
        )
        action = anchors.DECISION_ACTIONS.get(str(doc.get("game")))
        actions = doc.get("actions")
        if action is not None and isinstance(actions, list):
            for index, choice in enumerate(actions):
                entry = {
                    "time": doc.get("settled_at"),
                    "actor": actor,
                    "action": action,
                    "subject": subject,
                    "data": {anchors.DECISION_FIELDS[action]: choice},
                }
                logged.append((anchors.decision_of(round_id, index), entry))
        data = {"receipt": anchors.receipt_hash(doc), "game": doc.get("game")}
        if "payout" in doc:
            data["payout"] = doc["payout"]
        entry = {
            "time": doc.get("settled_at"),
            "actor": actor,
            "action": anchors.SETTLEMENT_ACTION,
            "subject": subject,
            "data": data,
        }
        logged.append((anchors.settlement_of(round_id), entry))
    reveal_doc = _document(bundle.get("reveal"))
    if reveal_doc is not None:
        entry = {
            "time": reveal_doc.get("revealed_at"),
            "actor": f"user:{reveal_doc.get('user_id')}",
            "action": anchors.REVEAL_ACTION,
            "subject": anchors.pair_subject(reveal_doc.get("seed_pair_id")),
            "data": {
                "server_seed": reveal_doc.get("server_seed"),
                "rounds": reveal_doc.get("rounds"),
            },
        }
        logged.append((anchors.reveal_of(reveal_doc.get("seed_pair_id")), entry))  # type: ignore[arg-type]
    return logged


def anchored(
    bundle: Doc,
    key: Ed25519PrivateKey = KEY,
    *,
    logged_as: Callable[[Logged], Logged] | None = None,
    key_changes: Sequence[Doc] = (),
    checkpoint_at: str = CHECKPOINT_AT,
) -> Doc:
    """Return ``bundle`` with every document logged as a service logs it, in a real audit log
    (hash chain and RFC 6962 tree), one checkpoint over the log signed by ``key``, and each
    document's anchor proved into it (docs/fairness.md, "Anchors").

    :param logged_as: given the ``(of, entry)`` of each document in the order a service logs
        them, returns the log a forger writes instead (entries changed, reordered): the chain,
        the tree and the checkpoint are built over what it returns.
    :param key_changes: signed key changes, logged (``key.changed``) in this order before the
        documents and carried in the bundle's ``key_changes`` as the service carries them: each
        with its entry, proved into the checkpoint.
    :param checkpoint_at: when the checkpoint is signed.
    """
    logged = logged_entries(bundle)
    if logged_as is not None:
        logged = logged_as(logged)
    changes = [_key_change_entry(change) for change in key_changes]
    entries = _linked(
        {"seq": seq, **entry}
        for seq, entry in enumerate([*changes, *(entry for _, entry in logged)], start=1)
    )
    tree = audit_chain.entries_tree(entries)
    size = len(entries)
    checkpoint = signed(
        key, audit_chain.checkpoint_document(size, tree.root(size).hex(), checkpoint_at)
    )

    def proof(entry: Doc) -> list[str]:
        return [node.hex() for node in tree.inclusion_proof(entry["seq"] - 1, size)]

    made = {
        **bundle,
        "anchors": [
            {
                "of": of,
                "entry": entry,
                "leaf_index": entry["seq"] - 1,
                "checkpoint_size": size,
                "proof": proof(entry),
            }
            for (of, _), entry in zip(logged, entries[len(changes) :], strict=True)
        ],
        "checkpoints": [checkpoint],
        "pending_anchors": [],
    }
    if key_changes:
        made["key_changes"] = [
            {
                **change,
                "entry": entry,
                "anchor": {
                    "leaf_index": entry["seq"] - 1,
                    "checkpoint_size": size,
                    "proof": proof(entry),
                },
                "checkpoint": checkpoint,
            }
            for change, entry in zip(key_changes, entries, strict=False)
        ]
    return made


def anchored_together(
    made: Sequence[Doc], key: Ed25519PrivateKey = KEY, checkpoint_at: str = CHECKPOINT_AT
) -> list[Doc]:
    """Return the bundles ``made`` (of several pairs) as one service serves them: every
    document of each, pair after pair, in one audit log, one checkpoint over it signed by
    ``key``, and each bundle anchoring its own documents into it. (:func:`anchored` gives each
    bundle a log of its own: bundles anchored so apart are of two logs, a fork.)"""
    logged = [
        (i, of, entry) for i, bundle in enumerate(made) for of, entry in logged_entries(bundle)
    ]
    entries = _linked({"seq": seq, **entry} for seq, (_, _, entry) in enumerate(logged, start=1))
    tree = audit_chain.entries_tree(entries)
    size = len(entries)
    checkpoint = signed(
        key, audit_chain.checkpoint_document(size, tree.root(size).hex(), checkpoint_at)
    )
    return [
        {
            **bundle,
            "anchors": [
                {
                    "of": of,
                    "entry": entry,
                    "leaf_index": entry["seq"] - 1,
                    "checkpoint_size": size,
                    "proof": [node.hex() for node in tree.inclusion_proof(entry["seq"] - 1, size)],
                }
                for (j, of, _), entry in zip(logged, entries, strict=True)
                if j == i
            ],
            "checkpoints": [checkpoint],
            "pending_anchors": [],
        }
        for i, bundle in enumerate(made)
    ]


def _linked(entries: Iterable[Doc]) -> list[Doc]:
    """``audit_chain.link_entries``, also of entries a forger wrote without one of their fields
    (``time``, ``actor``, ...): each hashed over the fields it has, as a forger would."""
    chained: list[Doc] = []
    prev_hash = audit_chain.GENESIS_HASH
    for entry in entries:
        fields = {key: entry[key] for key in audit_chain.ENTRY_KEYS if key in entry}
        body = bytes.fromhex(prev_hash) + canonical_json(fields)
        chained.append({**fields, "prev_hash": prev_hash, "hash": hashlib.sha256(body).hexdigest()})
        prev_hash = chained[-1]["hash"]
    return chained


def _key_change_entry(change: Doc) -> Doc:
    """The entry a service logs for a signed key change (``flask keys rotate``), or a forger
    for one that names no new key."""
    new = str(change["document"].get("new_public_key_hex"))
    return {
        "time": CREATED_AT,
        "actor": "system",
        "action": KEY_CHANGED,
        "subject": f"key:{new[:16]}",
        "data": {"key_change": change},
    }


def resign(pair: Pair, envelope: Doc, **changes: Any) -> Doc:
    """Return ``envelope``'s document with ``changes``, signed again by the pair's key."""
    return pair.sign({**envelope["document"], **changes})


def sota_moves_receipt(pair: Pair, nonce: int, rules: sota.SotaRules, stake: int = 2) -> Doc:
    """Return the receipt of a Prisoners of War game where the player always lays its top cards."""
    moves: list[list[str]] = []
    while True:
        result = sota.play_game(rules, stream=Stream(pair.seeds(nonce)), choices=moves)
        if result.status == sota.SETTLED:
            break
        assert result.pending is not None
        moves.append(list(result.pending["options"][: result.pending["count"]]))
    return receipt(
        pair,
        nonce,
        game=sota.GAME,
        rules=rules.to_dict(),
        actions=moves,
        cards=result.deck,
        outcome=result.receipt_outcome(),
        stakes={"stake": stake},
        payout=sota.payout(rules, result.winner, stake),
    )


def taken_out(
    bundle: Doc,
    round_id: int,
    checkpoint_at: str,
    key: Ed25519PrivateKey = KEY,
    *,
    reveal_too: bool = False,
) -> Doc:
    """Return ``bundle`` as a service serves it once an operator with the database took round
    ``round_id``'s entries out of the log before a checkpoint covered them: the rest anchored
    in a checkpoint signed at ``checkpoint_at``, the round listed as pending.

    :param reveal_too: the pair's reveal is not in that checkpoint either (the log takes it
        after every round, so a bundle anchoring it shows the round left out).
    """

    def without(logged: Logged) -> Logged:
        return [
            (of, entry)
            for of, entry in logged
            if of.get("round_id") != round_id and not (reveal_too and of["kind"] == "reveal")
        ]

    made = anchored(bundle, key, logged_as=without, checkpoint_at=checkpoint_at)
    waiting = [anchors.bet_of(round_id), anchors.settlement_of(round_id)]
    if reveal_too:
        waiting.append(anchors.reveal_of(bundle["reveal"]["document"]["seed_pair_id"]))
    reason = "the log holds no entry of it yet; ask again shortly"
    made["pending_anchors"] = [{"of": of, "reason": reason, "retry_after": 1} for of in waiting]
    return made


#: Another player's entry, which the log holds where a document left out of it would be.
OTHER_ENTRY: Doc = {
    "time": CREATED_AT,
    "actor": "user:99",
    "action": anchors.COMMITMENT_ACTION,
    "subject": anchors.pair_subject(99),
    "data": {"commitment": "ab" * 32, "status": "active"},
}


def pair_documents_taken_out(
    bundle: Doc, kinds: Sequence[str], checkpoint_at: str, key: Ed25519PrivateKey = KEY
) -> Doc:
    """Return ``bundle`` as a service serves it once an operator left the pair's documents of
    ``kinds`` (``"commitment"``, ``"reveal"``) out of the log, another player's entry logged
    in their place: the rest anchored in a checkpoint signed at ``checkpoint_at``, those
    documents listed as pending."""

    def without(logged: Logged) -> Logged:
        kept = [(of, entry) for of, entry in logged if of["kind"] not in kinds]
        assert len(kept) == len(logged) - len(kinds), kinds
        return [({"kind": "other"}, dict(OTHER_ENTRY)), *kept]

    made = anchored(bundle, key, logged_as=without, checkpoint_at=checkpoint_at)
    made["anchors"] = [anchor for anchor in made["anchors"] if anchor["of"]["kind"] != "other"]
    seed_pair_id = bundle["commitment"]["document"]["seed_pair_id"]
    pair_of = {"commitment": anchors.commitment_of, "reveal": anchors.reveal_of}
    reason = "the log holds no entry of it yet; ask again shortly"
    made["pending_anchors"] = [
        {"of": pair_of[kind](seed_pair_id), "reason": reason, "retry_after": 1} for kind in kinds
    ]
    return made


def listed_pending(bundle: Doc, of: Mapping[str, Any]) -> Doc:
    """Return ``bundle`` serving the document ``of`` names as pending instead of its anchor."""
    kept = [a for a in bundle["anchors"] if a["of"] != of]
    assert len(kept) == len(bundle["anchors"]) - 1, of
    pending = [{"of": of, "reason": "not in a checkpoint yet", "retry_after": 5}]
    return {**bundle, "anchors": kept, "pending_anchors": pending}


def leaf_of(bundle: Doc, of: Mapping[str, Any]) -> int:
    """Return the leaf of the bundle's anchor of the document ``of`` names."""
    (leaf,) = [a["leaf_index"] for a in bundle["anchors"] if a["of"] == of]
    return int(leaf)


def with_earlier_checkpoint(
    bundle: Doc, size: int, checkpoint_at: str, key: Ed25519PrivateKey = KEY
) -> Doc:
    """Return ``bundle`` (whose anchors cover its whole log) carrying, before its checkpoints,
    one signed at ``checkpoint_at`` over the first ``size`` entries of the same log."""
    entries = sorted((anchor["entry"] for anchor in bundle["anchors"]), key=lambda e: e["seq"])
    root = audit_chain.entries_tree(entries).root(size).hex()
    earlier = signed(key, audit_chain.checkpoint_document(size, root, checkpoint_at))
    return {**bundle, "checkpoints": [earlier, *bundle["checkpoints"]]}


def run_verifier(tmp_path: Path, key_hex: str, bundle: Any, *args: str) -> tuple[int, str]:
    """Run the offline verifier's command on ``bundle`` (written to a file in ``tmp_path``),
    trusting ``key_hex``; return its exit status and standard output."""
    path = tmp_path / "bundle.json"
    path.write_text(json.dumps(bundle), encoding="utf-8")
    out = io.StringIO()
    return main([str(path), "--public-key", key_hex, *args], out, io.StringIO()), out.getvalue()

"""The player's key was in use for a round when the log registered it before the round settled.

Registrations and decisions take the player's row lock, so the log orders them as the service
took them; the times they carry are the casino's to write (entry times are not held to the
log's order). A forger who holds the key and the database, and who logs an unsigned decision
the player never sent, must not escape the signature check by dating the receipt before the
registration, or the registration after the receipt.
"""

from __future__ import annotations

from collections.abc import Callable
from collections.abc import Mapping
from collections.abc import Sequence
from typing import Any

import bundles
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

from sota_casino.core import fairness
from sota_casino.core import sota
from sota_casino.core.fairness import public_key_hex
from sota_casino.verify import verify_bundle
from sota_casino.verify.player_signatures import PlayerKey
from sota_casino.verify.player_signatures import check_signed_actions
from sota_casino.verify.report import Row

PAIR = bundles.Pair()
KEY_HEX = public_key_hex(PAIR.key)
PLAYER_KEY = Ed25519PrivateKey.from_private_bytes(bytes(range(32)))
KEY_ID = 3
#: When the forger dates the registration: after every receipt of the bundle is dated.
REGISTERED_AT = "2025-04-01T17:00:00.000000Z"


def key_registration(
    key: Ed25519PrivateKey = PLAYER_KEY,
    key_id: int = KEY_ID,
    at: str = REGISTERED_AT,
    retires: Sequence[int] = (),
) -> tuple[dict[str, Any], dict[str, Any]]:
    """The ``(of, entry)`` of a registration of ``key`` for the pair's player, as key
    ``key_id``, dated ``at``, retiring the keys ``retires``."""
    entry = {
        "time": at,
        "actor": f"user:{PAIR.user_id}",
        "action": fairness.PLAYER_KEY_REGISTERED,
        "subject": f"user:{PAIR.user_id}",
        "data": {
            "user_id": PAIR.user_id,
            "key_id": key_id,
            "public_key_hex": public_key_hex(key),
            "retires": list(retires),
        },
    }
    return {"kind": "player_key", "key_id": key_id}, entry


def _registered_first(logged: bundles.Logged) -> bundles.Logged:
    """The log of the bundle's documents with the player's key registered right after the
    pair's commitment, before any round was played."""
    return [logged[0], key_registration(), *logged[1:]]


def _with_registration(
    bundle: dict[str, Any], logged_as: Callable[[bundles.Logged], bundles.Logged]
) -> dict[str, Any]:
    """The bundle logged as ``logged_as`` says, the registrations among its entries, which the
    bundle carries in ``player_keys`` with their proofs, in the log's order."""
    logged = bundles.anchored(bundle, PAIR.key, logged_as=logged_as)
    registered = [a for a in logged["anchors"] if a["of"]["kind"] == "player_key"]
    return {
        **logged,
        "anchors": [a for a in logged["anchors"] if a["of"]["kind"] != "player_key"],
        "player_keys": [
            {
                "entry": anchor["entry"],
                "anchor": {k: anchor[k] for k in ("leaf_index", "checkpoint_size", "proof")},
                "checkpoint": logged["checkpoints"][0],
            }
            for anchor in registered
        ],
    }


def _registered_last(logged: bundles.Logged) -> bundles.Logged:
    """The same registration logged after the pair's rounds, before its reveal."""
    first = _registered_first(logged)
    return [first[0], *first[2:-1], first[1], first[-1]]


def forged_bundle() -> dict[str, Any]:
    """A pair whose unsigned decisions were logged after the player's key was registered, every
    receipt dated before the registration: signed and logged by the casino from the start."""
    return _with_registration(bundles.bundle(4, pair=PAIR), _registered_first)


def honest_bundle() -> dict[str, Any]:
    """The same pair with the key registered once its rounds were played."""
    return _with_registration(bundles.bundle(4, pair=PAIR), _registered_last)


def test_an_unsigned_decision_logged_after_the_registration_fails_whatever_the_dates_say() -> None:
    """Every receipt is dated before the registration, but the log took the registration
    before any of the rounds: their decisions were taken while the key was in use, so an
    unsigned one is not the player's."""
    forged = forged_bundle()
    decided = [r["document"] for r in forged["rounds"] if r["document"]["actions"]]
    assert decided and all(doc["settled_at"] < REGISTERED_AT for doc in decided)

    report = verify_bundle(forged, KEY_HEX)

    assert not report.ok
    failures = [f.text() for f in report.failures]
    assert {f.check for f in report.failures} == {"player"}, failures
    for doc in decided:
        assert any(
            f"round {doc['round_id']} " in text
            and "is unsigned, but the player's key 3 was registered (log entry 2, "
            f"{REGISTERED_AT}) before the round settled (log entry "
            in text
            for text in failures
        ), failures


def test_a_registration_logged_after_the_rounds_asks_no_signature_of_them() -> None:
    """The same registration logged after the pair's rounds (as the service logs a key
    registered once they were played) asks nothing of them, whatever its date."""
    honest = honest_bundle()

    report = verify_bundle(honest, KEY_HEX)

    assert report.ok, [f.text() for f in report.failures]


PRISONERS = sota.SotaRules.from_dict({"prisoners_of_war": True})


def signed_actions(
    doc: Mapping[str, Any], *, key: Ed25519PrivateKey = PLAYER_KEY, key_id: int = KEY_ID
) -> list[dict[str, Any]]:
    """Every action of ``doc`` signed by the player's key (or ``key``, registered as
    ``key_id``)."""
    return [
        {
            "document": (
                action := fairness.action_document(
                    game=doc["game"],
                    round_id=doc["round_id"],
                    seed_pair_id=doc["seed_pair_id"],
                    nonce=doc["nonce"],
                    index=index,
                    choice=choice,
                )
            ),
            "signature": fairness.sign(key, action),
            "key_id": key_id,
        }
        for index, choice in enumerate(doc["actions"])
    ]


def signed_bet(
    doc: dict[str, Any],
    *,
    key: Ed25519PrivateKey = PLAYER_KEY,
    key_id: int = KEY_ID,
    **changed: Any,
) -> dict[str, Any]:
    """The player's signed bet of a receipt, by its key (or ``key``, registered as ``key_id``),
    its document changed as ``changed`` says."""
    document = (
        fairness.bet_document(
            user_id=PAIR.user_id,
            game=doc["game"],
            seed_pair_id=doc["seed_pair_id"],
            nonce=doc["nonce"],
            stakes=fairness.bet_stakes(doc["game"], doc["stakes"]),
            rules=doc["rules"],
        )
        | changed
    )
    signature = fairness.sign(key, document)
    return {"document": document, "signature": signature, "key_id": key_id}


def _moves_signed_from(first_signed: int, bet_signed: bool = False) -> bundles.RoundMaker:
    """Prisoners of War games whose moves from ``first_signed`` on the player signed with its
    key; the ones before are unsigned, as moves made before a key was registered are. The bet
    is signed when ``bet_signed`` (the key was registered before it)."""

    def make(pair: bundles.Pair, nonce: int) -> dict[str, Any]:
        doc = bundles.sota_moves_receipt(pair, nonce, PRISONERS)["document"]
        if bet_signed:
            doc["signed_bet"] = signed_bet(doc)
        signed: list[dict[str, Any] | None] = list(signed_actions(doc))
        signed[:first_signed] = [None] * min(first_signed, len(signed))
        return pair.sign({**doc, "signed_actions": signed})

    return make


def _registered_before_move(move: int) -> Callable[[bundles.Logged], bundles.Logged]:
    """The log with the player's key registered just before the first game's move ``move``."""

    def logged_as(logged: bundles.Logged) -> bundles.Logged:
        first = _registered_first(logged)
        registration = first.pop(1)
        at = next(
            i
            for i, (of, _) in enumerate(first)
            if of.get("kind") == "decision" and of["round_id"] == 100 and of["index"] == move
        )
        return [*first[:at], registration, *first[at:]]

    return logged_as


def moves_bundle(first_signed: int, registered_before_move: int | None) -> dict[str, Any]:
    """A Prisoners of War game whose moves from ``first_signed`` on are signed, the player's key
    registered just before move ``registered_before_move`` (``None``: before the game's bet,
    which is then signed)."""
    made = _moves_signed_from(first_signed, bet_signed=registered_before_move is None)
    return _with_registration(
        bundles.bundle(1, pair=PAIR, make_round=made),
        _registered_first
        if registered_before_move is None
        else _registered_before_move(registered_before_move),
    )


def test_an_unsigned_move_logged_after_the_registration_fails_though_the_last_is_signed() -> None:
    """A Prisoners of War game played wholly after the player registered its key, its first
    move rewritten and left unsigned, every later move signed: the service takes no unsigned
    move once a key is registered, so a move the log took after the registration is the
    player's only when signed, whichever move it is, not only the one the game settled on."""
    forged = moves_bundle(1, None)
    (doc,) = [r["document"] for r in forged["rounds"]]
    assert len(doc["actions"]) > 2 and doc["signed_actions"][0] is None

    report = verify_bundle(forged, KEY_HEX)

    failures = [f.text() for f in report.failures]
    assert not report.ok and {f.check for f in report.failures} == {"player"}, failures
    (failure,) = failures
    assert failure.startswith(f"round {doc['round_id']} (nonce 0): player: action 0 (")
    assert failure.endswith(
        "is unsigned, but the player's key 3 was registered (log entry 2, "
        f"{REGISTERED_AT}) before the log took it (log entry 4): the service takes no "
        "unsigned action then, so the player did not make this one"
    ), failure


def test_moves_made_before_a_key_registered_mid_game_stay_unsigned() -> None:
    """A key registered in the middle of a game (a lost browser replaced between two moves)
    asks a signature of the moves the log took after it only."""
    for move in (1, 2):
        report = verify_bundle(moves_bundle(move, move), KEY_HEX)
        assert report.ok, [f.text() for f in report.failures]
        early = moves_bundle(move, move - 1)
        failures = [f.text() for f in verify_bundle(early, KEY_HEX).failures]
        assert len(failures) == 1 and f"player: action {move - 1} (" in failures[0], failures


def test_a_settling_action_signed_by_key_true_is_not_signed_by_the_replaced_key_1() -> None:
    """A signed action names its key by ``key_id``, a number: one naming ``true`` names no
    registered key, and says only that. Python's ``True in {1: …}`` took it for key 1, replaced
    by key 2, and said so too, where the page, comparing with ``===``, does not
    (static/js/verify.js, ``signedActionProblems``: ``keys.some((k) => k.keyId ===
    last.key_id)``): the two verifiers named different problems."""
    moment = fairness.parse_time("2025-04-01T09:00:00.000000Z")
    later = fairness.parse_time("2025-04-01T09:30:00.000000Z")
    keys = {
        1: PlayerKey(1, public_key_hex(PLAYER_KEY), moment, 2, later),
        2: PlayerKey(2, public_key_hex(PLAYER_KEY), later, 3, None),
    }
    row = Row("round", 0, 101, "casino_war", 1, "lucky seven", (), frozenset())
    doc = {
        "game": "casino_war",
        "round_id": 101,
        "seed_pair_id": 12,
        "nonce": 1,
        "actions": ["war"],
        "settled_at": "2025-04-01T11:00:00.000000Z",
    }
    signed = {"document": {}, "signature": "00" * 64}
    by_one = check_signed_actions(row, {**doc, "signed_actions": [{**signed, "key_id": 1}]}, keys)
    assert any("which the player had replaced by key 2" in f.message for f in by_one)
    by_true = {**doc, "signed_actions": [{**signed, "key_id": True}]}
    said = [f.message for f in check_signed_actions(row, by_true, keys)]
    assert any("signed by key true, which no registration" in message for message in said)
    assert not any("had replaced" in message for message in said), said


#: A key the player replaced: one registered for the player by someone else (the casino holds
#: the database and registers what it likes), or lost with a browser.
REPLACED_KEY = Ed25519PrivateKey.from_private_bytes(bytes(range(1, 33)))
REPLACED_KEY_ID = 2
REPLACED_AT = "2025-04-01T10:10:00.000000Z"


def _moves_signed_by(replaced_until: int, bet_by_replaced: bool) -> bundles.RoundMaker:
    """A Prisoners of War game whose moves before ``replaced_until`` are signed by the replaced
    key and the others by the player's key, and its bet by the replaced key if
    ``bet_by_replaced``, else by the player's."""

    def make(pair: bundles.Pair, nonce: int) -> dict[str, Any]:
        doc = bundles.sota_moves_receipt(pair, nonce, PRISONERS)["document"]
        mine = signed_actions(doc)
        replaced = {"key": REPLACED_KEY, "key_id": REPLACED_KEY_ID}
        theirs = signed_actions(doc, **replaced)
        doc["signed_actions"] = [*theirs[:replaced_until], *mine[replaced_until:]]
        doc["signed_bet"] = signed_bet(doc, **(replaced if bet_by_replaced else {}))
        return pair.sign(doc)

    return make


def replaced_key_moves_bundle(replaced_until: int, replaced_before_move: int | None) -> Any:
    """A game whose moves before ``replaced_until`` the replaced key signed, the player's key
    replacing it just before move ``replaced_before_move`` (``None``: before the game's bet)."""
    made_by = _moves_signed_by(replaced_until, replaced_before_move is not None)
    made = bundles.bundle(1, pair=PAIR, make_round=made_by)

    def logged_as(logged: bundles.Logged) -> bundles.Logged:
        replaced = key_registration(REPLACED_KEY, REPLACED_KEY_ID, REPLACED_AT)
        mine = key_registration(retires=[REPLACED_KEY_ID])
        rest = logged[1:]
        at = (
            0
            if replaced_before_move is None
            else next(
                i
                for i, (of, _) in enumerate(rest)
                if of.get("kind") == "decision" and of["index"] == replaced_before_move
            )
        )
        return [logged[0], replaced, *rest[:at], mine, *rest[at:]]

    return _with_registration(made, logged_as)


def test_moves_signed_by_a_key_the_player_had_replaced_fail_though_the_last_is_the_players() -> (
    None
):
    """The service takes an action signed by the key in use only: a move the log took after
    the player replaced a key, signed by the replaced one, is not the player's, though the
    game's last move is signed by the key in use (its document names its index and choice
    only, so it stands in a game whose earlier moves were rewritten). Only the settling action
    was held to the key in use, and such a game passed both verifiers."""
    forged = replaced_key_moves_bundle(-1, None)
    (doc,) = [r["document"] for r in forged["rounds"]]
    moves = len(doc["actions"])
    assert moves > 2 and doc["signed_actions"][-1]["key_id"] == KEY_ID

    report = verify_bundle(forged, KEY_HEX)

    failures = [f.text() for f in report.failures]
    assert {f.check for f in report.failures} == {"player"} and len(failures) == moves - 1
    assert failures[0].startswith(f"round {doc['round_id']} (nonce 0): player: action 0 (")
    assert failures[0].endswith(
        f"is signed by key {REPLACED_KEY_ID}, which the player had replaced by key {KEY_ID} "
        f"(log entry 3, {REGISTERED_AT}) before the log took it (log entry 5): the service "
        "takes no action signed by a replaced key, so the player did not make this one"
    ), failures[0]


def test_moves_signed_before_the_key_was_replaced_mid_game_pass() -> None:
    """A key replaced in the middle of a game (a new browser between two moves) signs the
    moves the log took before the replacement; the new key signs those after."""
    for move in (1, 2):
        report = verify_bundle(replaced_key_moves_bundle(move, move), KEY_HEX)
        assert report.ok, [f.text() for f in report.failures]
        late = [
            f.text()
            for f in verify_bundle(replaced_key_moves_bundle(move, move - 1), KEY_HEX).failures
        ]
        assert len(late) == 1 and f"player: action {move - 1} (" in late[0], late


def key_id_registered_twice() -> dict[str, Any]:
    """Every bet and decision signed by a key the casino registered for the player as key 3,
    before the player's own registration of its key under the same id: a verdict naming "key
    3" then names what the player takes for its own key."""

    def make(pair: bundles.Pair, nonce: int) -> dict[str, Any]:
        doc = bundles.default_round(pair, nonce)["document"]
        if doc["actions"]:
            doc["signed_actions"] = signed_actions(doc, key=REPLACED_KEY)
        doc["signed_bet"] = signed_bet(doc, key=REPLACED_KEY)
        return pair.sign(doc)

    def logged_as(logged: bundles.Logged) -> bundles.Logged:
        theirs = key_registration(REPLACED_KEY, KEY_ID, REPLACED_AT)
        return [logged[0], theirs, key_registration(), *logged[1:]]

    return _with_registration(bundles.bundle(4, pair=PAIR, make_round=make), logged_as)


def test_a_key_id_registered_twice_fails_naming_both_entries() -> None:
    report = verify_bundle(key_id_registered_twice(), KEY_HEX)

    assert [f.text() for f in report.failures] == [
        f"bundle: player: key {KEY_ID} is registered twice, at log entry 2 and at log entry 3: "
        "a key id names one key, so a key registered again under the id of another would pass "
        "for it"
    ]

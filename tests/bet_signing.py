"""Signing a bet as a client does: the bet document of the active seed pair's next nonce, with
the stakes it sends and every rule it is played by (docs/fairness.md, "Bets the player signs")."""

from __future__ import annotations

from typing import Any

from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

from sota_casino.core import casino_war
from sota_casino.core import fairness
from sota_casino.core import sota


def played_rules(game: str, rules: dict[str, Any] | None = None, preset: str | None = None) -> Any:
    """Every rule a bet is played by: a Casino War table's options as the table shows them
    (the defaults unless given), or a Sota game's rule set from its ``preset`` or ``rules``."""
    if game == casino_war.GAME:
        return casino_war.TableRules.from_dict(rules or {}).to_dict()
    if rules is not None:
        return sota.SotaRules.from_dict(rules).to_dict()
    return sota.SotaRules.from_preset(preset or "nordic").to_dict()


def bet_signature(
    key: Ed25519PrivateKey,
    key_id: int,
    pair: dict[str, Any],
    game: str,
    stakes: dict[str, int],
    rules: dict[str, Any],
    *,
    nonce: int | None = None,
) -> dict[str, Any]:
    """The fields a signed bet adds to its body: ``seed_pair_id``, ``nonce``, ``signature`` and
    ``key_id``, for the active pair as ``GET /api/v1/fairness/seed-pair`` shows it (``pair``:
    its ``seed_pair_id``, ``next_nonce`` and ``commitment_document``)."""
    taken = pair["next_nonce"] if nonce is None else nonce
    document = fairness.bet_document(
        user_id=pair["commitment_document"]["user_id"],
        game=game,
        seed_pair_id=pair["seed_pair_id"],
        nonce=taken,
        stakes=stakes,
        rules=rules,
    )
    return {
        "seed_pair_id": pair["seed_pair_id"],
        "nonce": taken,
        "signature": fairness.sign(key, document),
        "key_id": key_id,
    }

"""Weak Ed25519 public keys sign nothing: a key of small order, under which signatures anyone
makes verify (the identity takes one signature for every message), or one whose y coordinate is
written at or above the field's prime (a second encoding of a point)."""

from __future__ import annotations

import base64
import re
from pathlib import Path

import pytest
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PublicKey
from weak_key_support import ANYONES_SIGNATURE
from weak_key_support import IDENTITY_KEY_HEX

from sota_casino.core import audit_chain
from sota_casino.core.fairness import new_signing_key
from sota_casino.core.fairness import public_key_hex
from sota_casino.core.fairness import signature_checker
from sota_casino.core.fairness import verify_signature
from sota_casino.core.fairness import weak_key_problem

P = 2**255 - 19
D = -121665 * pow(121666, -1, P) % P  # the curve: -x² + y² = 1 + d·x²·y²
SIGN_BIT = 1 << 255

#: The encodings of the eight points whose order divides the cofactor 8, with their orders: the
#: identity, the point of order 2, the two of order 4 (y = 0) and the four of order 8.
SMALL_ORDER_HEX = {
    "0100000000000000000000000000000000000000000000000000000000000000": 1,
    "ecffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff7f": 2,
    "0000000000000000000000000000000000000000000000000000000000000000": 4,
    "0000000000000000000000000000000000000000000000000000000000000080": 4,
    "26e8958fc2b227b045c3f489f2ef98f0d5dfac05d3c63339b13802886d53fc05": 8,
    "26e8958fc2b227b045c3f489f2ef98f0d5dfac05d3c63339b13802886d53fc85": 8,
    "c7176a703d4dd84fba3c0b760d10670f2a2053fa2c39ccc64ec7fd7792ac037a": 8,
    "c7176a703d4dd84fba3c0b760d10670f2a2053fa2c39ccc64ec7fd7792ac03fa": 8,
}


def _point(encoded: bytes) -> tuple[int, int]:
    """Decode a canonical encoding as RFC 8032 §5.1.3 does."""
    y = int.from_bytes(encoded, "little") & ~SIGN_BIT
    u, v = (y * y - 1) % P, (D * y * y + 1) % P
    x = u * pow(v, 3, P) * pow(u * pow(v, 7, P), (P - 5) // 8, P) % P
    if (v * x * x - u) % P:
        x = x * pow(2, (P - 1) // 4, P) % P
    assert (v * x * x - u) % P == 0, "not on the curve"
    if x & 1 != encoded[31] >> 7:
        x = P - x
    return x % P, y


def _add(a: tuple[int, int], b: tuple[int, int]) -> tuple[int, int]:
    (x1, y1), (x2, y2) = a, b
    t = D * x1 * x2 * y1 * y2
    return (x1 * y2 + x2 * y1) * pow(1 + t, -1, P) % P, (y1 * y2 + x1 * x2) * pow(1 - t, -1, P) % P


def _order(point: tuple[int, int]) -> int:
    multiple, n = point, 1
    while multiple != (0, 1):
        multiple, n = _add(multiple, point), n + 1
        assert n <= 8, "not of small order"
    return n


def test_the_blocklisted_encodings_are_the_eight_points_of_small_order() -> None:
    """Worked out here, not taken on trust: each listed encoding decodes to a point whose order
    divides 8, and they are eight distinct points, all the curve has."""
    points = {hex_key: _point(bytes.fromhex(hex_key)) for hex_key in SMALL_ORDER_HEX}
    assert len(set(points.values())) == 8
    assert {hex_key: _order(point) for hex_key, point in points.items()} == SMALL_ORDER_HEX


def _with_sign_bit(hex_key: str) -> str:
    return (
        (int.from_bytes(bytes.fromhex(hex_key), "little") | SIGN_BIT).to_bytes(32, "little").hex()
    )


@pytest.mark.parametrize(
    "hex_key", sorted({*SMALL_ORDER_HEX, *map(_with_sign_bit, SMALL_ORDER_HEX)})
)
def test_every_key_of_small_order_is_refused_with_either_sign_bit(hex_key: str) -> None:
    problem = weak_key_problem(bytes.fromhex(hex_key))
    assert problem is not None and problem.startswith("of small order")


@pytest.mark.parametrize("y", [P, P + 1, P + 2, SIGN_BIT - 1])
@pytest.mark.parametrize("sign", [0, SIGN_BIT])
def test_a_y_coordinate_at_or_above_the_prime_is_refused(y: int, sign: int) -> None:
    """``p`` and ``p + 1`` are the identity's and the order-4 point's second encodings (libsodium
    lists them); every other one writes a point a second way too."""
    problem = weak_key_problem((y | sign).to_bytes(32, "little"))
    assert problem is not None and problem.startswith("not canonically encoded")


def test_real_keys_pass_and_a_key_of_another_length_is_refused() -> None:
    for _ in range(20):
        assert weak_key_problem(bytes.fromhex(public_key_hex(new_signing_key()))) is None
    assert weak_key_problem(bytes(31)) == "not 32 bytes"
    assert weak_key_problem(bytes.fromhex(IDENTITY_KEY_HEX) + b"\0") == "not 32 bytes"


def test_the_signature_anyone_makes_under_the_identity_signs_nothing() -> None:
    """OpenSSL takes it for any message; the checks built on it do not."""
    identity = Ed25519PublicKey.from_public_bytes(bytes.fromhex(IDENTITY_KEY_HEX))
    identity.verify(ANYONES_SIGNATURE, b"any message at all")  # raises if it did not verify
    for doc in ({"type": "round", "payout": 100_000}, {"type": "key_change"}):
        assert not verify_signature(IDENTITY_KEY_HEX, doc, ANYONES_SIGNATURE.hex())
        assert not signature_checker(IDENTITY_KEY_HEX)(doc, ANYONES_SIGNATURE.hex())


def test_a_checkpoint_note_signed_as_anyone_can_under_the_identity_does_not_open() -> None:
    origin = "sota-casino.example/audit"
    body = audit_chain.checkpoint_note_body(origin, 9, "ab" * 32)
    blob = audit_chain.note_key_id(origin, IDENTITY_KEY_HEX) + ANYONES_SIGNATURE
    note = f"{body}\n\u2014 {origin} {base64.b64encode(blob).decode()}\n"
    with pytest.raises(ValueError, match="no valid signature"):
        audit_chain.open_checkpoint_note(note, IDENTITY_KEY_HEX, origin)


def test_the_fairness_page_lists_in_full_the_small_order_encodings_refused() -> None:
    """docs/fairness.md writes each y of a small-order point out in full (an outside verifier
    copies them from there), as 32 little-endian bytes with the sign bit clear: exactly the
    encodings of the eight points with that bit cleared, and each one refused either way."""
    page = (Path(__file__).resolve().parents[2] / "docs" / "fairness.md").read_text("utf-8")
    section = page.split("**Weak keys are refused.**", 1)[1].split("\n## ", 1)[0]
    listed = set(re.findall(r"^([0-9a-f]{64})   ", section, re.M))
    cleared = {
        (int.from_bytes(bytes.fromhex(h), "little") & ~SIGN_BIT).to_bytes(32, "little").hex()
        for h in SMALL_ORDER_HEX
    }
    assert listed == cleared and len(listed) == 5
    for y in listed:
        for sign in (0, SIGN_BIT):
            raw = (int.from_bytes(bytes.fromhex(y), "little") | sign).to_bytes(32, "little")
            assert weak_key_problem(raw) is not None, raw.hex()

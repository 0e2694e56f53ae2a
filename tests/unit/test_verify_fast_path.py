"""The verifier's one-comparison check of an honest Casino War receipt is never more lenient
than its checks one by one: whatever a dishonest service signs, both give the same row."""

from __future__ import annotations

import copy
from collections.abc import Iterator
from typing import Any

import bundles
import pytest
from bundles import Pair
from hypothesis import given
from hypothesis import settings
from hypothesis import strategies as st

from sota_casino.verify import PairContext
from sota_casino.verify import Row
from sota_casino.verify import checks as verify
from sota_casino.verify import verify_bundle

PAIR = Pair()
ROUNDS = 20
GOOD = bundles.bundle(ROUNDS, pair=PAIR)
Path = tuple[Any, ...]


def _context(bundle: dict[str, Any]) -> PairContext:
    commitment = bundle["commitment"]["document"]
    reveal = bundle["reveal"]["document"] if bundle["reveal"] else None
    seed = verify._revealed_seed(reveal) if reveal is not None else None
    return verify._pair_context((bundle["public_key_hex"],), commitment, reveal, seed)


def _row_by_the_checks_one_by_one(
    context: PairContext, index: int, envelope: dict[str, Any]
) -> Row:
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(verify, "_passing_war_row", lambda *args: None)
        return verify.check_round(context, index, envelope)


def _numbers(doc: Any, path: Path = ()) -> Iterator[tuple[Path, Any]]:
    """Yield the path of every number in ``doc`` with a value Python's ``==`` takes for it."""
    items = doc.items() if isinstance(doc, dict) else enumerate(doc)
    for key, value in items:
        if type(value) is int:
            yield (*path, key), float(value)
            if value in (0, 1):
                yield (*path, key), bool(value)
        elif type(value) is bool:
            yield (*path, key), int(value)
        elif isinstance(value, dict | list):
            yield from _numbers(value, (*path, key))


def _set(doc: dict[str, Any], path: Path, value: Any) -> dict[str, Any]:
    changed = copy.deepcopy(doc)
    parent = changed
    for key in path[:-1]:
        parent = parent[key]
    parent[path[-1]] = value
    return changed


def test_an_honest_receipt_takes_the_one_comparison() -> None:
    context = _context(GOOD)
    for index, envelope in enumerate(GOOD["rounds"]):
        row = verify._passing_war_row(context, index, envelope["document"])
        assert row is not None and row.ok and row.nonce == index


@pytest.mark.parametrize("nonce", [0, 1, 3])  # a plain round, a war and a surrender
def test_a_number_of_another_json_type_fails_though_python_finds_it_equal(nonce: int) -> None:
    doc = GOOD["rounds"][nonce]["document"]
    confusions = list(_numbers(doc))
    assert len(confusions) > 15
    for path, value in confusions:
        tampered = copy.deepcopy(GOOD)
        tampered["rounds"][nonce] = PAIR.sign(_set(doc, path, value))
        report = verify_bundle(tampered)
        assert not report.rounds[nonce].ok, f"{'.'.join(map(str, path))} = {value!r} passed"


FIELD_VALUES = st.sampled_from(
    [0, 1, -1, 2, 7, 100, 500, 1000, 10**30, True, False, None, "x", 1.5, [], {}, "war",
     "surrender", ["war"], ["surrender"], ["QC", "3S"], "casino_war", "sota", "round", 12,
     "2025-04-01T10:00:00.000000Z", "2025-04-01T18:00:00.000001Z", "2025-04-01T11:00:60.250000Z",
     {"bet": 500, "tie_bet": 0, "raise": 0}, {"result": "win", "tie_bet_won": False, "net": 500}]
)  # fmt: skip


@settings(max_examples=300, deadline=None)
@given(
    nonce=st.integers(min_value=0, max_value=ROUNDS - 1),
    choice=st.data(),
    value=FIELD_VALUES,
    signed_by_the_service=st.booleans(),
)
def test_the_one_comparison_gives_the_row_of_the_checks_one_by_one(
    nonce: int,
    choice: st.DataObject,
    value: Any,
    signed_by_the_service: bool,
) -> None:
    doc = GOOD["rounds"][nonce]["document"]
    paths = sorted({path for path, _ in _numbers(doc)} | {(key,) for key in doc}, key=repr)
    path = choice.draw(st.sampled_from(paths))
    changed = _set(doc, path, value)
    envelope = PAIR.sign(changed) if signed_by_the_service else GOOD["rounds"][nonce]
    context = _context(GOOD)
    by_checks = _row_by_the_checks_one_by_one(context, nonce, envelope)
    if verify.signature_valid(GOOD["public_key_hex"], changed, envelope["signature"]):
        fast = verify._passing_war_row(context, nonce, changed)
        assert fast is None or fast == by_checks
    assert verify.check_round(context, nonce, envelope) == by_checks

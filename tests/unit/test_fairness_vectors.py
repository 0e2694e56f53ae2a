"""The published vectors of docs/fairness.md: commitment, shuffle and uniform, to the byte."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from sota_casino.core.fairness import Seeds
from sota_casino.core.fairness import Stream
from sota_casino.core.fairness import commitment_of
from sota_casino.core.fairness import shuffled_shoe

ROOT = Path(__file__).resolve().parents[2]
#: The shuffle and uniform vectors, published beside the others: the contract's own file.
VECTORS = json.loads((ROOT / "docs" / "vectors" / "shuffle-vectors.json").read_text())


@pytest.mark.parametrize("vector", VECTORS["shuffles"], ids=lambda v: f"{v['deck']}-{v['nonce']}")
def test_shuffle_vector_deals_the_published_cards(vector: dict) -> None:
    seed = bytes.fromhex(vector["server_seed"])
    assert commitment_of(seed) == vector["commitment"]
    seeds = Seeds(seed, vector["client_seed"], vector["nonce"])
    first = vector["first_cards"]
    assert list(shuffled_shoe(seeds, vector["deck"], vector["decks"], len(first))) == first
    assert list(shuffled_shoe(seeds, vector["deck"], vector["decks"])[: len(first)]) == first


@pytest.mark.parametrize("vector", VECTORS["uniform"])
def test_uniform_vector_draws_the_published_numbers(vector: dict) -> None:
    stream = Stream(
        Seeds(bytes.fromhex(vector["server_seed"]), vector["client_seed"], vector["nonce"])
    )
    assert [stream.uniform(bound) for bound in vector["bounds"]] == vector["draws"]


def test_vectors_in_the_project_match_the_shared_copy_when_present() -> None:
    shared = ROOT.parent / "shared" / "fairness-vectors.json"
    if shared.exists():
        assert json.loads(shared.read_text()) == VECTORS

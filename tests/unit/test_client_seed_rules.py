"""The client seed's rules, as docs/fairness.md states them: 1 to 64 code points (not bytes, not
UTF-16 units), no NUL and no lone surrogate, used exactly as given (no trimming, no Unicode
normalisation)."""

from __future__ import annotations

import unicodedata

import pytest

from sota_casino.core.errors import InvalidInput
from sota_casino.core.fairness import Seeds
from sota_casino.core.fairness import Stream
from sota_casino.core.fairness import check_client_seed


def test_the_limit_counts_code_points_so_64_emoji_pass_and_65_do_not() -> None:
    emoji = "\U0001f0a1" * 64  # a non-BMP card: 4 UTF-8 bytes, 2 UTF-16 units, 1 code point
    assert check_client_seed(emoji) == emoji
    with pytest.raises(InvalidInput, match="1 to 64 characters"):
        check_client_seed(emoji + "x")
    with pytest.raises(InvalidInput, match="1 to 64 characters"):
        check_client_seed("")


@pytest.mark.parametrize("bad", ["a\x00b", "\ud83c", "x\udfff"])
def test_nul_and_lone_surrogates_are_refused(bad: str) -> None:
    with pytest.raises(InvalidInput) as refused:
        check_client_seed(bad)
    assert "client_seed must not contain" in refused.value.message


def test_the_seed_is_used_as_given_without_normalisation_or_trimming() -> None:
    composed, decomposed = unicodedata.normalize("NFC", "é"), unicodedata.normalize("NFD", "é")
    assert composed != decomposed
    for seed in (composed, decomposed, " padded ", "\u2028\x1f"):
        assert check_client_seed(seed) == seed
    server = bytes(32)
    blocks = {Stream(Seeds(server, s, 0)).block(0) for s in (composed, decomposed)}
    assert len(blocks) == 2  # two different streams: nothing was normalised

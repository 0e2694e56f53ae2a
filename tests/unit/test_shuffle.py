"""The shuffle beyond the published vectors: permutations, prefixes, exact uniformity, no bias."""

from __future__ import annotations

import hashlib
import hmac
import itertools
from collections import Counter
from collections.abc import Callable
from collections.abc import Sequence

import pytest
from hypothesis import given
from hypothesis import settings
from hypothesis import strategies as st

from sota_casino.core.cards import DECK_KINDS
from sota_casino.core.cards import Card
from sota_casino.core.cards import canonical_deck
from sota_casino.core.cards import canonical_shoe
from sota_casino.core.casino_war import TableRules
from sota_casino.core.casino_war import deal
from sota_casino.core.casino_war import decide
from sota_casino.core.casino_war import play
from sota_casino.core.errors import InvalidRules
from sota_casino.core.fairness import PartialShuffle
from sota_casino.core.fairness import Seeds
from sota_casino.core.fairness import Stream
from sota_casino.core.fairness import _KeyedHmacSha256
from sota_casino.core.fairness import _uniform_from_words
from sota_casino.core.fairness import shuffle
from sota_casino.core.fairness import shuffled_shoe
from sota_casino.sim.stats import chi_square
from sota_casino.sim.stats import chi_square_p_value

seeds_strategy = st.builds(
    Seeds,
    server_seed=st.binary(min_size=32, max_size=32),
    client_seed=st.text(min_size=1, max_size=64),
    nonce=st.integers(min_value=0, max_value=2**40),
)


# --- the stream -----------------------------------------------------------------------------


@settings(max_examples=30)
@given(seeds=seeds_strategy, blocks=st.integers(min_value=2, max_value=4))
def test_the_stream_is_the_hmac_blocks_of_the_spec_in_order(seeds: Seeds, blocks: int) -> None:
    expected = b"".join(
        hmac.new(
            seeds.server_seed, f"{seeds.client_seed}:{seeds.nonce}:{k}".encode(), hashlib.sha256
        ).digest()
        for k in range(blocks)
    )
    stream = Stream(seeds)
    parts = [stream.read(n) for n in (1, 5, 32, 3)]
    parts.append(stream.read(len(expected) - sum(map(len, parts))))
    assert b"".join(parts) == expected
    assert stream.bytes_read == len(expected)
    assert stream.blocks_used == blocks


@settings(max_examples=100)
@given(key=st.binary(max_size=200), message=st.binary(max_size=200))
def test_the_keyed_hmac_equals_the_standard_library_hmac(key: bytes, message: bytes) -> None:
    # keys shorter than, equal to and longer than the 64-byte SHA-256 block
    assert _KeyedHmacSha256(key).digest(message) == hmac.digest(key, message, "sha256")


def test_streams_of_different_server_seeds_do_not_share_their_key() -> None:
    first, second = Seeds(b"\x01" * 32, "c", 0), Seeds(b"\x02" * 32, "c", 0)
    for seeds in (first, second, first):
        expected = hmac.new(seeds.server_seed, b"c:0:0", hashlib.sha256).digest()
        assert Stream(seeds).read(32) == expected


def test_a_negative_read_is_refused() -> None:
    with pytest.raises(ValueError):
        Stream(Seeds(bytes(32), "c", 0)).read(-1)


# --- every shuffle is a permutation; partial equals full ------------------------------------


@settings(max_examples=40)
@given(
    seeds=seeds_strategy,
    kind=st.sampled_from(DECK_KINDS),
    decks=st.integers(min_value=1, max_value=8),
)
def test_every_shuffle_is_a_permutation_of_its_shoe(seeds: Seeds, kind: str, decks: int) -> None:
    shoe = canonical_shoe(kind, decks)
    full = shuffled_shoe(seeds, kind, decks)
    assert Counter(full) == Counter(shoe)
    assert Counter(PartialShuffle(shoe, Stream(seeds)).full()) == Counter(shoe)


@settings(max_examples=60)
@given(
    seeds=seeds_strategy,
    kind=st.sampled_from(DECK_KINDS),
    decks=st.integers(min_value=1, max_value=6),
    steps=st.lists(st.integers(min_value=0, max_value=400), min_size=1, max_size=4),
)
def test_partial_and_full_shuffles_agree_on_the_first_k_positions(
    seeds: Seeds, kind: str, decks: int, steps: list[int]
) -> None:
    shoe = canonical_shoe(kind, decks)
    full_stream = Stream(seeds)
    full = shuffle(shoe, full_stream)
    partial_stream = Stream(seeds)
    partial = PartialShuffle(shoe, partial_stream)
    for k in steps:  # prefixes in any order, as a round asks for 2 cards and then 7
        assert list(partial.prefix(k)) == full[: min(k, len(shoe))]
    assert list(partial.full()) == full
    # the same draws were taken, so a later shuffle in the round continues at the same byte
    assert partial_stream.bytes_read == full_stream.bytes_read


def test_shuffling_does_not_change_the_cards_it_was_given() -> None:
    cards = list(canonical_shoe("standard52", 1))
    shuffle(cards, Stream(Seeds(bytes(32), "c", 0)))
    PartialShuffle(cards, Stream(Seeds(bytes(32), "c", 0))).full()
    assert cards == list(canonical_shoe("standard52", 1))


@pytest.mark.parametrize("kind", DECK_KINDS)
def test_a_shoe_is_made_once_and_is_its_decks_in_canonical_order(kind: str) -> None:
    """Every deal asks for its shoe: the one kept is handed out again, unchangeable, and is what
    building it anew gives."""
    one_deck = canonical_deck(kind)
    six = canonical_shoe(kind, 6)
    assert six is canonical_shoe(kind, 6)
    assert isinstance(six, tuple) and six == one_deck * 6
    assert len(set(one_deck)) == len(one_deck)


def test_an_unknown_deck_kind_is_refused_each_time_it_is_asked_for() -> None:
    for _ in range(2):
        with pytest.raises(InvalidRules, match="unknown deck 'tarot78'"):
            canonical_shoe("tarot78", 1)


def test_a_negative_prefix_is_refused() -> None:
    with pytest.raises(ValueError):
        PartialShuffle(("AS", "KS"), Stream(Seeds(bytes(32), "c", 0))).prefix(-1)


# --- uniform: exactly unbiased, rejection at the boundary -----------------------------------


class WordsRanOut(Exception):
    """The test's word source has no more words."""


def words_from(values: Sequence[int]) -> Callable[[], int]:
    words = iter(values)

    def next_word() -> int:
        for word in words:
            return word
        raise WordsRanOut

    return next_word


@pytest.mark.parametrize("n", range(1, 257))
def test_uniform_on_8_bit_words_gives_every_result_equally_often(n: int) -> None:
    results: Counter[int] = Counter()
    rejected = 0
    for word in range(256):
        try:
            results[_uniform_from_words(words_from([word]), n, 8)] += 1
        except WordsRanOut:
            rejected += 1
    assert set(results) == set(range(n))
    assert len(set(results.values())) == 1  # each of 0..n-1 from exactly 256 // n words
    assert rejected == 256 % n < n  # only the biased tail is thrown away


def test_uniform_reads_the_next_word_after_a_rejected_one() -> None:
    n = 100  # limit = 256 - 56 = 200
    assert _uniform_from_words(words_from([199]), n, 8) == 99
    assert _uniform_from_words(words_from([200, 201, 255, 42]), n, 8) == 42


@pytest.mark.parametrize("n", [0, 257])
def test_uniform_refuses_bounds_outside_the_word(n: int) -> None:
    with pytest.raises(ValueError):
        _uniform_from_words(words_from([0]), n, 8)


@settings(max_examples=200, deadline=None)
@given(
    server_seed=st.binary(min_size=32, max_size=32),
    bounds=st.lists(st.integers(1, 2**32), min_size=1, max_size=20),
)
def test_the_streams_uniform_is_the_word_rule_at_32_bits(
    server_seed: bytes, bounds: list[int]
) -> None:
    ours, reference = (Stream(Seeds(server_seed, "c", 0)) for _ in range(2))
    draws = [ours.uniform(n) for n in bounds]
    assert draws == [_uniform_from_words(reference._next_word, n, 32) for n in bounds]
    assert ours.bytes_read == reference.bytes_read


class ScriptedStream(Stream):
    """A stream whose blocks are given bytes instead of HMAC outputs."""

    def __init__(self, script: bytes) -> None:
        self.script = script  # before the stream reads its first block
        super().__init__(Seeds(bytes(32), "scripted", 0))

    def block(self, k: int) -> bytes:
        chunk = self.script[32 * k : 32 * (k + 1)]
        if not chunk:
            raise AssertionError("the stream read past its script")
        return chunk


def words(*values: int) -> bytes:
    return b"".join(value.to_bytes(4, "big") for value in values)


# n = 2**31 + 1: limit = 2**32 - 2**32 % n = 2**31 + 1, so almost half the words are rejected
HALF_BOUND = 2**31 + 1


def test_the_word_just_below_the_limit_is_accepted_and_uses_four_bytes() -> None:
    stream = ScriptedStream(words(HALF_BOUND - 1, 7))
    assert stream.uniform(HALF_BOUND) == 2**31
    assert stream.bytes_read == 4


def test_the_word_at_the_limit_is_rejected_and_the_next_four_bytes_read() -> None:
    stream = ScriptedStream(words(HALF_BOUND, 2**32 - 1, 7))
    assert stream.uniform(HALF_BOUND) == 7
    assert stream.bytes_read == 12


def test_with_three_choices_only_the_top_word_is_rejected() -> None:
    top = 2**32 - 1  # 2**32 mod 3 = 1: limit = 2**32 - 1
    assert ScriptedStream(words(top - 1)).uniform(3) == (top - 1) % 3
    stream = ScriptedStream(words(top, 5))
    assert stream.uniform(3) == 2
    assert stream.bytes_read == 8


def test_a_rejection_at_the_end_of_a_block_continues_in_the_next_block() -> None:
    stream = ScriptedStream(words(*[1] * 7, HALF_BOUND) + words(3, *[0] * 7))
    assert [stream.uniform(HALF_BOUND) for _ in range(7)] == [1] * 7
    assert stream.uniform(HALF_BOUND) == 3
    assert stream.blocks_used == 2 and stream.bytes_read == 36


# --- no bias, statistically, with negative controls -----------------------------------------

SAMPLES = 20_000
# A one-byte modulo draw makes 4 of 52 first cards 19 % rarer: 50,000 shuffles show it plainly.
FIRST_CARD_SAMPLES = 50_000
SIGNIFICANCE = 0.001  # the fair shuffle fails one seed set in a thousand; these seeds are fixed


def seeded_stream(i: int) -> Stream:
    """Return the stream of shuffle ``i``, its server seed derived as sha256(i)."""
    return Stream(Seeds(hashlib.sha256(str(i).encode()).digest(), "chi-square", i))


def first_card_p_value(first_card: Callable[[Stream], Card]) -> float:
    deck = canonical_shoe("standard52", 1)
    counts = Counter(first_card(seeded_stream(i)) for i in range(FIRST_CARD_SAMPLES))
    return chi_square_p_value(*chi_square(counts, dict.fromkeys(deck, 1 / len(deck))))


def modulo_biased_first_card(stream: Stream) -> Card:
    """Draw the first card as one byte mod 52: 256 = 4·52 + 48, so the last four are rarer."""
    deck = canonical_shoe("standard52", 1)
    return deck[stream.read(1)[0] % len(deck)]


def test_the_first_card_of_our_shuffle_is_uniform() -> None:
    deck = canonical_shoe("standard52", 1)
    assert first_card_p_value(lambda s: PartialShuffle(deck, s).prefix(1)[0]) > SIGNIFICANCE


def test_the_chi_square_test_catches_a_modulo_biased_draw() -> None:
    assert first_card_p_value(modulo_biased_first_card) < SIGNIFICANCE


def swap_with_any_position(cards: Sequence[Card], stream: Stream) -> list[Card]:
    """The classic wrong shuffle: swap each position with any position, n**n equal paths."""
    shuffled = list(cards)
    for i in range(len(shuffled)):
        j = stream.uniform(len(shuffled))
        shuffled[i], shuffled[j] = shuffled[j], shuffled[i]
    return shuffled


def permutation_p_value(shuffler: Callable[[Sequence[Card], Stream], list[Card]]) -> float:
    cards = ("2C", "3C", "4C")
    counts = Counter(tuple(shuffler(cards, seeded_stream(i))) for i in range(SAMPLES))
    orders = list(itertools.permutations(cards))
    return chi_square_p_value(*chi_square(counts, dict.fromkeys(orders, 1 / len(orders))))


def test_every_order_of_three_cards_is_equally_likely() -> None:
    assert permutation_p_value(shuffle) > SIGNIFICANCE


def test_the_chi_square_test_catches_the_swap_with_any_position_shuffle() -> None:
    # 27 equally likely paths cannot fall evenly on 6 orders
    assert permutation_p_value(swap_with_any_position) < SIGNIFICANCE


# --- positions never depend on the stakes or the decision -----------------------------------


@settings(max_examples=60)
@given(
    seeds=seeds_strategy,
    decks=st.integers(min_value=1, max_value=8),
    burn=st.integers(min_value=0, max_value=5),
    bets=st.lists(st.integers(min_value=1, max_value=500), min_size=2, max_size=2),
    tie_bets=st.lists(st.integers(min_value=0, max_value=500), min_size=2, max_size=2),
)
def test_identical_seeds_deal_identical_cards_whatever_is_staked_or_decided(
    seeds: Seeds, decks: int, burn: int, bets: list[int], tie_bets: list[int]
) -> None:
    rules = TableRules(decks=decks, burn=burn)
    shoe = shuffled_shoe(seeds, "standard52", decks, rules.cards_for_war)
    rounds = [
        play(
            rules,
            PartialShuffle(canonical_shoe("standard52", decks), Stream(seeds)).prefix,
            bet * 100,
            tie_bet * 100,
            choice,
        )
        for bet, tie_bet in zip(bets, tie_bets, strict=True)
        for choice in ("war", "surrender")
    ]
    for round_ in rounds:
        assert round_.cards == shoe[: len(round_.cards)]
    assert len({round_.cards[:2] for round_ in rounds}) == 1
    war_rounds = [r for r in rounds if r.actions == ("war",)]
    assert len({r.cards for r in war_rounds}) <= 1


@settings(max_examples=30)
@given(seeds=seeds_strategy)
def test_a_resumed_round_deals_the_same_war_cards(seeds: Seeds) -> None:
    rules = TableRules(decks=1, burn=3)
    shoe = canonical_shoe("standard52", 1)
    opened = deal(rules, PartialShuffle(shoe, Stream(seeds)).prefix, 100)
    if opened.status == "settled":
        return
    # after a restart the round rebuilds its shuffle from the same seeds and nonce
    resumed = decide(opened, "war", PartialShuffle(shoe, Stream(seeds)).prefix)
    assert resumed.cards == shuffled_shoe(seeds, "standard52", 1, rules.cards_for_war)

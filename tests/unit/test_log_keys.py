"""Each key of the audit log is taken once: a pair or a round logged again by appended entries
is named by the core rule and by the offline check of an export, though every entry before
them is untouched and every checkpoint holds."""

from __future__ import annotations

import io
import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest

from sota_casino.core import anchors
from sota_casino.core import audit_chain
from sota_casino.core import merkle
from sota_casino.core.fairness import commitment_of
from sota_casino.core.fairness import new_signing_key
from sota_casino.core.fairness import public_key_hex
from sota_casino.core.fairness import signed
from sota_casino.verify import main
from sota_casino.verify import verify_audit_export

KEY = new_signing_key()
PUBLIC = public_key_hex(KEY)
#: The server seed the honest log reveals for its first pair, and the commitment to it.
SEED = "cc" * 32
COMMITMENT = commitment_of(bytes.fromhex(SEED))


def _raw() -> list[dict[str, Any]]:
    """An honest log, as the service writes it: a player's first pair committed and given its
    client seed, a Casino War round settled at once and one decided on a tie, a Sota game with
    two Prisoners of War moves, the pair revealed (rotated) and the next pair activated, with
    other players' entries between."""
    player = "user:7"
    steps: list[tuple[str | None, str, str | None, dict[str, Any]]] = [
        (player, "user.registered", "user:7", {"username": "ann"}),
        (player, "seed_pair.created", "seed_pair:1", {"commitment": COMMITMENT, "status": "next"}),
        (player, "seed_pair.client_seed_set", "seed_pair:1", {"client_seed": "mine"}),
        (player, "seed_pair.created", "seed_pair:2", {"commitment": "bb" * 32, "status": "next"}),
        (player, "round.bet", "round:1", {"game": "casino_war", "seed_pair_id": 1, "nonce": 0}),
        (player, "round.settled", "round:1", {"game": "casino_war", "payout": 200}),
        (
            "user:8",
            "seed_pair.created",
            "seed_pair:9",
            {"commitment": "ee" * 32, "status": "active"},
        ),
        (player, "round.bet", "round:2", {"game": "casino_war", "seed_pair_id": 1, "nonce": 1}),
        ("user:8", "round.bet", "round:3", {"game": "sota", "seed_pair_id": 9, "nonce": 0}),
        ("user:8", "round.move", "round:3", {"cards": ["AS"]}),
        (player, "round.decision", "round:2", {"choice": "war"}),
        (player, "round.settled", "round:2", {"game": "casino_war", "payout": 400}),
        ("user:8", "round.move", "round:3", {"cards": ["2C", "3D"]}),
        ("user:8", "round.settled", "round:3", {"game": "sota", "payout": 0}),
        (player, "seed_pair.rotated", "seed_pair:1", {"server_seed": SEED, "rounds": 2}),
        (player, "seed_pair.client_seed_set", "seed_pair:2", {"client_seed": "next"}),
        (player, "seed_pair.created", "seed_pair:3", {"commitment": "dd" * 32, "status": "next"}),
        ("system", "audit.checkpoint", "checkpoint:17", {"size": 17}),
    ]
    return [
        {
            "seq": seq,
            "time": f"2025-04-01T10:00:{seq:02d}.000000Z",
            "actor": actor,
            "action": action,
            "subject": subject,
            "data": data,
        }
        for seq, (actor, action, subject, data) in enumerate(steps, start=1)
    ]


def _seq(entries: list[dict[str, Any]], action: str, subject: str) -> int:
    return next(e["seq"] for e in entries if (e["action"], e["subject"]) == (action, subject))


def _appended(*steps: tuple[str, str, dict[str, Any]]) -> list[dict[str, Any]]:
    """The honest log with entries appended after it, linked as the service would link them."""
    raw = _raw()
    for action, subject, data in steps:
        raw.append(
            {
                "seq": len(raw) + 1,
                "time": f"2025-04-01T10:01:{len(raw):02d}.000000Z",
                "actor": "user:7",
                "action": action,
                "subject": subject,
                "data": data,
            }
        )
    return audit_chain.link_entries(raw)


def _export(entries: list[dict[str, Any]]) -> audit_chain.AuditExport:
    """The export of the log with a checkpoint over its first 17 entries (before anything was
    appended) and one over all of it, both signed by the key: each still holds."""
    hashes = [bytes.fromhex(e["hash"]) for e in entries]
    checkpoints = [
        signed(KEY, audit_chain.checkpoint_document(size, merkle.root(hashes[:size]).hex(), time))
        for size, time in (
            (17, "2025-04-01T10:00:30.000000Z"),
            (len(entries), "2025-04-01T10:02:00.000000Z"),
        )
    ]
    return audit_chain.parse_export_text("".join(audit_chain.export_lines(entries, checkpoints)))


def _offline(entries: list[dict[str, Any]], tmp_path: Path, *options: str) -> tuple[int, str]:
    path = tmp_path / "audit.jsonl"
    path.write_text("".join(audit_chain.export_lines(entries, _export(entries).checkpoints)))
    out = io.StringIO()
    return main(["audit", str(path), "--public-key", PUBLIC, *options], out), out.getvalue()


def test_an_honest_log_takes_each_key_once_and_its_export_passes(tmp_path: Path) -> None:
    entries = audit_chain.link_entries(_raw())
    assert anchors.first_key_problem(entries) is None
    report = verify_audit_export(_export(entries), PUBLIC)
    assert report.ok, report.failures()
    assert _offline(entries, tmp_path)[0] == 0


def test_a_round_settled_again_is_named_with_its_first_settlement(tmp_path: Path) -> None:
    entries = _appended(("round.settled", "round:2", {"game": "casino_war", "payout": 50}))
    first = _seq(entries, "round.settled", "round:2")
    reason = (
        f"entry 19: a second round.settled of round:2 (the first is entry {first}): "
        "the round was settled twice, a rewrite"
    )
    assert anchors.first_key_problem(entries) == (19, reason)
    report = verify_audit_export(_export(entries), PUBLIC)
    assert not report.ok and report.checkpoint_report.ok  # every checkpoint holds
    assert (report.chain.first_bad_seq, report.chain.reason) == (19, reason)
    assert report.chain.head_hash == entries[17]["hash"]
    code, out = _offline(entries, tmp_path)
    assert code == 1
    assert "chain ✗  first bad entry: seq 19" in out and f"chain: {reason}" in out


def test_a_decision_appended_after_the_settlement_is_named_before_the_settlement_after_it(
    tmp_path: Path,
) -> None:
    entries = _appended(
        ("round.decision", "round:2", {"choice": "surrender"}),
        ("round.settled", "round:2", {"game": "casino_war", "payout": 50}),
    )
    settled = _seq(entries, "round.settled", "round:2")
    reason = (
        f"entry 19: round.decision of round:2 after its settlement (entry {settled}): "
        "a settled round takes no more actions, a rewrite"
    )
    report = verify_audit_export(_export(entries), PUBLIC)
    assert (report.chain.ok, report.chain.first_bad_seq, report.chain.reason) == (
        False,
        19,
        reason,
    )
    code, out = _offline(entries, tmp_path, "--json")
    findings = json.loads(out)["findings"]
    assert code == 1 and findings == [{"check": "chain", "seq": 19, "message": reason}]


def test_a_pair_committed_again_is_named_before_its_rounds_settled_again() -> None:
    entries = _appended(
        ("seed_pair.created", "seed_pair:1", {"commitment": "ee" * 32, "status": "next"}),
        ("round.settled", "round:1", {"game": "casino_war", "payout": 0}),
        ("round.settled", "round:2", {"game": "casino_war", "payout": 0}),
    )
    created = _seq(entries, "seed_pair.created", "seed_pair:1")
    report = verify_audit_export(_export(entries), PUBLIC)
    assert report.chain.first_bad_seq == 19
    assert report.chain.reason == (
        f"entry 19: a second seed_pair.created of seed_pair:1 (the first is entry {created}): "
        "the pair was committed twice, a rewrite"
    )


# --- one server seed a pair: two pairs' commitment entries committing to one seed ---------


def _range(entries: list[dict[str, Any]], first: int) -> audit_chain.AuditExport:
    """The export of the entries from seq ``first`` on, proven into a checkpoint over them all."""
    hashes = [bytes.fromhex(e["hash"]) for e in entries]
    size = len(entries)
    document = audit_chain.checkpoint_document(
        size, merkle.root(hashes).hex(), "2025-04-01T10:02:00.000000Z"
    )
    proof = [node.hex() for node in merkle.inclusion_proof(size - 1, hashes)]
    return audit_chain.AuditExport(
        tuple(entries[first - 1 :]),
        (signed(KEY, document),),
        ({"seq": size, "size": size, "proof": proof},),
    )


def test_two_pairs_committed_to_one_server_seed_fail_the_export_naming_both(
    tmp_path: Path,
) -> None:
    """Each pair's entries are as for a seed of its own (no key is taken twice, every
    checkpoint holds): only their commitments, compared, show the seed serving both."""
    entries = _appended(
        ("seed_pair.created", "seed_pair:4", {"commitment": "ee" * 32, "status": "next"})
    )
    first = _seq(entries, "seed_pair.created", "seed_pair:9")
    assert anchors.first_key_problem(entries) is None
    reason = (
        "entry 19: seed_pair.created of seed_pair:4 commits to the server seed of seed_pair:9 "
        "(commitment eeeeeeeeeeeeeeee…): a server seed serves one pair, and revealed for either "
        "it tells every shuffle of the other in advance"
    )
    report = verify_audit_export(_export(entries), PUBLIC)
    assert not report.ok and report.checkpoint_report.ok
    assert (report.chain.first_bad_seq, report.chain.reason) == (19, reason)
    code, out = _offline(entries, tmp_path)
    assert code == 1
    assert "chain ✗  first bad entry: seq 19" in out and f"chain: {reason}" in out
    # A range holding both commitment entries fails alike; one beginning after the first
    # cannot tell the seed was committed before it.
    held = verify_audit_export(_range(entries, first), PUBLIC)
    assert held.checkpoint_report.ok
    assert (held.chain.first_bad_seq, held.chain.reason) == (19, reason)
    assert verify_audit_export(_range(entries, first + 1), PUBLIC).ok


# --- a reveal of the server seed its pair committed to ----------------------------------------


def test_a_reveal_of_another_server_seed_than_its_pair_committed_to_fails_the_export(
    tmp_path: Path,
) -> None:
    """The log rewritten from the pair's reveal on (the chain linked again, every checkpoint
    signed anew): its reveal names another server seed than the one its commitment entry is
    to, which only the two entries, compared, show."""
    raw = _raw()
    reveal = _seq(raw, "seed_pair.rotated", "seed_pair:1")
    other = "ab" * 32
    raw[reveal - 1]["data"] = {"server_seed": other, "rounds": 2}
    entries = audit_chain.link_entries(raw)
    committed = _seq(entries, "seed_pair.created", "seed_pair:1")
    assert anchors.first_key_problem(entries) is None
    reason = (
        f"entry {reveal}: seed_pair.rotated of seed_pair:1 reveals a server seed hashing to "
        f"{commitment_of(bytes.fromhex(other))[:16]}…, but the pair's commitment (entry "
        f"{committed}) is {COMMITMENT[:16]}…: a pair reveals the server seed it committed to, "
        "a rewrite"
    )
    report = verify_audit_export(_export(entries), PUBLIC)
    assert not report.ok and report.checkpoint_report.ok
    assert (report.chain.first_bad_seq, report.chain.reason) == (reveal, reason)
    code, out = _offline(entries, tmp_path)
    assert code == 1
    assert f"chain ✗  first bad entry: seq {reveal}" in out and f"chain: {reason}" in out
    # A range holding the commitment entry fails alike; one beginning after it holds nothing
    # to compare the reveal with.
    held = verify_audit_export(_range(entries, committed), PUBLIC)
    assert held.checkpoint_report.ok
    assert (held.chain.first_bad_seq, held.chain.reason) == (reveal, reason)
    assert verify_audit_export(_range(entries, committed + 1), PUBLIC).ok


def test_a_reveal_the_whole_export_never_committed_fails_it_as_uncommitted() -> None:
    """Nothing to compare its seed with: the reveal of a pair the whole log never committed is
    named as such; the export of a range cannot tell it from a pair committed before it."""
    entries = _appended(("seed_pair.rotated", "seed_pair:77", {"server_seed": SEED, "rounds": 0}))
    report = verify_audit_export(_export(entries), PUBLIC)
    assert (report.chain.first_bad_seq, report.chain.reason) == (
        19,
        "entry 19: seed_pair.rotated of seed_pair:77, which the log never committed: a pair is "
        "revealed only after its commitment, a rewrite",
    )
    assert verify_audit_export(_range(entries, 19), PUBLIC).ok


@pytest.mark.parametrize(
    ("action", "subject", "meaning"),
    [
        ("seed_pair.client_seed_set", "seed_pair:1", "the pair's client seed was set twice"),
        ("seed_pair.rotated", "seed_pair:1", "the pair was revealed twice"),
        ("round.bet", "round:3", "the round was bet twice"),
    ],
)
def test_every_key_taken_once_is_named_when_taken_again(
    action: str, subject: str, meaning: str
) -> None:
    entries = _appended((action, subject, {}))
    first = _seq(entries, action, subject)
    assert anchors.first_key_problem(entries) == (
        19,
        f"entry 19: a second {action} of {subject} (the first is entry {first}): {meaning}, "
        "a rewrite",
    )


def test_a_move_after_its_games_settlement_is_named_and_moves_before_it_repeat_freely() -> None:
    entries = _appended(("round.move", "round:3", {"cards": ["KH"]}))
    settled = _seq(entries, "round.settled", "round:3")
    assert anchors.first_key_problem(entries) == (
        19,
        f"entry 19: round.move of round:3 after its settlement (entry {settled}): "
        "a settled round takes no more actions, a rewrite",
    )
    assert anchors.first_key_problem(entries[:18]) is None  # two moves, then the settlement


def test_keys_taken_before_the_entries_given_are_what_a_chunked_check_looks_up() -> None:
    entries = _appended(("round.settled", "round:1", {"game": "casino_war", "payout": 0}))
    known = [("round:1", "round.bet", 5), ("round:1", "round.settled", 6)]
    # Read alone, as a range of the log is, the chunk holds no clash.
    assert (
        anchors.first_key_problem(entries[18:], pairs=anchors.PairsInPlay(from_start=False)) is None
    )
    assert anchors.first_key_problem(entries[18:], known) == (
        19,
        "entry 19: a second round.settled of round:1 (the first is entry 6): "
        "the round was settled twice, a rewrite",
    )


# --- a pair's rounds: each nonce bet once, in order, all before its reveal counts them -------


def _bet(round_id: int, seed_pair_id: int, nonce: int) -> tuple[str, str, dict[str, Any]]:
    return (
        "round.bet",
        f"round:{round_id}",
        {"game": "casino_war", "seed_pair_id": seed_pair_id, "nonce": nonce},
    )


@pytest.mark.parametrize(
    ("rounds", "meaning"),
    [(1, "a reveal hiding rounds bet on it"), (3, "a reveal naming rounds never bet")],
)
def test_a_rotation_logged_with_other_rounds_than_were_bet_on_its_pair_is_named_at_it(
    tmp_path: Path, rounds: int, meaning: str
) -> None:
    # Logged so from the start: no key is taken twice, and a bundle of the pair, whose reveal
    # says the same, leaves out the rounds after it without a contradiction.
    raw = _raw()
    rotated = _seq(raw, "seed_pair.rotated", "seed_pair:1")
    raw[rotated - 1]["data"]["rounds"] = rounds
    entries = audit_chain.link_entries(raw)
    reason = (
        f"entry {rotated}: seed_pair.rotated of seed_pair:1 says rounds {rounds}, but the log "
        f"holds 2 rounds bet on the pair (nonces 0..1): {meaning}, a rewrite"
    )
    assert anchors.first_key_problem(entries) == (rotated, reason)
    report = verify_audit_export(_export(entries), PUBLIC)
    assert report.checkpoint_report.ok
    assert (report.chain.first_bad_seq, report.chain.reason) == (rotated, reason)
    code, out = _offline(entries, tmp_path)
    assert code == 1 and f"chain: {reason}" in out


def test_a_round_bet_on_a_pair_after_its_reveal_is_named() -> None:
    entries = _appended(_bet(4, 1, 2), ("round.settled", "round:4", {"payout": 0}))
    rotated = _seq(entries, "seed_pair.rotated", "seed_pair:1")
    assert anchors.first_key_problem(entries) == (
        19,
        f"entry 19: round.bet of round:4 on seed_pair:1 after its reveal (entry {rotated}): "
        "a revealed pair takes no more rounds, a rewrite",
    )


def test_a_pair_revealed_before_its_round_was_decided_and_settled_is_named_at_the_reveal(
    tmp_path: Path,
) -> None:
    # The tie of round 2 decided and settled after the server seed was out, each key taken
    # once and the reveal counting both rounds: the bundle of the pair names it, and now the
    # whole log does too.
    raw = _raw()
    rotation = raw.pop(14)
    raw.insert(10, rotation)
    for seq, entry in enumerate(raw, start=1):
        entry["seq"] = seq
    entries = audit_chain.link_entries(raw)
    reason = (
        "entry 11: seed_pair.rotated of seed_pair:1 while round:2, bet on it, is not settled: "
        "a pair is revealed only once its rounds are settled (a round decided after its cards "
        "are known), a rewrite"
    )
    assert anchors.first_key_problem(entries) == (11, reason)
    report = verify_audit_export(_export(entries), PUBLIC)
    assert (report.chain.first_bad_seq, report.chain.reason) == (11, reason)
    code, out = _offline(entries, tmp_path)
    assert code == 1 and f"chain: {reason}" in out
    # Carried across chunks: the bet in one, the reveal in the next.
    pairs = anchors.PairsInPlay()
    assert anchors.first_key_problem(entries[:8], (), pairs) is None
    assert anchors.first_key_problem(entries[8:], (), pairs) == (11, reason)


@pytest.mark.parametrize("nonce", [0, 2, "1", True])
def test_a_round_bet_on_a_nonce_its_pair_did_not_take_next_is_named(nonce: object) -> None:
    entries = _appended(
        _bet(4, 2, 0), ("round.bet", "round:5", {"seed_pair_id": 2, "nonce": nonce})
    )
    assert anchors.first_key_problem(entries) == (
        20,
        f"entry 20: round.bet of round:5 takes nonce {nonce!r} of seed_pair:2, whose next "
        "nonce is 1: a pair's nonces are taken in order, each once, a rewrite",
    )
    assert anchors.first_key_problem(_appended(_bet(4, 2, 0), _bet(5, 2, 1))) is None


def test_the_rounds_bet_on_open_pairs_are_carried_from_one_chunk_to_the_next() -> None:
    raw = _raw()
    raw[14]["data"]["rounds"] = 1
    entries = audit_chain.link_entries(raw)
    pairs = anchors.PairsInPlay()
    assert anchors.first_key_problem(entries[:10], (), pairs) is None
    assert pairs.bets == {"seed_pair:1": 2, "seed_pair:2": 0, "seed_pair:9": 1}
    assert pairs.unsettled == {"round:2": "seed_pair:1", "round:3": "seed_pair:9"}  # 1 settled
    # Round 1's count left with its settlement.
    assert pairs.open_rounds == {"seed_pair:1": 1, "seed_pair:9": 1}
    assert anchors.PairsInPlay.from_json(json.loads(json.dumps(pairs.to_json()))) == pairs
    # Read alone, as a range of the log is, the chunk holds no bet of it.
    assert (
        anchors.first_key_problem(entries[10:], pairs=anchors.PairsInPlay(from_start=False)) is None
    )
    assert anchors.first_key_problem(entries[10:], (), pairs) == (
        15,
        "entry 15: seed_pair.rotated of seed_pair:1 says rounds 1, but the log holds 2 rounds "
        "bet on the pair (nonces 0..1): a reveal hiding rounds bet on it, a rewrite",
    )
    # A reveal logged chunks before is looked up under the pair's subject, not remembered.
    later = _appended(_bet(4, 1, 2))
    assert anchors.first_key_problem(later[18:], [("seed_pair:1", "seed_pair.rotated", 15)]) == (
        19,
        "entry 19: round.bet of round:4 on seed_pair:1 after its reveal (entry 15): "
        "a revealed pair takes no more rounds, a rewrite",
    )
    assert anchors.keyed_subjects(later[18]) == ["round:4", "seed_pair:1"]


def test_the_export_of_a_range_is_held_to_the_keys_of_its_own_entries() -> None:
    entries = _appended(
        ("round.bet", "round:4", {}),
        ("round.settled", "round:4", {}),
        ("round.settled", "round:4", {}),
    )
    hashes = [bytes.fromhex(e["hash"]) for e in entries]
    size = len(entries)
    document = audit_chain.checkpoint_document(
        size, merkle.root(hashes).hex(), "2025-04-01T10:02:00.000000Z"
    )
    proof = merkle.inclusion_proof(size - 1, hashes)
    export = audit_chain.AuditExport(
        tuple(entries[18:]),
        (signed(KEY, document),),
        ({"seq": size, "size": size, "proof": [node.hex() for node in proof]},),
    )
    report = verify_audit_export(export, PUBLIC)
    assert report.range_first == 19 and report.checkpoint_report.ok
    assert (report.chain.first_bad_seq, report.chain.reason) == (
        21,
        "entry 21: a second round.settled of round:4 (the first is entry 20): "
        "the round was settled twice, a rewrite",
    )


def test_a_round_logged_again_under_a_new_id_is_named_though_it_takes_no_key_twice(
    tmp_path: Path,
) -> None:
    # Round 2's war turned into a surrender, logged as a round of its own on the same pair and
    # nonce: no key is taken twice, and the pair's reveal still counts the rounds bet.
    entries = _appended(
        ("round.decision", "round:50000", {"choice": "surrender"}),
        ("round.settled", "round:50000", {"game": "casino_war", "payout": 100}),
    )
    reason = (
        "entry 19: round.decision of round:50000, which the log never bet: a round is played "
        "only after its bet, a rewrite"
    )
    assert anchors.first_key_problem(entries) == (19, reason)
    settled_only = anchors.first_key_problem(
        _appended(("round.settled", "round:50000", {"game": "casino_war"}))
    )
    assert settled_only is not None
    assert settled_only[1].startswith(
        "entry 19: round.settled of round:50000, which the log never bet"
    )
    report = verify_audit_export(_export(entries), PUBLIC)
    assert (report.chain.first_bad_seq, report.chain.reason) == (19, reason)
    code, out = _offline(entries, tmp_path)
    assert code == 1 and f"chain: {reason}" in out


def test_a_bet_or_a_reveal_on_a_pair_the_log_never_committed_is_named() -> None:
    bet = _appended(_bet(4, 77, 0))
    assert anchors.first_key_problem(bet) == (
        19,
        "entry 19: round.bet of round:4 on seed_pair:77, which the log never committed: a round "
        "is bet on a committed pair, a rewrite",
    )
    reveal = _appended(("seed_pair.rotated", "seed_pair:77", {"server_seed": "ff" * 32}))
    assert anchors.first_key_problem(reveal) == (
        19,
        "entry 19: seed_pair.rotated of seed_pair:77, which the log never committed: a pair is "
        "revealed only after its commitment, a rewrite",
    )


def test_a_range_cannot_tell_a_round_or_pair_begun_before_it_from_one_never_logged() -> None:
    entries = _appended(
        _bet(4, 77, 0),
        ("round.settled", "round:50000", {"game": "casino_war"}),
        ("seed_pair.rotated", "seed_pair:78", {"server_seed": "ff" * 32}),
    )
    whole = anchors.first_key_problem(entries)
    assert whole is not None and whole[0] == 19
    assert (
        anchors.first_key_problem(entries[18:], pairs=anchors.PairsInPlay(from_start=False)) is None
    )


def _signed_bet(round_id: int, seed_pair_id: int, nonce: int) -> tuple[str, str, dict[str, Any]]:
    """A bet the player signed (the signature is not read)."""
    action, subject, data = _bet(round_id, seed_pair_id, nonce)
    return action, subject, {**data, "signed": {"signature": "ab" * 64, "key_id": 1}}


def test_an_unsigned_bet_of_a_player_who_registered_a_key_is_named() -> None:
    """The service takes no unsigned bet from a player with a key: one in the log is a round
    bet in the player's name by someone else (to spend a nonce), though the bundle may hide
    the registration with it. Bets before the registration, and another player's, stand."""
    registered = ("player_key.registered", "user:7", {"user_id": 7, "key_id": 1})
    assert anchors.first_key_problem(_appended(registered, _bet(4, 2, 0))) == (
        20,
        "entry 20: round.bet of round:4 is not signed, though its player registered a key "
        "(entry 19): the service takes no unsigned bet from a player with a key, a rewrite",
    )
    assert anchors.first_key_problem(_appended(registered, _signed_bet(4, 2, 0))) is None
    assert anchors.first_key_problem(_appended(_bet(4, 2, 0), registered)) is None
    other = ("player_key.registered", "user:8", {"user_id": 8, "key_id": 1})
    assert anchors.first_key_problem(_appended(other, _bet(4, 2, 0))) is None


def test_an_unsigned_action_of_a_player_who_registered_a_key_is_named() -> None:
    """The service takes no unsigned decision from a player with a key: one in the log was
    written by someone else, though the bundle may hide the registration with it."""
    registered = ("player_key.registered", "user:7", {"user_id": 7, "key_id": 1})
    unsigned = _appended(
        registered, _signed_bet(4, 2, 0), ("round.decision", "round:4", {"choice": "surrender"})
    )
    assert anchors.first_key_problem(unsigned) == (
        21,
        "entry 21: round.decision of round:4 is not signed, though its player registered a key "
        "(entry 19): the service takes no unsigned action from a player with a key, a rewrite",
    )
    signed_choice = {"choice": "war", "signed": {"signature": "ab" * 64, "key_id": 1}}
    signed = _appended(
        registered, _signed_bet(4, 2, 0), ("round.decision", "round:4", signed_choice)
    )
    assert anchors.first_key_problem(signed) is None
    # Another player's key asks nothing of this one, and a key is carried from chunk to chunk.
    other = _appended(
        ("player_key.registered", "user:8", {}),
        _bet(4, 2, 0),
        ("round.decision", "round:4", {"choice": "war"}),
    )
    assert anchors.first_key_problem(other) is None
    pairs = anchors.PairsInPlay()
    assert anchors.first_key_problem(unsigned[:19], (), pairs) is None
    stored = anchors.PairsInPlay.from_json(json.loads(json.dumps(pairs.to_json())))
    assert stored == pairs and stored.signers == {"user:7": 19}
    assert anchors.first_key_problem(unsigned[19:], (), stored) == anchors.first_key_problem(
        unsigned
    )


def test_a_key_id_registered_again_for_another_key_is_named() -> None:
    """A verifier names a signed action's key by its id: registered again, for the forger's
    key, the id would pass that key off as the one the player made."""
    first = ("player_key.registered", "user:7", {"user_id": 7, "key_id": 3, "public_key_hex": "a"})
    again = ("player_key.registered", "user:7", {"user_id": 7, "key_id": 3, "public_key_hex": "b"})
    assert anchors.first_key_problem(_appended(first, again)) == (
        20,
        "entry 20: a second player_key.registered of key 3 (the first is entry 19): a key id "
        "names one key, a rewrite",
    )
    replaced = ("player_key.registered", "user:7", {"user_id": 7, "key_id": 4, "retires": [3]})
    assert anchors.first_key_problem(_appended(first, replaced)) is None


def _key_change(old: Any, new: str) -> tuple[str, str, dict[str, Any]]:
    """A key change's entry, its document signed as by the old key (the signature is not read)."""
    document = {"type": "key_change", "v": 1, "old_public_key_hex": old}
    document |= {"new_public_key_hex": new, "changed_at": "2025-04-02T09:00:00.000000Z"}
    return "key.changed", f"key:{new[:16]}", {"key_change": {"document": document, "signature": ""}}


def _key(name: str, action: str = "key.created") -> tuple[str, str, dict[str, Any]]:
    return action, f"key:{name * 16}", {"public_key_hex": name * 64}


A, B, C, X = ("a" * 64, "b" * 64, "c" * 64, "f" * 64)


def test_the_services_keys_changing_in_one_chain_pass() -> None:
    """A key registered on its first signature, changed, taken over, changed again; a key file
    swapped by hand registers its key anew, and the next change is from it."""
    honest = (
        _key("a"),
        _key_change(A, B),
        _key("b", "key.in_use"),
        _key_change(B, C),
        _key("d"),
        _key_change("d" * 64, "e" * 64),
    )
    assert anchors.first_key_problem(_appended(*honest)) is None
    # A log or range whose first word on the keys is a change: its old key was in use.
    assert anchors.first_key_problem(_appended(_key_change(A, B), _key_change(B, C))) is None


def test_a_second_key_change_into_the_key_in_use_is_named(tmp_path: Path) -> None:
    """Whoever holds the database and the new key logs a change into it from a key of his own,
    under a checkpoint of the new key: a verifier trusting the new key would take that key as
    its predecessor."""
    entries = _appended(_key("a"), _key_change(A, B), _key_change(X, B))
    reason = (
        f"entry 21: key.changed names key {X[:16]}… as the key in use, but the key in use is "
        f"{B[:16]}… (entry 20): the service's keys change in one chain, each change signed by "
        "the key in use, a rewrite"
    )
    assert anchors.first_key_problem(entries) == (21, reason)
    code, out = _offline(entries, tmp_path)
    assert code == 1 and "chain ✗  first bad entry: seq 21" in out and f"chain: {reason}" in out


def test_a_key_change_into_a_key_used_before_or_a_retired_key_taking_over_is_named() -> None:
    back = _appended(_key("a"), _key_change(A, B), _key_change(B, A))
    assert anchors.first_key_problem(back) == (
        21,
        f"entry 21: key.changed of key {A[:16]}…, which was in use before (entry 19): a key is "
        "taken into use once, a rewrite",
    )
    retired = _appended(_key("a"), _key_change(A, B), _key("a", "key.in_use"))
    assert anchors.first_key_problem(retired) == (
        21,
        f"entry 21: key.in_use names key {A[:16]}… as the key in use, but the key in use is "
        f"{B[:16]}… (entry 20): the service's keys change in one chain, each change signed by "
        "the key in use, a rewrite",
    )


def test_the_services_keys_are_carried_from_one_chunk_to_the_next() -> None:
    entries = _appended(_key("a"), _key_change(A, B), _key_change(X, B))
    pairs = anchors.PairsInPlay()
    assert anchors.first_key_problem(entries[:20], pairs=pairs) is None
    stored = anchors.PairsInPlay.from_json(json.loads(json.dumps(pairs.to_json())))
    found = anchors.first_key_problem(entries[20:], pairs=stored)
    assert found is not None and found[0] == 21


# --- the export's checkpoints follow the key changes the log itself records ----------------

NEW_KEY, FORGER_KEY = new_signing_key(), new_signing_key()
NEW, FORGER = public_key_hex(NEW_KEY), public_key_hex(FORGER_KEY)


def _signed_change(old_key: Any, new: str) -> tuple[str, str, dict[str, Any]]:
    """A key change's entry, its document signed by ``old_key``."""
    action, subject, data = _key_change(public_key_hex(old_key), new)
    return action, subject, {"key_change": signed(old_key, data["key_change"]["document"])}


def _rotated_export(tmp_path: Path, change: tuple[str, str, dict[str, Any]], *signers: Any) -> Path:
    """The honest log and a key change appended to it (entry 19), then a player registered
    under the new key, exported with a checkpoint over the first 17 entries, one over 19 and one
    over all, signed by ``signers`` in turn."""
    entries = _appended(
        ("key.created", f"key:{PUBLIC[:16]}", {"public_key_hex": PUBLIC}),
        change,
        ("user.registered", "user:9", {"username": "bea"}),
    )
    hashes = [bytes.fromhex(e["hash"]) for e in entries]
    checkpoints = [
        signed(key, audit_chain.checkpoint_document(size, merkle.root(hashes[:size]).hex(), time))
        for key, (size, time) in zip(
            signers,
            (
                (17, "2025-04-01T10:00:30.000000Z"),
                (19, "2025-04-01T10:01:30.000000Z"),
                (21, "2025-04-01T10:02:00.000000Z"),
            ),
            strict=True,
        )
    ]
    path = tmp_path / "audit.jsonl"
    path.write_text("".join(audit_chain.export_lines(entries, checkpoints)))
    return path


def _check(path: Path, pinned: str) -> tuple[int, str]:
    out = io.StringIO()
    return main(["audit", str(path), "--public-key", pinned], out), out.getvalue()


def test_an_export_across_a_key_change_passes_pinned_to_the_old_key_or_the_new(
    tmp_path: Path,
) -> None:
    """The checkpoint over the change signed by the old key (a process not yet restarted), the
    next by the new: pinned to the new key, the old one counts as its predecessor because a
    checkpoint of the new key covers the change."""
    path = _rotated_export(tmp_path, _signed_change(KEY, NEW), KEY, KEY, NEW_KEY)
    for pinned in (PUBLIC, NEW):
        code, out = _check(path, pinned)
        assert code == 0 and out.splitlines()[-1] == "Result: OK (exit 0)", out


def test_the_export_check_builds_the_logs_merkle_tree_once(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Pinned to the new key, the check proves the change into it from the entries and checks
    every checkpoint's root: both from one tree, built once over the whole export (each build
    hashes every entry: about 0.8 s per 100,000 entries)."""
    built: list[int] = []
    build = merkle.MerkleTree.__init__

    def counted(tree: merkle.MerkleTree, leaves: Sequence[bytes]) -> None:
        built.append(len(leaves))
        build(tree, leaves)

    path = _rotated_export(tmp_path, _signed_change(KEY, NEW), KEY, KEY, NEW_KEY)
    monkeypatch.setattr(merkle.MerkleTree, "__init__", counted)
    code, out = _check(path, NEW)
    assert code == 0, out
    assert built == [21]


def test_an_export_whose_new_key_never_signed_over_the_change_fails_pinned_to_the_new_key(
    tmp_path: Path,
) -> None:
    """Only the new key's checkpoint over the change makes the old key its predecessor."""
    path = _rotated_export(tmp_path, _signed_change(KEY, NEW), KEY, KEY, KEY)
    assert _check(path, PUBLIC)[0] == 0
    code, out = _check(path, NEW)
    assert code == 1 and "checkpoint 1 (size 17): the signature is not valid" in out, out


def test_a_checkpoint_signed_by_a_key_before_the_log_took_it_into_use_fails(
    tmp_path: Path,
) -> None:
    path = _rotated_export(tmp_path, _signed_change(KEY, NEW), NEW_KEY, KEY, NEW_KEY)
    for pinned in (PUBLIC, NEW):
        code, out = _check(path, pinned)
        assert code == 1, out
        assert "checkpoints: checkpoint 1 (size 17): the signature is not valid" in out, out
        assert "checkpoint 3 (size 21)" not in out, out


@pytest.mark.parametrize(
    "forgery",
    ["a change from a key not in use", "a change not signed by the key in use"],
)
def test_a_forged_key_change_moves_no_key_for_the_export(forgery: str, tmp_path: Path) -> None:
    """Whoever holds the database logs a change into a key of his own and signs the next
    checkpoints with it: pinned to either key, the export fails."""
    if forgery == "a change from a key not in use":
        change = _signed_change(FORGER_KEY, NEW)
    else:  # names the key in use as its old key, but the forger signed it
        action, subject, data = _key_change(PUBLIC, NEW)
        change = action, subject, {"key_change": signed(FORGER_KEY, data["key_change"]["document"])}
    path = _rotated_export(tmp_path, change, KEY, NEW_KEY, NEW_KEY)
    code, out = _check(path, PUBLIC)
    assert code == 1 and "checkpoint 2 (size 19): the signature is not valid" in out, out
    code, out = _check(path, NEW)
    assert code == 1 and "checkpoint 1 (size 17): the signature is not valid" in out, out


def test_a_checkpoint_signed_by_a_key_no_change_leads_to_fails(tmp_path: Path) -> None:
    path = _rotated_export(tmp_path, _signed_change(KEY, NEW), KEY, KEY, FORGER_KEY)
    for pinned in (PUBLIC, NEW, FORGER):
        code, out = _check(path, pinned)
        assert code == 1 and "the signature is not valid" in out, out


def test_the_audit_commands_help_names_every_check_it_runs(
    capsys: pytest.CaptureFixture[str],
) -> None:
    """Each check of an export fails it under its own words: the help lists them all."""
    with pytest.raises(SystemExit) as exited:
        main(["audit", "--help"], io.StringIO())
    assert exited.value.code == 0
    said = " ".join(capsys.readouterr().out.split())
    for check in (
        "the hash chain",
        "the keys (each pair, round and key logged once",
        "the commitments (no two pairs committed to one server seed)",
        "the reveals (each pair's revealed server seed hashing to its logged commitment)",
        "each checkpoint's signature and Merkle root, and their consistency",
        "with --checkpoint, the checkpoints a witness kept",
    ):
        assert check in said

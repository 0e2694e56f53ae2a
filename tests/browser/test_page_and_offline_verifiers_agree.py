"""The fairness page's verifier and the offline one, two implementations of docs/fairness.md,
agree on every one-value change of a real bundle signed by the casino's key, and of a player's
records of it: one passes it exactly when the other does. A change that only one of them
caught would be a forgery the other lets through; one that stops the page would leave the
player without a verdict.
"""

from __future__ import annotations

import copy
import hashlib
import io
import json
import re
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from browser_support import FORGET_WITNESS
from browser_support import sign_up
from test_log_witness import SPOKEN

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "unit"))
import bundles  # noqa: E402
from test_anchor_json_types import UNLOGGABLE  # noqa: E402
from test_anchor_json_types import logged_with  # noqa: E402
from test_verify_anchored_twice import MEANING  # noqa: E402
from test_verify_anchored_twice import ROUND_ID  # noqa: E402
from test_verify_anchored_twice import logged_twice  # noqa: E402
from test_verify_any_input import GONE  # noqa: E402
from test_verify_any_input import places  # noqa: E402
from test_verify_any_input import with_odd  # noqa: E402
from test_verify_cli import GOOD  # noqa: E402
from test_verify_cli import KEY_HEX  # noqa: E402
from test_verify_cli import PAIR  # noqa: E402
from test_verify_forged_log import OUT_OF_ORDER  # noqa: E402
from test_verify_forged_log import OUT_OF_ORDER_BETS  # noqa: E402
from test_verify_forged_log import PRISONERS  # noqa: E402
from test_verify_forged_log import RELOGGED  # noqa: E402
from test_verify_forged_log import logged_again  # noqa: E402
from test_verify_pending_registration import COVERED as REGISTRATION_COVERED  # noqa: E402
from test_verify_pending_registration import COVERED_BY_A_LATER_ONE  # noqa: E402
from test_verify_pending_registration import PAST_THE_BOUND  # noqa: E402
from test_verify_pending_registration import PENDING_NAMED  # noqa: E402
from test_verify_pending_registration import WITHIN as REGISTERED_WITHIN  # noqa: E402
from test_verify_pending_registration import WITHIN_THE_BOUND  # noqa: E402
from test_verify_pending_registration import named as registration_named  # noqa: E402
from test_verify_pending_registration import registration_pending  # noqa: E402
from test_verify_pending_registration import registration_pending_beside_a_later_one_anchored  # noqa: E402
from test_verify_pending_registration import registration_unanchored  # noqa: E402
from test_verify_player_log_order import KEY_HEX as SIGNING_KEY_HEX  # noqa: E402
from test_verify_player_log_order import PAIR as SIGNING_PAIR  # noqa: E402
from test_verify_player_log_order import _registered_first  # noqa: E402
from test_verify_player_log_order import _with_registration  # noqa: E402
from test_verify_player_log_order import key_id_registered_twice  # noqa: E402
from test_verify_player_log_order import replaced_key_moves_bundle  # noqa: E402
from test_verify_signed_bets import ROUNDS  # noqa: E402
from test_verify_signed_bets import player_signed  # noqa: E402
from test_verify_trust import GOOD as CHANGED_GOOD  # noqa: E402
from test_verify_trust import INTO_PAIR_KEY  # noqa: E402
from test_verify_trust import OLD_KEY  # noqa: E402
from test_verify_trust import PAIR as CHANGED_PAIR  # noqa: E402
from test_verify_unanchored import FETCHED_AT  # noqa: E402
from test_verify_unanchored import dated_past_the_fetch  # noqa: E402

from sota_casino.core import anchors
from sota_casino.core import audit_chain
from sota_casino.core.fairness import public_key_hex
from sota_casino.core.fairness import signed
from sota_casino.verify import main

pytestmark = pytest.mark.browser

#: The page's verdict: every check passed and nothing waits for the log; False for a throw.
PAGE_PASSES = (
    "async ([bundles, key]) => Promise.all(bundles.map(async bundle => { try {"
    " const report = await window.SotaVerify.verifyBundle(bundle,"
    " {trustedKey: key, records: null});"
    " return report.problems.length === 0 && report.waiting.length === 0; }"
    " catch (error) { return false; } }))"
)
#: The page's verdicts on one-value changes of a bundle, each ``[place, gone, value]``: made in
#: the page from the one bundle sent (sent whole, the changed bundles were 22 MB through the
#: browser's pipe, most of the test's time). ``gone`` removes the place, as ``del`` would.
PAGE_PASSES_CHANGED = (
    "async ([bundle, key, changes]) => Promise.all(changes.map(async ([place, gone, value]) => {"
    " const changed = structuredClone(bundle); let holder = changed;"
    " for (const step of place.slice(0, -1)) holder = holder[step];"
    " const last = place[place.length - 1];"
    " if (!gone) holder[last] = value;"
    " else if (Array.isArray(holder)) holder.splice(last, 1);"
    " else delete holder[last];"
    " try { const report = await window.SotaVerify.verifyBundle(changed,"
    " {trustedKey: key, records: null});"
    " return report.problems.length === 0 && report.waiting.length === 0; }"
    " catch (error) { return false; } }))"
)
CHECK = (
    "async ([bundle, key]) => (await window.SotaVerify.verifyBundle(bundle, "
    "{trustedKey: key, records: null})).problems.join(' | ')"
)


def changed(value: Any) -> Any:
    """``value`` changed by the least: a digit, a count by one, a flag flipped."""
    if isinstance(value, bool):
        return not value
    if isinstance(value, int):
        return value + 1
    if isinstance(value, str) and value:
        return value[:-1] + ("0" if value[-1] != "0" else "1")
    return "x"


def value_at(document: Any, place: tuple[Any, ...]) -> Any:
    for key in place:
        document = document[key]
    return document


def fairness_page(tab: Any) -> None:
    """Open the fairness page and let its log witness say what it found: a test that then
    clears the browser's storage and pins the bundles' key would race it, and the witness would
    join checkpoints of two logs."""
    tab.goto("/fairness")
    tab.locator(SPOKEN).wait_for(state="attached")


def offline_passes(tmp_path: Path, bundle: Any, key_hex: str = KEY_HEX) -> bool:
    path = tmp_path / "bundle.json"
    path.write_text(json.dumps(bundle), encoding="utf-8")
    return main([str(path), "--public-key", key_hex, "-q"], io.StringIO(), io.StringIO()) == 0


def offline_report(tmp_path: Path, records: Any) -> tuple[int, str]:
    """The offline verifier's exit code and report for GOOD with ``records``."""
    (tmp_path / "b.json").write_text(json.dumps(GOOD), encoding="utf-8")
    (tmp_path / "r.json").write_text(json.dumps(records), encoding="utf-8")
    out = io.StringIO()
    args = [str(tmp_path / "b.json"), "--records", str(tmp_path / "r.json"), "-q"]
    return main([*args, "--public-key", KEY_HEX], out, io.StringIO()), out.getvalue()


def page_disagreements(
    tab: Any,
    cases: list[tuple[Any, Any]],
    key_hex: str,
    offline: Callable[[Any], Any],
    script: str = PAGE_PASSES,
) -> list[tuple[Any, Any]]:
    """The ``(place, bundle)`` cases whose verdict on the page (pinned to ``key_hex``, asked
    with ``script``) is not ``offline``'s, with the page's, the page asked twenty bundles at a
    time."""
    disagree = []
    for start in range(0, len(cases), 20):
        chunk = cases[start : start + 20]
        page = tab.evaluate(script, [[bundle for _, bundle in chunk], key_hex])
        disagree += [
            (place, said)
            for (place, bundle), said in zip(chunk, page, strict=True)
            if said != offline(bundle)
        ]
    return disagree


def test_both_verifiers_pass_or_fail_each_one_value_change_of_a_bundle(
    tab: Any, tmp_path: Path
) -> None:
    sign_up(tab, "differential")
    fairness_page(tab)
    cases = [
        (place, odd) for place in places(GOOD) for odd in (changed(value_at(GOOD, place)), GONE)
    ]
    changes = [[list(place), odd is GONE, None if odd is GONE else odd] for place, odd in cases]
    page = tab.evaluate(PAGE_PASSES_CHANGED, [GOOD, KEY_HEX, changes])
    disagree = [
        (place, said)
        for (place, odd), said in zip(cases, page, strict=True)
        if said != offline_passes(tmp_path, with_odd(GOOD, place, odd))
    ]
    assert len(cases) > 500 and disagree == []
    assert tab.evaluate(PAGE_PASSES, [[GOOD], KEY_HEX]) == [True]  # and the bundle itself passes


def test_both_verifiers_fail_a_round_logged_again_by_its_bet_entry(
    tab: Any, tmp_path: Path
) -> None:
    """A rewritten round logged as a new one: each way its bet can be logged is caught by the
    bet entry on the page as offline, the page naming it in the player's words."""
    sign_up(tab, "relogged")
    fairness_page(tab)
    forged, _, new_id = logged_again(2)
    expected = {
        "bet_on_another_pair": "the log recorded the bet with seed_pair_id 999, the receipt says "
        f"{PAIR.seed_pair_id}: the round was logged again",
        "without_bet": f"round {new_id}: the bundle carries no anchor of its bet in the log",
        "bet_last": f"round {new_id}: the round's bet was logged after it was played",
    }
    for logged_as, _ in RELOGGED:
        bundle = bundles.anchored(forged, PAIR.key, logged_as=logged_as)
        assert not offline_passes(tmp_path, bundle), logged_as.__name__
        problems = tab.evaluate(CHECK, [bundle, KEY_HEX])
        assert expected[logged_as.__name__] in problems, (logged_as.__name__, problems)
    honest = bundles.anchored(forged, PAIR.key)  # the bet names the receipt's pair and nonce
    assert offline_passes(tmp_path, honest) and tab.evaluate(PAGE_PASSES, [[honest], KEY_HEX])


def test_both_verifiers_fail_a_bet_logged_before_the_bet_of_a_lower_nonce(
    tab: Any, tmp_path: Path
) -> None:
    """The log took the bet of nonce 3 before nonce 2's, every entry still saying what its
    receipt says: the nonces were dealt out of order, on the page as offline."""
    sign_up(tab, "out-of-order")
    fairness_page(tab)
    assert not offline_passes(tmp_path, OUT_OF_ORDER)
    two, three = (OUT_OF_ORDER["rounds"][n]["document"]["round_id"] for n in (2, 3))
    assert tab.evaluate(CHECK, [OUT_OF_ORDER, KEY_HEX]) == (
        f"round {three}: its bet was logged at leaf {OUT_OF_ORDER_BETS[three]}, before the bet of "
        f"round {two} (nonce 2) at leaf {OUT_OF_ORDER_BETS[two]}: a pair's nonces are taken in "
        "order, each with its bet logged, so the nonces were dealt out of order"
    )


def test_both_verifiers_fail_a_document_logged_twice_naming_both_leaves(
    tab: Any, tmp_path: Path
) -> None:
    """A round settled (or bet) twice, or a pair committed (or revealed) twice, both entries
    anchored, the one the documents agree with listed last: both verifiers kept the last and
    passed it. Both fail it now, naming both leaves alike."""
    sign_up(tab, "logged-twice")
    fairness_page(tab)
    named = {"commitment": "the commitment", "reveal": "the reveal"}
    for kind, meaning in MEANING.items():
        bundle, first = logged_twice(kind)
        said = (
            f"two {kind} entries are anchored, at leaf {first} and at leaf {first + 1}: the "
            f"service logs one, so {meaning}"
        )
        code, out = offline_says(tmp_path, bundle)
        where = f"{kind} document" if kind in named else f"round {ROUND_ID} (nonce 2)"
        assert code == 1 and f"{where}: log: {said}" in out, out
        shown = tab.evaluate(CHECK, [bundle, KEY_HEX]).split(" | ")
        assert f"{named.get(kind, f'round {ROUND_ID}')}: {said}" in shown, shown


def test_a_reveal_claiming_more_rounds_than_a_page_can_list_fails_naming_the_first_ten(
    tab: Any,
) -> None:
    """A casino holding the key can sign a reveal of 2**53 - 1 rounds (the most both verifiers
    read): the page listed every nonce without a receipt, and the tab ran out of memory before
    it said anything."""
    forged = copy.deepcopy(GOOD)
    forged["reveal"] = bundles.resign(PAIR, forged["reveal"], rounds=2**53 - 1)
    sign_up(tab, "many-rounds")
    fairness_page(tab)
    caught = tab.evaluate(CHECK, [forged, KEY_HEX]).replace("\xa0", " ")  # no-break spaces
    assert (
        "no receipt for nonce 6, 7, 8, 9, 10, 11, 12, 13, 14, 15 and 9007199254740975 more "
        "(a round may still be open)"
    ) in caught, caught


#: A player's records of the bundle above, as the page keeps and exports them: they agree.
RECORDS = {
    "format": "sota-casino-records",
    "v": 1,
    "public_key_hex": KEY_HEX,
    "commitments": [GOOD["commitment"]],
    "actions": [
        {"round_id": 101, "seed_pair_id": 12, "nonce": 1, "game": "casino_war", "action": "war"},
        {
            "round_id": 103,
            "seed_pair_id": 12,
            "nonce": 3,
            "game": "casino_war",
            "action": "surrender",
        },
    ],
    "rotations": [{"seed_pair_id": 12, "client_seed": "lucky seven"}],
    "bets": [
        {"round_id": round_id, "seed_pair_id": 12, "nonce": nonce, "game": "casino_war"}
        | {"rules": GOOD["rounds"][nonce]["document"]["rules"]}
        | {name: GOOD["rounds"][nonce]["document"]["stakes"][name] for name in ("bet", "tie_bet")}
        for round_id, nonce in ((101, 1), (102, 2))
    ],
}
#: The page's verdict with ``records`` as this browser's own, under the key it trusts.
PAGE_PASSES_WITH_RECORDS = (
    f"async ([records, bundle, key]) => {{ localStorage.clear(); await ({FORGET_WITNESS})();"
    " localStorage.setItem(window.SotaRecords.stores.mine.records, JSON.stringify(records));"
    " window.SotaRecords.acceptKey(key);"
    " const report = await window.SotaVerify.verifyBundle(bundle);"
    " return report.problems.length === 0 && report.waiting.length === 0; }"
)
#: The same for each of a list of records, one after another (they share the page's storage),
#: in one call: a call each sent the bundle again every time.
PAGE_PASSES_WITH_EACH_RECORDS = (
    f"async ([all, bundle, key]) => {{ const check = {PAGE_PASSES_WITH_RECORDS}; const said = [];"
    " for (const records of all) said.push(await check([records, bundle, key]));"
    " return said; }"
)


def test_both_verifiers_read_each_one_value_change_of_the_records_alike(
    tab: Any, tmp_path: Path
) -> None:
    """The records a player kept, changed one value at a time: the page's records check and
    the offline verifier's pass the bundle exactly together. (A records file the verifier
    cannot read is exit 2; the page, whose storage only it writes, reads a damaged part as
    nothing recorded: those are left out.)"""
    sign_up(tab, "records-differential")
    fairness_page(tab)

    def offline(records: Any) -> int:
        return offline_report(tmp_path, records)[0]

    assert offline(RECORDS) == 0
    assert tab.evaluate(PAGE_PASSES_WITH_RECORDS, [RECORDS, GOOD, KEY_HEX]) is True
    lists = ("commitments", "actions", "rotations", "bets")
    cases = [
        (place, odd is GONE, with_odd(RECORDS, place, odd))
        for place in places({name: RECORDS[name] for name in lists})
        for odd in (changed(value_at(RECORDS, place)), GONE)
    ]
    page = tab.evaluate(
        PAGE_PASSES_WITH_EACH_RECORDS, [[records for *_, records in cases], GOOD, KEY_HEX]
    )
    disagree = [
        (place, gone, code, said)
        for (place, gone, records), said in zip(cases, page, strict=True)
        if (code := offline(records)) != 2 and said != (code == 0)
    ]
    assert len(cases) > 50 and disagree == []


#: What the page notes of round 106 recorded with no seed pair, when the bundle lacks it.
UNPLACED_106 = (
    "Your records name no seed pair for round 106, and this bundle does not hold it: it was "
    "compared with nothing here. If you played it on this seed pair, the bundle left it out; "
    "if not, verify the bundle of the pair you played it on."
)
#: The page's problems and notices with ``records`` as this browser's own, under ``key``.
PAGE_REPORT_WITH_RECORDS = (
    f"async ([records, bundle, key]) => {{ localStorage.clear(); await ({FORGET_WITNESS})();"
    " localStorage.setItem(window.SotaRecords.stores.mine.records, JSON.stringify(records));"
    " window.SotaRecords.acceptKey(key);"
    " const report = await window.SotaVerify.verifyBundle(bundle);"
    " return {problems: report.problems, notices: report.notices}; }"
)


def test_both_verifiers_place_a_decision_recorded_without_its_pair_by_its_round_or_name_it(
    tab: Any, tmp_path: Path
) -> None:
    """A decision recorded with ``seed_pair_id: null`` is compared with the receipt of its
    round; one for a round the bundle lacks (left out, or of another pair) fails nothing in
    either verifier, and both say it was compared with nothing instead of passing in silence."""
    sign_up(tab, "unplaced-records")
    fairness_page(tab)
    war, left_out = (
        {"round_id": round_id, "seed_pair_id": None, "nonce": None, "game": "casino_war"}
        for round_id in (101, 106)
    )
    records = RECORDS | {"actions": [war | {"action": "war"}, left_out | {"action": "war"}]}
    code, out = offline_report(tmp_path, records)
    assert code == 0
    assert "Not compared: round 106: you played it (recorded with no seed pair)" in out

    report = tab.evaluate(PAGE_REPORT_WITH_RECORDS, [records, GOOD, KEY_HEX])
    assert report["problems"] == []
    assert report["notices"] == [UNPLACED_106]
    records["actions"][0]["action"] = "surrender"  # placed by its round: the receipt differs
    report = tab.evaluate(PAGE_REPORT_WITH_RECORDS, [records, GOOD, KEY_HEX])
    assert report["problems"] == ["round 101: you chose surrender, the receipt says war"]


def test_both_verifiers_fail_a_receipt_naming_a_larger_stake_than_the_bet_sent(
    tab: Any, tmp_path: Path
) -> None:
    """A receipt naming a larger ante than the player sent, paid by it, passes every check of
    the bundle; the amount the bet record kept fails it in both verifiers, naming the field."""
    sign_up(tab, "records-stakes")
    fairness_page(tab)
    sent_less = copy.deepcopy(RECORDS)
    sent_less["bets"][1]["bet"] = 100  # round 102's receipt names an ante of 500
    code, out = offline_report(tmp_path, sent_less)
    assert code == 1
    assert (
        "round 102 (nonce 2): records: the receipt's stakes differ from those the player sent "
        "(recorded): bet is 500 in the receipt, 100 as recorded"
    ) in out
    report = tab.evaluate(PAGE_REPORT_WITH_RECORDS, [sent_less, GOOD, KEY_HEX])
    assert report["problems"] == ["round 102: you sent bet 100, the receipt says 500"]

    # Bets recorded before their amounts were: the rules alone are compared, in both.
    unstaked = copy.deepcopy(sent_less)
    for bet in unstaked["bets"]:
        del bet["bet"], bet["tie_bet"]
    assert offline_report(tmp_path, unstaked)[0] == 0
    assert tab.evaluate(PAGE_PASSES_WITH_RECORDS, [unstaked, GOOD, KEY_HEX]) is True


def test_both_verifiers_fail_a_bundle_leaving_out_a_round_the_player_only_bet_in(
    tab: Any, tmp_path: Path
) -> None:
    """A round without a tie has a bet record and nothing else: it places the round in its
    pair's bundle as a decision does, or, recorded with no pair, is named as compared with
    nothing, in both verifiers."""
    sign_up(tab, "records-left-out")
    fairness_page(tab)
    left_out = {"round_id": 106, "seed_pair_id": 12, "nonce": 6, "game": "casino_war"}
    records = copy.deepcopy(RECORDS)
    records["bets"].append(left_out | {"rules": RECORDS["bets"][0]["rules"], "bet": 500})
    code, out = offline_report(tmp_path, records)
    assert code == 1
    assert (
        "bundle: records: round 106: the player played it on seed pair 12 (recorded), but the "
        "bundle holds no receipt for it"
    ) in out
    report = tab.evaluate(PAGE_REPORT_WITH_RECORDS, [records, GOOD, KEY_HEX])
    assert report["problems"] == [
        "round 106, which you played on seed pair #12, is missing from the bundle"
    ]

    records["bets"][-1]["seed_pair_id"] = None
    code, out = offline_report(tmp_path, records)
    assert code == 0 and "Not compared: round 106: you played it" in out
    report = tab.evaluate(PAGE_REPORT_WITH_RECORDS, [records, GOOD, KEY_HEX])
    assert report["problems"] == []
    assert report["notices"] == [UNPLACED_106]


def test_an_answer_holding_no_bundle_is_refused_by_the_page_naming_it(tab: Any) -> None:
    """As the offline verifier refuses a file holding an empty list (exit 2), the page
    verifies nothing in an answer that is not a bundle, and says so plainly."""
    sign_up(tab, "no-bundle")
    fairness_page(tab)
    said = tab.evaluate(
        "async answers => Promise.all(answers.map(async answer => { try {"
        " await window.SotaVerify.verifyBundle(answer, {trustedKey: null, records: null});"
        " return 'passed'; } catch (error) { return error.message; } }))",
        [[], [GOOD], None, "x"],
    )
    assert said[0] == "the answer is not a bundle: []"
    assert said[1].startswith('the answer is not a bundle: [{"') and said[1].endswith("…")
    assert said[2:] == ["the answer is not a bundle: null", 'the answer is not a bundle: "x"']


def test_both_verifiers_fail_a_log_naming_a_payout_or_a_count_as_true_or_false(
    tab: Any, tmp_path: Path
) -> None:
    """JSON's ``false`` is not ``0`` nor ``true`` ``1``, though Python's bool is an int: a log
    that names a lost round's payout ``false``, or a pair's one round ``true``, anchors no
    receipt or reveal, offline as on the page."""
    sign_up(tab, "json-types")
    fairness_page(tab)

    def as_bool(logged: Any) -> Any:
        forged = copy.deepcopy(logged)
        for _, entry in forged:
            for name in ("payout", "rounds"):
                if entry["data"].get(name) in (0, 1):
                    entry["data"][name] = bool(entry["data"][name])
        return forged

    forged = as_bool(bundles.logged_entries(GOOD))
    assert any(type(e["data"].get("payout")) is bool for _, e in forged)
    bundle = bundles.anchored(GOOD, PAIR.key, logged_as=as_bool)
    assert tab.evaluate(PAGE_PASSES, [[bundle], KEY_HEX]) == [False]
    assert "the log recorded payout false, the receipt says 0" in tab.evaluate(
        CHECK, [bundle, KEY_HEX]
    )
    assert not offline_passes(tmp_path, bundle)


def test_both_verifiers_fail_a_document_anchored_by_an_entry_the_log_refuses(
    tab: Any, tmp_path: Path
) -> None:
    """The casino signs a checkpoint over a tree whose leaf 0 is the pair's commitment entry
    logged with ``"seq": true`` (``true - 1`` is 0, the leaf its proof is of), or dated in
    another form: only a check of the whole log named it, and both verifiers passed the
    bundle. Its entry must be an audit entry as the log's own check has it, in both."""
    sign_up(tab, "unloggable")
    fairness_page(tab)
    forged = [
        bundles.anchored(GOOD, PAIR.key, logged_as=logged_with(field, value))
        for field, value in UNLOGGABLE
    ]
    assert tab.evaluate(PAGE_PASSES, [forged, KEY_HEX]) == [False] * len(forged)
    assert not any(offline_passes(tmp_path, bundle) for bundle in forged)
    # The page says why as the offline verifier does, in the log's own check's words.
    assert tab.evaluate(CHECK, [forged[0], KEY_HEX]) == (
        "the commitment: its anchor does not hold: the anchor's entry is not a whole audit "
        "entry: it has a seq that is not an integer"
    )


def browser_bytes(value: Any) -> bytes:
    """What a browser's ``JSON.stringify`` makes of ``value`` once its keys are sorted: the
    canonical text, but a lone surrogate written as the six characters ``\\udXXX``, where
    the scheme's canonical JSON has no bytes at all."""
    text = json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return text.encode("utf-8", "backslashreplace")


def lone_surrogate_forgeries(monkeypatch: pytest.MonkeyPatch) -> list[Any]:
    """GOOD forged twice with a lone surrogate where no check reads it: in a member of the
    commitment's entry, which is hashed, and in a member of a receipt, which is signed and
    hashed into its settlement entry; each signed and hashed over the bytes a browser writes."""
    with monkeypatch.context() as patched:
        patched.setattr(bundles, "canonical_json", browser_bytes)
        patched.setattr(
            anchors, "receipt_hash", lambda doc: hashlib.sha256(browser_bytes(doc)).hexdigest()
        )

        def odd_status(logged: bundles.Logged) -> bundles.Logged:
            return [
                (of, {**e, "data": {**e["data"], "status": "\ud800"}})
                if of["kind"] == "commitment"
                else (of, e)
                for of, e in logged
            ]

        in_entry = bundles.anchored(GOOD, PAIR.key, logged_as=odd_status)
        rounds = list(GOOD["rounds"])
        doc = {**rounds[2]["document"], "note": "\udc00"}
        rounds[2] = {"document": doc, "signature": PAIR.key.sign(browser_bytes(doc)).hex()}
        in_receipt = bundles.anchored({**GOOD, "rounds": rounds}, PAIR.key)
    return [in_entry, in_receipt]


#: As CHECK, the bundle sent as JSON text (a lone surrogate would not cross the pipe).
CHECK_TEXT = (
    "async ([text, key]) => (await window.SotaVerify.verifyBundle(JSON.parse(text), "
    "{trustedKey: key, records: null})).problems.join(' | ')"
)


def test_both_verifiers_fail_an_entry_or_a_document_holding_a_lone_surrogate(
    tab: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A lone surrogate has no UTF-8 bytes, so no canonical bytes: the offline verifier could
    neither hash the entry nor check the signature, while the page hashed and checked the six
    characters ``\\ud800`` that JSON.stringify writes for it, and passed the bundle a casino
    hashed and signed that way. Both refuse it now."""
    sign_up(tab, "lone-surrogate")
    fairness_page(tab)
    in_entry, in_receipt = lone_surrogate_forgeries(monkeypatch)
    assert not offline_passes(tmp_path, in_entry)
    assert not offline_passes(tmp_path, in_receipt)
    assert tab.evaluate(CHECK_TEXT, [json.dumps(in_entry), KEY_HEX]) == (
        "the commitment: its anchor does not hold: the entry's hash does not match its contents"
    )
    said = tab.evaluate(CHECK_TEXT, [json.dumps(in_receipt), KEY_HEX])
    assert "round 102 (nonce 2): signature failed" in said, said
    assert "round 102: the log recorded another receipt for this round" in said, said


def test_both_verifiers_fail_a_key_registration_not_yet_anchored_that_the_log_refuses(
    tab: Any, tmp_path: Path
) -> None:
    """A key registration served without its anchor (no checkpoint covers it yet) whose entry
    says ``"seq": true``, hashed so: no log holds such an entry, and the offline verifier failed
    it while the page waited for it. The page named no reason, where the offline verifier
    names what is malformed."""
    sign_up(tab, "unloggable-registration")
    fairness_page(tab)
    signing = bundles.bundle(ROUNDS, pair=SIGNING_PAIR, make_round=player_signed())
    bundle = _with_registration(signing, _registered_first)
    entry = {**bundle["player_keys"][0]["entry"], "seq": True}
    linked = audit_chain.linked_entry(entry["prev_hash"], entry)
    forged = {**bundle, "player_keys": [{"entry": linked}]}
    path = tmp_path / "bundle.json"
    assert offline_verdict(path, forged, SIGNING_KEY_HEX) == "fail"
    assert tab.evaluate(verdicts(PAGE_PASSES), [[forged], SIGNING_KEY_HEX]) == ["fail"]
    # Both say what is malformed, in the log's own check's words.
    said = "key registration #1 is not an audit entry: it has a seq that is not an integer"
    out = io.StringIO()
    main([str(path), "--public-key", SIGNING_KEY_HEX], out, io.StringIO())
    assert said in out.getvalue()
    assert said in tab.evaluate(CHECK, [forged, SIGNING_KEY_HEX]).split(" | ")
    # Pending within the bound of its time (the bundle's checkpoint is signed at 18:00:05).
    unanchored = registration_pending(REGISTERED_WITHIN)
    assert offline_verdict(path, unanchored, SIGNING_KEY_HEX) == "wait"
    assert tab.evaluate(verdicts(PAGE_PASSES), [[unanchored], SIGNING_KEY_HEX]) == ["wait"]


#: The pair's last round: the one that can be pending while the rest is anchored (the log takes
#: each bet before the next nonce's), with the reveal, which the log takes after every round.
LAST = GOOD["rounds"][5]["document"]  # settled 11:00:05.25: the bound ends at 12:00:05.25


def last_taken_out(checkpoint_at: str) -> Any:
    """:data:`GOOD` with its last round and its reveal taken out of the log, listed as pending."""
    return bundles.taken_out(GOOD, LAST["round_id"], checkpoint_at, reveal_too=True)


def test_both_verifiers_fail_a_round_left_out_of_the_log_past_the_bound_and_wait_within_it(
    tab: Any, tmp_path: Path
) -> None:
    """A round taken out of the log and served as pending: a checkpoint the trusted key signed
    past its settlement and the bound fails it on the page as offline (exit 1); one at the bound
    leaves it not yet anchored in both."""
    sign_up(tab, "left-out")
    fairness_page(tab)
    taken = LAST
    settled = taken["settled_at"]
    late = last_taken_out("2025-04-01T12:00:05.250001Z")
    size = late["checkpoints"][0]["document"]["size"]
    said = (
        f"settled at {settled}, not in the checkpoint signed at 2025-04-01T12:00:05.250001Z "
        f"(size {size}), past the bound of 1 hour: the round was left out of the log"
    )
    path = tmp_path / "late.json"
    path.write_text(json.dumps(late), encoding="utf-8")
    out = io.StringIO()
    assert main([str(path), "--public-key", KEY_HEX], out, io.StringIO()) == 1
    assert said in out.getvalue()
    assert tab.evaluate(CHECK, [late, KEY_HEX]) == f"round {taken['round_id']}: {said}"

    waiting = last_taken_out("2025-04-01T12:00:05.250000Z")
    path.write_text(json.dumps(waiting), encoding="utf-8")
    assert main([str(path), "--public-key", KEY_HEX, "-q"], io.StringIO(), io.StringIO()) == 4
    report = tab.evaluate(
        "async ([bundle, key]) => { const r = await window.SotaVerify.verifyBundle(bundle,"
        " {trustedKey: key, records: null}); return [r.problems, r.waiting]; }",
        [waiting, KEY_HEX],
    )
    assert report == [[], ["the reveal", f"round {taken['round_id']}"]]

    # The checkpoint past the bound, then the same tree signed again dated back within it: any
    # signed checkpoint of the bundle dates the bound, not the last one listed at its size.
    back = {**late["checkpoints"][0]["document"], "time": "2025-04-01T12:00:05.250000Z"}
    both = {**late, "checkpoints": [*late["checkpoints"], bundles.signed(bundles.KEY, back)]}
    path.write_text(json.dumps(both), encoding="utf-8")
    out = io.StringIO()
    assert main([str(path), "--public-key", KEY_HEX], out, io.StringIO()) == 1
    assert said in out.getvalue()
    # The service signs one checkpoint a size: the two are the casino's proof of a back-dating.
    root = back["root"]
    twins = (
        f"two signed checkpoints over {size} entries differ: root {root} at "
        f"2025-04-01T12:00:05.250001Z, root {root} at 2025-04-01T12:00:05.250000Z: one of them "
        "forks or back-dates the log"
    )
    assert twins in out.getvalue()
    shown = tab.evaluate(CHECK, [both, KEY_HEX]).replace("\u00a0", " ")  # a number keeps its word
    assert shown == f"{twins} | round {taken['round_id']}: {said}"


def test_both_verifiers_fail_a_document_pending_beside_an_entry_the_log_takes_after_it(
    tab: Any, tmp_path: Path
) -> None:
    """A signed checkpoint holds all the log took before its last entry: a document served as
    pending beside the anchor of one the log takes after it was left out of the log, however
    the casino dated it, on the page as offline."""
    sign_up(tab, "left-out-early")
    fairness_page(tab)
    within = "2025-04-01T11:00:10.000000Z"  # no checkpoint past any round's bound
    middle, after = (GOOD["rounds"][i]["document"]["round_id"] for i in (2, 3))
    beside_reveal = bundles.taken_out(GOOD, LAST["round_id"], within)
    beside_later_bet = bundles.taken_out(GOOD, middle, within)
    bet_pending = bundles.listed_pending(GOOD, anchors.bet_of(LAST["round_id"]))
    commitment_pending = bundles.listed_pending(GOOD, anchors.commitment_of(PAIR.seed_pair_id))
    reveal = bundles.leaf_of(beside_reveal, anchors.reveal_of(PAIR.seed_pair_id))
    later_bet = bundles.leaf_of(beside_later_bet, anchors.bet_of(after))
    settlement = bundles.leaf_of(bet_pending, anchors.settlement_of(LAST["round_id"]))
    cases = {
        "round beside the reveal": (
            beside_reveal,
            f"round {LAST['round_id']}: listed as pending, though the signed log holds the pair's "
            f"reveal at leaf {reveal}, which the log takes after every round: the round was left "
            "out of the log",
        ),
        "round beside a later bet": (
            beside_later_bet,
            f"round {middle}: listed as pending, though the signed log holds the bet of round "
            f"{after} (nonce 3) at leaf {later_bet}, which the log takes after this round's bet: "
            "the round was left out of the log",
        ),
        "bet beside its settlement": (
            bet_pending,
            f"round {LAST['round_id']}: its bet is listed as pending, though the signed log holds "
            f"its settlement at leaf {settlement}, which the log takes after the bet: the bet was "
            "left out of the log",
        ),
        "commitment beside the rounds": (
            commitment_pending,
            "the commitment is listed as pending, though the signed log holds an entry of round "
            f"{GOOD['rounds'][0]['document']['round_id']} at leaf 1, which the log takes after "
            "it: the commitment was left out of the log",
        ),
    }
    for name, (bundle, said) in cases.items():
        assert not offline_passes(tmp_path, bundle), name
        assert tab.evaluate(CHECK, [bundle, KEY_HEX]) == said, name
    assert offline_passes(tmp_path, GOOD) and tab.evaluate(PAGE_PASSES, [[GOOD], KEY_HEX])


def test_both_verifiers_fail_a_round_left_out_and_dated_past_their_clock(
    tab: Any, tmp_path: Path
) -> None:
    """The pair's last round and its reveal taken out of the log, the receipt signed again dated
    years ahead so that no checkpoint is ever past its bound: no casino can have settled it
    past the verifier's clock, on the page as offline."""
    sign_up(tab, "dated-ahead")
    fairness_page(tab)
    ahead = "2099-01-01T00:00:00.000000Z"
    dated = copy.deepcopy(GOOD)
    dated["rounds"][5] = bundles.resign(PAIR, dated["rounds"][5], settled_at=ahead)
    bundle = bundles.taken_out(
        dated, LAST["round_id"], "2025-04-01T11:00:10.000000Z", reveal_too=True
    )
    code, out = offline_says(tmp_path, bundle)
    assert code == 1 and f"(nonce 5): pair: settled at {ahead}, after the server seed" in out, out
    shown = tab.evaluate(CHECK, [bundle, KEY_HEX])
    # Dated after the reveal, it fails check 3 too, on the page as offline. The clock is
    # written as the offline verifier writes it, in the scheme's one time form (microseconds,
    # not the browser's milliseconds).
    assert re.fullmatch(
        rf"round {LAST['round_id']} \(nonce 5\): order failed \| "
        rf"round {LAST['round_id']}: settled at {re.escape(ahead)}, past this computer's clock "
        r"\(\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{6}Z\) and the bound of 1 hour: the receipt is "
        "dated ahead, which would keep a round left out of the log within the bound",
        shown,
    ), shown


#: The page's problems and what it waits for.
PAGE_PROBLEMS_AND_WAITING = (
    "async ([bundle, key]) => { const r = await window.SotaVerify.verifyBundle(bundle,"
    " {trustedKey: key, records: null}); return [r.problems, r.waiting]; }"
)


def offline_says(tmp_path: Path, bundle: Any) -> tuple[int, str]:
    """The offline verifier's exit code and output for ``bundle``."""
    path = tmp_path / "bundle.json"
    path.write_text(json.dumps(bundle), encoding="utf-8")
    out = io.StringIO()
    return main([str(path), "--public-key", KEY_HEX], out, io.StringIO()), out.getvalue()


#: A pair revealed without a round played: the log takes nothing of it between its commitment
#: (10:00, its bound ends at 11:00) and its reveal (18:00, its bound ends at 19:00).
UNPLAYED = bundles.bundle(0, pair=PAIR)
#: Each document of a pair left out of the log, with what the page verifies, and when its
#: bound ends: a commitment (the pair's reveal left out too, else its anchor would show the
#: commitment left out whatever its dates), a reveal.
PAIR_LEFT_OUT = (
    (UNPLAYED, ["commitment", "reveal"], "commitment", "created at", bundles.CREATED_AT, "11"),
    (GOOD, ["reveal"], "reveal", "revealed at", bundles.REVEALED_AT, "19"),
)


def test_both_verifiers_fail_a_commitment_or_a_reveal_left_out_of_the_log_past_the_bound(
    tab: Any, tmp_path: Path
) -> None:
    """A pair's commitment or reveal left out of the log and served as pending, nothing the log
    takes after it anchored: a checkpoint the trusted key signed past its ``created_at`` or
    ``revealed_at`` and the bound fails it on the page as offline (exit 1), named alike; one at
    the bound leaves it not yet anchored in both."""
    sign_up(tab, "pair-left-out")
    fairness_page(tab)
    for bundle, out_of_log, kind, said_at, dated_at, hour in PAIR_LEFT_OUT:
        late_at = f"2025-04-01T{hour}:00:00.000001Z"
        late = bundles.pair_documents_taken_out(bundle, out_of_log, late_at)
        size = late["checkpoints"][0]["document"]["size"]
        said = (
            f"{said_at} {dated_at}, not in the checkpoint signed at {late_at} (size {size}), "
            "past the bound of 1 hour: it was left out of the log"
        )
        code, out = offline_says(tmp_path, late)
        assert code == 1 and f"{kind} document: log: {said}" in out, out
        assert tab.evaluate(CHECK, [late, KEY_HEX]) == f"the {kind}: {said}"

        at_the_bound = f"2025-04-01T{hour}:00:00.000000Z"
        waiting = bundles.pair_documents_taken_out(bundle, out_of_log, at_the_bound)
        assert offline_says(tmp_path, waiting)[0] == 4
        assert tab.evaluate(PAGE_PROBLEMS_AND_WAITING, [waiting, KEY_HEX]) == [
            [],
            [f"the {kind}" for kind in out_of_log],
        ]


def test_both_verifiers_fail_a_commitment_or_a_reveal_left_out_and_dated_past_their_clock(
    tab: Any, tmp_path: Path
) -> None:
    """A commitment or a reveal left out of the log, signed again dated years ahead so that no
    checkpoint is ever past its bound: no casino can have made it past the verifier's clock,
    on the page as offline."""
    sign_up(tab, "pair-dated-ahead")
    fairness_page(tab)
    ahead = "2099-01-01T00:00:00.000000Z"
    clock = r"\(\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{6}Z\)"
    for bundle, out_of_log, kind, said_at, _, _ in PAIR_LEFT_OUT:
        field = said_at.replace(" ", "_")  # created_at, revealed_at
        dated = {**bundle, kind: bundles.resign(PAIR, bundle[kind], **{field: ahead})}
        forged = bundles.pair_documents_taken_out(dated, out_of_log, "2025-04-01T11:00:00.000000Z")
        said = (
            rf"{said_at} {re.escape(ahead)}, past this computer's clock {clock} and the bound of "
            f"1 hour: the {kind} is dated ahead, which would keep it left out of the log within "
            "the bound"
        )
        code, out = offline_says(tmp_path, forged)
        assert code == 1 and re.search(f"{kind} document: log: {said}", out), out
        shown = tab.evaluate(CHECK, [forged, KEY_HEX])
        # A commitment dated after its pair's reveal fails check 3 too, on the page as offline.
        revealed = bundle["reveal"]["document"]["revealed_at"]
        unordered = (
            f"the reveal is dated {re.escape(revealed)}, not after the commitment was signed "
            rf"\({re.escape(ahead)}\) \| "
            if kind == "commitment"
            else ""
        )
        if unordered:
            assert f"reveal document: pair: revealed at {revealed}, not after the commitment" in (
                out
            ), out
        assert re.fullmatch(f"{unordered}the {kind}: {said}", shown), shown


#: The page's problems and what it waits for, of a bundle it fetched at a time by its clock.
PAGE_FETCHED = (
    "async ([bundle, key, fetchedAt]) => { const r = await window.SotaVerify.verifyBundle(bundle,"
    " {trustedKey: key, records: null, fetchedAt}); return [r.problems, r.waiting]; }"
)


#: A reveal of :data:`GOOD` after its rounds and before 12:00:05.25, when their bound ends; and
#: one of :data:`UNPLAYED` before 11:00, when its commitment's ends: a bundle fetched past
#: either holds no reveal made later.
EARLY_REVEAL = "2025-04-01T11:30:00.000000Z"
EARLY_UNPLAYED_REVEAL = "2025-04-01T10:30:00.000000Z"


def test_both_verifiers_fail_a_document_still_pending_in_a_bundle_fetched_past_the_bound(
    tab: Any, tmp_path: Path
) -> None:
    """A casino that left a round, a commitment or a reveal out of the log and signs no more
    checkpoints (or serves only ones dated before the bound) keeps it "not yet anchored" by
    the checkpoints alone. The service signs a checkpoint over the whole log when a bundle is
    fetched, so one fetched past the document's time and the bound (by the verifier's own
    clock) that still lists it as pending shows it left out, on the page as offline, named
    alike; a checkpoint signed at the fetch dated back within the bound changes nothing. At the
    bound, and checked without the time it was fetched, it waits in both."""
    sign_up(tab, "fetched-late")
    fairness_page(tab)
    unplayed, revealed = PAIR_LEFT_OUT
    cases = (
        # The round's bound ends at 12:00:05.25; its checkpoint dated back within it. The pair
        # revealed within the bound of the fetch: a bundle fetched then holds no later reveal.
        (
            bundles.taken_out(
                {**GOOD, "reveal": bundles.resign(PAIR, GOOD["reveal"], revealed_at=EARLY_REVEAL)},
                LAST["round_id"],
                "2025-04-01T12:00:05.000000Z",
                reveal_too=True,
            ),
            "round",
            LAST["settled_at"],
            "12:00:05.25",
        ),
        (
            bundles.pair_documents_taken_out(
                {
                    **unplayed[0],
                    "reveal": bundles.resign(
                        PAIR, unplayed[0]["reveal"], revealed_at=EARLY_UNPLAYED_REVEAL
                    ),
                },
                unplayed[1],
                "2025-04-01T10:59:59.000000Z",
            ),
            "commitment",
            bundles.CREATED_AT,
            "11:00:00.00",
        ),
        (
            bundles.pair_documents_taken_out(
                revealed[0], revealed[1], "2025-04-01T18:59:59.000000Z"
            ),
            "reveal",
            bundles.REVEALED_AT,
            "19:00:00.00",
        ),
    )
    for bundle, kind, dated_at, bound_ends in cases:
        late = f"2025-04-01T{bound_ends}0001Z"
        said_at = {"round": "settled at", "commitment": "created at", "reveal": "revealed at"}
        left_out = "the round" if kind == "round" else "it"
        said = (
            f"{said_at[kind]} {dated_at}, still pending in the bundle fetched at {late} by this "
            "computer's clock, past the bound of 1 hour: the service signs a checkpoint over the "
            f"whole log when a bundle is fetched, so {left_out} was left out of the log, or the "
            "log's checkpoints were withheld"
        )
        path = tmp_path / "bundle.json"
        path.write_text(json.dumps(bundle), encoding="utf-8")
        out = io.StringIO()
        code = main([str(path), "--public-key", KEY_HEX, "--fetched-at", late], out, io.StringIO())
        where = f"round {LAST['round_id']} (nonce 5)" if kind == "round" else f"{kind} document"
        assert code == 1 and f"{where}: log: {said}" in out.getvalue(), out.getvalue()
        shown = tab.evaluate(PAGE_FETCHED, [bundle, KEY_HEX, late])
        named = f"round {LAST['round_id']}" if kind == "round" else f"the {kind}"
        assert shown[0] == [f"{named}: {said}"], shown

        at_the_bound = f"2025-04-01T{bound_ends}0000Z"
        code = main(
            [str(path), "--public-key", KEY_HEX, "--fetched-at", at_the_bound, "-q"],
            io.StringIO(),
            io.StringIO(),
        )
        assert code == 4, kind
        assert tab.evaluate(PAGE_FETCHED, [bundle, KEY_HEX, at_the_bound])[0] == [], kind
        # A file checked without the time it was fetched (years later, by the clock) waits.
        assert offline_verdict(path, bundle) == "wait", kind
        assert tab.evaluate(verdicts(PAGE_PASSES), [[bundle], KEY_HEX]) == ["wait"], kind


def test_both_verifiers_fail_a_document_still_pending_dated_past_the_fetch_time(
    tab: Any, tmp_path: Path
) -> None:
    """A round, a commitment or a reveal left out of the log, signed again dated 17 hours after
    the bundle was fetched (long before the verifier's clock): no bundle fetched then holds it,
    so it fails by the fetch time on the page as offline, named alike; dated within the bound
    of the fetch time, it waits in both."""
    sign_up(tab, "dated-past-the-fetch")
    fairness_page(tab)
    for kind, bundle, said in dated_past_the_fetch():
        path = tmp_path / "bundle.json"
        path.write_text(json.dumps(bundle), encoding="utf-8")
        out = io.StringIO()
        args = [str(path), "--public-key", KEY_HEX, "--fetched-at", FETCHED_AT]
        assert main(args, out, io.StringIO()) == 1 and said in out.getvalue(), out.getvalue()
        named = {"round": f"round {bundle['pending_anchors'][0]['of'].get('round_id')}"}
        shown = tab.evaluate(PAGE_FETCHED, [bundle, KEY_HEX, FETCHED_AT])
        assert f"{named.get(kind, f'the {kind}')}: {said}" in shown[0], shown
    for kind, bundle, _ in dated_past_the_fetch("2025-04-01T12:59:00.000000Z"):
        assert tab.evaluate(PAGE_FETCHED, [bundle, KEY_HEX, FETCHED_AT])[0] == [], kind


def test_both_verifiers_fail_a_key_registration_still_pending_past_its_bound(
    tab: Any, tmp_path: Path
) -> None:
    """A player's key registration no signed checkpoint covers is pending as a round is, and
    held to the same bound, from its entry's time: still pending in a bundle fetched past it,
    dated past the fetch time or the verifier's clock and the bound, or beside a checkpoint
    signed past its time and the bound, it was left out of the log, on the page as offline,
    named alike (both kept it pending for good). Within the bound it waits in both."""
    sign_up(tab, "registration-pending")
    fairness_page(tab)
    path = tmp_path / "bundle.json"
    for registered_at, fetched_at, reason in PAST_THE_BOUND:
        bundle = registration_pending(registered_at)
        path.write_text(json.dumps(bundle), encoding="utf-8")
        out = io.StringIO()
        fetched = ["--fetched-at", fetched_at] if fetched_at else []
        code = main([str(path), "--public-key", SIGNING_KEY_HEX, *fetched], out, io.StringIO())
        said = registration_named(registered_at, reason)
        assert code == 1 and f"bundle: player: {said}" in out.getvalue(), out.getvalue()
        problems, waiting = tab.evaluate(PAGE_FETCHED, [bundle, SIGNING_KEY_HEX, fetched_at])
        assert [p for p in problems if p.startswith(said)] and not waiting, (problems, waiting)
        if fetched_at:  # the same moment to both: word for word
            (line,) = [p for p in problems if p.startswith("key registration")]
            assert line in out.getvalue(), (line, out.getvalue())
    for registered_at, fetched_at in WITHIN_THE_BOUND:
        bundle = registration_pending(registered_at)
        path.write_text(json.dumps(bundle), encoding="utf-8")
        args = [str(path), "--public-key", SIGNING_KEY_HEX, "--fetched-at", fetched_at, "-q"]
        assert main(args, io.StringIO(), io.StringIO()) == 4, registered_at
        assert tab.evaluate(PAGE_FETCHED, [bundle, SIGNING_KEY_HEX, fetched_at]) == [
            [],
            [PENDING_NAMED],
        ], registered_at


@pytest.mark.parametrize(
    ("covered", "reason"),
    [
        (registration_unanchored, REGISTRATION_COVERED),
        (registration_pending_beside_a_later_one_anchored, COVERED_BY_A_LATER_ONE),
    ],
    ids=("by-the-bundles-checkpoint", "by-a-later-registrations-checkpoint"),
)
def test_both_verifiers_fail_a_key_registration_pending_though_a_checkpoint_covers_it(
    tab: Any, tmp_path: Path, covered: Callable[[str], dict[str, Any]], reason: str
) -> None:
    """A registration whose entry (its seq) a signed checkpoint the bundle carries covers is
    anchored in it by the service: listed as pending, it was left out of the log or had its
    anchor withheld, whatever its dates. Within the bound of each, both verifiers waited for it;
    and for one covered by the checkpoint a later registration's anchor carries, newer than the
    bundle's own, both counted only the bundle's."""
    sign_up(tab, "registration-covered")
    fairness_page(tab)
    path = tmp_path / "bundle.json"
    for registered_at, fetched_at in WITHIN_THE_BOUND:
        bundle = covered(registered_at)
        path.write_text(json.dumps(bundle), encoding="utf-8")
        out = io.StringIO()
        args = [str(path), "--public-key", SIGNING_KEY_HEX, "--fetched-at", fetched_at]
        assert main(args, out, io.StringIO()) == 1, out.getvalue()
        assert f"bundle: player: {reason}" in out.getvalue(), out.getvalue()
        problems, waiting = tab.evaluate(PAGE_FETCHED, [bundle, SIGNING_KEY_HEX, fetched_at])
        assert reason in problems and not waiting, (problems, waiting)


def test_both_verifiers_refuse_a_checkpoint_dated_in_another_form(tab: Any, tmp_path: Path) -> None:
    """A checkpoint signed with its time written otherwise than ``YYYY-MM-DDTHH:MM:SS.ffffffZ``
    dates nothing: past the bound, the page kept a round left out of the log "not yet anchored"
    under it while the offline verifier refused it. It is no checkpoint of the scheme in both."""
    sign_up(tab, "odd-time")
    fairness_page(tab)
    for time in ("2025-04-01T13:00:00Z", "2025-04-01T13:00:00.000000+00:00"):
        odd = last_taken_out(time)
        assert not offline_passes(tmp_path, odd)
        assert tab.evaluate(PAGE_PASSES, [[odd], KEY_HEX]) == [False]
        shown = tab.evaluate(CHECK, [odd, KEY_HEX])
        assert shown.startswith(
            "a checkpoint of the bundle is not a checkpoint document with a size, a root and a "
            "time written as YYYY-MM-DDTHH:MM:SS.ffffffZ | "
        ), shown


def test_both_verifiers_fail_a_checkpoint_dated_before_one_over_fewer_entries(
    tab: Any, tmp_path: Path
) -> None:
    """Of two checkpoints a bundle carries, the one over more entries dated before the one over
    fewer is the casino's own proof of a back-dating, on the page as offline, named alike."""
    sign_up(tab, "back-dated")
    fairness_page(tab)
    pending = last_taken_out("2025-04-01T11:50:00.000000Z")
    in_order = bundles.with_earlier_checkpoint(pending, 5, "2025-04-01T11:40:00.000000Z")
    assert tab.evaluate(CHECK, [in_order, KEY_HEX]) == ""
    back = bundles.with_earlier_checkpoint(pending, 5, "2025-04-01T11:55:00.000000Z")
    latest, smaller = (c["document"] for c in reversed(back["checkpoints"]))
    said = (
        f"the signed checkpoint of size {latest['size']} (root {latest['root']}) is dated "
        f"2025-04-01T11:50:00.000000Z, before the one of size 5 (root {smaller['root']}) at "
        "2025-04-01T11:55:00.000000Z, over fewer entries: one of them back-dates the log"
    )
    path = tmp_path / "back.json"
    path.write_text(json.dumps(back), encoding="utf-8")
    out = io.StringIO()
    assert main([str(path), "--public-key", KEY_HEX], out, io.StringIO()) == 1
    assert f"bundle: log: {said}" in out.getvalue()
    assert tab.evaluate(CHECK, [back, KEY_HEX]).replace("\u00a0", " ") == said


#: The page's verdict on a bundle as the casino's answer ``text``, read as the page reads it:
#: "passes", or the reason it refuses the answer or fails the bundle.
PAGE_READS = (
    "async ([text, key, read]) => { let bundle; try {"
    " bundle = read === 'browser' ? JSON.parse(text) : window.SotaJson.read(text); }"
    " catch (error) { return 'refused: ' + error.message; }"
    " const report = await window.SotaVerify.verifyBundle(bundle,"
    " {trustedKey: key, records: null});"
    " return report.problems.length || report.waiting.length ? report.problems.join(' | ')"
    " : 'passes'; }"
)


def written_as(bundle: Any, place: tuple[Any, ...], text: str) -> str:
    """``bundle`` as JSON text, with the value at ``place`` written ``text`` (``0.0``, ``1e0``):
    what a server, a proxy or another reader in between may make of a number."""
    marked = copy.deepcopy(bundle)
    holder = value_at(marked, place[:-1])
    holder[place[-1]] = "\x00written here\x00"
    return json.dumps(marked).replace('"\\u0000written here\\u0000"', text)


def both_verdicts(tab: Any, tmp_path: Path, text: str) -> tuple[str, str]:
    """What the offline verifier and the page say of the answer ``text``: "passes", or why it
    refuses the answer (both verifiers' words) or fails the bundle."""
    path = tmp_path / "answer.json"
    path.write_text(text, encoding="utf-8")
    out = io.StringIO()
    code = main([str(path), "--public-key", KEY_HEX, "-q"], out, io.StringIO())
    prefix = f"Unusable input {path}: "
    refusal = [line for line in out.getvalue().splitlines() if line.startswith(prefix)]
    offline = (
        "passes"
        if code == 0
        else f"refused: {refusal[0].removeprefix(prefix)}"
        if code == 2 and refusal
        else f"exit {code}"
    )
    return offline, tab.evaluate(PAGE_READS, [text, KEY_HEX, "page"])


def test_both_verifiers_refuse_a_signed_number_written_with_a_fraction_or_an_exponent(
    tab: Any, tmp_path: Path
) -> None:
    """A receipt signed over ``"nonce":0`` and served as ``0.0``: the browser's JSON reader
    takes it for 0 and the page passed it, while offline it was a float and failed. Both refuse
    the answer now, naming the number and its place alike; the same with ``1.0`` and ``1e0``."""
    sign_up(tab, "fractions")
    fairness_page(tab)
    for nonce, written in ((0, "0.0"), (1, "1.0"), (1, "1e0")):
        place = ("rounds", nonce, "document", "nonce")
        assert value_at(GOOD, place) == nonce
        text = written_as(GOOD, place, written)
        assert tab.evaluate(PAGE_READS, [text, KEY_HEX, "browser"]) == "passes"  # as it read
        said = (
            f"refused: a number is written {written} at rounds[{nonce}].document.nonce: the "
            "casino writes whole numbers only"
        )
        assert both_verdicts(tab, tmp_path, text) == (said, said)


def test_both_verifiers_refuse_a_signed_member_written_twice(tab: Any, tmp_path: Path) -> None:
    """A receipt, or a settlement entry, signed over its payout and served with another payout
    written before it: both readers keep the last value, the one signed, and passed it, where
    a reader keeping the first would read another payout from a bundle that verifies. Both
    refuse the answer now, naming the member and its place alike."""
    sign_up(tab, "members-twice")
    fairness_page(tab)
    settlement = next(i for i, a in enumerate(GOOD["anchors"]) if a["of"]["kind"] == "settlement")
    for place in (
        ("rounds", 2, "document", "payout"),
        ("anchors", settlement, "entry", "data", "payout"),
    ):
        payout = value_at(GOOD, place)
        text = written_as(GOOD, place, f'{payout + 1000}, "payout": {payout}')
        assert tab.evaluate(PAGE_READS, [text, KEY_HEX, "browser"]) == "passes"  # as it read
        where = "".join(f"[{step}]" if isinstance(step, int) else f".{step}" for step in place)
        said = (
            f"refused: a member is written twice at {where.lstrip('.')}: the casino writes each "
            "member of an object once, and readers differ in which they keep"
        )
        assert both_verdicts(tab, tmp_path, text) == (said, said)


def test_both_verifiers_refuse_a_signed_zero_written_with_a_minus_sign(
    tab: Any, tmp_path: Path
) -> None:
    """A receipt signed over ``"nonce":0`` and served as ``-0``, which canonical JSON never
    writes: both readers took it for 0 and passed it. Both refuse it now, naming it alike."""
    sign_up(tab, "minus-zero")
    fairness_page(tab)
    place = ("rounds", 0, "document", "nonce")
    assert value_at(GOOD, place) == 0
    text = written_as(GOOD, place, "-0")
    assert tab.evaluate(PAGE_READS, [text, KEY_HEX, "browser"]) == "passes"  # as it read
    said = (
        "refused: a number is written -0 at rounds[0].document.nonce: the casino writes zero "
        "without a minus sign"
    )
    assert both_verdicts(tab, tmp_path, text) == (said, said)


def test_both_verifiers_refuse_a_number_with_a_fraction_where_nothing_is_signed(
    tab: Any, tmp_path: Path
) -> None:
    """An anchor's ``checkpoint_size`` (signed nowhere) written ``27.0``, or with an exponent:
    the same refusal in both, for any place of the answer."""
    sign_up(tab, "unsigned-fractions")
    fairness_page(tab)
    place = ("anchors", 0, "checkpoint_size")
    size = value_at(GOOD, place)
    for written in (f"{size}.0", f"{size}e0", f"{size}.5"):
        said = (
            f"refused: a number is written {written} at anchors[0].checkpoint_size: the casino "
            "writes whole numbers only"
        )
        assert both_verdicts(tab, tmp_path, written_as(GOOD, place, written)) == (said, said)
    assert both_verdicts(tab, tmp_path, json.dumps(GOOD)) == ("passes", "passes")


def test_both_verifiers_read_ids_up_to_2_53_less_1_exactly_and_refuse_larger_ones(
    tab: Any, tmp_path: Path
) -> None:
    """A browser reads integers exactly up to 2^53 - 1 only: a bundle whose pair and player ids
    are that large, signed by the casino, passes both verifiers, and one with an id changed
    after signing fails both. A larger id, which a browser would round (and no document of the
    casino holds), is refused by both, naming it, signed or not."""
    sign_up(tab, "large-ids")
    fairness_page(tab)
    largest = 2**53 - 1
    large = bundles.Pair(seed_pair_id=largest, user_id=largest - 1)
    signed = bundles.bundle(4, pair=large)
    assert both_verdicts(tab, tmp_path, json.dumps(signed)) == ("passes", "passes")

    tampered = copy.deepcopy(signed)
    tampered["commitment"]["document"]["user_id"] = largest - 3  # the signature is over - 1
    offline, page = both_verdicts(tab, tmp_path, json.dumps(tampered))
    assert offline == "exit 1" and "the commitment's signature is not valid" in page, page

    for beyond in (2**53, 2**53 + 1, 2**63 - 1):
        too_large = bundles.bundle(4, pair=bundles.Pair(seed_pair_id=beyond))
        said = (
            f"refused: a number is written {beyond} at commitment.document.seed_pair_id: the "
            "casino writes none beyond 2^53 - 1, past which a browser reads them inexactly"
        )
        assert both_verdicts(tab, tmp_path, json.dumps(too_large)) == (said, said)


def test_both_verifiers_fail_a_receipt_or_reveal_not_of_its_pair_or_dated_out_of_order(
    tab: Any, tmp_path: Path
) -> None:
    """Check 3 (``pair``): every receipt is settled after the commitment was signed and not
    after the reveal, and the reveal is the committed pair's, of the same player, dated after
    the commitment; each re-signed and logged so from the start. The page held a receipt only
    to ``created_at <= settled_at``, and the reveal to nothing of this."""
    sign_up(tab, "dated-receipts")
    fairness_page(tab)
    pair_doc, reveal_doc = GOOD["commitment"]["document"], GOOD["reveal"]["document"]
    just_after = reveal_doc["revealed_at"].replace(":00.000000Z", ":00.000001Z")
    assert just_after > reveal_doc["revealed_at"]
    for settled_at in (pair_doc["created_at"], just_after):
        forged = copy.deepcopy(GOOD)
        forged["rounds"][1] = bundles.resign(PAIR, forged["rounds"][1], settled_at=settled_at)
        forged = bundles.anchored(forged, PAIR.key)
        assert not offline_passes(tmp_path, forged), settled_at
        assert tab.evaluate(PAGE_PASSES, [[forged], KEY_HEX]) == [False], settled_at
    at_the_reveal = copy.deepcopy(GOOD)
    at_the_reveal["rounds"][1] = bundles.resign(
        PAIR, at_the_reveal["rounds"][1], settled_at=reveal_doc["revealed_at"]
    )
    at_the_reveal = bundles.anchored(at_the_reveal, PAIR.key)
    assert offline_passes(tmp_path, at_the_reveal)
    assert tab.evaluate(PAGE_PASSES, [[at_the_reveal], KEY_HEX]) == [True]
    # The reveal of another seed pair or player than the commitment's, with every receipt of
    # that pair or not.
    for changes, receipts_too in (({"user_id": 8}, False), ({"seed_pair_id": 13}, True)):
        forged = copy.deepcopy(GOOD)
        forged["reveal"] = bundles.resign(PAIR, forged["reveal"], **changes)
        if receipts_too:
            forged["rounds"] = [bundles.resign(PAIR, r, **changes) for r in forged["rounds"]]
        forged = bundles.anchored(forged, PAIR.key)
        assert not offline_passes(tmp_path, forged), changes
        pair_id, user_id = changes.get("seed_pair_id", 12), changes.get("user_id", 7)
        assert (
            f"the reveal is of seed pair {pair_id} of player {user_id}, not of the committed "
            "seed pair 12 of player 7"
        ) in tab.evaluate(CHECK, [forged, KEY_HEX]), changes
    # A pair revealed with no round: only the reveal's own date is left to hold.
    unplayed = bundles.bundle(0, pair=PAIR)
    unplayed["reveal"] = bundles.resign(
        PAIR, unplayed["reveal"], revealed_at=pair_doc["created_at"]
    )
    unplayed = bundles.anchored(unplayed, PAIR.key)
    assert not offline_passes(tmp_path, unplayed)
    assert tab.evaluate(CHECK, [unplayed, KEY_HEX]) == (
        f"the reveal is dated {pair_doc['created_at']}, not after the commitment was signed "
        f"({pair_doc['created_at']})"
    )


def test_both_verifiers_fail_a_receipt_dated_at_a_moment_that_never_was(
    tab: Any, tmp_path: Path
) -> None:
    """docs/fairness.md: a time of the scheme names a real instant, so a ``settled_at`` of the
    form that names none (a minute 60, an hour 24, a 30 February) dates nothing and fails the
    receipt's ``pair`` check, though as text it lies between the commitment and the reveal.
    The page held the receipt's dates to the form alone, and passed it."""
    sign_up(tab, "never-dated")
    fairness_page(tab)
    day = GOOD["commitment"]["document"]["created_at"][:10]
    assert GOOD["reveal"]["document"]["revealed_at"][:10] == day
    for settled_at in (f"{day}T11:60:00.000000Z", f"{day}T10:00:61.000000Z"):
        forged = copy.deepcopy(GOOD)
        forged["rounds"][1] = bundles.resign(PAIR, forged["rounds"][1], settled_at=settled_at)
        forged = bundles.anchored(forged, PAIR.key)
        assert not offline_passes(tmp_path, forged), settled_at
        assert tab.evaluate(PAGE_PASSES, [[forged], KEY_HEX]) == [False], settled_at


def test_both_verifiers_pass_or_fail_each_one_value_change_of_a_re_signed_document(
    tab: Any, tmp_path: Path
) -> None:
    """The casino holds the key: each one-value change of the commitment, the reveal or a
    receipt (a war, a surrender, a plain round), signed again and logged so from the start,
    passes the page exactly when it passes the offline verifier. Unsigned, the changes of the
    test above fail both on the signature alone; signed again, the page held none of a
    document's type and version, a Casino War receipt's net, stakes and rules, a Sota
    receipt's stakes, or the scheme's time form, which the offline verifier holds."""
    sign_up(tab, "re-signed")
    fairness_page(tab)
    cases = []
    for target in (("commitment",), ("reveal",), ("rounds", 0), ("rounds", 1), ("rounds", 3)):
        document = value_at(GOOD, (*target, "document"))
        for place in places(document):
            forged = copy.deepcopy(GOOD)
            holder = value_at(forged, (*target, "document", *place[:-1]))
            holder[place[-1]] = changed(holder[place[-1]])
            envelope = value_at(forged, target)
            envelope["signature"] = PAIR.sign(envelope["document"])["signature"]
            cases.append(((*target, *place), bundles.anchored(forged, PAIR.key)))
    disagree = page_disagreements(
        tab, cases, KEY_HEX, lambda bundle: offline_passes(tmp_path, bundle)
    )
    assert len(cases) > 100 and disagree == []
    # A Sota receipt's stakes, signed again: {stake}, a positive whole number of sweets.
    sota_bundle = bundles.bundle(1, pair=PAIR, make_round=bundles.sota_receipt)
    for stakes in ("x", {"stake": 0}, {"stake": 3, "bet": 3}, [3]):
        forged = copy.deepcopy(sota_bundle)
        forged["rounds"][0] = bundles.resign(PAIR, forged["rounds"][0], stakes=stakes)
        forged = bundles.anchored(forged, PAIR.key)
        assert not offline_passes(tmp_path, forged), stakes
        assert tab.evaluate(PAGE_PASSES, [[forged], KEY_HEX]) == [False], stakes
    assert tab.evaluate(PAGE_PASSES, [[sota_bundle], KEY_HEX]) == [True]


def test_both_verifiers_fail_a_sota_receipt_signed_without_one_of_its_rules(
    tab: Any, tmp_path: Path
) -> None:
    """A Sota receipt lists every rule option, defaults included (check 6): signed again
    without one, the game replays the same under its default, and the page passed it while
    the offline verifier failed it."""
    sign_up(tab, "sota-rule-left-out")
    fairness_page(tab)
    sota_bundle = bundles.bundle(1, pair=PAIR, make_round=bundles.sota_receipt)
    assert tab.evaluate(PAGE_PASSES, [[sota_bundle], KEY_HEX]) == [True]
    rules = sota_bundle["rounds"][0]["document"]["rules"]
    forged = []
    for name in ("teams", "lead", "deck"):
        without = copy.deepcopy(sota_bundle)
        left = {option: value for option, value in rules.items() if option != name}
        without["rounds"][0] = bundles.resign(PAIR, without["rounds"][0], rules=left)
        forged.append(bundles.anchored(without, PAIR.key))
    assert not any(offline_passes(tmp_path, bundle) for bundle in forged)
    assert tab.evaluate(PAGE_PASSES, [forged, KEY_HEX]) == [False] * len(forged)


#: The page's problems and the records check of each round with ``records`` as this browser's
#: own, under ``key``.
PAGE_RECORDS_CHECK = PAGE_REPORT_WITH_RECORDS.replace(
    "return {problems: report.problems, notices: report.notices}; }",
    "return {problems: report.problems, records: report.rounds.map(r => r.checks.records)}; }",
)


def sota_lead_written_off() -> tuple[Any, Any]:
    """A one-game Sota bundle as the service signs it (``lead`` off written ``null``), and the
    same game signed again with ``"lead": "off"``, logged so from the start."""
    honest = bundles.bundle(1, pair=PAIR, make_round=bundles.sota_receipt)
    rules = honest["rounds"][0]["document"]["rules"]
    assert rules["lead"] is None
    forged = copy.deepcopy(honest)
    forged["rounds"][0] = bundles.resign(PAIR, forged["rounds"][0], rules={**rules, "lead": "off"})
    return honest, bundles.anchored(forged, PAIR.key)


def test_both_verifiers_fail_a_sota_receipt_writing_lead_off_as_the_word_off(
    tab: Any, tmp_path: Path
) -> None:
    """A request may say ``"lead": "off"``; a signed document never does, it writes ``null``
    (check 6): both verifiers read the word as the rule being off, so a receipt signed so
    passed both, though no service signs it and a reader may take ``"off"`` otherwise."""
    sign_up(tab, "sota-lead-off")
    fairness_page(tab)
    honest, forged = sota_lead_written_off()
    assert offline_passes(tmp_path, honest)
    assert tab.evaluate(PAGE_PASSES, [[honest], KEY_HEX]) == [True]
    assert not offline_passes(tmp_path, forged)
    assert tab.evaluate(CHECK, [forged, KEY_HEX]) == (
        "round 100 (nonce 0): outcome failed (the rules are not written as a signed document "
        'writes them: lead is "off", the service signs it as null)'
    )


def test_both_verifiers_compare_a_sota_bet_recorded_with_lead_off_alike(
    tab: Any, tmp_path: Path
) -> None:
    """A bet sent with ``"lead": "off"`` (as a request may say it), with ``null``, or by a
    preset, is recorded so: each reads the rule as off, and both verifiers' records check
    passes the receipt that writes it ``null`` and fails the one that writes ``"off"``."""
    sign_up(tab, "sota-lead-off-records")
    fairness_page(tab)
    honest, forged = sota_lead_written_off()
    bet = {"round_id": 100, "seed_pair_id": 12, "nonce": 0, "game": "sota"}
    sent = [{"rules": {"lead": "off"}}, {"rules": {"lead": None}}, {"preset": "nordic"}]
    for agreed in sent:
        records = {**RECORDS, "commitments": [honest["commitment"]], "actions": []}
        records |= {"rotations": [], "bets": [bet | agreed]}
        said = {}
        for name, bundle in (("honest", honest), ("forged", forged)):
            (tmp_path / "r.json").write_text(json.dumps(records), encoding="utf-8")
            (tmp_path / "b.json").write_text(json.dumps(bundle), encoding="utf-8")
            out = io.StringIO()
            args = [str(tmp_path / "b.json"), "--records", str(tmp_path / "r.json")]
            main([*args, "--public-key", KEY_HEX], out, io.StringIO())
            offline = "records: the receipt's rules differ" not in out.getvalue()
            page = tab.evaluate(PAGE_RECORDS_CHECK, [records, bundle, KEY_HEX])
            said[name] = (offline, page["records"])
        assert said == {"honest": (True, [True]), "forged": (False, [False])}, agreed


def twins(value: Any) -> list[Any]:
    """The values of another JSON type that a loose comparison takes for ``value``: Python's
    ``True == 1``, JavaScript's property names, which make ``"16"`` and ``[16]`` the key
    ``16`` is."""
    if isinstance(value, bool):
        return [int(value)]
    if isinstance(value, int):
        return [str(value), [value], *([bool(value)] if value in (0, 1) else [])]
    return []


def test_both_verifiers_pass_or_fail_each_value_written_as_another_json_type(
    tab: Any, tmp_path: Path
) -> None:
    """Each number or flag of a bundle written as another JSON type that stands for it in a
    loose comparison (``true`` for ``1``, ``"16"`` or ``[16]`` for ``16``): the page passes it
    exactly when the offline verifier does. Python's ``==`` takes ``true`` for ``1``, and a
    JavaScript object's key ``"16"`` for ``16``: a check loose in one verifier only passed in
    it what the other failed."""
    sign_up(tab, "json-twins")
    fairness_page(tab)
    cases = [(place, odd) for place in places(GOOD) for odd in twins(value_at(GOOD, place))]
    changes = [[list(place), False, odd] for place, odd in cases]
    page = tab.evaluate(PAGE_PASSES_CHANGED, [GOOD, KEY_HEX, changes])
    disagree = [
        (place, odd, said)
        for (place, odd), said in zip(cases, page, strict=True)
        if said != offline_passes(tmp_path, with_odd(GOOD, place, odd))
    ]
    assert len(cases) > 200 and disagree == []


def test_both_verifiers_pass_or_fail_each_value_signed_or_logged_as_another_json_type(
    tab: Any, tmp_path: Path
) -> None:
    """As above, the casino holding the key: each number or flag of a checkpoint, the
    commitment, the reveal or a receipt written as another JSON type and signed again, and
    each of the log's entries so written and logged from the start, passes the page exactly
    when it passes the offline verifier. A checkpoint signed with ``"v": true``, or a Sota
    receipt whose trick log says ``"wars": false``, passed offline (Python's ``True == 1``)
    and failed the page."""
    sign_up(tab, "json-twins-signed")
    fairness_page(tab)
    cases = []
    for target in (("checkpoints", 0), ("commitment",), ("reveal",), ("rounds", 1)):
        document = value_at(GOOD, (*target, "document"))
        for place in places(document):
            for odd in twins(value_at(document, place)):
                forged = copy.deepcopy(GOOD)
                holder = value_at(forged, (*target, "document", *place[:-1]))
                holder[place[-1]] = odd
                envelope = value_at(forged, target)
                envelope["signature"] = PAIR.sign(envelope["document"])["signature"]
                if target[0] != "checkpoints":  # logged as signed, from the start
                    forged = bundles.anchored(forged, PAIR.key)
                cases.append(((*target, *place, odd), forged))
    sota_bundle = bundles.bundle(1, pair=PAIR, make_round=bundles.sota_receipt)
    receipt = sota_bundle["rounds"][0]["document"]
    for place in places(receipt):
        if place[:2] == ("outcome", "tricks") and len(place) > 2 and place[2] > 1:
            continue  # the first two tricks stand for the rest
        for odd in twins(value_at(receipt, place)):
            forged = copy.deepcopy(sota_bundle)
            holder = value_at(forged, ("rounds", 0, "document", *place[:-1]))
            holder[place[-1]] = odd
            forged["rounds"][0] = PAIR.sign(forged["rounds"][0]["document"])
            cases.append((("sota", *place, odd), bundles.anchored(forged, PAIR.key)))
    logged = bundles.logged_entries(GOOD)
    for position, (_, entry) in enumerate(logged):
        for place in places(entry):
            for odd in twins(value_at(entry, place)):

                def logged_so(
                    log: Any, position: int = position, place: Any = place, odd: Any = odd
                ) -> Any:
                    return with_odd(log, (position, 1, *place), odd)

                bundle = bundles.anchored(GOOD, PAIR.key, logged_as=logged_so)
                cases.append((("log", position, *place, odd), bundle))
    disagree = page_disagreements(
        tab, cases, KEY_HEX, lambda bundle: offline_passes(tmp_path, bundle)
    )
    assert len(cases) > 100 and disagree == []


def verdicts(script: str) -> str:
    """``script`` (:data:`PAGE_PASSES` or :data:`PAGE_PASSES_CHANGED`) saying "fail" for a
    problem (or a throw), "wait" for documents the log does not prove yet, else "pass"."""
    said = script.replace(
        "return report.problems.length === 0 && report.waiting.length === 0; }"
        " catch (error) { return false; }",
        "return report.problems.length ? 'fail' : report.waiting.length ? 'wait' : 'pass'; }"
        " catch (error) { return 'fail'; }",
    )
    assert said != script
    return said


#: The page's verdicts on changes of a bundle, as :data:`PAGE_PASSES_CHANGED`.
PAGE_VERDICTS_CHANGED = verdicts(PAGE_PASSES_CHANGED)
#: The offline verifier's verdicts by its exit code.
OFFLINE_VERDICTS = {0: "pass", 1: "fail", 4: "wait"}


def offline_verdict(path: Path, bundle: Any, key_hex: str = KEY_HEX) -> str:
    """The offline verifier's verdict on ``bundle`` (written to ``path``) trusting ``key_hex``:
    "pass", "fail", "wait", or its exit code."""
    path.write_text(json.dumps(bundle), encoding="utf-8")
    code = main([str(path), "--public-key", key_hex, "-q"], io.StringIO(), io.StringIO())
    return OFFLINE_VERDICTS.get(code, str(code))


def test_both_verifiers_wait_or_fail_alike_for_each_pending_value_of_another_json_type(
    tab: Any, tmp_path: Path
) -> None:
    """A bundle whose last round and reveal are pending within the bound, each number of its
    pending list and anchors written as another JSON type: the page fails it, waits for it or
    passes it as the offline verifier does. A round pending under ``"105"`` is not round
    105, so it carries no anchor and fails."""
    sign_up(tab, "json-twins-pending")
    fairness_page(tab)
    waiting = last_taken_out("2025-04-01T12:00:05.250000Z")
    listed = waiting["pending_anchors"]
    cases = [
        (place, odd)
        for place in places({"pending_anchors": listed})
        for odd in twins(value_at(waiting, place))
    ]
    # The round's bet and settlement pend as one place: both named so name another round.
    for odd in twins(LAST["round_id"]):
        renamed = [
            {**item, "of": {**item["of"], "round_id": odd}} if "round_id" in item["of"] else item
            for item in listed
        ]
        cases.append((("pending_anchors",), renamed))
    changes = [[list(place), False, odd] for place, odd in [((), None), *cases]]
    changes[0] = [["public_key_hex"], False, waiting["public_key_hex"]]  # the bundle as it is
    page = tab.evaluate(PAGE_VERDICTS_CHANGED, [waiting, KEY_HEX, changes])
    path = tmp_path / "bundle.json"

    def offline(bundle: Any) -> str:
        return offline_verdict(path, bundle)

    assert page[0] == offline(waiting) == "wait"
    disagree = [
        (place, odd, said)
        for (place, odd), said in zip(cases, page[1:], strict=True)
        if said != offline(with_odd(waiting, place, odd))
    ]
    assert len(cases) > 5 and disagree == []
    assert "fail" in page[1:]


def test_both_verifiers_read_each_recorded_value_of_another_json_type_alike(
    tab: Any, tmp_path: Path
) -> None:
    """The records a player kept, each number or flag written as another JSON type (``"12"``
    for the pair 12, ``true`` for the nonce 1): the page's records check and the offline
    verifier's pass the bundle exactly together (a records file the verifier cannot read left
    out, as above)."""
    sign_up(tab, "records-twins")
    fairness_page(tab)

    def offline(records: Any) -> int:
        return offline_report(tmp_path, records)[0]

    lists = ("commitments", "actions", "rotations", "bets")
    cases = [
        (place, with_odd(RECORDS, place, odd))
        for place in places({name: RECORDS[name] for name in lists})
        for odd in twins(value_at(RECORDS, place))
    ]
    page = tab.evaluate(
        PAGE_PASSES_WITH_EACH_RECORDS, [[records for _, records in cases], GOOD, KEY_HEX]
    )
    codes = [offline(records) for _, records in cases]
    disagree = [
        (place, code, said)
        for (place, _), code, said in zip(cases, codes, page, strict=True)
        if code != 2 and said != (code == 0)
    ]
    assert len(cases) > 50 and disagree == []
    assert codes.count(2) < len(codes)  # some are read, and compared


def test_both_verifiers_pass_or_fail_each_player_key_value_of_another_json_type(
    tab: Any, tmp_path: Path
) -> None:
    """A bundle whose player registered a key before playing and signed every bet and
    decision: each number or flag of its key registration and of a receipt's signed actions
    and bet written as another JSON type (the receipt signed again and logged so from the
    start) passes the page exactly when it passes the offline verifier."""
    sign_up(tab, "json-twins-player")
    fairness_page(tab)
    honest = _with_registration(
        bundles.bundle(ROUNDS, pair=SIGNING_PAIR, make_round=player_signed()), _registered_first
    )
    cases = [
        (place, with_odd(honest, place, odd))
        for place in places({"player_keys": honest["player_keys"]})
        for odd in twins(value_at(honest, place))
    ]
    unsigned = bundles.bundle(ROUNDS, pair=SIGNING_PAIR, make_round=player_signed())
    for nonce in (1, 2):  # a war, signed, and a plain round: a signed bet alone
        receipt = unsigned["rounds"][nonce]["document"]
        for name in ("signed_actions", "signed_bet"):
            for place in places({name: receipt[name]} if name in receipt else {}):
                for odd in twins(value_at(receipt, place)):
                    forged = copy.deepcopy(unsigned)
                    doc = with_odd(receipt, place, odd)
                    forged["rounds"][nonce] = SIGNING_PAIR.sign(doc)
                    bundle = _with_registration(forged, _registered_first)
                    cases.append(((nonce, *place, odd), bundle))

    def offline(bundle: Any) -> bool:
        return offline_passes(tmp_path, bundle, SIGNING_KEY_HEX)

    assert offline(honest) and tab.evaluate(PAGE_PASSES, [[honest], SIGNING_KEY_HEX]) == [True]
    disagree = page_disagreements(tab, cases, SIGNING_KEY_HEX, offline)
    assert len(cases) > 20 and disagree == []


def test_both_verifiers_pass_or_fail_each_key_change_value_of_another_json_type(
    tab: Any, tmp_path: Path
) -> None:
    """A bundle signed by a key a logged key change handed the service on to, checked trusting
    the key it retired: each number or flag of the change's entry, anchor and checkpoint
    written as another JSON type, and the change signed again by the retired key with its
    ``v`` so written and logged so, passes the page exactly when it passes the offline
    verifier."""
    sign_up(tab, "json-twins-key-change")
    fairness_page(tab)
    old_hex = public_key_hex(OLD_KEY)
    honest = bundles.anchored(CHANGED_GOOD, CHANGED_PAIR.key, key_changes=[INTO_PAIR_KEY])

    def offline(bundle: Any) -> bool:
        return offline_passes(tmp_path, bundle, old_hex)

    assert offline(honest) and tab.evaluate(PAGE_PASSES, [[honest], old_hex]) == [True]
    cases = [
        (place, odd)
        for place in places({"key_changes": honest["key_changes"]})
        for odd in twins(value_at(honest, place))
    ]
    page = tab.evaluate(
        PAGE_PASSES_CHANGED, [honest, old_hex, [[list(p), False, odd] for p, odd in cases]]
    )
    disagree = [
        (place, odd, said)
        for (place, odd), said in zip(cases, page, strict=True)
        if said != offline(with_odd(honest, place, odd))
    ]
    for odd in twins(1):
        change = signed(OLD_KEY, {**INTO_PAIR_KEY["document"], "v": odd})
        bundle = bundles.anchored(CHANGED_GOOD, CHANGED_PAIR.key, key_changes=[change])
        [said] = tab.evaluate(PAGE_PASSES, [[bundle], old_hex])
        if said != offline(bundle):
            disagree.append((("document", "v"), odd, said))
    assert len(cases) > 10 and disagree == []


def first_items(document: Any) -> list[tuple[Any, ...]]:
    """:func:`places` of ``document`` but those past the second item of a list: the first two
    stand for the rest (a Sota game's tricks and moves run to hundreds)."""
    return [
        place for place in places(document) if all(type(step) is str or step < 2 for step in place)
    ]


def dropped(document: Any, place: tuple[Any, ...]) -> Any:
    """``document`` without the field (or list item) at ``place``."""
    return with_odd(document, place, GONE)


def re_signed_without(
    bundle: Any, target: tuple[Any, ...], place: tuple[Any, ...], key: Any
) -> Any:
    """``bundle`` with the signed document at ``target`` without its field at ``place``, signed
    again by ``key``."""
    forged = copy.deepcopy(bundle)
    envelope = value_at(forged, target)
    envelope.update(signed(key, dropped(envelope["document"], place)))
    return forged


def logged_without(
    place: tuple[Any, ...], logged_as: Callable[[Any], Any] = lambda log: log
) -> Callable[[Any], Any]:
    """What :func:`bundles.anchored` logs instead: ``logged_as``'s log without the field at
    ``place`` (``(position, 1, *place in the entry)``)."""
    return lambda log: dropped(logged_as(log), place)


def test_both_verifiers_pass_wait_or_fail_alike_for_each_signed_or_logged_field_dropped(
    tab: Any, tmp_path: Path
) -> None:
    """The casino holds the key and the database: each field (and list item) at any depth of a
    checkpoint (the bundle's, a key registration's, a key change's), the commitment, the reveal,
    a receipt (a war, a surrender, a plain round, a Prisoners of War game), a player's signed
    bet and actions, a key change, dropped and signed again; of each of the log's entries (a key
    registration's too) dropped and logged so from the start; and of a pending document's
    listing, a key registration's and a key change's anchor dropped. The page passes, waits for
    or fails each exactly as the offline verifier does (docs/fairness.md, "Fields both
    verifiers miss alike", says which pass). A Sota receipt signed without one of its rules
    passed the page and failed offline."""
    sign_up(tab, "dropped")
    fairness_page(tab)
    path = tmp_path / "bundle.json"
    cases: list[tuple[Any, Any]] = []
    sota_moves = bundles.bundle(
        1, pair=PAIR, make_round=lambda pair, n: bundles.sota_moves_receipt(pair, n, PRISONERS)
    )
    targets = [
        (GOOD, ("checkpoints", 0)),
        (GOOD, ("commitment",)),
        (GOOD, ("reveal",)),
        *((GOOD, ("rounds", n)) for n in (0, 1, 3)),
        (sota_moves, ("rounds", 0)),
    ]
    for bundle, target in targets:
        for place in first_items(value_at(bundle, (*target, "document"))):
            forged = re_signed_without(bundle, target, place, PAIR.key)
            if target[0] != "checkpoints":  # logged as signed, from the start
                forged = bundles.anchored(forged, PAIR.key)
            cases.append(((*target, *place), forged))
    # An entry left without one of its fields is hashed without it (its seq is the log's).
    for bundle in (GOOD, sota_moves):
        for position, (_, entry) in enumerate(bundles.logged_entries(bundle)[:8]):
            for place in first_items(entry):
                logged_as = logged_without((position, 1, *place))
                forged = bundles.anchored(bundle, PAIR.key, logged_as=logged_as)
                cases.append((("log", position, *place), forged))
    waiting = last_taken_out("2025-04-01T12:00:05.250000Z")
    cases += [
        (place, dropped(waiting, place))
        for place in places({"pending_anchors": waiting["pending_anchors"]})
    ]
    disagree = page_disagreements(
        tab, cases, KEY_HEX, lambda bundle: offline_verdict(path, bundle), verdicts(PAGE_PASSES)
    )

    signing = bundles.bundle(ROUNDS, pair=SIGNING_PAIR, make_round=player_signed())
    honest = _with_registration(signing, _registered_first)
    player_cases = [
        (place, dropped(honest, place)) for place in places({"player_keys": honest["player_keys"]})
    ]
    checkpoint = ("player_keys", 0, "checkpoint")
    for place in places(value_at(honest, (*checkpoint, "document"))):
        resigned = re_signed_without(honest, checkpoint, place, SIGNING_PAIR.key)
        player_cases.append(((*checkpoint, *place), resigned))
    registration = _registered_first(bundles.logged_entries(signing))[1][1]
    for place in places(registration):
        logged_as = logged_without((1, 1, *place), _registered_first)
        player_cases.append((("registration", *place), _with_registration(signing, logged_as)))
    for nonce in (1, 2):  # a war, its decision signed, and a plain round: a signed bet alone
        receipt = signing["rounds"][nonce]["document"]
        for name in ("signed_actions", "signed_bet"):
            for place in places({name: receipt[name]} if name in receipt else {}):
                forged = re_signed_without(signing, ("rounds", nonce), place, SIGNING_PAIR.key)
                player_cases.append(
                    ((nonce, *place), _with_registration(forged, _registered_first))
                )
    disagree += page_disagreements(
        tab,
        player_cases,
        SIGNING_KEY_HEX,
        lambda bundle: offline_verdict(path, bundle, SIGNING_KEY_HEX),
        verdicts(PAGE_PASSES),
    )

    changed_honest = bundles.anchored(CHANGED_GOOD, CHANGED_PAIR.key, key_changes=[INTO_PAIR_KEY])
    change_cases = [
        (place, dropped(changed_honest, place))
        for place in places({"key_changes": changed_honest["key_changes"]})
    ]
    for place in places(INTO_PAIR_KEY["document"]):
        change = signed(OLD_KEY, dropped(INTO_PAIR_KEY["document"], place))
        bundle = bundles.anchored(CHANGED_GOOD, CHANGED_PAIR.key, key_changes=[change])
        change_cases.append((("key change", *place), bundle))
    checkpoint = ("key_changes", 0, "checkpoint")
    for place in places(value_at(changed_honest, (*checkpoint, "document"))):
        resigned = re_signed_without(changed_honest, checkpoint, place, CHANGED_PAIR.key)
        change_cases.append(((*checkpoint, *place), resigned))
    for trusted in (public_key_hex(OLD_KEY), public_key_hex(CHANGED_PAIR.key)):  # retired, new
        disagree += page_disagreements(
            tab,
            change_cases,
            trusted,
            lambda bundle, key=trusted: offline_verdict(path, bundle, key),
            verdicts(PAGE_PASSES),
        )
    assert len(cases) > 150 and len(player_cases) > 20 and len(change_cases) > 10
    assert disagree == [], "\n".join(map(str, disagree))


#: The page's problems with a bundle, in a browser that trusts only ``key`` and has verified
#: nothing before (``fresh``), or with what it verified before.
PAGE_PROBLEMS_TRUSTING = (
    f"async ([bundle, key, fresh]) => {{ if (fresh) {{ localStorage.clear();"
    f" await ({FORGET_WITNESS})(); window.SotaRecords.acceptKey(key); }}"
    " return (await window.SotaVerify.verifyBundle(bundle)).problems; }"
)


def test_both_verifiers_fail_two_pairs_committed_to_one_server_seed(
    tab: Any, tmp_path: Path
) -> None:
    """Pair 13 committed to pair 12's server seed passes alone in both verifiers; the page,
    having verified pair 12, fails it naming pair 12, and so does the offline verifier given
    both bundles, or pair 13's with the records the page kept. Pair 12 verified again is no
    finding, nor is a pair of a seed of its own."""
    from test_verify_seed_reuse import SAME_PLAYER
    from test_verify_seed_reuse import _pair_bundle
    from test_verify_seed_reuse import _said

    sign_up(tab, "seed-reuse")
    fairness_page(tab)
    tab.expected_failures.append("/api/v1/transparency/consistency")
    own = _pair_bundle(bundles.Pair(seed_pair_id=14), 300)
    reused = _pair_bundle(SAME_PLAYER, 200)
    first, second, third = bundles.anchored_together([GOOD, reused, own], PAIR.key)
    assert tab.evaluate(PAGE_PROBLEMS_TRUSTING, [second, KEY_HEX, True]) == []  # alone, it passes
    assert offline_passes(tmp_path, second)

    assert tab.evaluate(PAGE_PROBLEMS_TRUSTING, [first, KEY_HEX, True]) == []
    assert tab.evaluate(PAGE_PROBLEMS_TRUSTING, [first, KEY_HEX, False]) == []  # again: the same
    assert tab.evaluate(PAGE_PROBLEMS_TRUSTING, [third, KEY_HEX, False]) == []  # a seed its own
    problems = tab.evaluate(PAGE_PROBLEMS_TRUSTING, [second, KEY_HEX, False])
    said = (
        r"seed reused: seed pair 13 is committed to the server seed of seed pair 12, which this "
        rf"browser verified on .+ UTC \(commitment {PAIR.commitment[:16]}…\), both signed: a "
        "server seed serves one pair, and revealed for either it tells every shuffle of the "
        "other in advance"
    )
    assert len(problems) == 1 and re.fullmatch(said, problems[0]), problems

    records = tab.evaluate("window.SotaRecords.exportDocument()")
    paths = [tmp_path / name for name in ("b12.json", "b13.json", "records.json")]
    for path, data in zip(paths, (first, second, records), strict=True):
        path.write_text(json.dumps(data), encoding="utf-8")
    b12, b13, kept = map(str, paths)
    for given, expected in (
        ([b12, b13], _said(13, b13, 12, b12)),
        ([b13, "--records", kept], _said(13, b13, 12, "the records")),
    ):
        out = io.StringIO()
        assert main([*given, "--public-key", KEY_HEX, "-q"], out, io.StringIO()) == 1
        assert expected in out.getvalue(), out.getvalue()


def test_both_verifiers_fail_moves_signed_by_a_key_the_player_had_replaced(
    tab: Any, tmp_path: Path
) -> None:
    """A Prisoners of War game whose moves a key the player had replaced signed (one the casino
    registered for the player, say), its last move the player's own: only the settling action
    was held to the key in use, and both verifiers passed it. A key replaced mid-game still
    signs the moves the log took before the replacement."""
    sign_up(tab, "replaced-key")
    fairness_page(tab)
    forged = replaced_key_moves_bundle(-1, None)
    code, out = offline_says(tmp_path, forged)
    assert code == 1 and "action 0 (" in out and "which the player had replaced by key 3" in out
    problems = tab.evaluate(CHECK, [forged, SIGNING_KEY_HEX])
    assert (
        "action 0 is signed by key 2, which the player had replaced by key 3 before the log "
        "took it: the player did not make it"
    ) in problems, problems
    honest = replaced_key_moves_bundle(2, 2)
    assert offline_passes(tmp_path, honest) and tab.evaluate(PAGE_PASSES, [[honest], KEY_HEX])


def test_both_verifiers_fail_a_key_id_registered_twice(tab: Any, tmp_path: Path) -> None:
    """A key the casino registered for the player under the id of the player's own key, logged
    before it, signing every bet and decision: the page took the first registration of the id
    and said nothing, so its verdict named "key 3", which the player takes for its own key."""
    sign_up(tab, "key-id-twice")
    fairness_page(tab)
    forged = key_id_registered_twice()
    said = (
        "key 3 is registered twice, at log entry 2 and at log entry 3: a key id names one key, "
        "so a key registered again under the id of another would pass for it"
    )
    code, out = offline_says(tmp_path, forged)
    assert code == 1 and f"bundle: player: {said}" in out, out
    assert said in tab.evaluate(CHECK, [forged, SIGNING_KEY_HEX]).split(" | ")


def test_both_verifiers_fail_casino_war_decisions_the_cards_do_not_call_for(
    tab: Any, tmp_path: Path
) -> None:
    """A decision on a round whose first cards differ, a second decision after a tie's, and an
    outcome with a member of its own: the page replayed the round by its first decision alone
    and its outcome by the members it knew, and passed each."""
    sign_up(tab, "war-decisions")
    fairness_page(tab)
    untied, war = (GOOD["rounds"][n]["document"] for n in (0, 1))
    assert untied["actions"] == [] and war["actions"] == ["war"]
    changes = {
        "a decision without a tie": (0, {"actions": ["surrender"]}),
        "two decisions": (1, {"actions": ["war", "surrender"]}),
        "an outcome member": (0, {"outcome": {**untied["outcome"], "bonus": 100}}),
    }
    for what, (nonce, change) in changes.items():
        forged = copy.deepcopy(GOOD)
        forged["rounds"][nonce] = bundles.resign(PAIR, forged["rounds"][nonce], **change)
        forged = bundles.anchored(forged, PAIR.key)
        assert not offline_passes(tmp_path, forged), what
        problems = tab.evaluate(CHECK, [forged, KEY_HEX])
        assert f"round {100 + nonce} (nonce {nonce}): " in problems, (what, problems)

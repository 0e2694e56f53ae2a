"""Decisions the player signs, in Chromium: the fairness page makes a WebCrypto Ed25519 key and
registers it, the table signs a war with it, the receipt carries the signature, and the page's
verifier checks it against the key the log registered (the registration proved into a signed
checkpoint), catching a rewritten decision; and the page flags a key it did not make."""

from __future__ import annotations

import copy
import re
import sys
from pathlib import Path
from typing import Any

import pytest
from browser_support import sign_up
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey
from flask import g
from sqlalchemy import select
from test_fairness_records import service_key

from sota_casino.core import fairness
from sota_casino.models import User
from sota_casino.services import player_keys
from sota_casino.services import results
from sota_casino.verify import verify_bundle
from sota_casino.web.format import when

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "web"))
from web_support import plant_server_seed  # noqa: E402

pytestmark = pytest.mark.browser
#: The page's verifier's problems with a bundle checked against a trusted key, no records.
PINNED_PROBLEMS = (
    "async ([bundle, key]) => (await window.SotaVerify.verifyBundle(bundle, "
    "{trustedKey: key, records: null})).problems.join(' | ')"
)

#: A time as the API writes it (2026-12-01T19:50:05.530966Z): never what a page should show.
ISO_TIME = re.compile(r"\d{4}-\d\d-\d\dT\d\d:\d\d")


def written(app: Any, stamp: str, language: str) -> str:
    """``stamp`` as the server's pages write it in ``language`` (the ``when`` filter)."""
    with app.test_request_context():
        g.locale = language
        return spaced(when(stamp))


def spaced(text: str) -> str:
    """``text`` with its narrow and no-break spaces as plain ones (ICU versions differ)."""
    return re.sub(r"[\u00a0\u202f]", " ", text)


PROBLEMS = "async bundle => (await window.SotaVerify.verifyBundle(bundle)).problems.join(' | ')"


def test_the_page_registers_a_key_and_signs_a_war_that_the_verifiers_check(
    tab: Any, live_server: Any
) -> None:
    username = sign_up(tab, "signer")
    plant_server_seed(live_server.app, username, {0: True})
    tab.goto("/fairness")
    status = tab.locator("#signing-key [data-testid=player-key-status]")
    status.filter(has_text="Your decisions are not signed").wait_for()
    tab.click("#signing-key [data-testid=make-player-key]")
    status.filter(has_text="This browser signs your decisions").wait_for()
    keys = tab.evaluate("async () => (await fetch('/api/v1/me/keys')).json()")
    [key] = keys["keys"]
    # Not extractable: the browser holds the private key, and will not hand it out.
    extractable = tab.evaluate(
        """async hex => {
            const db = await new Promise(r => { const q = indexedDB.open('sota-casino', 1);
                q.onsuccess = () => r(q.result); });
            const pair = await new Promise(r => { const q = db.transaction('player-keys')
                .objectStore('player-keys').get(hex); q.onsuccess = () => r(q.result); });
            return pair.privateKey.extractable;
        }""",
        key["public_key_hex"],
    )
    assert extractable is False

    tab.goto("/casino-war")
    tab.locator("[data-testid=player-key-status]").filter(has_text="This browser signs").wait_for()
    tab.click("#deal")
    tab.click("#go-to-war")
    tab.wait_for_selector("[data-testid=result]")
    rounds = tab.evaluate("async () => (await fetch('/api/v1/rounds')).json()")
    round_id = rounds["rounds"][0]["id"]
    receipt = tab.evaluate(
        "async id => (await fetch('/api/v1/rounds/' + id + '/receipt')).json()", round_id
    )
    [signed] = receipt["document"]["signed_actions"]
    assert signed["key_id"] == key["key_id"] and signed["document"]["choice"] == "war"
    assert fairness.verify_signature(key["public_key_hex"], signed["document"], signed["signature"])

    tab.goto("/fairness")
    tab.click("#rotate")
    tab.wait_for_selector("[data-verify]")
    url = tab.locator("[data-verify]").first.get_attribute("data-bundle-url")
    bundle = tab.evaluate("async url => (await fetch(url)).json()", url)
    assert verify_bundle(bundle, bundle["public_key_hex"]).ok
    assert tab.evaluate(PROBLEMS, bundle) == ""
    tab.locator("[data-verify]").first.click()
    verdict = tab.locator(".revealed-pair [data-testid=verify-summary]").first
    verdict.wait_for()
    assert "1\u00a0decision or move carries your own signature" in verdict.inner_text()

    # A decision the player did not sign must come without its signature: the page says so.
    forged = copy.deepcopy(bundle)
    envelope = forged["rounds"][0]
    del envelope["document"]["signed_actions"]
    envelope["signature"] = fairness.sign(service_key(live_server), envelope["document"])
    problems = tab.evaluate(PROBLEMS, forged)
    assert f"the player's key {key['key_id']} was registered before the round settled" in problems
    hidden = {**bundle, "player_keys": []}
    assert "which no registration of this player in the log names" in tab.evaluate(PROBLEMS, hidden)


NO_ED25519 = """
    const generate = crypto.subtle.generateKey.bind(crypto.subtle);
    crypto.subtle.generateKey = (algorithm, ...rest) =>
        (algorithm && algorithm.name === "Ed25519")
            ? Promise.reject(new DOMException("Unrecognized name", "NotSupportedError"))
            : generate(algorithm, ...rest);
"""


def test_a_browser_without_ed25519_says_so_and_plays_unsigned(tab: Any, live_server: Any) -> None:
    tab.add_init_script(NO_ED25519)
    username = sign_up(tab, "oldbrowser")
    plant_server_seed(live_server.app, username, {0: True})
    tab.goto("/fairness")
    status = tab.locator("#signing-key [data-testid=player-key-status]")
    status.filter(has_text="This browser cannot make Ed25519 keys").wait_for()
    assert "your decisions are sent unsigned" in status.inner_text()
    assert tab.is_hidden("#signing-key [data-testid=make-player-key]")
    tab.goto("/casino-war")
    tab.click("#deal")
    tab.click("#surrender")
    tab.wait_for_selector("[data-testid=result]")
    rounds = tab.evaluate("async () => (await fetch('/api/v1/rounds')).json()")
    receipt = tab.evaluate(
        "async id => (await fetch('/api/v1/rounds/' + id + '/receipt')).json()",
        rounds["rounds"][0]["id"],
    )
    assert receipt["document"]["actions"] == ["surrender"]
    assert "signed_actions" not in receipt["document"]


def _signed_war_bundle(tab: Any, live_server: Any, prefix: str) -> dict[str, Any]:
    """A revealed pair whose one round is a war the page signed with the key it made."""
    username = sign_up(tab, prefix)
    plant_server_seed(live_server.app, username, {0: True})
    tab.goto("/fairness")
    tab.click("#signing-key [data-testid=make-player-key]")
    tab.locator("#signing-key [data-testid=player-key-status]").filter(
        has_text="This browser signs your decisions"
    ).wait_for()
    tab.goto("/casino-war")
    tab.locator("[data-testid=player-key-status]").filter(has_text="This browser signs").wait_for()
    tab.click("#deal")
    tab.click("#go-to-war")
    tab.wait_for_selector("[data-testid=result]")
    tab.goto("/fairness")
    tab.click("#rotate")
    tab.wait_for_selector("[data-verify]")
    url = tab.locator("[data-verify]").first.get_attribute("data-bundle-url")
    return dict(tab.evaluate("async url => (await fetch(url)).json()", url))


def test_a_key_registration_whose_inclusion_proof_fails_registers_nothing_in_the_page(
    tab: Any, live_server: Any
) -> None:
    bundle = _signed_war_bundle(tab, live_server, "proven")
    [registration] = bundle["player_keys"]
    assert registration["anchor"]["proof"], "the registration is proved into a checkpoint"
    assert tab.evaluate(PROBLEMS, bundle) == ""
    seq = registration["entry"]["seq"]
    unnamed = "which no registration of this player in the log names"

    def with_registration(**changed: Any) -> dict[str, Any]:
        forged = copy.deepcopy(bundle)
        forged["player_keys"][0].update(changed)
        return forged

    anchor = registration["anchor"]
    wrong = [("0" if anchor["proof"][0][0] != "0" else "1") + anchor["proof"][0][1:]]
    bad_proof = with_registration(anchor={**anchor, "proof": wrong + anchor["proof"][1:]})
    caught = tab.evaluate(PROBLEMS, bad_proof)
    assert f"key registration #1 (entry {seq}) is not shown to be in the log: the inclusion " in (
        caught
    ), caught
    assert unnamed in caught  # the registration counts for nothing: the war is signed by no key
    assert not verify_bundle(bad_proof, bundle["public_key_hex"]).ok  # as the offline verifier

    no_proof = with_registration(anchor={k: v for k, v in anchor.items() if k != "proof"})
    caught = tab.evaluate(PROBLEMS, no_proof)
    assert "is not shown to be in the log: the inclusion proof is not a list of hashes" in caught
    assert unnamed in caught

    other_leaf = with_registration(anchor={**anchor, "leaf_index": anchor["leaf_index"] - 1})
    assert "is not shown to be in the log" in tab.evaluate(PROBLEMS, other_leaf)

    checkpoint = registration["checkpoint"]
    resigned = {
        **checkpoint,
        "signature": fairness.sign(Ed25519PrivateKey.generate(), checkpoint["document"]),
    }
    caught = tab.evaluate(PROBLEMS, with_registration(checkpoint=resigned))
    assert "proves into a checkpoint that the trusted key did not sign" in caught

    # Without its anchor, beside the bundle's checkpoint over its entry, the registration was
    # left out of the log or its anchor withheld: the service anchors what a checkpoint covers.
    # (One no checkpoint covers yet waits: test_page_and_offline_verifiers_agree.py.)
    unanchored = copy.deepcopy(bundle)
    for name in ("anchor", "checkpoint"):
        del unanchored["player_keys"][0][name]
    report = tab.evaluate("b => window.SotaVerify.verifyBundle(b)", unanchored)
    covered = f"key registration #1 (entry {seq}): pending, though the checkpoint signed at "
    assert [p for p in report["problems"] if p.startswith(covered)], report["problems"]
    assert report["waiting"] == []
    assert not any(row["ok"] for row in report["rounds"])
    assert not verify_bundle(unanchored, bundle["public_key_hex"]).ok  # as the offline verifier


def test_a_key_this_browser_did_not_make_is_flagged_where_the_keys_are_listed(
    tab: Any, live_server: Any
) -> None:
    username = sign_up(tab, "foreign")
    tab.goto("/fairness")
    panel = tab.locator("#signing-key")
    panel.locator("[data-testid=make-player-key]").click()
    status = panel.locator("[data-testid=player-key-status]")
    status.filter(has_text="This browser signs your decisions").wait_for()
    assert panel.locator("[data-testid=player-key-warning]").count() == 0
    assert "(this browser)" in panel.locator("[data-testid=player-key-list]").inner_text()

    # An operator with the database registers a key of its own for the player.
    app = live_server.app
    with app.app_context():
        session = app.extensions["sota_casino.sessionmaker"]()
        user_id = session.scalars(select(User.id).where(User.username == username)).one()
        session.close()
        planted = fairness.public_key_hex(Ed25519PrivateKey.generate())
        registered = results.to_json(player_keys.register_key(session, user_id, planted))
        session.close()
    [foreign] = [k for k in registered["keys"] if k["public_key_hex"] == planted]

    tab.reload()
    warning = panel.locator("[data-testid=player-key-warning]")
    warning.wait_for()
    text = warning.inner_text()
    # The time as the pages write it, in the page's language, not the API's ISO text.
    assert spaced(text).startswith(
        f"A key you may not have registered was added on "
        f"{written(app, foreign['registered_at'], 'en')}: "
        f"key {foreign['key_id']} ({planted[:16]}…), which this browser did not make."
    ), text
    assert not ISO_TIME.search(text), text
    assert "if it was not you on another device" in text.lower()
    assert "keep this page as evidence" in text
    assert warning.get_attribute("role") == "alert"
    listed = panel.locator("[data-testid=player-key-list]").inner_text()
    assert f"Key {foreign['key_id']}: {planted[:16]}… current (not made in this browser)" in listed
    # Bets are signed too, not only decisions: the status says both.
    assert (
        f"Your bets and decisions must be signed with key {foreign['key_id']}, which this "
        "browser does not hold" in status.inner_text()
    ), status.inner_text()

    # In Finnish, the warning and its time read in Finnish.
    with tab.expect_navigation():
        tab.select_option("#language-choice", "fi")
    tab.wait_for_selector("html[lang=fi]")
    warning.wait_for()
    finnish = spaced(warning.inner_text())
    added = written(app, foreign["registered_at"], "fi")
    assert finnish.startswith(f"Lisättiin {added} avain"), finnish
    assert not ISO_TIME.search(finnish), finnish
    with tab.expect_navigation():
        tab.select_option("#language-choice", "en")
    tab.wait_for_selector("html[lang=en]")

    # A new key made here replaces it: the planted key is older than this browser's now.
    panel.locator("[data-testid=make-player-key]").click()
    status.filter(has_text="This browser signs your decisions").wait_for()
    assert warning.count() == 0
    keys = tab.evaluate("async () => (await fetch('/api/v1/me/keys')).json()")
    current = next(k for k in keys["keys"] if k["key_id"] == keys["current_key_id"])
    retired = next(k for k in keys["keys"] if k["key_id"] == foreign["key_id"])
    assert f"registered {written(app, current['registered_at'], 'en')}." in spaced(
        status.inner_text()
    )
    listed = spaced(panel.locator("[data-testid=player-key-list]").inner_text())
    assert f"retired since {written(app, retired['retired_at'], 'en')}" in listed, listed
    assert not ISO_TIME.search(listed + status.inner_text())


def test_an_unsigned_decision_logged_after_the_registration_fails_in_the_page(
    tab: Any, live_server: Any
) -> None:
    """As the offline verifier: dating every receipt before the key's registration does not
    hide an unsigned decision that the log took after it."""
    sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "unit"))
    from test_verify_player_log_order import KEY_HEX
    from test_verify_player_log_order import forged_bundle
    from test_verify_player_log_order import honest_bundle

    sign_up(tab, "backdated")
    tab.goto("/fairness")
    assert tab.evaluate(PINNED_PROBLEMS, [honest_bundle(), KEY_HEX]) == ""
    caught = tab.evaluate(PINNED_PROBLEMS, [forged_bundle(), KEY_HEX])
    assert "the decision is unsigned, but the player's key 3 was registered before" in caught, (
        caught
    )


def test_an_unsigned_move_logged_after_the_registration_fails_in_the_page(
    tab: Any, live_server: Any
) -> None:
    """As the offline verifier: a move the log took after the player's key was registered is
    the player's only when signed, whichever move of the game it is; moves made before a key
    registered mid-game stay unsigned."""
    sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "unit"))
    from test_verify_player_log_order import KEY_HEX
    from test_verify_player_log_order import moves_bundle

    sign_up(tab, "rewrittenmove")
    tab.goto("/fairness")
    assert tab.evaluate(PINNED_PROBLEMS, [moves_bundle(1, 1), KEY_HEX]) == ""
    caught = tab.evaluate(PINNED_PROBLEMS, [moves_bundle(1, None), KEY_HEX])
    assert (
        "action 0 is unsigned, but the player's key 3 was registered before the log took it"
        in caught
    ), caught
    assert verify_bundle(moves_bundle(1, None), KEY_HEX).ok is False

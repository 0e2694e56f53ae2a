"""Decisions the player signs, in Chromium: the fairness page makes a WebCrypto Ed25519 key and
registers it, the table signs a war with it, the receipt carries the signature, and the page's
verifier checks it against the key the log registered, catching a rewritten decision."""

from __future__ import annotations

import copy
import sys
from pathlib import Path
from typing import Any

import pytest
from browser_support import sign_up
from test_fairness_records import service_key

from sota_casino.core import fairness
from sota_casino.verify import verify_bundle

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "web"))
from web_support import plant_server_seed  # noqa: E402

pytestmark = [pytest.mark.browser, pytest.mark.slow]

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
    assert "1 decision or move carries your own signature" in verdict.inner_text()

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

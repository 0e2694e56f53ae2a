"""The fairness page across a change of the service's signing key, in Chromium: a browser that
pinned the old key follows a key change signed by it (as the offline verifier follows one with
a known-keys file), and refuses one that the old key did not sign, such as an operator holding
the database but not the old key would write.

A test that changes the key does it on a server of its own (``forked_server``) and restarts
its workers, as an operator does after ``flask keys rotate``: the shared server's key stays the
one every other test pinned.
"""

from __future__ import annotations

import sys
from collections.abc import Iterator
from datetime import UTC
from datetime import datetime
from pathlib import Path
from typing import Any

import pytest
from browser_support import LiveServer
from browser_support import sign_up
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey
from weak_key_support import IDENTITY_KEY_HEX

from sota_casino.core import fairness
from sota_casino.factory import create_app
from sota_casino.instance import replace_file
from sota_casino.services import audit
from sota_casino.services import fairness as fairness_service
from sota_casino.verify import verify_bundle
from sota_casino.verify.trust import successor_chain

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "web"))
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "unit"))
import bundles  # noqa: E402
from test_fairness_records import WITHOUT_RECORDS  # noqa: E402
from test_log_witness import play_a_round  # noqa: E402
from test_verify_trust import DATED_OTHERWISE  # noqa: E402
from test_verify_trust import GOOD  # noqa: E402
from test_verify_trust import HANDED_ON_TO_ANYONE  # noqa: E402
from test_verify_trust import INTO_PAIR_KEY  # noqa: E402
from test_verify_trust import KEY_HEX  # noqa: E402
from test_verify_trust import ODD_CHANGE_TIMES  # noqa: E402
from test_verify_trust import OLD_KEY  # noqa: E402
from test_verify_trust import OTHER_KEY  # noqa: E402
from test_verify_trust import OWN_INTO_PAIR_KEY  # noqa: E402
from test_verify_trust import OWN_KEY  # noqa: E402
from test_verify_trust import PAIR  # noqa: E402
from test_verify_trust import _key_change  # noqa: E402
from test_verify_trust import changed_at_otherwise  # noqa: E402
from test_verify_trust import handed_on_beside_a_refused_change  # noqa: E402
from test_verify_trust import looped_unlogged  # noqa: E402
from web_support import plant_server_seed  # noqa: E402

pytestmark = pytest.mark.browser

PINNED = "window.SotaRecords.pinnedKey()"
#: What the page's verifier finds in a bundle trusting only a key given (``WITHOUT_RECORDS``:
#: the key pinned here, and the keys it replaced).
TRUSTING = (
    "async ([bundle, key]) => (await window.SotaVerify.verifyBundle(bundle,"
    " {trustedKey: key, records: null})).problems.join(' | ')"
)


def service_key_hex(server: LiveServer) -> str:
    pem = Path(server.app.config["SIGNING_KEY_FILE"]).read_bytes()
    return fairness.public_key_hex(fairness.load_private_key(pem))


def pin_the_key_shown(tab: Any) -> str:
    """Open the fairness page, which pins the key it shows; return that key."""
    tab.goto("/fairness")
    tab.wait_for_function(f"() => {PINNED} !== null")
    return str(tab.evaluate(PINNED)["public_key_hex"])


def play_a_round_signed_by_the_new_key(tab: Any, server: LiveServer, username: str) -> None:
    """Play a round on the player's active pair (committed by the new key) and open the
    fairness page."""
    restarted = create_app(dict(server.app.config))  # with the new key, as the workers
    try:
        plant_server_seed(restarted, username, {0: False})
    finally:
        restarted.extensions["sota_casino.engine"].dispose()
    tab.goto("/casino-war")
    tab.click("#deal")
    tab.wait_for_selector("[data-testid=result]")
    tab.goto("/fairness")


def verify_in_page(tab: Any) -> str:
    """Verify the newest revealed pair in the page; return the verdict."""
    tab.locator("[data-verify]").first.click()
    summary = tab.locator(".revealed-pair [data-testid=verify-summary]").first
    summary.wait_for()
    return str(summary.inner_text())


def old_signing_key(server: LiveServer) -> Ed25519PrivateKey:
    """The key ``flask keys rotate`` retired (its file is kept beside the new one)."""
    key_file = Path(server.app.config["SIGNING_KEY_FILE"])
    (kept,) = key_file.parent.glob(f"{key_file.name}.retired-*")
    return fairness.load_private_key(kept.read_bytes())


def resigned(checkpoint: dict[str, Any], key: Ed25519PrivateKey) -> dict[str, Any]:
    return {
        **checkpoint,
        "signature": fairness.sign(key, checkpoint["document"]),
        "public_key_hex": fairness.public_key_hex(key),
    }


def log_changes_and_put_key(server: LiveServer, changes: list[Any], key: Ed25519PrivateKey) -> None:
    """As an operator holding the database and the key file: log each signed key change, in
    order, and put ``key`` in the key file (the key it replaces kept beside it)."""
    with server.app.app_context():
        session = server.app.extensions["sota_casino.sessionmaker"]()
        with session.begin():
            for change in changes:
                audit.record(
                    session,
                    actor="system",
                    action=fairness_service.KEY_CHANGED,
                    subject=f"key:{change['document']['new_public_key_hex'][:16]}",
                    data={"key_change": change},
                )
        session.close()
    key_file = Path(server.app.config["SIGNING_KEY_FILE"])
    replace_file(key_file, fairness.private_key_pem(key), suffix=".retired")


def forge_a_key_change(server: LiveServer) -> str:
    """As an operator holding the database and the key file, but not the old key: put a new
    key in the key file and log a key change naming it, signed by the new key instead of the
    old one. Returns the new key (hex)."""
    old_hex = service_key_hex(server)
    new_key = fairness.new_signing_key()
    new_hex = fairness.public_key_hex(new_key)
    document = fairness.key_change_document(
        old_public_key_hex=old_hex,
        new_public_key_hex=new_hex,
        changed_at=fairness.format_time(datetime.now(UTC)),
    )
    log_changes_and_put_key(server, [fairness.signed(new_key, document)], new_key)
    return new_hex


@pytest.fixture
def pinned(forked_tab: Any, forked_server: LiveServer) -> Iterator[str]:
    """The key ``forked_tab`` pinned before the key changes."""
    key = pin_the_key_shown(forked_tab)
    assert key == service_key_hex(forked_server)
    yield key


def test_a_key_change_signed_by_the_pinned_key_moves_the_pin_and_bundles_verify(
    forked_tab: Any, forked_server: LiveServer, pinned: str
) -> None:
    tab = forked_tab
    result = forked_server.app.test_cli_runner().invoke(args=["keys", "rotate"])
    assert result.exit_code == 0, result.output
    forked_server.restart_workers()
    new_key = service_key_hex(forked_server)
    assert new_key != pinned

    play_a_round_signed_by_the_new_key(tab, forked_server, sign_up(tab, "keys"))
    # The page shows the new key: the pin follows the signed change, calmly, and says which.
    notice = tab.locator("[data-testid=key-change-followed]")
    assert "the key this browser pinned signed the change" in notice.inner_text()
    assert f"{pinned} → {new_key} on " in notice.inner_text()
    assert tab.locator("[data-testid=key-changed]").count() == 0
    pin = tab.evaluate(PINNED)
    assert pin["public_key_hex"] == new_key
    (replaced,) = pin["replaced"]
    assert replaced["public_key_hex"] == pinned
    assert replaced["key_change"]["new_public_key_hex"] == new_key
    assert f"--public-key {new_key} " in tab.locator("[data-testid=verifier-command]").inner_text()

    tab.click("#rotate")
    verdict = verify_in_page(tab)
    assert verdict.startswith("✓ All 1\u00a0round verified.\n")
    assert "\nAll 1\u00a0round verified against the key pinned in this browser" in verdict

    # A bundle under a key the pinned key handed on to moves the pin as well once it passes, as
    # the offline verifier's known-keys file moves on: say, on a page made before the change.
    tab.evaluate(
        """key => localStorage.setItem("sota-casino.pinned-key.v1",
            JSON.stringify({public_key_hex: key, pinned_at: "2026-01-01T00:00:00Z",
                            replaced: []}))""",
        pinned,
    )
    tab.evaluate(
        "document.querySelectorAll('[data-testid=key-change-followed]').forEach(n => n.remove())"
    )
    assert verify_in_page(tab).startswith("✓ All 1\u00a0round verified")
    assert f"{pinned} → {new_key} on " in notice.inner_text()
    assert tab.evaluate(PINNED)["public_key_hex"] == new_key
    assert tab.evaluate(PINNED)["replaced"][0]["public_key_hex"] == pinned

    # A verifier that still trusts the old key follows the bundle's own key changes to the new
    # one; without them, or with them forged, the bundle's key is refused.
    url = tab.locator("[data-verify]").first.get_attribute("data-bundle-url")
    bundle = tab.evaluate("async url => (await fetch(url)).json()", url)
    assert tab.evaluate(TRUSTING, [bundle, pinned]) == ""
    assert "not the key this browser trusts" in tab.evaluate(
        TRUSTING, [dict(bundle, key_changes=[]), pinned]
    )
    (change,) = bundle["key_changes"]
    forged = {
        **change,
        "signature": fairness.sign(Ed25519PrivateKey.generate(), change["document"]),
    }
    assert "not the key this browser trusts" in tab.evaluate(
        TRUSTING, [dict(bundle, key_changes=[forged]), pinned]
    )

    # A worker not yet restarted signs checkpoints with the retired key, as the key change
    # allows: the page takes them, the pin having moved from that key, as the offline verifier
    # trusting the old key does; trusting only the new key, neither takes them.
    retired = old_signing_key(forked_server)
    assert fairness.public_key_hex(retired) == pinned
    late = dict(bundle, checkpoints=[resigned(c, retired) for c in bundle["checkpoints"]])
    assert tab.evaluate(WITHOUT_RECORDS, late) == ""
    assert "not signed by the pinned key" in tab.evaluate(TRUSTING, [late, new_key])
    assert verify_bundle(late, pinned).ok and not verify_bundle(late, new_key).ok

    # Once followed, the page is quiet, and witnesses the log on with the new key.
    tab.reload()
    assert tab.locator("[data-testid=key-change-followed]").count() == 0
    assert tab.locator("[data-testid=key-changed]").count() == 0
    tab.wait_for_function(
        "() => document.querySelector('[data-testid=log-witness]').textContent"
        ".startsWith('✓ This browser has checked the casino')"
    )


def test_a_forked_checkpoint_the_retired_key_signed_in_a_bundle_is_witnessed(
    forked_tab: Any, forked_server: LiveServer, pinned: str
) -> None:
    """The retired key's file is kept beside the new one, and the page takes checkpoints that
    key signs in a bundle (a worker not yet restarted signs with it): so it witnesses them
    too. One over another history is the alarm, as one the pinned key signed would be, not a
    checkpoint no witness ever sees that the bundle's anchors are proved into."""
    tab = forked_tab
    result = forked_server.app.test_cli_runner().invoke(args=["keys", "rotate"])
    assert result.exit_code == 0, result.output
    forked_server.restart_workers()
    play_a_round_signed_by_the_new_key(tab, forked_server, sign_up(tab, "retired"))
    tab.click("#rotate")
    assert verify_in_page(tab).startswith("✓ All 1\u00a0round verified")
    kept = tab.evaluate("window.SotaLog.kept()")["document"]
    url = tab.locator("[data-verify]").first.get_attribute("data-bundle-url")
    bundle = tab.evaluate("async url => (await fetch(url)).json()", url)

    retired = old_signing_key(forked_server)
    assert fairness.public_key_hex(retired) == pinned
    other_root = "ab" * 32
    other = {"document": {**kept, "root": other_root}, "signature": ""}
    forked = dict(bundle, checkpoints=[resigned(other, retired)])
    tab.evaluate(WITHOUT_RECORDS, forked)
    alarm = tab.evaluate("window.SotaLog.alarm()")
    assert alarm is not None, "a forked checkpoint of the retired key went unwitnessed"
    assert alarm["seen"]["document"]["root"] == other_root
    assert alarm["kept"]["document"] == kept
    witness = tab.locator("[data-testid=log-witness][role=alert]")
    assert (
        f"FORK: two signed checkpoints over {kept['size']}\u00a0entries differ: "
        f"kept size {kept['size']} root {kept['root']}, "
        f"served size {kept['size']} root {other_root}"
    ) in witness.inner_text()


def rotate_in_page(tab: Any) -> int:
    """Rotate the active pair from the fairness page; return the id of the pair revealed."""
    tab.goto("/fairness")
    shown = tab.locator(".revealed-pair").count()
    tab.click("#rotate")
    tab.wait_for_function(f"() => document.querySelectorAll('.revealed-pair').length > {shown}")
    return int(tab.locator(".revealed-pair").first.get_attribute("data-seed-pair"))


def verify_pair_in_page(tab: Any, seed_pair_id: int) -> str:
    pair = tab.locator(f".revealed-pair[data-seed-pair='{seed_pair_id}']")
    pair.locator("[data-verify]").click()
    summary = pair.locator("[data-testid=verify-summary]")
    summary.wait_for()
    return str(summary.inner_text())


def test_pairs_signed_before_the_key_change_verify_in_the_page_as_offline_with_either_key(
    forked_tab: Any, forked_server: LiveServer, pinned: str
) -> None:
    """A pair committed, played and revealed under the old key, and a pair committed under it
    and revealed under the new one (mixed), fetched after the restart: the page, whose pin
    followed the change, verifies both, and so do both verifiers trusting either key alone.
    Trusting only the new key, the old one signs for it only through the key change that the
    new key's checkpoint proves in the log."""
    tab = forked_tab
    sign_up(tab, "before")
    play_a_round(tab)  # signed by the old key
    before = rotate_in_page(tab)
    play_a_round(tab)
    result = forked_server.app.test_cli_runner().invoke(args=["keys", "rotate"])
    assert result.exit_code == 0, result.output
    forked_server.restart_workers()
    new_key = service_key_hex(forked_server)

    play_a_round(tab)  # signed by the new key
    tab.goto("/fairness")
    tab.locator("[data-testid=key-change-followed]").wait_for()
    mixed = rotate_in_page(tab)  # revealed by the new key
    assert verify_pair_in_page(tab, before).startswith("✓ All 1\u00a0round verified")
    assert verify_pair_in_page(tab, mixed).startswith("✓ All 2\u00a0rounds verified")

    for pair in (before, mixed):
        url = f"/fairness/seed-pairs/{pair}/bundle.json"
        bundle = tab.evaluate("async url => (await fetch(url)).json()", url)
        assert bundle["public_key_hex"] == new_key
        for key in (pinned, new_key):
            assert tab.evaluate(TRUSTING, [bundle, key]) == "", (pair, key)
            assert verify_bundle(bundle, key).ok, (pair, key)
        # Without its entry in the log, the change is the old key's word only: the new key
        # alone does not take it, the old key follows it still.
        (change,) = bundle["key_changes"]
        unlogged = dict(bundle, key_changes=[{k: change[k] for k in ("document", "signature")}])
        assert "the commitment's signature is not valid" in tab.evaluate(
            TRUSTING, [unlogged, new_key]
        )
        assert not verify_bundle(unlogged, new_key).ok
        assert tab.evaluate(TRUSTING, [unlogged, pinned]) == ""
        assert verify_bundle(unlogged, pinned).ok
    # Holding the new key, not the old: a key of his own handed on to the new one, beside the
    # real change's entry, signs nothing for either verifier.
    own = Ed25519PrivateKey.generate()
    own_change = fairness.signed(
        own, {**change["document"], "old_public_key_hex": fairness.public_key_hex(own)}
    )
    recommitted = dict(
        bundle,
        commitment=fairness.signed(own, bundle["commitment"]["document"]),
        key_changes=[{**change, **own_change}],
    )
    for key in (new_key, pinned):
        assert "the commitment's signature is not valid" in tab.evaluate(
            TRUSTING, [recommitted, key]
        )
        assert not verify_bundle(recommitted, key).ok


def test_a_key_change_the_pinned_key_did_not_sign_leaves_the_pin_and_the_loud_warning(
    forked_tab: Any, forked_server: LiveServer, pinned: str
) -> None:
    tab = forked_tab
    new_key = forge_a_key_change(forked_server)
    forked_server.restart_workers()

    play_a_round_signed_by_the_new_key(tab, forked_server, sign_up(tab, "keys"))
    alert = tab.locator("[data-testid=key-changed]")
    assert "The casino's signing key has changed" in alert.inner_text()
    assert pinned in alert.inner_text() and new_key in alert.inner_text()
    assert tab.locator("[data-testid=key-change-followed]").count() == 0
    assert tab.evaluate(PINNED)["public_key_hex"] == pinned
    assert tab.evaluate(PINNED)["replaced"] == []

    tab.click("#rotate")
    verdict = verify_in_page(tab)
    assert verdict.startswith("✗ 0\u00a0of 1\u00a0round verified")
    assert "not the key this browser trusts" in verdict
    assert tab.evaluate(PINNED)["public_key_hex"] == pinned


def hand_the_key_on_twice(server: LiveServer, forgers_first: bool) -> tuple[str, str]:
    """As an operator holding the database and the key in use: sign two changes from it, to a
    key of his own and to another, log them in the order asked, and put his own key in the key
    file. Returns his key and the other (hex)."""
    old_key = fairness.load_private_key(Path(server.app.config["SIGNING_KEY_FILE"]).read_bytes())
    own_key, other_key = fairness.new_signing_key(), fairness.new_signing_key()
    changes = [
        fairness.signed(
            old_key,
            fairness.key_change_document(
                old_public_key_hex=fairness.public_key_hex(old_key),
                new_public_key_hex=fairness.public_key_hex(new_key),
                changed_at=fairness.format_time(datetime.now(UTC)),
            ),
        )
        for new_key in ((own_key, other_key) if forgers_first else (other_key, own_key))
    ]
    log_changes_and_put_key(server, changes, own_key)
    return fairness.public_key_hex(own_key), fairness.public_key_hex(other_key)


@pytest.mark.parametrize("forgers_first", [True, False])
def test_the_pin_follows_no_key_the_pinned_key_was_handed_on_to_twice(
    forked_tab: Any, forked_server: LiveServer, pinned: str, forgers_first: bool
) -> None:
    """The public-key answer lists two changes signed by the pinned key, one to the key the
    page shows: the pin stays, in either order of the list, and the loud warning names the
    fork, as the bundle's verifiers name it."""
    tab = forked_tab
    own, other = hand_the_key_on_twice(forked_server, forgers_first)
    forked_server.restart_workers()
    published = tab.evaluate("async () => (await fetch('/api/v1/fairness/public-key')).json()")
    assert published["public_key_hex"] == own
    assert [c["document"]["new_public_key_hex"] for c in published["key_changes"]] == (
        [own, other] if forgers_first else [other, own]
    )

    tab.goto("/fairness")
    tab.evaluate("window.SotaRecords.keyChecked()")
    assert tab.locator("[data-testid=key-change-followed]").count() == 0
    assert tab.evaluate(PINNED)["public_key_hex"] == pinned
    assert tab.evaluate(PINNED)["replaced"] == []
    alert = tab.locator("[data-testid=key-changed]")
    assert "The casino's signing key has changed" in alert.inner_text()
    low, high = sorted([own, other])
    fork = tab.locator("[data-testid=key-handed-on-twice]")
    assert fork.inner_text() == (
        f"FORK: key {pinned[:16]}… was handed on twice, to key {low[:16]}… and to key "
        f"{high[:16]}…, each change signed by it: the casino's keys change in one chain, so "
        "one of the changes is a rewrite. This browser follows neither change."
    )
    assert successor_chain(pinned, own, published["key_changes"]) is None


def test_the_chain_rule_of_the_page_is_the_offline_verifiers(tab: Any) -> None:
    """``SotaRecords.successorChain`` follows what ``successor_chain`` follows, and refuses
    what it refuses: a change signed by another key than the one it retires, a chain that leads
    to another key, a loop, anything that is not a key change."""
    a, b, c = (Ed25519PrivateKey.generate() for _ in range(3))
    a_hex, b_hex, c_hex = map(fairness.public_key_hex, (a, b, c))

    def change(old: str, new: str, signer: Ed25519PrivateKey, **extra: Any) -> dict[str, Any]:
        document = fairness.key_change_document(
            old_public_key_hex=old, new_public_key_hex=new, changed_at="2026-01-01T00:00:00.000000Z"
        )
        return fairness.signed(signer, {**document, **extra})

    a_to_b, b_to_c = change(a_hex, b_hex, a), change(b_hex, c_hex, b)
    cases: list[tuple[str, str, object]] = [
        (a_hex, a_hex, []),
        (a_hex, b_hex, [a_to_b]),
        (a_hex, c_hex, [b_to_c, a_to_b]),  # in any order
        (a_hex, b_hex, [change(a_hex, b_hex, b)]),  # signed by the key it names
        (a_hex, b_hex, [change(a_hex, b_hex, c)]),  # signed by a stranger
        (a_hex, b_hex, [change(a_hex, b_hex, a, v=2)]),  # another version
        (a_hex, c_hex, [change(a_hex, b_hex, a, type="checkpoint"), b_to_c]),
        (a_hex, c_hex, [a_to_b]),  # leads to another key
        (a_hex, c_hex, [a_to_b, change(b_hex, a_hex, b)]),  # a loop
        (a_hex, c_hex, [change(a_hex, c_hex, c), a_to_b, b_to_c]),  # the forged one ignored
        # A key handed on twice has no successor, in either order, at the start or on the way.
        (a_hex, c_hex, [change(a_hex, b_hex, a), change(a_hex, c_hex, a)]),
        (a_hex, c_hex, [change(a_hex, c_hex, a), change(a_hex, b_hex, a)]),
        (a_hex, b_hex, [change(a_hex, c_hex, a), change(a_hex, b_hex, a)]),
        (a_hex, c_hex, [a_to_b, b_to_c, change(b_hex, a_hex, b)]),
        (a_hex, c_hex, [a_to_b, change(b_hex, a_hex, b), b_to_c]),
        (a_hex, b_hex, [a_to_b, b_to_c, change(b_hex, a_hex, b)]),  # a fork past the target
        # The same change twice, or again at another time, is no fork.
        (a_hex, c_hex, [a_to_b, b_to_c, a_to_b]),
        (a_hex, b_hex, [change(a_hex, b_hex, a, changed_at="2026-02-01T00:00:00Z"), a_to_b]),
        (a_hex, b_hex, {"0": a_to_b}),
        (a_hex, b_hex, [{"document": a_to_b["document"]}, "change", None]),
    ]
    tab.goto("/")
    for trusted, target, changes in cases:
        expected = successor_chain(trusted, target, changes)
        found = tab.evaluate(
            "([trusted, target, changes]) =>"
            " window.SotaRecords.successorChain(trusted, target, changes)",
            [trusted, target, changes],
        )
        assert found == (None if expected is None else list(expected)), (trusted, target, changes)
    assert tab.evaluate(
        "([a, c, changes]) => window.SotaRecords.successorChain(a, c, changes)",
        [a_hex, c_hex, [b_to_c, a_to_b]],
    ) == [a_to_b["document"], b_to_c["document"]]


def test_both_verifiers_fail_key_changes_that_fork_the_keys_in_either_order(tab: Any) -> None:
    """Two logged changes into the bundle's key (the second from a forger's own key), or the
    trusted key handed on to two keys: the page fails the bundle as ``verify.pyz`` does, in
    either order of the list, naming the keys; the honest change passes both."""
    sign_up(tab, "forked")
    tab.goto("/fairness")
    new, old, own, other = (
        fairness.public_key_hex(key) for key in (PAIR.key, OLD_KEY, OWN_KEY, OTHER_KEY)
    )
    honest = bundles.anchored(GOOD, PAIR.key, key_changes=[INTO_PAIR_KEY])
    for trusted in (new, old):
        assert tab.evaluate(TRUSTING, [honest, trusted]) == "" and verify_bundle(honest, trusted).ok

    for changes, (first, second) in (
        ([INTO_PAIR_KEY, OWN_INTO_PAIR_KEY], (old, own)),
        ([OWN_INTO_PAIR_KEY, INTO_PAIR_KEY], (own, old)),
    ):
        forked = bundles.anchored(GOOD, PAIR.key, key_changes=changes)
        for trusted in (new, old):
            assert not verify_bundle(forked, trusted).ok
            assert (
                f"entry 2: key {new[:16]}… is taken into use again, from key {second[:16]}…, "
                f"after key {first[:16]}… was changed into it (entry 1)"
            ) in tab.evaluate(TRUSTING, [forked, trusted])

    handed_on = [INTO_PAIR_KEY, _key_change(OLD_KEY, OTHER_KEY)]
    low, high = sorted([new, other])
    for changes in (handed_on, handed_on[::-1]):
        forked = bundles.anchored(GOOD, PAIR.key, key_changes=changes)
        assert not verify_bundle(forked, old).ok
        in_page = tab.evaluate(TRUSTING, [forked, old])
        assert (
            f"key {old[:16]}… was handed on twice, to key {low[:16]}… and to key {high[:16]}…"
        ) in in_page
        # The chain stops at the key handed on twice, whichever change the list holds first.
        assert f"the bundle names the key {new[:16]}…, not the key this browser trusts" in in_page
        refused = f"KEY CHANGED: the bundle names public key {new[:16]}…, not the trusted key"
        assert any(f.message.startswith(refused) for f in verify_bundle(forked, old).failures)


def test_both_verifiers_fail_a_loop_of_key_changes_back_to_a_retired_key(tab: Any) -> None:
    """``A`` to ``B``, then ``B`` back to ``A``, each signed by the key it retires and logged:
    the page fails the bundle as ``verify.pyz`` does, trusting either key, naming the loop."""
    sign_up(tab, "key-loop")
    tab.goto("/fairness")
    retiring = fairness.new_signing_key()
    loop = [_key_change(PAIR.key, retiring), _key_change(retiring, PAIR.key)]
    bundle = bundles.anchored(GOOD, PAIR.key, key_changes=loop)
    new, middle = (fairness.public_key_hex(key) for key in (PAIR.key, retiring))
    low, high = sorted((new, middle))
    said = {
        new: f"entry 2: key {new[:16]}… is taken into use again, from key {middle[:16]}…, after "
        "it was in use (entry 1): a key is taken into use once",
        # Trusting ``B``, no chain leads around the loop, whose checkpoint ``A`` signed: it is
        # named by its signatures.
        middle: f"the key changes from key {low[:16]}… lead back to it ({low[:16]}… → "
        f"{high[:16]}… → {low[:16]}…), each signed by the key it retires: a key is taken into "
        "use once",
    }
    for trusted in (middle, new):
        assert not verify_bundle(bundle, trusted).ok
        assert said[trusted] in tab.evaluate(TRUSTING, [bundle, trusted])


SMALL_ORDER_IN_PAGE = "it is of small order: anyone can sign under it without a private key"


def test_both_verifiers_refuse_a_key_change_to_a_key_anyone_can_sign_with(tab: Any) -> None:
    """The trusted key hands the service on to the identity key, under which one signature
    verifies every document: the page, as ``verify.pyz``, follows no such change and names
    it; trusting such a key itself, nothing it signs holds."""
    sign_up(tab, "weak-key")
    tab.goto("/fairness")
    trusted = fairness.public_key_hex(PAIR.key)
    assert not verify_bundle(HANDED_ON_TO_ANYONE, trusted).ok
    in_page = tab.evaluate(TRUSTING, [HANDED_ON_TO_ANYONE, trusted])
    assert (
        f"key {trusted[:16]}… was handed on to key {IDENTITY_KEY_HEX[:16]}…, which is refused: "
        f"{SMALL_ORDER_IN_PAGE}; no change to such a key is followed"
    ) in in_page
    assert f"the bundle names the key {IDENTITY_KEY_HEX[:16]}…, not the key this browser" in in_page
    assert (
        tab.evaluate(
            "([a, b, changes]) => window.SotaRecords.successorChain(a, b, changes)",
            [trusted, IDENTITY_KEY_HEX, HANDED_ON_TO_ANYONE["key_changes"]],
        )
        is None
    )
    refused = f"key {IDENTITY_KEY_HEX[:16]}… is refused: {SMALL_ORDER_IN_PAGE}"
    in_page = tab.evaluate(TRUSTING, [HANDED_ON_TO_ANYONE, IDENTITY_KEY_HEX])
    assert refused in in_page and "the commitment's signature is not valid" in in_page

    # Nor is one pinned, or the log checked with one an earlier page pinned.
    tab.evaluate("localStorage.removeItem('sota-casino.pinned-key.v1')")
    assert tab.evaluate("key => window.SotaRecords.pinFirstSeen(key)", IDENTITY_KEY_HEX) is None
    tab.evaluate(
        """key => localStorage.setItem("sota-casino.pinned-key.v1",
            JSON.stringify({public_key_hex: key, pinned_at: "2026-01-01T00:00:00Z",
                            replaced: []}))""",
        IDENTITY_KEY_HEX,
    )
    assert refused == tab.evaluate(
        "window.SotaLog.pinnedCryptoKey().then(() => 'imported', error => error.message)"
    )


def test_the_page_finds_the_weak_keys_the_offline_verifier_finds(tab: Any) -> None:
    tab.goto("/")
    keys = [
        *(fairness.public_key_hex(fairness.new_signing_key()) for _ in range(3)),
        IDENTITY_KEY_HEX,
        "01" + "00" * 30 + "80",  # the identity with the sign bit set
        "00" * 32,
        "26e8958fc2b227b045c3f489f2ef98f0d5dfac05d3c63339b13802886d53fc85",
        "c7176a703d4dd84fba3c0b760d10670f2a2053fa2c39ccc64ec7fd7792ac037a",
        "ec" + "ff" * 30 + "7f",
        "ed" + "ff" * 30 + "ff",
        "ef" + "ff" * 30 + "7f",  # p + 2: a second encoding of a point of large order
    ]
    in_page = tab.evaluate(
        "keys => keys.map(key => window.SotaRecords.weakKeyProblem("
        "Uint8Array.from(key.match(/../g), pair => parseInt(pair, 16))))",
        keys,
    )
    offline = [fairness.weak_key_problem(bytes.fromhex(key)) for key in keys]
    assert [problem is None for problem in in_page] == [problem is None for problem in offline]
    assert offline[:3] == [None] * 3
    for page_said, said in zip(in_page[3:], offline[3:], strict=True):
        assert page_said.startswith("it is " + " ".join(said.split()[:2])), (page_said, said)


def test_the_pin_follows_no_published_key_change_to_a_key_anyone_can_sign_with(
    tab: Any, live_server: LiveServer
) -> None:
    """A page showing the identity key, and a public-key answer listing a change to it signed
    by the pinned key: the pin stays, the warning names the change, and offers no trust in
    the key."""
    pinned = pin_the_key_shown(tab)
    real = fairness.load_private_key(Path(live_server.app.config["SIGNING_KEY_FILE"]).read_bytes())
    change = fairness.signed(
        real,
        fairness.key_change_document(
            old_public_key_hex=pinned,
            new_public_key_hex=IDENTITY_KEY_HEX,
            changed_at=fairness.format_time(datetime.now(UTC)),
        ),
    )
    published = {"public_key_hex": IDENTITY_KEY_HEX, "key_changes": [change]}
    tab.route("**/api/v1/fairness/public-key", lambda route: route.fulfill(json=published))

    def showing_the_identity(route: Any) -> None:
        page = (
            route.fetch()
            .text()
            .replace(
                f'data-service-public-key="{pinned}"',
                (f'data-service-public-key="{IDENTITY_KEY_HEX}"'),
            )
        )
        route.fulfill(body=page, content_type="text/html")

    tab.route("**/fairness", showing_the_identity)
    tab.goto("/fairness")
    tab.evaluate("window.SotaRecords.keyChecked()")
    assert tab.evaluate(PINNED)["public_key_hex"] == pinned
    assert tab.locator("[data-testid=key-change-followed]").count() == 0
    assert tab.locator("[data-testid=key-change-refused]").inner_text() == (
        f"key {pinned[:16]}… was handed on to key {IDENTITY_KEY_HEX[:16]}…, which is refused: "
        f"{SMALL_ORDER_IN_PAGE}; no change to such a key is followed"
    )
    assert tab.locator("[data-testid=key-changed] [data-accept-key]").count() == 0


def test_both_verifiers_refuse_a_key_change_dated_otherwise_than_the_scheme(tab: Any) -> None:
    """A key change whose ``changed_at`` is not written as ``YYYY-MM-DDTHH:MM:SS.ffffffZ``, or
    is no time at all, signed by the trusted key: the page, as ``verify.pyz``, follows no such
    change and names it."""
    sign_up(tab, "odd-change-time")
    tab.goto("/fairness")
    old = fairness.public_key_hex(OLD_KEY)
    for changed_at in ODD_CHANGE_TIMES:
        change = changed_at_otherwise(OLD_KEY, changed_at)
        moved = dict(GOOD, key_changes=[change])
        assert not verify_bundle(moved, old).ok
        in_page = tab.evaluate(TRUSTING, [moved, old])
        assert DATED_OTHERWISE in in_page.split(" | "), (changed_at, in_page)
        assert (
            tab.evaluate(
                "([a, b, changes]) => window.SotaRecords.successorChain(a, b, changes)",
                [old, fairness.public_key_hex(PAIR.key), [change]],
            )
            is None
        ), changed_at


def test_both_verifiers_fail_a_loop_of_key_changes_left_out_of_the_log(tab: Any) -> None:
    """The key in use hands the service back to the key it succeeded, the change left out of the
    log: the page, as ``verify.pyz``, follows no chain around the loop and names it, trusting
    either key, in either order of the list."""
    sign_up(tab, "unlogged-loop")
    tab.goto("/fairness")
    for order in (0, 1):
        bundle, back, _ = looped_unlogged(order)
        keys = sorted((fairness.public_key_hex(PAIR.key), fairness.public_key_hex(back)))
        said = (
            f"the key changes from key {keys[0][:16]}… lead back to it ({keys[0][:16]}… → "
            f"{keys[1][:16]}… → {keys[0][:16]}…), each signed by the key it retires: a key is "
            "taken into use once, so one of the changes is a rewrite"
        )
        for trusted in (back, PAIR.key):
            assert not verify_bundle(bundle, fairness.public_key_hex(trusted)).ok
            in_page = tab.evaluate(TRUSTING, [bundle, fairness.public_key_hex(trusted)])
            assert said in in_page.split(" | "), (order, in_page)
        assert (
            tab.evaluate(
                "([a, b, changes]) => window.SotaRecords.successorChain(a, b, changes)",
                [fairness.public_key_hex(back), KEY_HEX, bundle["key_changes"]],
            )
            is None
        )


def test_both_verifiers_find_a_key_handed_on_twice_once_by_a_refused_change(tab: Any) -> None:
    """A refused change (to a weak key, or dated otherwise than the scheme) beside another from
    the same key: the key was handed on twice, and the page, as ``verify.pyz``, follows neither
    change and names the fork, in either order."""
    sign_up(tab, "refused-twice")
    tab.goto("/fairness")
    old = fairness.public_key_hex(OLD_KEY)
    for refused in ("weak", "dated"):
        changes, said = handed_on_beside_a_refused_change(refused)
        for listed in (changes, changes[::-1]):
            bundle = dict(GOOD, key_changes=listed)
            assert not verify_bundle(bundle, old).ok
            assert said in tab.evaluate(TRUSTING, [bundle, old]), (refused, listed)
            assert (
                tab.evaluate(
                    "([a, b, changes]) => window.SotaRecords.successorChain(a, b, changes)",
                    [old, KEY_HEX, listed],
                )
                is None
            ), refused

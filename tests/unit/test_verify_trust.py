"""No verdict of "fair" without a key the user chose to trust: a pinned key, a key file, or the
known-keys file (trust on first use, a loud refusal when the key changes without a signed key
change); a bundle checked only against its own key is UNPINNED, exit 3."""

from __future__ import annotations

import io
import json
from pathlib import Path
from typing import Any

import bundles
import pytest
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PublicKey
from weak_key_support import IDENTITY_KEY_HEX
from weak_key_support import AnyonesKey

from sota_casino.core.fairness import key_change_document
from sota_casino.core.fairness import new_signing_key
from sota_casino.core.fairness import public_key_hex
from sota_casino.core.fairness import public_key_pem
from sota_casino.core.fairness import signed
from sota_casino.verify import EXIT_UNPINNED
from sota_casino.verify import main
from sota_casino.verify import verify_bundle
from sota_casino.verify.report import TRUST_SUCCESSOR
from sota_casino.verify.report import TRUST_UNPINNED
from sota_casino.verify.trust import logged_predecessors
from sota_casino.verify.trust import successor_chain

PAIR = bundles.Pair()
KEY_HEX = public_key_hex(PAIR.key)
GOOD = bundles.bundle(4, pair=PAIR)


def _run(*args: str) -> tuple[int, str]:
    out = io.StringIO()
    return main(list(args), out, io.StringIO()), out.getvalue()


@pytest.fixture
def good(tmp_path: Path) -> str:
    path = tmp_path / "good.json"
    path.write_text(json.dumps(GOOD))
    return str(path)


def test_a_bundle_checked_only_against_its_own_key_is_unpinned_with_exit_3(good: str) -> None:
    code, out = _run(good)
    assert code == EXIT_UNPINNED == 3
    assert "UNPINNED: signatures match the key in the bundle itself, which proves nothing" in out
    assert out.splitlines()[-1].startswith("Result: UNPINNED:") and "(exit 3)" in out
    report = verify_bundle(GOOD)
    assert report.ok and report.unpinned and report.trust == TRUST_UNPINNED
    code, out = _run(good, "--json")
    assert code == 3 and json.loads(out)["unpinned"] is True


def test_a_key_file_in_pem_or_hex_pins_the_key(good: str, tmp_path: Path) -> None:
    pem = tmp_path / "key.pem"
    pem.write_text(public_key_pem(PAIR.key))
    hex_file = tmp_path / "key.hex"
    hex_file.write_text(KEY_HEX.upper() + "\n")
    for path in (pem, hex_file):
        code, out = _run(good, "--key-file", str(path))
        assert code == 0 and f"Key pinned by key file {path}." in out
    other = tmp_path / "other.pem"
    other.write_text(public_key_pem(new_signing_key()))
    code, out = _run(good, "--key-file", str(other))
    assert code == 1 and "KEY CHANGED" in out
    bad = tmp_path / "bad.txt"
    bad.write_text("not a key")
    code, out = _run(good, "--key-file", str(bad))
    assert code == 2 and "neither a PEM public key nor 64 hex digits" in out


def test_the_known_keys_file_trusts_on_first_use_loudly_then_refuses_another_key(
    good: str, tmp_path: Path
) -> None:
    known = tmp_path / "config" / "known_keys"
    code, out = _run(good, "--service", "casino.example", "--known-keys", str(known))
    assert code == 0, out
    assert "FIRST USE: no key was known for casino.example" in out and str(known) in out
    assert known.read_text().split("\n")[-2] == f"casino.example {KEY_HEX}"
    code, out = _run(good, "--service", "casino.example", "--known-keys", str(known))
    assert code == 0 and "FIRST USE" not in out and "Key known for casino.example" in out

    impostor = bundles.Pair(key=new_signing_key())
    path = tmp_path / "impostor.json"
    path.write_text(json.dumps(bundles.bundle(4, pair=impostor)))
    code, out = _run(str(path), "--service", "casino.example", "--known-keys", str(known))
    assert code == 1 and "KEY CHANGED: the bundle names public key" in out
    assert known.read_text().split("\n")[-2] == f"casino.example {KEY_HEX}"  # unchanged
    # Another service name is another entry.
    code, out = _run(str(path), "--service", "other.example", "--known-keys", str(known))
    assert code == 0 and "FIRST USE" in out


def test_a_first_use_that_fails_writes_no_key(tmp_path: Path) -> None:
    broken = json.loads(json.dumps(GOOD))
    broken["rounds"][0]["document"]["payout"] += 1
    path = tmp_path / "broken.json"
    path.write_text(json.dumps(broken))
    known = tmp_path / "known_keys"
    code, out = _run(str(path), "--service", "casino.example", "--known-keys", str(known))
    assert code == 1 and "not written, since the bundle fails" in out
    assert not known.exists()


def test_a_known_keys_file_with_a_bad_line_is_unusable(good: str, tmp_path: Path) -> None:
    known = tmp_path / "known_keys"
    known.write_text("casino.example not-a-key\n")
    code, out = _run(good, "--service", "casino.example", "--known-keys", str(known))
    assert code == 2 and "line 1: expected SERVICE KEYHEX" in out


def test_service_and_a_pinned_key_cannot_be_combined(good: str) -> None:
    with pytest.raises(SystemExit) as exit_:
        _run(good, "--service", "x", "--public-key", KEY_HEX)
    assert exit_.value.code == 2


def _key_change(old, new) -> dict:  # type: ignore[no-untyped-def]
    """A key change from ``old`` to ``new`` (a key, or a public key in hex), signed by ``old``."""
    doc = key_change_document(
        old_public_key_hex=public_key_hex(old),
        new_public_key_hex=new if isinstance(new, str) else public_key_hex(new),
        changed_at=bundles.CREATED_AT,
    )
    return signed(old, doc)


def test_a_chain_of_key_changes_each_signed_by_the_key_it_retires_is_followed() -> None:
    old, middle = new_signing_key(), new_signing_key()
    changes = [_key_change(old, middle), _key_change(middle, PAIR.key)]
    moved = dict(GOOD, key_changes=changes)
    report = verify_bundle(moved, public_key_hex(old))
    assert report.ok and report.trust == TRUST_SUCCESSOR, report.failures
    assert report.trust_note.startswith("KEY CHANGED: the bundle's key")
    # A change signed by the NEW key (not the one it retires) proves nothing.
    forged = signed(PAIR.key, _key_change(middle, PAIR.key)["document"])
    report = verify_bundle(dict(GOOD, key_changes=[changes[0], forged]), public_key_hex(old))
    assert (
        not report.ok
        and "no chain of key changes, each signed by the key it retires, leads there"
        in report.failures[0].message
    )
    # Nor does a chain that does not start at the trusted key.
    report = verify_bundle(dict(GOOD, key_changes=changes[1:]), public_key_hex(old))
    assert not report.ok


OLD_KEY, OWN_KEY, OTHER_KEY = new_signing_key(), new_signing_key(), new_signing_key()
#: The honest change into the pair's key, and one a forger holding the database and the pair's
#: key logs beside it, from a key of his own, for his key to pass as its predecessor.
INTO_PAIR_KEY = _key_change(OLD_KEY, PAIR.key)
OWN_INTO_PAIR_KEY = _key_change(OWN_KEY, PAIR.key)


def _short(key: Ed25519PrivateKey) -> str:
    return f"{public_key_hex(key)[:16]}…"


def _bundle_signature_failures(bundle: dict[str, Any], trusted: Ed25519PrivateKey) -> list[str]:
    report = verify_bundle(bundle, public_key_hex(trusted))
    return [
        f.message for f in report.bundle_findings if (f.where, f.check) == ("bundle", "signature")
    ]


def test_a_logged_key_change_into_the_bundles_key_passes_trusting_either_key() -> None:
    honest = bundles.anchored(GOOD, PAIR.key, key_changes=[INTO_PAIR_KEY])
    for trusted in (OLD_KEY, PAIR.key):
        assert verify_bundle(honest, public_key_hex(trusted)).ok


@pytest.mark.parametrize("forged_first", [False, True])
def test_two_logged_key_changes_into_one_key_fail_the_bundle_in_either_order(
    forged_first: bool,
) -> None:
    """Whoever holds the database and the new key logs a second change into it, from a key of
    his own, proved by the new key's checkpoint: which old key is the new key's predecessor
    would hang on the order of the list, so the bundle fails, naming both old keys."""
    changes = [INTO_PAIR_KEY, OWN_INTO_PAIR_KEY]
    bundle = bundles.anchored(
        GOOD, PAIR.key, key_changes=changes[::-1] if forged_first else changes
    )
    first, second = (OWN_KEY, OLD_KEY) if forged_first else (OLD_KEY, OWN_KEY)
    expected = (
        f"entry 2: key.changed of key {_short(PAIR.key)} from key {_short(second)}, which key "
        f"{_short(first)} was changed into before (entry 1): a key is taken into use once, "
        "a rewrite"
    )
    for trusted in (PAIR.key, OLD_KEY):
        assert _bundle_signature_failures(bundle, trusted) == [expected]


@pytest.mark.parametrize("order", [1, -1])
def test_a_key_handed_on_twice_fails_the_bundle_in_either_order(order: int) -> None:
    """The trusted key signs a change to the bundle's key and another to a third key: which
    one the chain follows hangs on the order of the list (the first counts, and a chain that
    leads elsewhere is refused besides), so the bundle fails in either order, naming the key
    and both keys it was handed on to."""
    changes = [INTO_PAIR_KEY, _key_change(OLD_KEY, OTHER_KEY)][::order]
    bundle = bundles.anchored(GOOD, PAIR.key, key_changes=changes)
    successors = sorted([PAIR.key, OTHER_KEY], key=public_key_hex)
    expected = (
        f"key {_short(OLD_KEY)} was handed on twice, to key {_short(successors[0])} and to key "
        f"{_short(successors[1])}, each change signed by it: the service's keys change in one "
        "chain, each change signed by the key in use, a rewrite"
    )
    # Nor does the chain lead to the bundle's key, whichever change the list holds first.
    refused = f"KEY CHANGED: the bundle names public key {_short(PAIR.key)}, not the trusted key"
    for failures in (
        _bundle_signature_failures(bundle, OLD_KEY),
        # Unlogged, the old key's signatures alone say it.
        _bundle_signature_failures(dict(GOOD, key_changes=changes), OLD_KEY),
    ):
        assert expected in failures
        assert any(failure.startswith(refused) for failure in failures)


def _hex(*keys: Ed25519PrivateKey) -> list[str]:
    return [public_key_hex(key) for key in keys]


@pytest.mark.parametrize("order", [1, -1])
def test_a_key_handed_on_twice_has_no_successor_in_either_order(order: int) -> None:
    """Whoever holds a key can sign a second change from it to a key of his own: a chain that
    reaches a key handed on twice stops there, to the key of either change, whichever the list
    holds first, or the one the chain leads to would be whichever the holder puts first."""
    middle, other = new_signing_key(), new_signing_key()
    old_hex, middle_hex, other_hex, pair_hex = _hex(OLD_KEY, middle, other, PAIR.key)
    at_the_trusted_key = [_key_change(OLD_KEY, PAIR.key), _key_change(OLD_KEY, other)][::order]
    for target in (pair_hex, other_hex):
        assert successor_chain(old_hex, target, at_the_trusted_key) is None
    on_the_way = [
        _key_change(OLD_KEY, middle),
        *[_key_change(middle, PAIR.key), _key_change(middle, other)][::order],
    ]
    for target in (pair_hex, other_hex):
        assert successor_chain(old_hex, target, on_the_way) is None
    # The keys before the fork are still reached, and the trusted key is its own chain.
    assert successor_chain(old_hex, middle_hex, on_the_way) == [on_the_way[0]["document"]]
    assert successor_chain(old_hex, old_hex, at_the_trusted_key) == []


def test_a_key_change_listed_twice_is_no_fork() -> None:
    """The same change twice, or two changes from one key to the same key (signed at other
    times), hand the key on once: the chain follows them."""
    once = _key_change(OLD_KEY, PAIR.key)
    again = signed(OLD_KEY, {**once["document"], "changed_at": "2026-02-01T00:00:00.000000Z"})
    old_hex, pair_hex = _hex(OLD_KEY, PAIR.key)
    for changes in ([once, once], [once, again], [again, once]):
        assert successor_chain(old_hex, pair_hex, changes) == [changes[0]["document"]]


def test_a_change_into_a_key_from_a_key_of_ones_own_counts_only_once_logged() -> None:
    """Anyone can sign a change from a key of his own into the bundle's key: unlogged, it is
    that key's word only, and fails nothing (nor makes that key a predecessor)."""
    honest = bundles.anchored(GOOD, PAIR.key, key_changes=[INTO_PAIR_KEY])
    with_own = dict(honest, key_changes=[*honest["key_changes"], OWN_INTO_PAIR_KEY])
    for trusted in (OLD_KEY, PAIR.key):
        assert verify_bundle(with_own, public_key_hex(trusted)).ok


def test_a_key_change_logged_with_true_for_its_version_1_is_not_the_signed_change() -> None:
    """The log's entry must hold exactly the signed change, as JSON: ``true`` is not ``1``,
    though Python's ``True == 1``. A log holding ``"v": true`` beside the change signed with
    ``"v": 1`` counted as logged here while the page's verifier, comparing canonical JSON,
    said it was not: the two verifiers disagreed on the key's predecessor."""
    honest = bundles.anchored(GOOD, PAIR.key, key_changes=[INTO_PAIR_KEY])
    old_hex = public_key_hex(OLD_KEY)
    assert logged_predecessors(KEY_HEX, honest["key_changes"], [KEY_HEX]) == [old_hex]
    loose = {**INTO_PAIR_KEY, "document": {**INTO_PAIR_KEY["document"], "v": True}}
    logged_loosely = bundles.anchored(GOOD, PAIR.key, key_changes=[loose])
    item = logged_loosely["key_changes"][0]
    item["document"] = INTO_PAIR_KEY["document"]  # the change as signed, beside its entry
    assert item["entry"]["data"]["key_change"]["document"]["v"] is True
    assert logged_predecessors(KEY_HEX, logged_loosely["key_changes"], [KEY_HEX]) == []


def test_a_loop_of_logged_key_changes_back_to_a_retired_key_fails_the_bundle() -> None:
    """The key in use hands the service back to the key it succeeded (``A`` to ``B``, then
    ``B`` to ``A``, each change signed by the key it retires and logged): a retired key taken
    into use again, which the whole-log checks name; a verifier trusting ``B`` followed it to
    ``A`` and passed the bundle. It fails, trusting either key, naming the loop."""
    retiring = new_signing_key()
    loop = [_key_change(PAIR.key, retiring), _key_change(retiring, PAIR.key)]
    bundle = bundles.anchored(GOOD, PAIR.key, key_changes=loop)
    expected = (
        f"entry 2: key.changed of key {_short(PAIR.key)}, which was in use before (entry 1): "
        "a key is taken into use once, a rewrite"
    )
    assert _bundle_signature_failures(bundle, PAIR.key) == [expected]
    assert not verify_bundle(bundle, KEY_HEX).ok
    # Trusting ``B``, no chain leads around the loop: ``A``'s checkpoint proves nothing, and the
    # loop is named by its signatures.
    low, high = sorted((KEY_HEX, public_key_hex(retiring)))
    assert _bundle_signature_failures(bundle, retiring)[1:] == [
        f"the key changes from key {low[:16]}… lead back to it ({low[:16]}… → {high[:16]}… → "
        f"{low[:16]}…), each signed by the key it retires: a key is taken into use once, a rewrite"
    ]
    assert not verify_bundle(bundle, public_key_hex(retiring)).ok


def _handed_on_to_anyone(old: Ed25519PrivateKey) -> dict[str, Any]:
    """A bundle anyone could have made once ``old`` signed a key change to the identity key:
    the change, logged, in its ``key_changes``; every document, and the checkpoint its log is
    proved into, signed as anyone can sign under that key."""
    anyone = bundles.Pair(key=AnyonesKey())
    change = _key_change(old, IDENTITY_KEY_HEX)
    return bundles.anchored(bundles.bundle(4, pair=anyone), anyone.key, key_changes=[change])


HANDED_ON_TO_ANYONE = _handed_on_to_anyone(PAIR.key)
SMALL_ORDER = "of small order: signatures anyone makes without a private key verify under it"


def test_a_key_change_to_a_key_anyone_can_sign_with_is_not_followed(tmp_path: Path) -> None:
    """The trusted key hands the service on to the identity key, under which one signature
    verifies every document: from then on anyone could sign a round "by the service". The
    verifier follows no such change and says why; the known-keys file never takes the key."""
    weak_change = (
        f"key {KEY_HEX[:16]}… was handed on to key {IDENTITY_KEY_HEX[:16]}…, which is "
        f"{SMALL_ORDER}; no change to such a key is followed"
    )
    report = verify_bundle(HANDED_ON_TO_ANYONE, KEY_HEX)
    assert not report.ok and report.trust != TRUST_SUCCESSOR
    assert weak_change in [f.message for f in report.bundle_findings]
    assert successor_chain(KEY_HEX, IDENTITY_KEY_HEX, HANDED_ON_TO_ANYONE["key_changes"]) is None
    # Unpinned, or trusting the bundle's key on first use, the key itself is refused.
    for trusted in (None, IDENTITY_KEY_HEX):
        findings = [f.message for f in verify_bundle(HANDED_ON_TO_ANYONE, trusted).bundle_findings]
        assert f"the key {IDENTITY_KEY_HEX[:16]}… is {SMALL_ORDER}; it signs nothing" in findings

    path = tmp_path / "anyone.json"
    path.write_text(json.dumps(HANDED_ON_TO_ANYONE))
    code, out = _run(str(path), "--public-key", KEY_HEX)
    assert code == 1 and weak_change in out
    known = tmp_path / "known_keys"
    known.write_text(f"casino.example {KEY_HEX}\n")
    for service in ("casino.example", "first.example"):  # a known key, then a first use
        code, out = _run(str(path), "--service", service, "--known-keys", str(known))
        assert code == 1, out
    assert known.read_text() == f"casino.example {KEY_HEX}\n"


@pytest.mark.parametrize(
    "weak",
    [IDENTITY_KEY_HEX, "00" * 32, "ec" + "ff" * 30 + "7f", "ee" + "ff" * 30 + "7f"],
    ids=["identity", "order 4", "order 2", "non-canonical"],
)
def test_a_weak_key_given_to_trust_is_unusable(
    good: str, tmp_path: Path, capsys: pytest.CaptureFixture[str], weak: str
) -> None:
    with pytest.raises(SystemExit) as exit_:
        _run(good, "--public-key", weak)
    assert exit_.value.code == 2
    assert f"--public-key holds the key {weak[:16]}…, which is " in capsys.readouterr().err
    key_file = tmp_path / "weak.hex"
    key_file.write_text(weak)
    code, out = _run(good, "--key-file", str(key_file))
    assert code == 2 and f"key file {key_file} holds the key {weak[:16]}…, which is " in out
    known = tmp_path / "known_keys"
    known.write_text(f"casino.example {weak}\n")
    code, out = _run(good, "--service", "casino.example", "--known-keys", str(known))
    assert code == 2 and f"{known} line 1 holds the key {weak[:16]}…, which is " in out
    records = tmp_path / "records.json"
    records.write_text(
        json.dumps({"format": "sota-casino-records", "v": 1, "public_key_hex": weak})
    )
    code, out = _run(good, "--records", str(records))
    assert code == 2 and f"public_key_hex {weak[:16]}… is " in out


def test_a_weak_key_in_a_pem_key_file_is_unusable(good: str, tmp_path: Path) -> None:
    pem = tmp_path / "identity.pem"
    identity = Ed25519PublicKey.from_public_bytes(bytes.fromhex(IDENTITY_KEY_HEX))
    pem.write_text(public_key_pem(identity))
    code, out = _run(good, "--key-file", str(pem))
    assert code == 2 and f"which is {SMALL_ORDER}; refused" in out


#: The trusted key handing the service on to the bundle's key, the change dated otherwise than
#: the scheme writes times: each form valid-looking, or no time at all.
ODD_CHANGE_TIMES = ("2025-04-01T12:00:00Z", "2025-04-01T12:00:00.000000+00:00", "", 0, None)


def changed_at_otherwise(old: Ed25519PrivateKey, changed_at: object) -> dict[str, Any]:
    """A key change from ``old`` to the pair's key, signed by ``old``, dated ``changed_at``."""
    doc = dict(_key_change(old, PAIR.key)["document"], changed_at=changed_at)
    return signed(old, doc)


#: What the verifiers say of :func:`changed_at_otherwise` from :data:`OLD_KEY`.
DATED_OTHERWISE = (
    f"key {_short(OLD_KEY)} was handed on to key {KEY_HEX[:16]}… with a changed_at not "
    "written as YYYY-MM-DDTHH:MM:SS.ffffffZ; no change so dated is followed"
)


@pytest.mark.parametrize("changed_at", ODD_CHANGE_TIMES)
def test_a_key_change_dated_otherwise_than_the_scheme_is_not_followed(changed_at: object) -> None:
    """A key change is a signed document like the others, and its ``changed_at`` the only time
    it says: one not written as ``YYYY-MM-DDTHH:MM:SS.ffffffZ`` is no change of the scheme, and
    is refused as a receipt or a checkpoint so dated is, naming it."""
    change = changed_at_otherwise(OLD_KEY, changed_at)
    moved = dict(GOOD, key_changes=[change])
    report = verify_bundle(moved, public_key_hex(OLD_KEY))
    assert not report.ok and report.trust != TRUST_SUCCESSOR
    assert DATED_OTHERWISE in [f.message for f in report.bundle_findings]
    assert successor_chain(public_key_hex(OLD_KEY), KEY_HEX, [change]) is None
    # Logged and trusting the new key, it fails the bundle alike.
    logged = bundles.anchored(GOOD, PAIR.key, key_changes=[change])
    assert DATED_OTHERWISE in [f.message for f in verify_bundle(logged, KEY_HEX).bundle_findings]


def looped_unlogged(order: int) -> tuple[dict[str, Any], Ed25519PrivateKey, str]:
    """The service hands its key on (``A``, the pair's key, to ``B``, logged, as
    ``flask keys rotate`` does) and back (``B`` to ``A``, signed by ``B``, left out of the log),
    in either order in ``key_changes``; the bundle under ``A``. Return it, ``B``, and what the
    offline verifier says."""
    back = new_signing_key()
    bundle = bundles.anchored(GOOD, PAIR.key, key_changes=[_key_change(PAIR.key, back)])
    changes = [*bundle["key_changes"], _key_change(back, PAIR.key)]
    bundle["key_changes"] = changes if order == 0 else changes[::-1]
    low, high = sorted((KEY_HEX, public_key_hex(back)))
    said = (
        f"the key changes from key {low[:16]}… lead back to it ({low[:16]}… → {high[:16]}… → "
        f"{low[:16]}…), each signed by the key it retires: a key is taken into use once, a rewrite"
    )
    return bundle, back, said


@pytest.mark.parametrize("order", [0, 1])
def test_a_loop_of_key_changes_back_to_a_retired_key_fails_logged_or_not(
    order: int, tmp_path: Path
) -> None:
    """The holder of the key in use signs a change back to the key it succeeded, and leaves it
    out of the log: a verifier trusting the key in use followed it to the retired key, moved
    its known-keys file there, and passed the bundle. Each change is signed by the key it
    retires, so the loop is the keys' holders' own word: it fails, trusting either key, and no
    chain leads around it."""
    bundle, back, said = looped_unlogged(order)
    for trusted in (back, PAIR.key):
        report = verify_bundle(bundle, public_key_hex(trusted))
        assert not report.ok and report.trust != TRUST_SUCCESSOR, trusted
        assert said in _bundle_signature_failures(bundle, trusted)
    assert successor_chain(public_key_hex(back), KEY_HEX, bundle["key_changes"]) is None
    assert successor_chain(KEY_HEX, public_key_hex(back), bundle["key_changes"]) is None

    path = tmp_path / "looped.json"
    path.write_text(json.dumps(bundle))
    known = tmp_path / "known_keys"
    known.write_text(f"casino.example {public_key_hex(back)}\n")
    code, out = _run(str(path), "--service", "casino.example", "--known-keys", str(known))
    assert code == 1 and said in out, out
    assert known.read_text() == f"casino.example {public_key_hex(back)}\n"


def handed_on_beside_a_refused_change(refused: str) -> tuple[list[dict[str, Any]], str]:
    """The trusted key (:data:`OLD_KEY`) hands the service on to the pair's key, and signs a
    second change from it, which is refused (``weak``: to the identity key; ``dated``: dated
    otherwise than the scheme, to a key of its own), in either order; return the changes and
    what both verifiers say of the fork."""
    other = IDENTITY_KEY_HEX if refused == "weak" else public_key_hex(OTHER_KEY)
    second = _key_change(OLD_KEY, other)
    if refused == "dated":
        second = signed(OLD_KEY, dict(second["document"], changed_at="2025-04-01T12:00:00Z"))
    first, then = sorted((KEY_HEX, other))
    return [second, _key_change(OLD_KEY, PAIR.key)], (
        f"key {_short(OLD_KEY)} was handed on twice, to key {first[:16]}… and to key "
        f"{then[:16]}…, each change signed by it"
    )


@pytest.mark.parametrize("refused", ["weak", "dated"])
@pytest.mark.parametrize("order", [0, 1])
def test_a_key_handed_on_twice_once_by_a_refused_change_has_no_successor(
    refused: str, order: int
) -> None:
    """A refused change is still its old key's signature handing the service on: beside another
    change from that key it is a fork, and no chain leads on from the key, as the monitor and
    the page's pin followed the other change."""
    changes, said = handed_on_beside_a_refused_change(refused)
    changes = changes if order == 0 else changes[::-1]
    assert successor_chain(public_key_hex(OLD_KEY), KEY_HEX, changes) is None
    report = verify_bundle(dict(GOOD, key_changes=changes), public_key_hex(OLD_KEY))
    assert not report.ok and report.trust != TRUST_SUCCESSOR
    assert any(
        said in message
        for message in _bundle_signature_failures(dict(GOOD, key_changes=changes), OLD_KEY)
    )

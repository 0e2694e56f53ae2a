"""The browser as a witness of the casino's public log, in Chromium: it keeps the signed
checkpoints the pages carry, checks each extends the one before, and says loudly, naming both
sizes and roots, when the casino signs a forked history."""

from __future__ import annotations

import hashlib
import json
import re
import sys
import time
from datetime import UTC
from datetime import datetime
from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest
from browser_support import FORGET_WITNESS
from browser_support import KEPT_ALARM
from browser_support import KEPT_CHECKPOINT
from browser_support import KEPT_UNPROVEN
from browser_support import WITNESS_KEEP
from browser_support import log_in
from browser_support import sign_up
from browser_support import wait_until
from sqlalchemy import select

from sota_casino import config
from sota_casino.core import fairness
from sota_casino.core.audit_chain import checkpoint_document
from sota_casino.models import AuditEntry
from sota_casino.models import User
from sota_casino.services import audit

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from log_support import fork_log  # noqa: E402
from web_support import plant_server_seed  # noqa: E402

pytestmark = pytest.mark.browser

WITNESS = "[data-testid=log-witness]"
SPOKEN = f"{WITNESS} > span"  # the witness has checked what its page carries, and said so
#: The alarm and the checkpoints shown unproven that the witness keeps ([None, None]: neither).
KEPT_ALARM_AND_UNPROVEN = "Promise.all([window.SotaLog.alarm(), window.SotaLog.unproven()])"


def play_a_round(tab: Any) -> int:
    tab.goto("/casino-war")
    tab.click("#deal")
    tab.wait_for_selector("[data-testid=result], #surrender")
    if tab.locator("#surrender").count() and tab.locator("#surrender").is_visible():
        tab.click("#surrender")
        tab.wait_for_selector("[data-testid=result]")
    rounds = tab.evaluate("async () => (await (await fetch('/api/v1/rounds?limit=1')).json())")
    return int(rounds["rounds"][0]["id"])


def proof_of(tab: Any, round_id: int) -> dict[str, Any]:
    answer = tab.evaluate(
        "async id => { const r = await fetch(`/api/v1/rounds/${id}/proof`);"
        " return { status: r.status, body: await r.json() }; }",
        round_id,
    )
    assert answer["status"] == 200, answer
    return dict(answer["body"])


def show_a_forged_checkpoint(tab: Any) -> None:
    """Show the page's witness the checkpoint it keeps with another root under the same
    signature, as a casino serving a second history would, and let it say what it found."""
    kept = tab.evaluate("window.SotaLog.kept()")
    forked = {"document": {**kept["document"], "root": "ab" * 32}, "signature": kept["signature"]}
    tab.evaluate(
        "seen => window.SotaLog.pinnedCryptoKey().then(key => window.SotaLog.observe(seen, key))"
        ".then(() => window.SotaLog.show(null))",
        forked,
    )


def test_the_page_checks_the_log_up_to_a_size_and_names_a_fork(
    forked_tab: Any, forked_server: Any
) -> None:
    """On a server of its own: the fork below would break every later check of a shared log."""
    tab, live_server = forked_tab, forked_server
    username = sign_up(tab, "witness")
    first = proof_of(tab, play_a_round(tab))["checkpoint"]["document"]
    tab.goto("/fairness")
    witness = tab.locator(WITNESS)
    witness.filter(has_text="checked the casino's public log up to").wait_for()
    assert int(witness.get_attribute("data-log-size") or 0) >= first["size"]

    # A later round: its page carries a larger checkpoint, checked with a consistency proof.
    later = proof_of(tab, play_a_round(tab))["checkpoint"]["document"]
    assert later["size"] > first["size"]
    tab.goto("/fairness")
    witness.filter(has_text=f"up to {later['size']} entries").wait_for()
    kept = tab.evaluate("window.SotaLog.kept()")["document"]
    assert kept == later

    # The operator, with the key and the database, rewrites this player's registration and
    # signs the rewritten log over the same size: the next page the browser sees carries it.
    session = live_server.app.extensions["sota_casino.sessionmaker"]()
    with session.begin():
        user_id = session.scalar(select(User.id).where(User.username == username))
        seq = session.scalar(
            select(AuditEntry.seq).where(
                AuditEntry.action == "user.registered", AuditEntry.subject == f"user:{user_id}"
            )
        )
    forked = fork_log(session, seq, kept["size"])["document"]
    session.close()
    assert forked["root"] != kept["root"]
    tab.goto("/fairness")
    alarm = tab.locator(f"{WITNESS}[role=alert]")
    alarm.wait_for()
    text = alarm.inner_text()
    assert "THE CASINO SHOWED THIS BROWSER TWO HISTORIES" in text
    assert (
        f"FORK: two signed checkpoints over {kept['size']}\u00a0entries differ: "
        f"kept size {kept['size']} root {kept['root']}, "
        f"served size {forked['size']} root {forked['root']}"
    ) in text
    # It stays: every page after says so until the player clears this browser's storage.
    tab.goto("/casino-war")
    tab.goto("/fairness")
    tab.locator(WITNESS).filter(has_text="TWO HISTORIES").wait_for()  # the witness speaks last


def test_a_newer_checkpoint_dated_before_the_kept_one_is_an_alarm(
    tab: Any, live_server: Any
) -> None:
    """The casino that left a round out of its log dates its new checkpoints back, so that none
    is dated past the round's bound: a checkpoint over more entries dated before the one kept
    here is its own signed word against itself, whatever proof joins the two trees."""
    a_larger_checkpoint_to_prove(tab, "backdate")
    later = proof_of(tab, play_a_round(tab))["checkpoint"]["document"]
    kept = tab.evaluate("window.SotaLog.kept()")["document"]
    assert later["size"] > kept["size"]
    session = live_server.app.extensions["sota_casino.sessionmaker"]()
    signer = session.info["context"].signing_key
    session.close()
    earlier = "2020-01-01T00:00:00.000000Z"
    backdated = {**later, "time": earlier}
    observed = tab.evaluate(
        "seen => window.SotaLog.pinnedCryptoKey().then(key => window.SotaLog.observe(seen, key))",
        {"document": backdated, "signature": fairness.sign(signer, backdated)},
    )
    assert observed["ok"] is False, observed
    assert tab.evaluate("window.SotaLog.kept()")["document"] == kept  # not replaced by it
    tab.goto("/fairness")  # the alarm stays, on every page after
    alarm = tab.locator(f"{WITNESS}[role=alert]")
    alarm.wait_for()
    assert (
        "THE CASINO SHOWED THIS BROWSER TWO HISTORIES. BACKDATED: of two signed checkpoints, the "
        "one over more entries is dated before the one over fewer: "
        f"kept size {kept['size']} root {kept['root']} at {kept['time']}, "
        f"served size {later['size']} root {later['root']} at {earlier}."
    ) in alarm.inner_text(), alarm.inner_text()


def test_an_honest_casino_is_no_cheat_when_this_computers_clock_moves(
    tab: Any, live_server: Any
) -> None:
    """The witness judges the casino by its signed times, never by this computer's clock: its
    clock set an hour forward between two pages (the page reopened after the clock changed),
    set back, or running fast, an honest casino's next checkpoint over more entries, signed a
    minute after the kept one was served, is no alarm. (Held to the time passed on the
    browser's clock, a clock set forward by more than 10 minutes took it for a back-dated one.)
    A checkpoint over more entries signed with an earlier time than the kept one is still
    BACKDATED, whatever the clock."""
    smaller = a_larger_checkpoint_to_prove(tab, "clockmoves")
    larger = proof_of(tab, play_a_round(tab))["checkpoint"]["document"]
    assert larger["size"] > smaller["size"]
    tab.goto("/fairness")  # its witness done, nothing else writes what is kept meanwhile
    tab.wait_for_selector(f"{WITNESS}.ok")
    session = live_server.app.extensions["sota_casino.sessionmaker"]()
    signer = session.info["context"].signing_key
    session.close()

    def signed(document: dict[str, Any], at: datetime) -> dict[str, Any]:
        dated = {**document, "time": fairness.format_time(at)}
        return {"document": dated, "signature": fairness.sign(signer, dated)}

    now = datetime.now(UTC)
    now = now.replace(microsecond=now.microsecond // 1000 * 1000)  # the browser counts ms
    kept = signed(smaller, now - timedelta(minutes=5))
    honest = signed(larger, now + timedelta(minutes=1))
    observe = (
        "seen => window.SotaLog.pinnedCryptoKey().then(async key => {"
        " const outcome = await window.SotaLog.observe(seen, key, new Date());"
        " await window.SotaLog.show(outcome); return outcome; })"
    )

    def served(seen: dict[str, Any], at: datetime) -> Any:
        """Serve ``seen`` as the latest to the page at ``at`` by the browser's clock."""
        tab.clock.set_fixed_time(at)
        return tab.evaluate(observe, seen)

    hour = timedelta(hours=1)
    # Each case: when by the browser's clock it is served the kept one, twice, and then the
    # honest larger one, a minute later by the casino's clock.
    moves = {
        "set an hour forward": (now, now + hour, now + hour + timedelta(minutes=1)),
        "set forward, the page reopened": (now, now + 3 * hour, now + 3 * hour),
        "set an hour back": (now, now - hour, now - hour + timedelta(minutes=1)),
        "set right after running an hour fast": (now + hour, now, now + timedelta(minutes=1)),
        "15 minutes fast": (now + timedelta(minutes=15),) * 2 + (now + timedelta(minutes=16),),
    }
    outcomes = {}
    for name, (first, again, then) in moves.items():
        tab.evaluate(FORGET_WITNESS)
        tab.evaluate(WITNESS_KEEP, [KEPT_CHECKPOINT, kept])
        assert served(kept, first)["ok"] is True, name
        assert served(kept, again)["ok"] is True, name
        outcomes[name] = served(honest, then)["ok"]
    assert outcomes == dict.fromkeys(moves, True)
    assert tab.evaluate("window.SotaLog.kept()") == honest

    # Signed with an earlier time than the kept one, over more entries: the casino's own word
    # against itself, whatever the browser's clock reads or did.
    for name, (first, again, then) in moves.items():
        tab.evaluate(FORGET_WITNESS)
        tab.evaluate(WITNESS_KEEP, [KEPT_CHECKPOINT, kept])
        served(kept, first)
        served(kept, again)
        back = signed(larger, now - timedelta(minutes=6))
        assert served(back, then)["ok"] is False, name
        assert tab.evaluate("window.SotaLog.kept()") == kept, name
    alarm = tab.locator(f"{WITNESS}[role=alert]").inner_text()
    assert alarm.startswith(
        "✗ THE CASINO SHOWED THIS BROWSER TWO HISTORIES. BACKDATED: of two signed checkpoints, "
        "the one over more entries is dated before the one over fewer: "
        f"kept size {smaller['size']} root {smaller['root']} at {kept['document']['time']}, "
    ), alarm


def test_the_witness_status_reads_as_one_finnish_sentence(tab: Any) -> None:
    """The status is one translated sentence with its size in it, not English-shaped pieces."""
    sign_up(tab, "todistaja")
    with tab.expect_navigation():
        tab.select_option("#language-choice", "fi")
    tab.wait_for_selector("html[lang=fi]")
    proof_of(tab, play_a_round(tab))  # the round's proof: a checkpoint is signed over it
    tab.goto("/fairness")
    tab.wait_for_selector(f"{WITNESS}.ok")
    witness = tab.locator(WITNESS)
    size = witness.get_attribute("data-log-size")
    assert witness.inner_text() == (
        f"✓ Tämä selain on tarkistanut kasinon julkisen lokin {size}\u00a0merkintään asti: "
        "jokainen sen näkemä tarkistuspiste on kiinnitetyn avaimen allekirjoittama ja jatkaa "
        "edellistä."
    )
    # A fork reads whole too: the alarm's reason inside the alarm's sentence.
    show_a_forged_checkpoint(tab)
    alarm = tab.locator(f"{WITNESS}[role=alert]").inner_text()
    assert alarm == (
        "✗ KASINO TARJOSI TÄLLE SELAIMELLE TARKISTUSPISTEEN, JOTA SEN AVAIN EI OLE "
        "ALLEKIRJOITTANUT. VÄÄRÄ ALLEKIRJOITUS: "
        f"tarkistuspiste (koko {size}, juuri {'ab' * 32}) ei ole kiinnitetyn avaimen "
        "allekirjoittama. Allekirjoittamattomana se ei todista mitään kenellekään muulle, mutta "
        "rehellinen kasino ei tarjoa sellaista (tämä selain muistaa sen, kunnes sen tallennustila "
        "tyhjennetään)."
    ), alarm


def test_an_alarm_reads_in_the_language_of_the_page_that_shows_it(tab: Any) -> None:
    """The alarm is kept as its message, not its text: raised on an English page, it reads in
    Finnish once the player switches; an alarm an earlier page kept as text still shows."""
    sign_up(tab, "kielet")
    proof_of(tab, play_a_round(tab))
    tab.goto("/fairness")
    tab.wait_for_selector(f"{WITNESS}.ok")
    size = tab.locator(WITNESS).get_attribute("data-log-size")
    show_a_forged_checkpoint(tab)
    alarm = tab.locator(f"{WITNESS}[role=alert]")
    # Unsigned, the checkpoint is no proof to show anyone: the alarm does not call it one.
    assert alarm.inner_text() == (
        "✗ THE CASINO SERVED THIS BROWSER A CHECKPOINT ITS KEY DID NOT SIGN. BAD SIGNATURE: the "
        f"checkpoint size {size} root {'ab' * 32} is not signed by the pinned key. Unsigned, it "
        "proves nothing to anyone else, but an honest casino serves none (this browser remembers "
        "it until its storage is cleared)."
    ), alarm.inner_text()

    with tab.expect_navigation():
        tab.select_option("#language-choice", "fi")
    tab.wait_for_selector("html[lang=fi]")
    assert alarm.inner_text().startswith(
        "✗ KASINO TARJOSI TÄLLE SELAIMELLE TARKISTUSPISTEEN, JOTA SEN AVAIN EI OLE "
        "ALLEKIRJOITTANUT. VÄÄRÄ ALLEKIRJOITUS: "
        f"tarkistuspiste (koko {size}, juuri {'ab' * 32}) ei ole kiinnitetyn avaimen "
        "allekirjoittama."
    ), alarm.inner_text()
    # On a phone the alarm's 64-digit root wraps inside the alarm instead of running out of it.
    tab.set_viewport_size({"width": 390, "height": 844})
    assert alarm.evaluate("box => box.scrollWidth <= box.clientWidth")
    tab.set_viewport_size({"width": 1280, "height": 860})

    # Kept as text by an earlier version of the page, in localStorage: taken over where the
    # witness keeps no alarm yet, and shown as it was written.
    tab.evaluate(WITNESS_KEEP, [KEPT_ALARM, None])
    tab.evaluate(
        "localStorage.setItem('sota-casino.log-alarm.v1', JSON.stringify({why: 'FORK: kept "
        "size 3 root aa, served size 3 root bb', kept: null, seen: null, at: '2026-12-01'}))"
    )
    tab.reload()
    tab.wait_for_selector(f"{WITNESS}[role=alert]")
    assert "HISTORIAA. FORK: kept size 3 root aa, served size 3 root bb. Molemmat" in (
        alarm.inner_text()
    )


CONSISTENCY = "/api/v1/transparency/consistency"


def carried_checkpoint(tab: Any) -> dict[str, Any]:
    """The signed checkpoint the page carries, which its witness checks."""
    carried = tab.evaluate(
        "JSON.parse(document.querySelector('script[data-log-checkpoint]').textContent)"
    )
    return dict(carried["checkpoint"]["document"])


def reasons_shown(warning: str) -> dict[int, str]:
    """What the unproven warning says of each size it names: "… shown since (size 12: why;
    sizes 15, 19: another why). …" gives {12: why, 15: another why, 19: another why}."""
    listed = re.search(r"what it was shown since \((.*)\)\. A casino", warning)
    assert listed, warning
    reasons = {}
    for group in listed.group(1).split("; "):
        found = re.fullmatch(r"sizes? ([\d, ]+): (.*)", group)
        assert found, warning
        sizes, why = found.groups()
        reasons.update({int(size): why for size in sizes.split(", ")})
    return reasons


def a_larger_checkpoint_to_prove(tab: Any, prefix: str) -> dict[str, Any]:
    """Sign up, have the witness keep a checkpoint, then play on so that the next page carries a
    larger one, which only a consistency proof joins to it; return the kept one's document."""
    sign_up(tab, prefix)
    proof_of(tab, play_a_round(tab))
    tab.goto("/fairness")
    tab.wait_for_selector(f"{WITNESS}.ok")
    kept = tab.evaluate("window.SotaLog.kept()")["document"]
    proof_of(tab, play_a_round(tab))  # a later round, proved into a later checkpoint
    return dict(kept)


def test_a_withheld_consistency_proof_is_a_lasting_warning_until_one_is_had(tab: Any) -> None:
    """A casino that forked its log can hide the fork from this browser by never proving the
    new checkpoint consistent with the kept one: the page warns, naming both sizes, whatever
    the refusal looks like, keeps the old checkpoint, and remembers the unproven one until a
    later proof joins it."""
    kept = a_larger_checkpoint_to_prove(tab, "refused")
    tab.expected_failures.append(CONSISTENCY)
    failure: dict[str, Any] = {"old_size": None}

    def refuse(route: Any) -> None:
        old_size = int(route.request.url.split("old_size=")[1].split("&")[0])
        if failure["old_size"] not in (None, old_size):
            route.continue_()
        elif failure["how"] == "abort":
            route.abort()
        else:
            route.fulfill(**failure["how"])

    tab.route(lambda url: CONSISTENCY in url, refuse)
    witness = tab.locator(WITNESS)
    seen: dict[str, Any] = {}
    for how, why in (
        ({"status": 500, "body": "oops"}, "the service answered HTTP 500"),
        ({"status": 200, "body": "<html>not json</html>"}, "is not a consistency proof"),
        ({"status": 200, "json": {"proof": "ab" * 32}}, "is not a consistency proof"),
        ("abort", "the service could not be reached"),
        ({"status": 503, "headers": {"Retry-After": "60"}, "body": ""}, "unavailable for now"),
    ):
        failure["how"] = how
        tab.goto("/fairness")
        witness.filter(has_text=why).wait_for()
        seen = carried_checkpoint(tab)
        assert seen["size"] > kept["size"]
        assert "log-witness warn" == witness.get_attribute("class")
        text = witness.inner_text()
        assert f"the checkpoint it keeps (size {kept['size']})" in text, text
        assert why in reasons_shown(text).get(seen["size"], ""), text
        # Never kept without the proof: the next page asks again from the same checkpoint.
        assert tab.evaluate("window.SotaLog.kept()")["document"] == kept

    # A later checkpoint proved from the kept one is kept, but the one never proved still warns.
    proof_of(tab, play_a_round(tab))
    failure.update(old_size=seen["size"], how={"status": 500, "body": ""})
    tab.goto("/casino-war")
    later = carried_checkpoint(tab)
    wait_until(
        tab, "async size => (await window.SotaLog.kept()).document.size === size", later["size"]
    )
    tab.goto("/fairness")
    witness.filter(has_text="the service answered HTTP 500").wait_for()
    assert f"what it was shown since (size {seen['size']}: the service answered HTTP 500)" in (
        witness.inner_text()
    )
    assert tab.evaluate("window.SotaLog.kept()")["document"] == later

    # The proof had at last: the warning goes, and the page says what it checked.
    tab.unroute_all()
    tab.goto("/fairness")
    tab.wait_for_selector(f"{WITNESS}.ok")
    assert tab.evaluate("window.SotaLog.unproven()") is None


@pytest.mark.parametrize(
    ("answer", "reason"),
    [
        (
            {"json": {"proof": ["ab" * 32]}},
            "FORK: the served checkpoint does not extend the kept one",
        ),
        (
            {"status": 404, "json": {"error": {"code": "not_found", "message": "no checkpoint"}}},
            "FORK: the service no longer proves the checkpoint it signed over",
        ),
    ],
)
def test_a_proof_that_fails_or_a_denied_checkpoint_stays_a_fork(
    tab: Any, answer: dict[str, Any], reason: str
) -> None:
    """A proof that does not join the two roots, or a service that denies the checkpoint it
    signed, is no outage: the page says the casino showed two histories."""
    kept = a_larger_checkpoint_to_prove(tab, "forked")
    tab.expected_failures.append(CONSISTENCY)
    tab.route(lambda url: CONSISTENCY in url, lambda route: route.fulfill(**answer))
    tab.goto("/fairness")
    alarm = tab.locator(f"{WITNESS}[role=alert]")
    alarm.wait_for()
    assert "THE CASINO SHOWED THIS BROWSER TWO HISTORIES" in alarm.inner_text()
    assert reason in alarm.inner_text()
    assert tab.evaluate("window.SotaLog.kept()")["document"] == kept


def test_a_checkpoint_shown_unproven_is_later_proved_a_fork(tab: Any) -> None:
    """A checkpoint shown while the proofs were withheld is checked once they come: the casino
    cannot show a forked checkpoint, withhold its proof, and go back to the true log."""
    kept = a_larger_checkpoint_to_prove(tab, "doubled")
    tab.expected_failures.append(CONSISTENCY)
    tab.route(lambda url: CONSISTENCY in url, lambda route: route.fulfill(status=500))
    tab.goto("/fairness")
    tab.wait_for_selector(f"{WITNESS}.warn")
    shown = carried_checkpoint(tab)

    proof_of(tab, play_a_round(tab))
    tab.unroute_all()

    def from_the_shown_one(route: Any) -> None:
        if f"old_size={shown['size']}&" in route.request.url:
            route.fulfill(json={"proof": ["ab" * 32]})  # no path joins the two roots
        else:
            route.continue_()

    tab.route(lambda url: CONSISTENCY in url, from_the_shown_one)
    tab.goto("/fairness")
    alarm = tab.locator(f"{WITNESS}[role=alert]")
    alarm.wait_for()
    later = tab.evaluate("window.SotaLog.kept()")["document"]
    assert later["size"] > shown["size"] > kept["size"]
    assert (
        "FORK: the service's consistency proof does not join two checkpoints it signed: "
        f"kept size {later['size']} root {later['root']}, "
        f"served size {shown['size']} root {shown['root']}"
    ) in alarm.inner_text()


def test_the_unproven_warning_reads_as_one_finnish_sentence(tab: Any) -> None:
    """The warning and its reason read in the page's language."""
    kept = a_larger_checkpoint_to_prove(tab, "kiistetty")
    tab.expected_failures.append(CONSISTENCY)
    tab.route(lambda url: CONSISTENCY in url, lambda route: route.fulfill(status=500))
    with tab.expect_navigation():
        tab.select_option("#language-choice", "fi")
    tab.wait_for_selector("html[lang=fi]")
    tab.goto("/fairness")
    tab.wait_for_selector(f"{WITNESS}.warn")
    shown = carried_checkpoint(tab)
    assert tab.locator(WITNESS).inner_text() == (
        "⚠ TODISTAMATTA: tämä selain ei voinut tarkistaa, että kasinon loki on yhtenäinen sen "
        "kanssa, mitä se näki aiemmin: mikään yhtenäisyystodistus ei yhdistä sen tallessa olevaa "
        f"tarkistuspistettä (koko {kept['size']}) siihen, mitä sille on sen jälkeen näytetty "
        f"(koko {shown['size']}: palvelu vastasi HTTP 500). Lokinsa haarauttanut kasino jättäisi "
        "juuri tämän todistuksen antamatta, joten varoitus pysyy, ja jokainen sivu kysyy "
        "todistusta uudelleen, kunnes se saadaan."
    )


def a_page_older_than_the_kept_checkpoint(tab: Any, prefix: str) -> tuple[Any, dict[str, Any]]:
    """Have the witness keep a checkpoint, save the fairness page as served then (as a cache or
    a tab loaded a moment earlier would hold it), then play on so that the witness keeps a
    larger one; return the saved page and the kept checkpoint's document."""
    sign_up(tab, prefix)
    proof_of(tab, play_a_round(tab))
    saved = tab.request.get("/fairness")
    assert saved.ok
    proof_of(tab, play_a_round(tab))  # a later round, proved into a later checkpoint
    tab.goto("/fairness")
    tab.wait_for_selector(f"{WITNESS}.ok")
    return saved, dict(tab.evaluate("window.SotaLog.kept()")["document"])


def show_the_saved_page(tab: Any, saved: Any) -> dict[str, Any]:
    """Load the fairness page as it was saved, let its witness check the checkpoint it carries,
    and return that checkpoint."""
    headers = {k: v for k, v in saved.headers.items() if k.lower() != "set-cookie"}

    def the_page(url: str) -> bool:
        return url.endswith("/fairness")

    def served_as_saved(route: Any) -> None:
        route.fulfill(status=saved.status, headers=headers, body=saved.body())

    tab.route(the_page, served_as_saved)
    tab.goto("/fairness")
    # Only once the witness has spoken: removing the last route turns Playwright's interception
    # off, and a request sent meanwhile (the witness's own, at about the page's load) then goes
    # out without its "request" event, which a test waiting for it never sees.
    tab.locator(SPOKEN).wait_for(state="attached")
    tab.unroute(the_page, served_as_saved)  # only its own: the test's answers to the witness stay
    return carried_checkpoint(tab)


def test_an_older_checkpoint_proved_a_prefix_of_the_kept_one_is_no_alarm(tab: Any) -> None:
    """An honest casino shows a browser an older checkpoint than the one it keeps whenever a
    page was served from a cache or a second tab kept a newer one first: the page asks for the
    proof that the older one is a prefix of the kept one, and, proved, keeps the newer one and
    says what it checked."""
    saved, kept = a_page_older_than_the_kept_checkpoint(tab, "cached")
    with tab.expect_request(lambda request: CONSISTENCY in request.url) as asked:
        older = show_the_saved_page(tab, saved)
    assert older["size"] < kept["size"]
    witness = tab.locator(WITNESS)
    witness.filter(has_text=f"up to {kept['size']} entries").wait_for()
    assert witness.get_attribute("class") == "log-witness ok"
    # The question, from the page's size to the kept one's.
    assert asked.value.url.endswith(
        f"{CONSISTENCY}?old_size={older['size']}&new_size={kept['size']}"
    )
    assert tab.evaluate("window.SotaLog.kept()")["document"] == kept
    assert tab.evaluate(KEPT_ALARM_AND_UNPROVEN) == [None, None]


@pytest.mark.parametrize(
    ("answer", "reason"),
    [
        (
            {"json": {"proof": ["ab" * 32]}},
            "FORK: the service's consistency proof does not join two checkpoints it signed: ",
        ),
        (
            {"status": 404, "json": {"error": {"code": "not_found", "message": "no checkpoint"}}},
            "FORK: the service no longer proves the checkpoint it signed over "
            "{kept}\u00a0entries: ",
        ),
    ],
)
def test_a_rolled_back_log_cannot_prove_the_kept_checkpoint_and_is_a_fork(
    tab: Any, answer: dict[str, Any], reason: str
) -> None:
    """A casino that rolled its database back shows a smaller log than a checkpoint it signed,
    and can no longer prove that checkpoint: its wrong proof, or its denial, is the alarm."""
    saved, kept = a_page_older_than_the_kept_checkpoint(tab, "rolled")
    tab.expected_failures.append(CONSISTENCY)
    tab.route(lambda url: CONSISTENCY in url, lambda route: route.fulfill(**answer))
    older = show_the_saved_page(tab, saved)
    alarm = tab.locator(f"{WITNESS}[role=alert]")
    alarm.wait_for()
    assert (
        "THE CASINO SHOWED THIS BROWSER TWO HISTORIES. "
        + reason.format(kept=kept["size"])
        + f"kept size {kept['size']} root {kept['root']}, "
        f"served size {older['size']} root {older['root']}"
    ) in alarm.inner_text()
    assert tab.evaluate("window.SotaLog.kept()")["document"] == kept


def test_an_older_checkpoint_whose_proof_is_withheld_is_a_lasting_warning(tab: Any) -> None:
    """A rolled-back casino could also just withhold the proof: the page warns as for any
    checkpoint it cannot join to the kept one, keeps the newer one, and asks again later."""
    saved, kept = a_page_older_than_the_kept_checkpoint(tab, "withheld")
    tab.expected_failures.append(CONSISTENCY)
    tab.route(lambda url: CONSISTENCY in url, lambda route: route.fulfill(status=500))
    older = show_the_saved_page(tab, saved)
    witness = tab.locator(f"{WITNESS}.warn")
    witness.wait_for()
    text = witness.inner_text()
    assert (
        f"the checkpoint it keeps (size {kept['size']}) with what it was shown since "
        f"(size {older['size']}: the service answered HTTP 500)."
    ) in text, text
    assert tab.evaluate("window.SotaLog.kept()")["document"] == kept
    assert tab.evaluate("window.SotaLog.alarm()") is None

    # The proof had at last, on any later page: the warning goes.
    tab.unroute_all()
    tab.goto("/fairness")
    tab.wait_for_selector(f"{WITNESS}.ok")
    assert tab.evaluate("window.SotaLog.unproven()") is None


def test_each_checkpoint_shown_unproven_is_named_with_its_own_reason(tab: Any) -> None:
    """Two checkpoints shown while the proofs were withheld, each for its own reason: the
    warning names each with its reason, and each is remembered with its reason and time."""
    kept = a_larger_checkpoint_to_prove(tab, "reasons")
    tab.expected_failures.append(CONSISTENCY)
    refusal: dict[str, Any] = {"how": {"status": 500}}

    def refuse(route: Any) -> None:
        if refusal["how"] == "abort":
            route.abort()
        else:
            route.fulfill(**refusal["how"])

    tab.route(lambda url: CONSISTENCY in url, refuse)
    tab.goto("/fairness")
    tab.wait_for_selector(f"{WITNESS}.warn")
    first = carried_checkpoint(tab)
    proof_of(tab, play_a_round(tab))  # the next page carries a larger checkpoint still
    refusal["how"] = "abort"
    tab.goto("/fairness")
    witness = tab.locator(WITNESS)
    witness.filter(has_text="could not be reached").wait_for()
    second = carried_checkpoint(tab)
    assert kept["size"] < first["size"] < second["size"]
    assert reasons_shown(witness.inner_text()) == {
        first["size"]: "the service answered HTTP 500",
        second["size"]: "the service could not be reached",
    }
    remembered = tab.evaluate("window.SotaLog.unproven()")["checkpoints"]
    assert [(one["document"], one["why"]["id"]) for one in remembered] == [
        (first, "the service answered HTTP %(status)s"),
        (second, "the service could not be reached"),
    ]
    assert remembered[0]["at"] < remembered[1]["at"]


def signed_checkpoint(
    live_server: Any, like: dict[str, Any], size: int, root: str, **more: Any
) -> Any:
    """A checkpoint like ``like`` over ``size`` entries with ``root`` (and ``more`` of its
    fields), signed with the casino's key: what a casino serving another history signs."""
    pem = Path(live_server.app.config["SIGNING_KEY_FILE"]).read_bytes()
    document = {**like, "size": size, "root": root, **more}
    key = fairness.load_private_key(pem)
    return {"document": document, "signature": fairness.sign(key, document)}


def test_the_unproven_checkpoints_remembered_are_bounded_and_none_is_pushed_out(
    tab: Any, live_server: Any
) -> None:
    """A casino that withholds every proof shows this browser ever more checkpoints: it
    remembers the first it was shown up to its bound, and no later one pushes out an earlier
    (which may be the fork); past the bound it says that it was shown more than it remembers.
    A second root at a size it remembers is a fork at once, with no proof to ask for."""
    sign_up(tab, "bounded")
    proof_of(tab, play_a_round(tab))
    tab.goto("/fairness")
    tab.wait_for_selector(f"{WITNESS}.ok")
    kept = tab.evaluate("window.SotaLog.kept()")["document"]
    limit = tab.evaluate("window.SotaLog.unprovenLimit")
    tab.expected_failures.append(CONSISTENCY)
    asked: list[str] = []

    def withheld(route: Any) -> None:
        asked.append(route.request.url)
        route.fulfill(status=500)

    tab.route(lambda url: CONSISTENCY in url, withheld)
    roots = [hashlib.sha256(b"%d" % n).hexdigest() for n in range(limit + 3)]
    shown = [
        signed_checkpoint(live_server, kept, kept["size"] + 1 + n, root)
        for n, root in enumerate(roots)
    ]
    observe_all = (
        "async shown => { const key = await window.SotaLog.pinnedCryptoKey();"
        " for (const seen of shown) await window.SotaLog.observe(seen, key);"
        " window.SotaLog.show(null); }"
    )
    tab.evaluate(observe_all, shown)
    record = tab.evaluate("window.SotaLog.unproven()")
    assert [one["document"] for one in record["checkpoints"]] == [
        seen["document"] for seen in shown[:limit]
    ]
    assert record["unkept"]["since"] >= record["checkpoints"][-1]["at"]
    text = tab.locator(f"{WITNESS}.warn").inner_text()
    assert reasons_shown(text) == {
        seen["document"]["size"]: "the service answered HTTP 500" for seen in shown[:limit]
    }
    assert "it was shown more unproven checkpoints than it can remember" in text
    assert "this warning stays until this browser's storage is cleared" in text

    # Another root at the size of the first it remembers: both signed, so a fork at once.
    first = shown[0]["document"]
    twin = signed_checkpoint(live_server, kept, first["size"], "cd" * 32)
    asked.clear()
    tab.evaluate(observe_all, [twin])
    assert asked == []
    assert (
        f"FORK: two signed checkpoints over {first['size']}\u00a0entries differ: "
        f"shown before size {first['size']} root {first['root']}, "
        f"served size {first['size']} root {'cd' * 32}"
    ) in tab.locator(f"{WITNESS}[role=alert]").inner_text()


def test_a_checkpoint_dated_before_one_remembered_unproven_is_an_alarm(
    tab: Any, live_server: Any
) -> None:
    """A casino that withholds its proofs leaves this browser checkpoints it cannot join to the
    kept one, each signed with its key and dated by it. One over more entries dated before such
    a checkpoint over fewer passed: only the kept one's date was compared. The two signed
    checkpoints contradict each other, whatever proof comes later: an alarm, at once."""
    sign_up(tab, "unproven-dated")
    proof_of(tab, play_a_round(tab))
    tab.goto("/fairness")
    tab.wait_for_selector(f"{WITNESS}.ok")
    kept = tab.evaluate("window.SotaLog.kept()")["document"]
    tab.expected_failures.append(CONSISTENCY)
    tab.route(lambda url: CONSISTENCY in url, lambda route: route.fulfill(status=500))
    kept_at = datetime.strptime(kept["time"], "%Y-%m-%dT%H:%M:%S.%fZ")
    later, between = (
        (kept_at + timedelta(minutes=minutes)).strftime("%Y-%m-%dT%H:%M:%S.%fZ")
        for minutes in (2, 1)
    )
    unproven = signed_checkpoint(live_server, kept, kept["size"] + 5, "ab" * 32, time=later)
    dated_back = signed_checkpoint(live_server, kept, kept["size"] + 9, "cd" * 32, time=between)
    observe = "async seen => window.SotaLog.observe(seen, await window.SotaLog.pinnedCryptoKey())"
    assert tab.evaluate(observe, unproven)["ok"] is None  # remembered, its proof withheld
    observed = tab.evaluate(observe, dated_back)
    assert observed["ok"] is False, observed
    assert tab.evaluate("window.SotaLog.kept()")["document"] == kept
    tab.goto("/fairness")  # the alarm stays, on every page after
    alarm = tab.locator(f"{WITNESS}[role=alert]")
    alarm.wait_for()
    assert (
        "BACKDATED: of two signed checkpoints, the one over more entries is dated before the one "
        f"over fewer: shown before size {kept['size'] + 5} root {'ab' * 32} at {later}, "
        f"served size {kept['size'] + 9} root {'cd' * 32} at {between}."
    ) in alarm.inner_text(), alarm.inner_text()


def test_checkpoints_shown_past_the_bound_keep_the_warning_once_the_rest_are_proved(
    tab: Any,
) -> None:
    """Those it could not remember can never be proved: once every remembered one is joined,
    the warning still says so, on every page, until this browser's storage is cleared."""
    sign_up(tab, "unkept")
    proof_of(tab, play_a_round(tab))
    tab.goto("/fairness")
    tab.wait_for_selector(f"{WITNESS}.ok")
    kept = tab.evaluate("window.SotaLog.kept()")["document"]
    since = "2026-12-01T19:50:05Z"
    tab.evaluate(WITNESS_KEEP, [KEPT_UNPROVEN, {"checkpoints": [], "unkept": {"since": since}}])
    for _ in range(2):
        tab.goto("/fairness")
        warning = tab.locator(f"{WITNESS}.warn")
        assert warning.inner_text() == (
            "⚠ UNPROVEN: since Dec 1, 2026, 7:50\u202fPM UTC this browser was shown more "
            "checkpoints it could not prove consistent with the one it keeps "
            f"(size {kept['size']}) than it can remember: those it could not remember it can "
            "never check, so this warning stays until this browser's storage is cleared."
        )
    unkept = {"checkpoints": [], "unkept": {"since": since}}
    assert tab.evaluate("window.SotaLog.unproven()") == unkept


def test_two_tabs_checking_at_once_keep_the_larger_checkpoint(tab: Any) -> None:
    """Two tabs of the casino open at once, the first carrying an older checkpoint than the
    second, each asking for its proof from the one kept: whichever answer comes first, the
    tabs take turns, each reading what the other kept, and the larger checkpoint stays kept."""
    sign_up(tab, "tabs")
    proof_of(tab, play_a_round(tab))
    tab.goto("/fairness")
    tab.wait_for_selector(f"{WITNESS}.ok")
    first_kept = tab.evaluate("window.SotaLog.kept()")
    proof_of(tab, play_a_round(tab))
    saved = tab.request.get("/fairness")  # carries a larger checkpoint than the one kept first
    proof_of(tab, play_a_round(tab))  # and pages now carry a larger one still
    tab.evaluate(WITNESS_KEEP, [KEPT_CHECKPOINT, first_kept])

    held: list[Any] = []  # the witnesses' consistency requests, answered when the test says
    tab.context.route(lambda url: CONSISTENCY in url, lambda route: held.append(route))
    headers = {k: v for k, v in saved.headers.items() if k.lower() != "set-cookie"}
    tab.route(
        lambda url: url.endswith("/fairness"),
        lambda route: route.fulfill(status=saved.status, headers=headers, body=saved.body()),
    )
    other = tab.context.new_page()
    tab.goto("/fairness")
    older = carried_checkpoint(tab)
    deadline = time.monotonic() + 15

    def until(done: Any) -> None:
        while not done():
            assert time.monotonic() < deadline, "the witnesses never got that far"
            tab.wait_for_timeout(20)

    until(lambda: held)
    other.goto("/fairness")
    newer = carried_checkpoint(other)
    assert first_kept["document"]["size"] < older["size"] < newer["size"]
    # The second tab has asked for its proof too, or is waiting for the first to finish.
    until(
        lambda: (
            len(held) == 2
            or other.evaluate("async () => (await navigator.locks.query()).pending.length") > 0
        )
    )
    # The latest question answered first, each tab then left to say what it found.
    while not (tab.locator(SPOKEN).count() and other.locator(SPOKEN).count()):
        until(lambda: held)
        route = held.pop()
        route.continue_()
        route.request.frame.page.locator(SPOKEN).wait_for(state="attached")
    assert tab.evaluate("window.SotaLog.kept()")["document"] == newer
    assert other.evaluate(KEPT_ALARM_AND_UNPROVEN) == [None, None]
    other.goto("/fairness")
    other.locator(WITNESS).filter(has_text=f"up to {newer['size']} entries").wait_for()
    other.close()


def test_a_proof_that_never_comes_is_a_withheld_one_and_frees_the_other_tabs(tab: Any) -> None:
    """A casino can also withhold a proof by never answering: the request would hang, and with
    it the witness, silent, and every other tab waiting for its turn. After its wait, the page
    warns as for any withheld proof, and another tab then checks on its own."""
    kept = a_larger_checkpoint_to_prove(tab, "hung")
    tab.expected_failures.append(CONSISTENCY)
    hung: list[Any] = []

    def never_answer(route: Any) -> None:
        hung.append(route)

    tab.route(lambda url: CONSISTENCY in url, never_answer)
    tab.goto("/fairness")
    shown = carried_checkpoint(tab)
    warning = tab.locator(f"{WITNESS}.warn")
    warning.wait_for(timeout=30_000)
    assert hung, "the page never asked for the proof"
    assert "the service gave no answer within 10\u00a0seconds" in (
        reasons_shown(warning.inner_text()).get(shown["size"], "")
    )
    assert tab.evaluate("window.SotaLog.kept()")["document"] == kept

    other = tab.context.new_page()
    other.goto("/fairness")  # asks the service itself: this page has no route
    other.wait_for_selector(f"{WITNESS}.ok", timeout=30_000)
    assert other.evaluate("window.SotaLog.kept()")["document"]["size"] >= shown["size"]
    other.close()


def test_a_forked_checkpoint_naming_another_key_beside_its_signature_is_still_a_fork(
    tab: Any, live_server: Any
) -> None:
    """The key an answer names beside a checkpoint is not signed: a casino serving a second
    history, signed with its one key, that names another key there is still checked against
    the pinned key, and is the alarm, not a checkpoint the page skips as untrusted."""
    sign_up(tab, "namedkey")
    proof_of(tab, play_a_round(tab))
    tab.goto("/fairness")
    tab.wait_for_selector(f"{WITNESS}.ok")
    kept = tab.evaluate("window.SotaLog.kept()")["document"]
    forked = signed_checkpoint(live_server, kept, kept["size"], "ab" * 32)
    forked["public_key_hex"] = fairness.public_key_hex(fairness.new_signing_key())
    page = tab.request.get("/fairness")
    assert page.ok
    carried = re.compile(
        r'(<script type="application/json" data-log-checkpoint[^>]*>)(.*?)(</script>)'
    )
    found = carried.search(page.text())
    assert found, "the page carries no checkpoint"
    answer = json.loads(found.group(2)) | {"checkpoint": forked}
    forged = carried.sub(lambda m: m.group(1) + json.dumps(answer) + m.group(3), page.text(), 1)
    headers = {k: v for k, v in page.headers.items() if k.lower() != "set-cookie"}
    tab.route(
        lambda url: url.endswith("/fairness"),
        lambda route: route.fulfill(status=200, headers=headers, body=forged),
    )
    tab.goto("/fairness")
    alarm = tab.locator(f"{WITNESS}[role=alert]")
    alarm.wait_for(timeout=10_000)
    assert (
        f"FORK: two signed checkpoints over {kept['size']}\u00a0entries differ: "
        f"kept size {kept['size']} root {kept['root']}, "
        f"served size {kept['size']} root {forked['document']['root']}"
    ) in alarm.inner_text()
    assert tab.evaluate("window.SotaLog.kept()")["document"] == kept


#: Take the witnesses' turn in this tab and keep it until ``window.releaseWitness()``.
HOLD_THE_WITNESS = """() => new Promise(held => navigator.locks.request(
    "sota-casino.log-witness",
    () => { held(); return new Promise(r => window.releaseWitness = r); }))"""


def test_a_key_pinned_in_another_tab_while_the_witness_waits_is_the_key_it_checks_with(
    tab: Any,
) -> None:
    """Another tab pins another key, and keeps a checkpoint that key signed, while this page's
    witness waits for its turn. The witness went on with the key it had read before waiting: it
    found the service's checkpoint signed by it and asked the service to join the other key's
    checkpoint to its log (a 404, and a warning about a log nobody forked). It reads the key in
    its turn, and checks nothing under a key this browser no longer trusts."""
    sign_up(tab, "pinned-elsewhere")
    proof_of(tab, play_a_round(tab))  # the pages now carry a checkpoint over the round
    tab.goto("/fairness")
    tab.wait_for_selector(f"{WITNESS}.ok")
    other = tab.context.new_page()
    other.goto("/rules/casino-war")  # a page without a witness of its own
    other.evaluate(HOLD_THE_WITNESS)
    tab.bring_to_front()
    tab.reload()  # its witness reads the pinned key, then waits for its turn
    wait_until(tab, "async () => (await navigator.locks.query()).pending.length > 0")

    elsewhere = fairness.new_signing_key()
    document = checkpoint_document(3, "ab" * 32, "2026-01-01T00:00:00.000000Z")
    signed = {"document": document, "signature": fairness.sign(elsewhere, document)}
    key = fairness.public_key_hex(elsewhere)
    other.evaluate("key => window.SotaRecords.acceptKey(key)", key)
    other.evaluate(WITNESS_KEEP, [KEPT_CHECKPOINT, signed])
    # The pinned key is in localStorage, which reaches another tab a moment later, in its own
    # time (a busy machine once let the witness have its turn first): its turn comes once it
    # shows here.
    tab.wait_for_function("key => window.SotaRecords.pinnedKey().public_key_hex === key", arg=key)
    other.evaluate("window.releaseWitness()")
    tab.locator(SPOKEN).wait_for(state="attached")
    assert tab.locator(WITNESS).inner_text() == (
        "The log's checkpoint is signed by a key this browser does not trust yet; it is not "
        "checked."
    )
    assert tab.evaluate(KEPT_ALARM_AND_UNPROVEN) == [None, None]
    assert tab.evaluate("window.SotaLog.kept()") == signed
    other.close()


def a_kept_checkpoint(tab: Any, prefix: str) -> dict[str, Any]:
    """Sign up, play a round and let the fairness page's witness keep the checkpoint the page
    carries; return the signed checkpoint kept."""
    sign_up(tab, prefix)
    proof_of(tab, play_a_round(tab))
    tab.goto("/fairness")
    tab.wait_for_selector(f"{WITNESS}.ok")
    kept: dict[str, Any] = tab.evaluate("window.SotaLog.kept()")
    assert kept["document"] == carried_checkpoint(tab)
    return kept


def with_root(signed: dict[str, Any], root: str) -> dict[str, Any]:
    """``signed`` with another root under the same signature: a second history's checkpoint."""
    return {"document": {**signed["document"], "root": root}, "signature": signed["signature"]}


def alarm_of(page: Any) -> str:
    """The alarm the page's witness raises, once it does, with its spaces as typed."""
    alarm = page.locator(f"{WITNESS}[role=alert]")
    alarm.wait_for()
    return str(alarm.inner_text()).replace("\xa0", " ")


def test_the_checkpoint_another_tab_kept_in_its_turn_is_the_one_the_next_turn_checks(
    tab: Any,
) -> None:
    """A tab keeps a checkpoint in its turn and hands the turn on at once: the witness waiting
    for it checks against that checkpoint, not the one kept before. In localStorage another
    tab's write reached a waiting tab in the browser's own time, which could be after the turn,
    so a tab could check against a checkpoint one turn old and keep it over the newer one,
    losing a fork shown between the two. Here the other tab keeps one over the same entries as
    this page's, with another root: two histories, which the next turn must see at once."""
    kept = a_kept_checkpoint(tab, "next-turn")
    size = kept["document"]["size"]
    other = tab.context.new_page()
    other.goto("/rules/casino-war")  # a page without a witness of its own
    other.evaluate(HOLD_THE_WITNESS)
    tab.bring_to_front()
    tab.reload()  # its witness waits for its turn
    wait_until(tab, "async () => (await navigator.locks.query()).pending.length > 0")
    other.evaluate(
        f"async forked => {{ await ({WITNESS_KEEP})(['{KEPT_CHECKPOINT}', forked]);"
        " window.releaseWitness(); }",
        with_root(kept, "cd" * 32),
    )
    assert (
        f"FORK: two signed checkpoints over {size} entries differ: kept size {size} root "
        f"{'cd' * 32}"
    ) in alarm_of(tab)
    other.close()


def test_a_checkpoint_an_earlier_version_kept_in_local_storage_is_taken_over(tab: Any) -> None:
    """An earlier version of the page kept its checkpoint in localStorage: the next page takes it
    over (and clears it there), and holds the log to it, as it would have."""
    forked = with_root(a_kept_checkpoint(tab, "taken-over"), "ef" * 32)
    tab.evaluate(WITNESS_KEEP, [KEPT_CHECKPOINT, None])
    tab.evaluate(
        "forked => localStorage.setItem('sota-casino.log-checkpoint.v1', JSON.stringify(forked))",
        forked,
    )
    tab.reload()
    assert f"kept size {forked['document']['size']} root {'ef' * 32}" in alarm_of(tab)
    assert tab.evaluate("localStorage.getItem('sota-casino.log-checkpoint.v1')") is None
    assert tab.evaluate("window.SotaLog.kept()") == forked  # the alarm replaces nothing


def test_without_indexeddb_the_witness_keeps_its_checkpoint_in_local_storage(tab: Any) -> None:
    """A browser that gives the page no IndexedDB (some private windows): the witness still
    checks, and keeps what it checked in localStorage, as it did before."""
    sign_up(tab, "no-indexeddb")
    proof_of(tab, play_a_round(tab))
    tab.add_init_script("Object.defineProperty(window, 'indexedDB', { value: undefined })")
    tab.goto("/fairness")
    tab.wait_for_selector(f"{WITNESS}.ok")
    assert tab.evaluate("window.indexedDB") is None
    kept = tab.evaluate("JSON.parse(localStorage.getItem('sota-casino.log-checkpoint.v1'))")
    assert kept["document"] == carried_checkpoint(tab)
    assert tab.evaluate("window.SotaLog.kept()") == kept


def test_a_store_that_cannot_be_read_checks_nothing_and_keeps_nothing_new(tab: Any) -> None:
    """What the witness keeps cannot be read (the browser refuses it this time): it says the log
    could not be checked, and does not take the refusal for "nothing kept", which would keep
    the checkpoint seen in place of the one kept without any proof joining them."""
    kept = a_kept_checkpoint(tab, "unreadable")
    proof_of(tab, play_a_round(tab))  # pages now carry a larger checkpoint
    broken = tab.context.new_page()
    broken.add_init_script(
        "IDBObjectStore.prototype.get = function () {"
        " throw new DOMException('the store refused the read', 'UnknownError'); }"
    )
    broken.goto("/fairness")
    assert carried_checkpoint(broken)["size"] > kept["document"]["size"]
    broken.locator(WITNESS).filter(has_text="could not be checked").wait_for()
    assert broken.locator(WITNESS).inner_text() == (
        "The public log could not be checked: the store refused the read"
    )
    broken.close()
    assert tab.evaluate("window.SotaLog.kept()") == kept


def test_an_alarm_that_cannot_be_kept_is_still_shown(tab: Any, shoot: Any) -> None:
    """The browser refuses to keep anything more (a full disk): a fork found now is still shown,
    though it will not be remembered."""
    kept = a_kept_checkpoint(tab, "alarm-unkept")
    full = tab.context.new_page()
    full.add_init_script(
        "IDBObjectStore.prototype.put = function () {"
        " throw new DOMException('the disk is full', 'QuotaExceededError'); }"
    )
    full.goto("/fairness")
    full.wait_for_selector(f"{WITNESS}.ok")
    full.evaluate(
        "seen => window.SotaLog.pinnedCryptoKey().then(key => window.SotaLog.observe(seen, key))"
        ".then(outcome => window.SotaLog.show(outcome))",
        with_root(kept, "ab" * 32),
    )
    size = kept["document"]["size"]
    assert f"BAD SIGNATURE: the checkpoint size {size} root {'ab' * 32}" in alarm_of(full)
    assert alarm_of(full).endswith(
        "(this browser could not remember it: its storage refused it, so it is shown on this page "
        "only)."
    )
    assert full.evaluate("window.SotaLog.alarm()") is None  # shown, not kept
    # A fork of two signed checkpoints, raised where it cannot be kept, says so too.
    full.evaluate("window.SotaLog.show({ok: false, alarm: {why: 'FORK: kept size 3 root aa'}})")
    assert alarm_of(full) == (
        "✗ THE CASINO SHOWED THIS BROWSER TWO HISTORIES. FORK: kept size 3 root aa. Both "
        "checkpoints are signed with its key: keep them as proof (this browser could not keep "
        "them: its storage refused them, so they are shown on this page only)."
    )
    full.set_viewport_size({"width": 390, "height": 844})
    alarm = full.locator(f"{WITNESS}[role=alert]")
    assert alarm.evaluate("box => box.scrollWidth <= box.clientWidth")
    alarm.evaluate("node => node.scrollIntoView({block: 'center'})")
    shoot(full, "phone-fairness-alarm-not-kept", full_page=False)
    full.close()


def test_a_page_open_while_a_later_version_changes_the_store_lets_it(tab: Any) -> None:
    """A page holds its witness's store open: a later version of the page that opens the store
    to change it (a new version number) is not kept waiting by it."""
    a_kept_checkpoint(tab, "store-upgrade")
    later = tab.context.new_page()
    later.goto("/rules/casino-war")  # a page without a witness of its own
    upgraded = later.evaluate(
        """() => new Promise(resolve => {
            const open = indexedDB.open("sota-casino.log-witness", 2);
            open.onblocked = () => resolve("blocked");
            open.onsuccess = () => { open.result.close(); resolve("opened"); };
        })"""
    )
    assert upgraded == "opened"
    later.close()


def test_no_checkpoint_the_shared_server_signs_of_itself_is_taken_back_by_a_planted_seed(
    tab: Any, live_server: Any
) -> None:
    """The browser tests plant known server seeds on the server they all share, by rewriting
    the pair's logged commitment (log_support's relog_commitment), which takes back any
    checkpoint over it. The server signed one every 100 entries too: when the hundredth came
    between a player's sign-up and the plant and a page kept it, the next page carried the one
    before, the service refused the proof between the two with a 404 (old_size=2900 and
    new_size=3000 in a full run), and the witness said FORK. Here the player's own log-in is
    the hundredth entry: no checkpoint is signed over it, the seed is planted, and the witness
    says nothing."""
    every = config.INT_SETTINGS["CHECKPOINT_EVERY"]
    session = live_server.app.extensions["sota_casino.sessionmaker"]()
    sign_up(tab, "before")
    audit.checkpoint(session)  # the pages carry a checkpoint from before the player
    tab.context.clear_cookies()
    username = sign_up(tab, "planted")
    with session.begin():  # the player's log-ins, one short of the hundredth entry
        user_id = session.scalar(select(User.id).where(User.username == username))
        login = audit.EntrySpec(
            f"user:{user_id}", "user.login", f"user:{user_id}", {"address": "127.0.0.1"}
        )
        audit.record_all(session, [login] * ((-audit.log_size(session) - 1) % every))
    tab.context.clear_cookies()
    log_in(tab, username)
    with session.begin():
        assert audit.log_size(session) % every == 0
    session.close()
    tab.goto("/fairness")
    tab.locator(SPOKEN).wait_for(state="attached")
    planted = plant_server_seed(live_server.app, username, {0: False})
    tab.goto("/fairness")
    tab.locator(SPOKEN).wait_for(state="attached")
    assert tab.evaluate(KEPT_ALARM_AND_UNPROVEN) == [None, None], alarm_of(tab)
    assert tab.locator(WITNESS).get_attribute("class") == "log-witness ok"
    # The planted seed deals the player's next round.
    tab.goto("/casino-war")
    tab.click("#deal")
    tab.wait_for_selector("[data-testid=result], #surrender")
    rounds = tab.evaluate("async () => (await (await fetch('/api/v1/rounds?limit=1')).json())")
    assert rounds["rounds"][0]["seed_pair_id"] == planted.seed_pair_id

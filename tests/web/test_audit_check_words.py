"""The audit log check's reasons as the console says them: in the operator's language, on the
audit page and in a failed check's alert; the command and the API keep the English."""

from __future__ import annotations

import html
import re
from collections.abc import Callable
from typing import Any

import pytest
from flask import Flask
from flask import g
from log_support import add_forged_checkpoint
from operator_support import add_user
from operator_support import bearer
from operator_support import client_as
from operator_support import db
from web_support import post_form

from sota_casino.core import audit_chain
from sota_casino.core.fairness import new_signing_key
from sota_casino.core.fairness import public_key_hex
from sota_casino.core.fairness import signed
from sota_casino.core.marks import Problem
from sota_casino.services import alerts
from sota_casino.services import audit
from sota_casino.services import checks
from sota_casino.web.i18n import gettext
from sota_casino.web.operator import problem_words

KEY = new_signing_key()
ROOT = "ab" * 32
LATER, EARLIER = "2026-12-01T10:00:00.000000Z", "2026-12-01T09:00:00.000000Z"


def _log(n: int) -> list[dict[str, Any]]:
    raw = [
        {
            "seq": seq,
            "time": "2026-12-01T09:00:00.000000Z",
            "actor": None,
            "action": "test.entry",
            "subject": f"thing:{seq}",
            "data": {},
        }
        for seq in range(1, n + 1)
    ]
    return audit_chain.link_entries(raw)


def _chain_problem(change: Callable[[list[dict[str, Any]]], None]) -> Problem:
    entries = _log(10)
    change(entries)
    report = audit_chain.verify_chain(entries)
    assert report.found is not None and report.found.text() == report.reason
    return report.found


def _edited(entries: list[dict[str, Any]]) -> None:
    entries[6] = {**entries[6], "data": {"amount": 1}}


def _relinked(entries: list[dict[str, Any]]) -> None:
    entries[6] = audit_chain.linked_entry(entries[5]["hash"], {**entries[6], "actor": "user:6"})


def _first_unlinked(entries: list[dict[str, Any]]) -> None:
    entries[0] = {**entries[0], "prev_hash": "11" * 32}


def _inserted(entries: list[dict[str, Any]]) -> None:
    forged = audit_chain.linked_entry(entries[3]["hash"], {**entries[4], "action": "adjust"})
    entries.insert(4, forged)


def _checkpoint(
    size: int, *, key: Any = KEY, actual: str = ROOT, earlier: dict[str, Any] | None = None
) -> Problem:
    """What the incremental check finds of a checkpoint over ``size`` entries, signed by
    ``key``, whose entries have the root ``actual``."""
    envelope = signed(key, audit_chain.checkpoint_document(size, ROOT, EARLIER))
    found = audit_chain.next_checkpoint_problem(
        envelope["document"], envelope["signature"], [public_key_hex(KEY)], actual, earlier
    )
    assert found is not None
    return found


#: Each reason an operator meets: how the check finds it, its English (the command's and the
#: API's, as it was) and its Finnish on the console.
CASES: dict[str, tuple[Callable[[], Problem], str, str]] = {
    "hash": (
        lambda: _chain_problem(_edited),
        "entry 7: its hash does not match its contents (the entry was changed)",
        "merkintä 7: sen tiiviste ei vastaa sen sisältöä (merkintää on muutettu)",
    ),
    "link": (
        lambda: _chain_problem(_relinked),
        "entry 8: prev_hash does not link to entry 7's hash",
        "merkintä 8: prev_hash ei viittaa merkinnän 7 tiivisteeseen",
    ),
    "first link": (
        lambda: _chain_problem(_first_unlinked),
        "entry 1: prev_hash does not link to the genesis hash",
        "merkintä 1: prev_hash ei viittaa alkutiivisteeseen",
    ),
    "missing": (
        lambda: _chain_problem(lambda entries: entries.pop(3)),
        "entry 4 is missing (deleted): seq jumps from 3 to 5",
        "merkintä 4 puuttuu (poistettu): järjestysnumero hyppää luvusta 3 lukuun 5",
    ),
    "missing several": (
        lambda: _chain_problem(lambda entries: entries.__delitem__(slice(3, 7))),
        "entries 4..7 are missing (deleted): seq jumps from 3 to 8",
        "merkinnät 4–7 puuttuvat (poistettu): järjestysnumero hyppää luvusta 3 lukuun 8",
    ),
    "reordered": (
        lambda: _chain_problem(lambda entries: entries.insert(4, entries.pop(5))),
        "entries are out of order: entry 6 comes before entry 5",
        "merkinnät ovat väärässä järjestyksessä: merkintä 6 tulee ennen merkintää 5",
    ),
    "inserted": (
        lambda: _chain_problem(_inserted),
        "seq 5 appears twice (an inserted or repeated entry) where 6 was due",
        "järjestysnumero 5 esiintyy kahdesti (lisätty tai toistettu merkintä) kohdassa, jossa "
        "piti olla 6",
    ),
    "signature": (
        lambda: _checkpoint(12, key=new_signing_key()),
        "checkpoint over 12 entries: the signature is not valid for this key",
        "tarkistuspiste, joka kattaa 12\u00a0merkintää: allekirjoitus ei kelpaa tälle avaimelle",
    ),
    "root": (
        lambda: _checkpoint(12, actual="cd" * 32),
        "checkpoint over 12 entries: root abababababababab… is not the Merkle root of the first "
        "12 entries (cdcdcdcdcdcdcdcd…): entries it covers were changed, removed or added",
        "tarkistuspiste, joka kattaa 12\u00a0merkintää: juuri abababababababab… ei ole "
        "ensimmäisten 12\u00a0merkinnän Merkle-juuri (cdcdcdcdcdcdcdcd…): sen kattamia "
        "merkintöjä on muutettu, poistettu tai lisätty",
    ),
    "dated early": (
        lambda: _checkpoint(12, earlier={"size": 9, "time": LATER}),
        "checkpoint over 12 entries: dated before checkpoint over 9 entries, which it follows",
        "tarkistuspiste, joka kattaa 12\u00a0merkintää: se on päivätty ennen edeltävää "
        "tarkistuspistettä (merkintöjä 9), jota se seuraa",
    ),
    "cut off": (
        lambda: audit_chain.next_checkpoint_beyond(12, 10),
        "checkpoint over 12 entries: covers 12 entries but the log holds 10 entries",
        "tarkistuspiste, joka kattaa 12\u00a0merkintää: se kattaa 12\u00a0merkintää, mutta "
        "lokissa on merkintöjä vain 10",
    ),
    "unlogged round": (
        lambda: Problem(audit.UNLOGGED_ROUND, {"subject": "round:3", "action": "round.settled"}),
        "round:3 is settled, but the log holds no round.settled entry of it: an entry of a "
        "settled round was lost or taken out of the log",
        "round:3 on ratkaistu, mutta lokissa ei ole sen round.settled-merkintää: ratkaistun "
        "pelikierroksen merkintä on kadonnut tai poistettu lokista",
    ),
}


@pytest.mark.parametrize("case", sorted(CASES))
def test_an_audit_check_reason_reads_in_the_operators_language(app: Flask, case: str) -> None:
    find, english, finnish = CASES[case]
    found = find()
    assert found.text() == english  # the command's and the API's words, as they were
    kept = found.to_json()
    said = {}
    for language in ("en", "fi", "nb", "pt"):
        with app.test_request_context():
            g.locale = language
            said[language] = problem_words(kept)
    assert said["fi"] == finnish
    assert said["en"].replace("\u00a0", " ") == english
    assert said["nb"] != said["en"] and said["pt"] != said["en"]


@pytest.fixture
def forged(app: Flask) -> dict[str, Any]:
    """A log that passed its check, then a checkpoint over it that the service did not sign,
    found by a whole check (an alert rule watching the checks)."""
    olga = add_user(app, "olga", "operator")
    add_user(app, "alice", "player")
    session = db(app)
    try:
        alerts.create_rule(session, olga, alerts.CHECK_FAILED, None, 0, 24)
        size = checks.run(session, "audit", "test-runner", whole=True).verdict.size
        add_forged_checkpoint(session, size)
        assert not checks.run(session, "audit", "test-runner", whole=True).verdict.ok
        assert alerts.scan(session) == 1
    finally:
        session.close()
    return {"operator": olga, "size": size}


#: The forged checkpoint's reason, by language (the English of the command and the API).
FORGED = {
    "en": "checkpoint over {size} entries: the signature is not valid for this key",
    "fi": "tarkistuspiste, joka kattaa {size} merkintää: allekirjoitus ei kelpaa tälle avaimelle",
    "nb": "sjekkpunktet over {size} oppføringer: signaturen er ikke gyldig for denne nøkkelen",
    "pt": "ponto de controle sobre {size} entradas: a assinatura não é válida para esta chave",
}


def _console_text(app: Flask, operator: int, lang: str, path: str) -> str:
    console = client_as(app, operator)
    post_form(console, "/language", {"locale": lang, "next": "/"})
    return html.unescape(console.get(path).get_data(as_text=True)).replace("\u00a0", " ")


@pytest.mark.tampers
@pytest.mark.parametrize("lang", sorted(FORGED))
def test_the_audit_page_names_a_forged_checkpoint_in_the_operators_language(
    app: Flask, forged: dict[str, Any], lang: str
) -> None:
    english = FORGED["en"].format(size=forged["size"])
    page = _console_text(app, forged["operator"], lang, "/operator/audit")
    # The verdict, not the log's entries below it (an alert's entry keeps the English reason).
    verdict = re.search(r'data-testid="chain-status">(.*?)</p>', page, re.S)
    assert verdict is not None
    assert FORGED[lang].format(size=forged["size"]) in verdict[1]
    if lang != "en":
        assert english not in verdict[1]
    api = app.test_client().get("/api/v1/operator/audit/verify", headers=bearer(app, "olga"))
    assert api.get_json()["reason"] == english


@pytest.mark.tampers
@pytest.mark.parametrize("lang", ["fi", "en"])
def test_a_failed_audit_checks_alert_gives_its_reason_in_the_operators_language(
    app: Flask, forged: dict[str, Any], lang: str
) -> None:
    """The alert names the check's reason, which the console words as the audit page does; the
    API keeps the check's English reason, and gives its id and params."""
    english = FORGED["en"].format(size=forged["size"])
    page = _console_text(app, forged["operator"], lang, "/operator/alerts")
    with app.test_request_context():
        g.locale = lang
        said = gettext(
            alerts.CHECK_FAILED_BECAUSE["audit"], reason=FORGED[lang].format(size=forged["size"])
        )
    assert said in page
    if lang != "en":
        assert english not in page
    api = app.test_client().get("/api/v1/operator/alerts", headers=bearer(app, "olga"))
    (alert,) = api.get_json()["alerts"]
    assert alert["message"] == f"the audit log check failed: {english}"
    problem = Problem.of(audit_chain.CHECKPOINT_UNSIGNED, {"num": forged["size"]})
    assert alert["params"] == {"reason": english, "problem": problem.to_json()}

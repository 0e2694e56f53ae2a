"""The audit log check's reasons as the console says them: in the operator's language, on the
audit page and in a failed check's alert; the command and the API keep the English."""

from __future__ import annotations

import hashlib
import html
import re
from collections.abc import Callable
from typing import Any
from typing import TypeVar

import pytest
from flask import Flask
from flask import g
from log_support import add_forged_checkpoint
from log_support import entries_writable
from operator_support import add_user
from operator_support import bearer
from operator_support import client_as
from operator_support import db
from sqlalchemy.orm import Session
from web_support import post_form

from sota_casino.core import anchors
from sota_casino.core import audit_chain
from sota_casino.core.fairness import KEY_CHANGED
from sota_casino.core.fairness import KEY_IN_USE
from sota_casino.core.fairness import PLAYER_KEY_REGISTERED
from sota_casino.core.fairness import new_signing_key
from sota_casino.core.fairness import public_key_hex
from sota_casino.core.fairness import signed
from sota_casino.core.marks import Problem
from sota_casino.models import AuditEntry
from sota_casino.services import alerts
from sota_casino.services import audit
from sota_casino.services import checks
from sota_casino.web.i18n import gettext
from sota_casino.web.operator import problem_words

T = TypeVar("T")

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


def _set(field: str, value: object) -> Callable[[list[dict[str, Any]]], None]:
    """Change entry 7's ``field`` to ``value`` (as it is stored, with its links)."""
    return lambda entries: entries[6].update({field: value})


#: Two keys the service may name, as the check shortens them.
KEY_A, KEY_B = "aa" * 32, "bb" * 32
SHORT_A, SHORT_B = f"{KEY_A[:16]}…", f"{KEY_B[:16]}…"


def _keyed(*steps: tuple[str, str, dict[str, Any]]) -> Problem:
    """What the check of each key taken once finds of the last of ``steps`` (its action, subject
    and data), logged in that order by user 1 from the log's first entry."""
    entries = [
        {"seq": seq, "actor": "user:1", "action": action, "subject": subject, "data": data}
        for seq, (action, subject, data) in enumerate(steps, start=1)
    ]
    found = anchors.first_key_found(entries)
    assert found is not None and found[0] == len(entries)
    assert anchors.first_key_problem(entries) == (len(entries), found[1].text())
    return found[1]


def _logged(steps: tuple[tuple[str, str, dict[str, Any]], ...]) -> list[dict[str, Any]]:
    """``steps`` as entries logged in that order by user 1 from the log's first entry."""
    return [
        {"seq": seq, "actor": "user:1", "action": action, "subject": subject, "data": data}
        for seq, (action, subject, data) in enumerate(steps, start=1)
    ]


def _reused(*steps: tuple[str, str, dict[str, Any]]) -> Problem:
    """What the check of one server seed a pair finds of the last of ``steps``, logged in that
    order by user 1 from the log's first entry."""
    entries = _logged(steps)
    found = anchors.seed_reused(entries, anchors.committed_in(entries))
    assert found is not None and found[0] == len(entries)
    return found[1]


def _seed_revealed(*steps: tuple[str, str, dict[str, Any]]) -> Problem:
    """What the check of each reveal against its pair's commitment finds of the last of
    ``steps``, logged in that order by user 1 from the log's first entry."""
    entries = _logged(steps)
    found = anchors.other_seed_revealed(entries, anchors.commitments_in(entries))
    assert found is not None and found[0] == len(entries)
    return found[1]


#: The commitment to :data:`KEY_B` taken for a server seed, as the check shortens it.
REVEALED_B = f"{hashlib.sha256(bytes.fromhex(KEY_B)).hexdigest()[:16]}…"
COMMIT = ("seed_pair.created", "seed_pair:1", {})
REGISTERED = (PLAYER_KEY_REGISTERED, "user:1", {"key_id": 7})


def _bet(round_id: int, nonce: object, **data: object) -> tuple[str, str, dict[str, Any]]:
    return ("round.bet", f"round:{round_id}", {"seed_pair_id": 1, "nonce": nonce, **data})


def _settled(round_id: int) -> tuple[str, str, dict[str, Any]]:
    return ("round.settled", f"round:{round_id}", {})


def _revealed(rounds: object) -> tuple[str, str, dict[str, Any]]:
    return ("seed_pair.rotated", "seed_pair:1", {"rounds": rounds})


def _in_use(key: str) -> tuple[str, str, dict[str, Any]]:
    return (KEY_IN_USE, "service", {"public_key_hex": key})


def _changed(old: str, new: str) -> tuple[str, str, dict[str, Any]]:
    change = {"document": {"old_public_key_hex": old, "new_public_key_hex": new}}
    return (KEY_CHANGED, "service", {"key_change": change})


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
        "merkinnät 4–\u20607 puuttuvat (poistettu): järjestysnumero hyppää luvusta 3 lukuun 8",
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
    "seed reused": (
        lambda: _reused(
            ("seed_pair.created", "seed_pair:2", {"commitment": "ab" * 32}),
            ("seed_pair.created", "seed_pair:4", {"commitment": "ab" * 32}),
        ),
        "entry 2: seed_pair.created of seed_pair:4 commits to the server seed of seed_pair:2 "
        "(commitment abababababababab…): a server seed serves one pair, and revealed for either "
        "it tells every shuffle of the other in advance",
        "merkintä 2: seed_pair.created kohteelle seed_pair:4 sitoutuu samaan palvelimen "
        "siemeneen kuin seed_pair:2 (sitoumus abababababababab…): palvelimen siemen kuuluu "
        "yhdelle parille, ja kummalle tahansa paljastettuna se kertoo toisen jokaisen sekoituksen "
        "etukäteen",
    ),
    "other seed revealed": (
        lambda: _seed_revealed(
            ("seed_pair.created", "seed_pair:2", {"commitment": KEY_A}),
            ("seed_pair.rotated", "seed_pair:2", {"server_seed": KEY_B, "rounds": 0}),
        ),
        "entry 2: seed_pair.rotated of seed_pair:2 reveals a server seed hashing to "
        f"{REVEALED_B}, but the pair's commitment (entry 1) is {SHORT_A}: a pair reveals the "
        "server seed it committed to, a rewrite",
        f"merkintä 2: seed_pair.rotated kohteelle seed_pair:2 paljastaa palvelimen siemenen, "
        f"jonka tiiviste on {REVEALED_B}, mutta parin sitoumus (merkintä 1) on {SHORT_A}: pari "
        "paljastaa sen palvelimen siemenen, johon se sitoutui, eli kyse on "
        "uudelleenkirjoituksesta",
    ),
    "pair rewritten": (
        lambda: Problem(
            audit.PAIR_REWRITTEN,
            {
                "seq": 9,
                "action": "seed_pair.created",
                "subject": "seed_pair:4",
                "logged": SHORT_A,
                "held": SHORT_B,
            },
        ),
        f"entry 9: seed_pair.created of seed_pair:4 commits to {SHORT_A}, but the database "
        f"holds commitment {SHORT_B} for the pair: the pair's row was rewritten after its "
        "commitment was logged",
        f"merkintä 9: seed_pair.created kohteelle seed_pair:4 sitoutuu arvoon {SHORT_A}, mutta "
        f"tietokannassa parin sitoumus on {SHORT_B}: parin rivi on kirjoitettu uudelleen sen "
        "jälkeen, kun sen sitoumus kirjattiin lokiin",
    ),
    "seed rewritten": (
        lambda: Problem(
            audit.SEED_REWRITTEN,
            {
                "seq": 9,
                "action": "seed_pair.created",
                "subject": "seed_pair:4",
                "logged": SHORT_A,
                "held": SHORT_B,
            },
        ),
        f"entry 9: seed_pair.created of seed_pair:4 commits to {SHORT_A}, but the server seed "
        f"the database holds for the pair hashes to {SHORT_B}: the pair's server seed was "
        "rewritten after its commitment was logged",
        f"merkintä 9: seed_pair.created kohteelle seed_pair:4 sitoutuu arvoon {SHORT_A}, mutta "
        f"tietokantaan parille tallennetun palvelimen siemenen tiiviste on {SHORT_B}: parin "
        "palvelimen siemen on kirjoitettu uudelleen sen jälkeen, kun sen sitoumus kirjattiin "
        "lokiin",
    ),
    "not an object": (
        lambda: _chain_problem(lambda entries: entries.__setitem__(6, [])),
        "entry 7 is not an object",
        "merkintä 7: se ei ole objekti",
    ),
    "lacks a field": (
        lambda: _chain_problem(lambda entries: entries[6].pop("hash")),
        "entry 7 lacks hash",
        "merkintä 7: siitä puuttuu hash",
    ),
    "seq not an integer": (
        lambda: _chain_problem(_set("seq", "7")),
        "entry 7 has a seq that is not an integer",
        "merkintä 7: sen järjestysnumero (seq) ei ole kokonaisluku",
    ),
    "time malformed": (
        lambda: _chain_problem(_set("time", "yesterday")),
        "entry 7 has a time not written as YYYY-MM-DDTHH:MM:SS.ffffffZ",
        "merkintä 7: sen aikaa (time) ei ole kirjoitettu muodossa YYYY-MM-DDTHH:MM:SS.ffffffZ",
    ),
    "actor malformed": (
        lambda: _chain_problem(_set("actor", 6)),
        "entry 7 has an actor that is neither a string nor null",
        "merkintä 7: sen actor ei ole merkkijono eikä null",
    ),
    "no action": (
        lambda: _chain_problem(_set("action", "")),
        "entry 7 has no action",
        "merkintä 7: siltä puuttuu toiminto (action)",
    ),
    "data not an object": (
        lambda: _chain_problem(_set("data", [1])),
        "entry 7 has data that is not an object",
        "merkintä 7: sen data ei ole objekti",
    ),
    "link malformed": (
        lambda: _chain_problem(_set("hash", "XYZ")),
        "entry 7 has a hash that is not 64 lower-case hex digits",
        "merkintä 7: sen hash ei ole 64 pientä heksadesimaalinumeroa",
    ),
    "no canonical json": (
        lambda: _chain_problem(_set("data", {"amount": float("nan")})),
        "entry 7 has no canonical JSON (Out of range float values are not JSON compliant): it "
        "hashes to nothing",
        "merkinnällä 7 ei ole kanonista JSON-muotoa (Out of range float values are not JSON "
        "compliant): siitä ei voi laskea tiivistettä",
    ),
    "acted after settlement": (
        lambda: _keyed(COMMIT, _bet(1, 0), _settled(1), ("round.decision", "round:1", {})),
        "entry 4: round.decision of round:1 after its settlement (entry 3): a settled round "
        "takes no more actions, a rewrite",
        "merkintä 4: round.decision kohteelle round:1 sen ratkaisemisen (merkintä 3) jälkeen: "
        "ratkaistussa pelikierroksessa ei tehdä enää toimintoja, eli kyse on "
        "uudelleenkirjoituksesta",
    ),
    "settled twice": (
        lambda: _keyed(COMMIT, _bet(1, 0), _settled(1), _settled(1)),
        "entry 4: a second round.settled of round:1 (the first is entry 3): the round was "
        "settled twice, a rewrite",
        "merkintä 4: toinen round.settled kohteelle round:1 (ensimmäinen on merkintä 3): "
        "pelikierros ratkaistiin kahdesti, eli kyse on uudelleenkirjoituksesta",
    ),
    "committed twice": (
        lambda: _keyed(COMMIT, COMMIT),
        "entry 2: a second seed_pair.created of seed_pair:1 (the first is entry 1): the pair "
        "was committed twice, a rewrite",
        "merkintä 2: toinen seed_pair.created kohteelle seed_pair:1 (ensimmäinen on merkintä 1): "
        "pariin sitouduttiin kahdesti, eli kyse on uudelleenkirjoituksesta",
    ),
    "bet after reveal": (
        lambda: _keyed(COMMIT, _revealed(0), _bet(1, 0)),
        "entry 3: round.bet of round:1 on seed_pair:1 after its reveal (entry 2): a revealed "
        "pair takes no more rounds, a rewrite",
        "merkintä 3: round.bet kohteelle round:1 parilla seed_pair:1 sen paljastamisen (merkintä "
        "2) jälkeen: paljastetulla parilla ei pelata enää pelikierroksia, eli kyse on "
        "uudelleenkirjoituksesta",
    ),
    "bet on a pair never committed": (
        lambda: _keyed(_bet(1, 0)),
        "entry 1: round.bet of round:1 on seed_pair:1, which the log never committed: a round "
        "is bet on a committed pair, a rewrite",
        "merkintä 1: round.bet kohteelle round:1 parilla seed_pair:1, jonka sitoumusta lokissa "
        "ei ole: pelikierroksen panos asetetaan parilla, johon on sitouduttu, eli kyse on "
        "uudelleenkirjoituksesta",
    ),
    "unsigned bet": (
        lambda: _keyed(REGISTERED, COMMIT, _bet(1, 0)),
        "entry 3: round.bet of round:1 is not signed, though its player registered a key "
        "(entry 1): the service takes no unsigned bet from a player with a key, a rewrite",
        "merkintä 3: round.bet kohteelle round:1 on allekirjoittamaton, vaikka sen pelaaja "
        "rekisteröi avaimen (merkintä 1): palvelu ei ota vastaan allekirjoittamatonta panosta "
        "pelaajalta, jolla on avain, eli kyse on uudelleenkirjoituksesta",
    ),
    "nonce out of order": (
        lambda: _keyed(COMMIT, _bet(1, "1")),
        "entry 2: round.bet of round:1 takes nonce '1' of seed_pair:1, whose next nonce is 0: "
        "a pair's nonces are taken in order, each once, a rewrite",
        "merkintä 2: round.bet kohteelle round:1 käyttää parin seed_pair:1 noncea '1', vaikka "
        "parin seuraava nonce on 0: parin noncet käytetään järjestyksessä, kukin kerran, eli "
        "kyse on uudelleenkirjoituksesta",
    ),
    "unsigned action": (
        lambda: _keyed(
            REGISTERED, COMMIT, _bet(1, 0, signed={}), ("round.decision", "round:1", {})
        ),
        "entry 4: round.decision of round:1 is not signed, though its player registered a key "
        "(entry 1): the service takes no unsigned action from a player with a key, a rewrite",
        "merkintä 4: round.decision kohteelle round:1 on allekirjoittamaton, vaikka sen pelaaja "
        "rekisteröi avaimen (merkintä 1): palvelu ei ota vastaan allekirjoittamatonta toimintoa "
        "pelaajalta, jolla on avain, eli kyse on uudelleenkirjoituksesta",
    ),
    "played never bet": (
        lambda: _keyed(COMMIT, _settled(5)),
        "entry 2: round.settled of round:5, which the log never bet: a round is played only "
        "after its bet, a rewrite",
        "merkintä 2: round.settled kohteelle round:5, jonka panosta lokissa ei ole: "
        "pelikierrosta pelataan vasta sen panoksen jälkeen, eli kyse on uudelleenkirjoituksesta",
    ),
    "revealed never committed": (
        lambda: _keyed(_revealed(0)),
        "entry 1: seed_pair.rotated of seed_pair:1, which the log never committed: a pair is "
        "revealed only after its commitment, a rewrite",
        "merkintä 1: seed_pair.rotated kohteelle seed_pair:1, jonka sitoumusta lokissa ei ole: "
        "pari paljastetaan vasta sen sitoumuksen jälkeen, eli kyse on uudelleenkirjoituksesta",
    ),
    "revealed while a round is open": (
        lambda: _keyed(COMMIT, _bet(1, 0), _revealed(1)),
        "entry 3: seed_pair.rotated of seed_pair:1 while round:1, bet on it, is not settled: a "
        "pair is revealed only once its rounds are settled (a round decided after its cards "
        "are known), a rewrite",
        "merkintä 3: seed_pair.rotated kohteelle seed_pair:1, vaikka sillä pelattua "
        "pelikierrosta round:1 ei ole ratkaistu: pari paljastetaan vasta, kun sen pelikierrokset "
        "on ratkaistu (muuten pelikierroksessa tehtäisiin päätös korttien jo ollessa tiedossa), "
        "eli kyse on uudelleenkirjoituksesta",
    ),
    "reveal hides rounds": (
        lambda: _keyed(COMMIT, _bet(1, 0), _settled(1), _bet(2, 1), _settled(2), _revealed(1)),
        "entry 6: seed_pair.rotated of seed_pair:1 says rounds 1, but the log holds 2 rounds "
        "bet on the pair (nonces 0..1): a reveal hiding rounds bet on it, a rewrite",
        "merkintä 6: seed_pair.rotated\u00a0kohteelle seed_pair:1\u00a0ilmoittaa pelikierrosten "
        "määräksi 1, mutta lokissa on parilla 2\u00a0pelikierrosta (noncet 0..1): paljastus "
        "piilottaa parilla pelattuja pelikierroksia, eli kyse on uudelleenkirjoituksesta",
    ),
    # One round is counted in the singular: the English read "holds 1 rounds bet".
    "reveal hides its one round": (
        lambda: _keyed(COMMIT, _bet(1, 0), _settled(1), _revealed(0)),
        "entry 4: seed_pair.rotated of seed_pair:1 says rounds 0, but the log holds 1 round "
        "bet on the pair (nonces 0..0): a reveal hiding rounds bet on it, a rewrite",
        "merkintä 4: seed_pair.rotated\u00a0kohteelle seed_pair:1\u00a0ilmoittaa pelikierrosten "
        "määräksi 0, mutta lokissa on parilla 1\u00a0pelikierros (noncet 0..0): paljastus "
        "piilottaa parilla pelattuja pelikierroksia, eli kyse on uudelleenkirjoituksesta",
    ),
    "reveal names rounds never bet": (
        lambda: _keyed(COMMIT, _bet(1, 0), _settled(1), _revealed(None)),
        "entry 4: seed_pair.rotated of seed_pair:1 says rounds None, but the log holds 1 round "
        "bet on the pair (nonces 0..0): a reveal naming rounds never bet, a rewrite",
        "merkintä 4: seed_pair.rotated\u00a0kohteelle seed_pair:1\u00a0ilmoittaa pelikierrosten "
        "määräksi None, mutta lokissa on parilla 1\u00a0pelikierros (noncet 0..0): paljastus "
        "nimeää pelikierroksia, joihin ei koskaan asetettu panosta, eli kyse on "
        "uudelleenkirjoituksesta",
    ),
    "reveal of a pair never bet on": (
        lambda: _keyed(COMMIT, _revealed(2)),
        "entry 2: seed_pair.rotated of seed_pair:1 says rounds 2, but the log holds no bet: a "
        "reveal naming rounds never bet, a rewrite",
        "merkintä 2: seed_pair.rotated kohteelle seed_pair:1 ilmoittaa pelikierrosten määräksi "
        "2, mutta lokissa ei ole yhtään panosta: paljastus nimeää pelikierroksia, joihin ei "
        "koskaan asetettu panosta, eli kyse on uudelleenkirjoituksesta",
    ),
    "key id registered twice": (
        lambda: _keyed(REGISTERED, REGISTERED),
        "entry 2: a second player_key.registered of key 7 (the first is entry 1): a key id "
        "names one key, a rewrite",
        "merkintä 2: toinen player_key.registered avaintunnukselle 7 (ensimmäinen on merkintä "
        "1): avaintunnus nimeää yhden avaimen, eli kyse on uudelleenkirjoituksesta",
    ),
    "not the key in use": (
        lambda: _keyed(_in_use(KEY_A), _in_use(KEY_B)),
        f"entry 2: key.in_use names key {SHORT_B} as the key in use, but the key in use is "
        f"{SHORT_A} (entry 1): the service's keys change in one chain, each change signed by "
        "the key in use, a rewrite",
        "merkintä 2: key.in_use nimeää käytössä olevaksi avaimeksi avaimen bbbbbbbbbbbbbbbb…, "
        "mutta käytössä oleva avain on aaaaaaaaaaaaaaaa… (merkintä 1): palvelun avaimet "
        "vaihtuvat yhtenä ketjuna ja käytössä oleva avain allekirjoittaa kunkin vaihdon, eli "
        "kyse on uudelleenkirjoituksesta",
    ),
    "key in use before": (
        lambda: _keyed(_in_use(KEY_A), _changed(KEY_A, KEY_B), _changed(KEY_B, KEY_A)),
        f"entry 3: key.changed of key {SHORT_A}, which was in use before (entry 1): a key is "
        "taken into use once, a rewrite",
        "merkintä 3: key.changed avaimelle aaaaaaaaaaaaaaaa…, joka oli käytössä jo aiemmin "
        "(merkintä 1): avain otetaan käyttöön vain kerran, eli kyse on uudelleenkirjoituksesta",
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

    def forge(session: Session, size: int) -> int:
        add_forged_checkpoint(session, size)
        return size

    olga, size, verdict = tampered_and_checked(app, forge)
    assert not verdict.ok
    return {"operator": olga, "size": size}


def tampered_and_checked(
    app: Flask, tamper: Callable[[Session, int], T]
) -> tuple[int, T, checks.CheckVerdict]:
    """A log that passed its whole check, tampered with, then checked whole again under an
    alert rule watching the checks, its failure raised as one alert: the operator, what
    ``tamper`` (given the log's size) returned, and the second verdict."""
    olga = add_user(app, "olga", "operator")
    add_user(app, "alice", "player")
    session = db(app)
    try:
        alerts.create_rule(session, olga, alerts.CHECK_FAILED, None, 0, 24)
        size = checks.run(session, "audit", "test-runner", whole=True).verdict.size
        found = tamper(session, size)
        verdict = checks.run(session, "audit", "test-runner", whole=True).verdict
        assert alerts.scan(session) == 1
    finally:
        session.close()
    return olga, found, verdict


#: The forged checkpoint's reason, by language (the English of the command and the API).
FORGED = {
    "en": "checkpoint over {size} entries: the signature is not valid for this key",
    "fi": "tarkistuspiste, joka kattaa {size} merkintää: allekirjoitus ei kelpaa tälle avaimelle",
    "nb": "sjekkpunktet over {size} oppføringer: signaturen er ikke gyldig for denne nøkkelen",
    "pt": "ponto de controle de {size} entradas: a assinatura não é válida para esta chave",
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


def _time_rewritten(session: Any, seq: int) -> Problem:
    """Write entry ``seq``'s time otherwise than the log writes times (behind the log's guard)."""
    with session.begin(), entries_writable(session):
        entry = session.get(AuditEntry, seq)
        entry.time = "yesterday"
    return Problem(
        audit_chain.ENTRY_MALFORMED, {"due": seq, "shape": Problem(audit_chain.TIME_MALFORMED)}
    )


def _settled_unbet(session: Any, seq: int) -> Problem:
    """Log the settlement of a round the log never bet, after entry ``seq``."""
    with session.begin():
        audit.record(session, actor="user:1", action="round.settled", subject="round:99")
    audit.flush(session)
    return Problem(
        anchors.PLAYED_UNBET,
        {"seq": seq + 1, "action": "round.settled", "subject": "round:99"},
    )


#: How each tamper below changes a log that passed its check, and what the check then finds.
TAMPERS: dict[str, Callable[[Any, int], Problem]] = {
    "malformed entry": _time_rewritten,
    "round never bet": _settled_unbet,
}


@pytest.mark.tampers
@pytest.mark.parametrize("tamper", sorted(TAMPERS))
def test_the_audit_page_names_a_malformed_or_contradicting_entry_in_the_operators_language(
    app: Flask, tamper: str
) -> None:
    """The reasons of the check of each entry's shape and of each key taken once, as the
    console says them on the audit page and in the failed check's alert; the API keeps the
    English."""
    olga, found, verdict = tampered_and_checked(app, TAMPERS[tamper])
    english = found.text()
    assert not verdict.ok and verdict.reason == english  # the command's and the API's words
    api = app.test_client().get("/api/v1/operator/audit/verify", headers=bearer(app, "olga"))
    assert api.get_json()["reason"] == english
    for lang in ("fi", "nb", "pt", "en"):
        with app.test_request_context():
            g.locale = lang
            said = problem_words(found.to_json()).replace("\u00a0", " ")
        page = _console_text(app, olga, lang, "/operator/audit")
        shown = re.search(r'data-testid="chain-status">(.*?)</p>', page, re.S)
        assert shown is not None and said in shown[1]
        assert (english in shown[1]) == (lang == "en")
        # The failed check's alert names the reason as the audit page does.
        alerted = _console_text(app, olga, lang, "/operator/alerts")
        assert said in alerted and (english in alerted) == (lang == "en")

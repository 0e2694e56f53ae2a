"""The console in another language says its lists' headings, codes and rules in that language."""

from __future__ import annotations

import html
import re
from datetime import UTC
from datetime import datetime
from typing import Any

import pytest
import sqlalchemy as sa
from babel.support import Translations
from flask import Flask
from flask.testing import FlaskClient
from operator_support import CSRF
from operator_support import add_user
from operator_support import client_as
from operator_support import db
from operator_support import run_checks
from web_support import post_form

from sota_casino.locations import TRANSLATIONS
from sota_casino.models import CheckRun
from sota_casino.services import accounts
from sota_casino.services import approvals
from sota_casino.services import money
from sota_casino.services import proposals
from sota_casino.services import reports
from sota_casino.services import rounds
from sota_casino.services import settings
from sota_casino.web import i18n
from sota_casino.web.format import SOTA_OUTCOMES
from sota_casino.web.format import SOTA_OUTCOMES_TO_PLAYER
from sota_casino.web.operator import version_words

#: The lists of a player's page on the console.
LISTS = ("rounds", "transfers", "seed_pairs")

ENGLISH_LEFT = (
    " of alice",
    "<th>kind</th>",
    "<th>round id</th>",
    "<td>grant</td>",
    ">a large win in one round<",
    "adjustments to one player over a period",
    '<option value="chips">chips</option>',
)


@pytest.fixture
def console(app: Flask) -> dict[str, Any]:
    player = add_user(app, "alice", "player")
    page = client_as(app, add_user(app, "olga", "operator"))
    page.set_cookie("lang", "fi")
    return {"player": player, "page": page}


@pytest.mark.parametrize("path", ["", "/lists/transfers", "/lists/rounds", "/lists/seed_pairs"])
def test_a_player_s_pages_in_finnish_leave_no_english(console: dict[str, Any], path: str) -> None:
    page = console["page"].get(f"/operator/players/{console['player']}{path}")
    text = page.get_data(as_text=True)
    assert page.status_code == 200
    assert not [words for words in ENGLISH_LEFT if words in text]


def test_the_alerts_page_in_finnish_names_the_kinds_in_finnish(console: dict[str, Any]) -> None:
    text = console["page"].get("/operator/alerts").get_data(as_text=True)
    assert not [words for words in ENGLISH_LEFT if words in text]


@pytest.mark.parametrize(
    ("game", "rules", "english"),
    [
        ("casino_war", {"decks": 6, "tie_payout": 10, "bonus": "none"}, "decks, tie pays"),
        ("sota", {"seats": 2}, "auto_war_twos"),
        ("sota", {"war_down": 1, "peace": True}, "False"),
    ],
)
def test_a_version_s_rules_are_words_of_the_page(
    app: Flask, game: str, rules: dict[str, Any], english: str
) -> None:
    with app.test_request_context("/", headers={"Cookie": "lang=fi"}):
        words = version_words(game, rules)
    assert english not in words and "None" not in words, words


#: A one-deck table with no tie bet, as the house math names its version and its settings: it
#: read "1 decks, tie pays 0 to 1" ("1 pakkaa, tasatilanne maksaa 0:1").
ONE_DECK_NO_TIE_BET = {
    "en": "1\u00a0deck, no tie bet",
    "fi": "1\u00a0pakka, ei tasatilannepanosta",
    "nb": "1\u00a0kortstokk, ingen innsats på like kort",
    "pt": "1\u00a0baralho, sem aposta no empate",
}


@pytest.mark.parametrize("language", sorted(ONE_DECK_NO_TIE_BET))
def test_the_house_math_counts_a_tables_decks_and_says_when_it_has_no_tie_bet(
    app: Flask, language: str
) -> None:
    table = {"decks": 1, "tie_payout": 0, "bonus": "none", "burn": 0}
    operator = add_user(app, "olga", "operator")
    page = client_as(app, operator)
    page.set_cookie("lang", language)
    session = db(app)
    try:
        settings.update_table(session, operator, "casino_war", table)
    finally:
        session.close()
    shown = ONE_DECK_NO_TIE_BET[language]
    with app.test_request_context("/", headers={"Cookie": f"lang={language}"}):
        assert version_words("casino_war", table) == shown
    text = html.unescape(page.get("/operator/ledger").get_data(as_text=True))
    assert f"({shown}, " in text  # the note on the present settings


@pytest.mark.parametrize("language", ["en", "fi", "nb", "pt"])
def test_a_sota_version_names_its_options_values_as_the_tables_form_does(
    app: Flask, language: str
) -> None:
    """The ledger's versions said "Deck: jokers54; Won cards: won_pile" in every language."""
    rules = {"deck": "jokers54", "won_cards": "won_pile", "gather": "shuffled"}
    with app.test_request_context("/", headers={"Cookie": f"lang={language}"}):
        words = version_words("sota", rules)
    said = _words(language).gettext if language != "en" else str
    for value in (
        "54 cards: 52 and two jokers, which beat aces and tie each other.",
        "On a separate pile, shuffled and turned over when the pile runs out.",
        "The pot is shuffled first (no game can loop forever).",
    ):
        assert said(value).removesuffix(".") in words, words
    assert not re.search(r"jokers54|won_pile|: shuffled", words), words


@pytest.mark.parametrize("lang", ["fi", "nb", "pt"])
def test_a_round_that_is_not_there_is_said_in_the_page_language(app: Flask, lang: str) -> None:
    page = client_as(app, add_user(app, "alice", "player"))
    page.set_cookie("lang", lang)
    response = page.get("/history/999999")
    assert response.status_code == 404
    assert "of yours" not in response.get_data(as_text=True)


def test_the_audit_log_offers_a_proof_only_for_entries_a_signed_checkpoint_covers(
    app: Flask, console: dict[str, Any]
) -> None:
    page = console["page"]
    page.post("/operator/audit/checkpoint", data={"csrf_token": CSRF})
    add_user(app, "bob", "player")  # entries after the checkpoint
    text = page.get("/operator/audit").get_data(as_text=True)
    proofs = [int(seq) for seq in re.findall(r'href="/operator/audit/proof/(\d+)"', text)]
    assert proofs and all(
        page.get(f"/operator/audit/proof/{seq}").status_code == 200 for seq in proofs
    )
    assert 'data-testid="proof-waits"' in text
    assert "next signed checkpoint" not in text  # said in Finnish


def _words(language: str) -> Translations:
    """The compiled catalogue the pages read for ``language``."""
    return Translations.load(str(TRANSLATIONS), [language], "messages")


def cells(page: str) -> list[str]:
    """The text of each cell of the page's tables, as written."""
    return re.findall(r"<td\b[^>]*>(.*?)</td>", page, re.S)


#: The labels of the console's pages, as each language writes them.
CONSOLE_LABELS = {
    "account": {
        "en": ["Role", "Status", "Joined", "Chips", "Sweets"],
        "fi": ["Rooli", "Tila", "Liittynyt", "Pelimerkit", "Karkit"],
        "nb": ["Rolle", "Status", "Registrert", "Sjetonger", "Godterier"],
        "pt": ["Papel", "Situação", "Data de cadastro", "Fichas", "Balas"],
    },
    "adjustment": {
        "en": ["Player", "Change", "Balance now", "Balance after", "Reason"],
        "fi": ["Pelaaja", "Muutos", "Saldo nyt", "Uusi saldo", "Syy"],
        "nb": ["Spiller", "Endring", "Saldo nå", "Saldo etterpå", "Begrunnelse"],
        "pt": ["Jogador", "Mudança", "Saldo atual", "Saldo depois", "Motivo"],
    },
    "checkpoint": {
        "en": ["Size", "Root", "Time", "Signature", "Public key"],
        "fi": ["Koko", "Juuri", "Aika", "Allekirjoitus", "Julkinen avain"],
        "nb": ["Størrelse", "Rot", "Tid", "Signatur", "Offentlig nøkkel"],
        "pt": ["Tamanho", "Raiz", "Horário", "Assinatura", "Chave pública"],
    },
    "date range": {
        "en": ["Settled from (UTC day)", "Settled until (UTC day)"],
        "fi": ["Ratkaistu alkaen (UTC-päivä)", "Ratkaistu viimeistään (UTC-päivä)"],
        "nb": ["Gjort opp fra (UTC-dag)", "Gjort opp til og med (UTC-dag)"],
        "pt": ["Liquidadas de (dia UTC)", "Liquidadas até (dia UTC)"],
    },
    "custom rules": {
        "en": ["Players may also choose their own rule set"],
        "fi": ["Pelaajat voivat valita myös omat sääntönsä"],
        "nb": ["Spillerne kan også velge sitt eget regelsett"],
        "pt": ["Os jogadores também podem escolher suas próprias regras"],
    },
}


def _labelled(page: FlaskClient, player: int, name: str) -> str:
    """The part of a console page that holds the labels ``name`` stands for."""
    if name == "account":
        text = page.get(f"/operator/players/{player}").get_data(as_text=True)
        return text.split('aria-labelledby="account-title"')[1].split("</dl>")[0]
    if name == "adjustment":
        form = {"direction": "credit", "currency": "chips", "amount": "5", "reason": "goodwill"}
        preview = page.post(
            f"/operator/players/{player}/adjust/preview", data={"csrf_token": CSRF, **form}
        )
        return (
            preview.get_data(as_text=True)
            .split('data-testid="adjust-confirm"')[1]
            .split("</dl>")[0]
        )
    if name == "date range":
        text = page.get("/operator/ledger").get_data(as_text=True)
        return text.split('aria-labelledby="math-title"')[1].split("</form>")[0]
    if name == "checkpoint":
        page.post("/operator/audit/checkpoint", data={"csrf_token": CSRF})
        text = page.get("/operator/audit").get_data(as_text=True)
        return text.split('data-testid="checkpoint"')[1].split("</dl>")[0]
    text = page.get("/operator/tables").get_data(as_text=True)
    custom = re.search(r'<label><input type="checkbox" name="custom_rules".*?</label>', text, re.S)
    return custom.group(0) if custom else ""


@pytest.mark.parametrize("language", sorted(CONSOLE_LABELS["account"]))
@pytest.mark.parametrize("name", list(CONSOLE_LABELS))
def test_the_console_s_labels_are_capitalised_as_the_headings_around_them(
    app: Flask, name: str, language: str
) -> None:
    """The labels were lower case under capitalised headings: a player's account ("role",
    "status", "joined", "chips", "sweets"), an adjustment to confirm ("player", "change",
    "balance now", "balance after", "reason"), the audit log's latest checkpoint ("size",
    "root", "time", "signature", "public key"), the Sota table's "players may also choose
    their own rule set" under "Presets players may pick", and the ledger's "to" beside
    "Settled from (UTC day)", a label of its own field that a phone shows on a line of its own."""
    player = add_user(app, "alice", "player")
    page = client_as(app, add_user(app, "olga", "operator"))
    page.set_cookie("lang", language)
    part = _labelled(page, player, name)
    found = re.findall(r"<(dt|label)\b[^>]*>(.*?)</\1>", part, re.S)
    labels = [html.unescape(re.sub(r"<[^>]*>", "", label)).strip() for _tag, label in found]
    assert labels == CONSOLE_LABELS[name][language]


@pytest.mark.parametrize("language", ["fi", "nb", "pt"])
def test_a_player_s_currencies_and_seed_pair_states_are_words_of_the_page(
    app: Flask, language: str
) -> None:
    player = add_user(app, "alice", "player")  # granted chips, given an active and a next pair
    page = client_as(app, add_user(app, "olga", "operator"))
    page.set_cookie("lang", language)
    words = _words(language)
    moves = cells(page.get(f"/operator/players/{player}/lists/transfers").get_data(as_text=True))
    assert "chips" not in moves and "Chips" not in moves
    assert words.gettext("Chips") in moves
    overview = page.get(f"/operator/players/{player}").get_data(as_text=True)
    seeds = cells(overview.split('class="data cards seeds-table"')[1].split("</table>")[0])
    assert "active" not in seeds and "next" not in seeds
    assert words.gettext("active") in seeds
    assert words.gettext("next") in seeds


#: Pages of the console that name a currency on its own: a row's heading, a list's currency
#: column, the choices of a form.
CURRENCY_NAMED = (
    "/operator/ledger",
    "/operator/players/{player}",
    "/operator/players/{player}/lists/transfers",
    "/operator/alerts",
)


@pytest.mark.parametrize("path", CURRENCY_NAMED)
def test_the_console_names_a_currency_as_a_name_not_as_a_number_counts_it(
    app: Flask, path: str
) -> None:
    """Finnish counts chips "5 pelimerkkiä" (partitive after a number, as the header's balance
    says) but names them "pelimerkit": a row headed or an option reading "pelimerkkiä" alone
    says "of chips"."""
    player = add_user(app, "alice", "player")
    page = client_as(app, add_user(app, "olga", "operator"))
    page.set_cookie("lang", "fi")
    text = page.get(path.format(player=player)).get_data(as_text=True)
    named = re.findall(r"<(th|td|option)\b[^>]*>([^<]*)</\1>", text)
    alone = [words for _tag, words in named if words.strip() in ("pelimerkkiä", "karkkia")]
    assert alone == []
    assert {"Pelimerkit", "Karkit"} & {words.strip() for _tag, words in named}


#: The console's labels read out by screen readers, on a page that has each.
ARIA_LABELS = {
    "pages": "/operator/players/{player}/lists/rounds",
    "jump and range": "/operator/players/{player}/lists/rounds",
    "this player's lists": "/operator/players/{player}/lists/rounds",
    "which proposals": "/operator/approvals",
    "range export": "/operator/audit",
}


@pytest.mark.parametrize("language", ["fi", "nb", "pt"])
def test_the_console_s_screen_reader_labels_are_in_the_page_language(
    app: Flask, language: str
) -> None:
    player = add_user(app, "alice", "player")
    page = client_as(app, add_user(app, "olga", "operator"))
    page.set_cookie("lang", language)
    words = _words(language)
    for label, path in ARIA_LABELS.items():
        text = html.unescape(page.get(path.format(player=player)).get_data(as_text=True))
        assert f'aria-label="{label}"' not in text, (label, path)
        assert f'aria-label="{words.gettext(label)}"' in text, (label, path)


def test_the_ledger_s_result_charts_name_their_game_and_count_whole_chips(
    app: Flask, console: dict[str, Any]
) -> None:
    """Each small chart has a visible caption in the page's language, and the chip chart counts
    chips as the tables above it do (it once counted hundredths, named only in its SVG title)."""
    session = app.extensions["sota_casino.sessionmaker"]()
    try:
        house: list[Any] = []
        while not any(row.house_result for row in house):  # a result of 0 reads alike in both
            round_ = rounds.place_casino_war_bet(session, console["player"], 500)
            if round_.status == "awaiting_decision":
                rounds.decide_casino_war(session, console["player"], round_.id, "war")
            days = reports.house_summary(session).days
            house = [row for row in days if row.game == "casino_war"]
    finally:
        session.close()
    text = console["page"].get("/operator/ledger").get_data(as_text=True)
    words = _words("fi")
    captions = re.findall(r'<figcaption class="chart-title"[^>]*>(.*?)</figcaption>', text)
    assert [html.unescape(caption) for caption in captions] == [
        words.gettext("Casino War: house result by day (chips)"),
        words.gettext("Sota: house result by day (sweets)"),
    ]
    assert captions[0] != "Casino War: house result by day (chips)"  # said in Finnish
    war = text.split('small" data-game="casino_war"')[1].split("</figure>")[0]
    bars = re.findall(r'<rect class="bar"[^>]*><title>(\d\d-\d\d): ([^<]*)</title>', war)
    assert len(bars) == len(house)  # a bar a day, drawn once for the wide and narrow drawings
    for day, value in bars:
        amount = next(row.house_result for row in house if row.day[5:] == day)
        assert value == _finnish_chips(amount), (day, value, amount)


def _finnish_chips(hundredths: int) -> str:
    """Write hundredths of a chip as the Finnish console writes chips: ``−7,50``, ``15``."""
    whole, cents = divmod(abs(hundredths), 100)
    sign = "−" if hundredths < 0 else ""
    grouped = f"{whole:,}".replace(",", "\u00a0")
    return f"{sign}{grouped},{cents:02d}" if cents else f"{sign}{grouped}"


class _Recording:
    """A catalogue that notes each message asked of it that it does not hold."""

    def __init__(self, books: Any, missing: set[str]) -> None:
        self.books, self.missing = books, missing
        # The messages the compiled catalogue holds, under the one that keeps ranges together.
        self.held = books.books._catalog

    def gettext(self, message: str) -> str:
        if message not in self.held:
            self.missing.add(message)
        return str(self.books.gettext(message))

    def ngettext(self, singular: str, plural: str, n: int) -> str:
        if (singular, 0) not in self.held:
            self.missing.add(singular)
        return str(self.books.ngettext(singular, plural, n))

    def __getattr__(self, name: str) -> Any:
        return getattr(self.books, name)


def _proposals_of_each_status(app: Flask, player: int) -> None:
    """A pending, an approved and a rejected proposal, by olga, decided by otto."""
    olga, otto = add_user(app, "olga", "operator"), add_user(app, "otto", "operator")
    session = db(app)
    try:
        credit = money.propose_adjustment(session, olga, player, "chips", 2500, "goodwill")
        table = settings.propose_table_change(session, olga, "casino_war", {"decks": 4})
        accounts.propose_operator(session, olga, player)
        approvals.decide(session, otto, credit.id, True)
        approvals.decide(session, otto, table.id, False, "not now")
    finally:
        session.close()


@pytest.mark.parametrize("language", ["fi", "nb", "pt"])
def test_every_word_a_page_translates_is_in_the_page_language_s_catalogue(
    app: Flask, monkeypatch: pytest.MonkeyPatch, language: str
) -> None:
    """A word a template translates from a value (``_(status)``) is not found by the
    extraction, so the marking check above cannot see it: rendering the pages can."""
    player = add_user(app, "alice", "player")
    _proposals_of_each_status(app, player)
    staff = client_as(app, add_user(app, "oscar", "operator"))
    staff.set_cookie("lang", language)
    alice = client_as(app, player)
    alice.set_cookie("lang", language)
    post_form(alice, "/casino-war/rounds", {"bet": "5"})
    post_form(alice, "/sota/games", {"preset": "nordic", "stake": "5", "seats": "2"})
    missing: set[str] = set()
    books = i18n.catalogue(language)
    monkeypatch.setattr(i18n, "catalogue", lambda _locale: _Recording(books, missing))
    console = [
        "/operator/audit",
        "/operator/ledger",
        "/operator/players",
        "/operator/tables",
        "/operator/alerts",
        *(f"/operator/approvals?status={status}" for status in proposals.STATUSES),
        f"/operator/players/{player}",
        *(f"/operator/players/{player}/lists/{name}" for name in LISTS),
    ]
    for path in console:
        assert staff.get(path).status_code == 200, path
    history = alice.get("/history").get_data(as_text=True)
    rounds = sorted(set(re.findall(r'href="(/history/\d+)"', history)))
    for path in ("/lobby", "/casino-war", "/casino-war/odds", "/sota", "/stats", "/fairness"):
        assert alice.get(path, follow_redirects=True).status_code == 200, path
    for path in rounds:
        assert alice.get(path, follow_redirects=True).status_code == 200, path
    assert not missing, sorted(missing)


@pytest.mark.parametrize("language", ["fi", "nb", "pt"])
def test_the_approvals_page_says_each_proposal_s_status_and_table_in_the_page_language(
    app: Flask, language: str
) -> None:
    _proposals_of_each_status(app, add_user(app, "alice", "player"))
    staff = client_as(app, add_user(app, "oscar", "operator"))
    staff.set_cookie("lang", language)
    words = _words(language)
    for status in proposals.STATUSES:
        page = staff.get(f"/operator/approvals?status={status}").get_data(as_text=True)
        shown = [html.unescape(cell) for cell in cells(page)]
        assert [cell for cell in shown if cell.startswith(words.gettext(status))], status
        assert not [cell for cell in shown if cell.startswith(status)], status
        assert "casino war" not in page  # the table's name, as the console names games


@pytest.mark.parametrize("path", ["", "/lists/rounds"])
def test_a_sota_game_s_outcome_is_said_in_words_on_the_console(app: Flask, path: str) -> None:
    """A Sota game's outcome is the seat that won, a number: the console's round tables showed
    it bare ("0"), where a Casino War round's reads "player wins"."""
    player = add_user(app, "alice", "player")
    with db(app) as session:
        game = rounds.play_sota(session, player, 5, None, "nordic")
    assert game.status == "settled"
    page = client_as(app, add_user(app, "olga", "operator"))
    page.set_cookie("lang", "en")
    text = page.get(f"/operator/players/{player}{path}").get_data(as_text=True)
    outcomes = re.findall(r'<td\b[^>]*data-label="Outcome"[^>]*>(.*?)</td>', text, re.S)
    said = [html.unescape(outcome).strip() for outcome in outcomes]
    assert said in (["player's side wins"], ["dealer's side wins"]), outcomes


#: A round's row on the player's history, and on the console's list of the player's rounds.
HISTORY_ROW = re.compile(r'<tr data-round="(\d+)">(.*?)</tr>', re.S)
CONSOLE_ROW = re.compile(r'<tr data-key="(\d+)">(.*?)</tr>', re.S)


def _cell(row: str, attribute: str) -> str:
    found = re.search(rf"<td\b[^>]*{attribute}[^>]*>(.*?)</td>", row, re.S)
    assert found, row
    return html.unescape(found[1]).strip()


@pytest.mark.parametrize("language", ["en", "fi", "nb", "pt"])
def test_a_sota_game_s_outcome_names_the_same_side_on_the_history_and_the_console(
    app: Flask, language: str
) -> None:
    """The history and the console each mapped the winning seat to a side on their own; one
    mapping serves both now, each page saying it in its own voice ("You win" to the player,
    "player's side wins" to staff)."""
    player = add_user(app, "alice", "player")
    players_side: set[object] = {0, "team_0"}
    winners: list[object] = []
    with db(app) as session:
        # Games of one seat each and of two teams, until each side has won one.
        while not (set(winners) & players_side and set(winners) - players_side - {"draw"}):
            assert len(winners) < 40, winners
            rules = {"seats": 4, "teams": True} if len(winners) % 2 else None
            game = rounds.play_sota(session, player, 5, rules, None if rules else "nordic")
            assert game.status == "settled"
            winners.append(game.winner)
    words = _words(language)
    to_player = {
        words.gettext(SOTA_OUTCOMES[side]): words.gettext(said)
        for side, said in SOTA_OUTCOMES_TO_PLAYER.items()
    }
    alice = client_as(app, player)
    alice.set_cookie("lang", language)
    staff = client_as(app, add_user(app, "olga", "operator"))
    staff.set_cookie("lang", language)
    history = alice.get("/history?game=sota").get_data(as_text=True)
    console = staff.get(f"/operator/players/{player}/lists/rounds").get_data(as_text=True)
    on_history = {
        int(id_): _cell(row, 'data-testid="result"') for id_, row in HISTORY_ROW.findall(history)
    }
    outcome = f'data-label="{words.gettext("Outcome")}"'
    on_console = {int(id_): _cell(row, outcome) for id_, row in CONSOLE_ROW.findall(console)}
    assert on_history and on_history.keys() == on_console.keys()
    assert set(on_console.values()) <= to_player.keys(), on_console
    assert on_history == {id_: to_player[said] for id_, said in on_console.items()}
    assert words.gettext("You win") in on_history.values()


def _ledger_verdict(app: Flask, ok: bool, findings: dict[str, Any]) -> None:
    """Store a ledger check's verdict as the standing check stores one."""
    session = db(app)
    try:
        with session.begin():
            session.merge(
                CheckRun(
                    name="ledger", ok=ok, size=1, findings=findings, checked_at=datetime.now(UTC)
                )
            )
    finally:
        session.close()


@pytest.mark.parametrize(
    ("language", "transfers", "accounts", "said"),
    [
        ("en", 1, 1, "1 transfer over 1 account: every transfer"),
        ("en", 1_234, 2, "1,234 transfers over 2 accounts: every transfer"),
        ("fi", 1, 1, "1 siirto 1 tilillä: jokainen siirto"),
        ("fi", 3, 5, "3 siirtoa 5 tilillä: jokainen siirto"),
        ("nb", 1, 2, "1 overføring over 2 kontoer: hver overføring"),
        ("pt", 2, 1, "2 transferências em 1 conta: toda transferência"),
    ],
)
def test_the_ledger_check_counts_its_transfers_and_accounts_in_their_plural_forms(
    app: Flask, language: str, transfers: int, accounts: int, said: str
) -> None:
    _ledger_verdict(app, True, {"transfers": transfers, "accounts": accounts})
    page = client_as(app, add_user(app, "olga", "operator"))
    page.set_cookie("lang", language)
    text = html.unescape(page.get("/operator/ledger").get_data(as_text=True))
    assert said in text.replace("\xa0", " ")


@pytest.mark.parametrize(
    ("language", "more", "said"),
    [
        ("en", 1, "… and 1 more problem."),
        ("en", 2, "… and 2 more problems."),
        ("fi", 1, "… ja 1 muu ongelma."),
        ("fi", 3, "… ja 3 muuta ongelmaa."),
    ],
)
def test_the_ledger_check_counts_the_problems_it_does_not_list(
    app: Flask, language: str, more: int, said: str
) -> None:
    _ledger_verdict(app, False, {"problems": ["one"], "problem_count": 1 + more})
    page = client_as(app, add_user(app, "olga", "operator"))
    page.set_cookie("lang", language)
    text = html.unescape(page.get("/operator/ledger").get_data(as_text=True))
    assert said in text.replace("\xa0", " ")


@pytest.mark.parametrize(
    ("language", "said"),
    [
        ("en", "Free text is searched 100,000 entries a page"),
        ("fi", "Vapaata tekstiä haetaan 100 000 merkinnästä sivua kohden"),
        ("pt", "O texto livre é procurado em 100.000 entradas por página"),
    ],
)
def test_the_audit_search_says_its_window_as_the_page_writes_numbers(
    app: Flask, language: str, said: str
) -> None:
    page = client_as(app, add_user(app, "olga", "operator"))
    page.set_cookie("lang", language)
    text = html.unescape(page.get("/operator/audit?text=jackpot").get_data(as_text=True))
    assert said in text.replace("\xa0", " ").replace("\u202f", " ")


@pytest.mark.tampers
@pytest.mark.parametrize(
    ("language", "chips", "sweets"),
    [
        (
            "en",
            "account player:{pat}:chips holds 1,012.34 chips but its postings sum to ",
            "1,007 sweets",
        ),
        (
            "fi",
            "tilillä player:{pat}:chips on 1 012,34 pelimerkkiä, mutta sen kirjausten summa on ",
            "1 007 karkkia",
        ),
    ],
)
def test_the_ledger_check_s_problems_show_amounts_as_the_console_does(
    app: Flask, language: str, chips: str, sweets: str
) -> None:
    """A problem the check finds names its amounts as the console's money does, chips with their
    hundredths, sweets whole, in the operator's language, not in bare minor units."""
    pat = add_user(app, "pat", "player")
    session = db(app)
    try:
        with session.begin():
            for name, balance in (
                (f"player:{pat}:chips", 101_234),
                (f"player:{pat}:sweets", 1_007),
            ):
                session.execute(
                    sa.text("UPDATE accounts SET balance = :balance WHERE name = :name"),
                    {"balance": balance, "name": name},
                )
    finally:
        session.close()
    run_checks(app, whole=True)
    page = client_as(app, add_user(app, "olga", "operator"))
    page.set_cookie("lang", language)
    text = html.unescape(page.get("/operator/ledger").get_data(as_text=True))
    text = text.replace("\xa0", " ").replace("\u202f", " ")
    assert chips.format(pat=pat) in text
    assert f"player:{pat}:sweets" in text and sweets in text


@pytest.mark.parametrize("language", ["en", "fi"])
def test_a_table_change_reads_in_the_form_s_words_and_units_on_approvals_and_history(
    app: Flask, language: str
) -> None:
    """The form says "Maximum bet (whole chips)" and 500 → 400; the approvals read
    "max_bet → 40000" and the history "max_bet: 50000 → 40000", in option names and
    hundredths of a chip."""
    olga, otto = add_user(app, "olga", "operator"), add_user(app, "otto", "operator")
    change = {"max_bet": 40_000, "bonus": "ante", "tie_payout": 8}
    with db(app) as session:
        proposal = settings.propose_table_change(session, olga, "casino_war", change)
    staff = client_as(app, otto)
    staff.set_cookie("lang", language)
    said_as = _words(language).gettext
    max_bet, bonus = said_as("Maximum bet (whole chips)"), said_as("Bonus on a war tie")
    pending = html.unescape(staff.get("/operator/approvals").get_data(as_text=True))
    for said in (
        f"{max_bet}: 400",
        f"{bonus}: {said_as('ante (extra win equal to the ante)')}",
        f"{said_as('Tie bet pays (to 1; 0 = no tie bet)')}: 8",
    ):
        assert said in pending, said
    assert "max_bet" not in pending and "40000" not in pending
    with db(app) as session:
        approvals.decide(session, otto, proposal.id, True)
    history = html.unescape(staff.get("/operator/tables").get_data(as_text=True))
    history = history.split('id="history-title"')[1]
    assert f"{max_bet}: 500 → 400" in history
    assert f"{bonus}: {said_as('none (raise wins even money)')} → " in history
    assert "max_bet" not in history and "40000" not in history


#: A proposal decided already, refused in the operator's language: its state in the page's words.
DECIDED_ALREADY = {
    "en": "proposal {id} was approved already",
    "fi": "ehdotus {id} oli jo hyväksytty",
    "nb": "forslag {id} var allerede godkjent",
    "pt": "a proposta {id} já estava aprovada",
}


@pytest.mark.parametrize("language", sorted(DECIDED_ALREADY))
def test_a_proposal_decided_already_says_its_state_in_the_operator_s_language(
    app: Flask, language: str
) -> None:
    """The refusal named the state by its code: "forslag 1 var allerede approved"."""
    player = add_user(app, "alice", "player")
    olga, otto = add_user(app, "olga", "operator"), add_user(app, "otto", "operator")
    session = db(app)
    try:
        credit = money.propose_adjustment(session, olga, player, "chips", 2500, "goodwill")
        approvals.decide(session, otto, credit.id, True)
    finally:
        session.close()
    page = client_as(app, otto)
    page.set_cookie("lang", language)
    again = post_form(page, f"/operator/approvals/{credit.id}/approve", follow_redirects=True)
    text = html.unescape(again.get_data(as_text=True))
    assert DECIDED_ALREADY[language].format(id=credit.id) in text

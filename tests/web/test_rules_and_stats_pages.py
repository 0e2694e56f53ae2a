"""The how-to-play pages and the player's statistics page: what they show and who may see them."""

from __future__ import annotations

import re
from dataclasses import fields
from fractions import Fraction
from html import unescape
from typing import Any

import pytest
from flask import Flask
from flask.testing import FlaskClient
from operator_support import add_user
from operator_support import bearer as staff_bearer
from operator_support import client_as
from operator_support import db
from web_support import csrf_token

from sota_casino.core import casino_war
from sota_casino.core import odds
from sota_casino.core import sota
from sota_casino.services import settings
from sota_casino.services.stats import BalancePoint
from sota_casino.web import i18n
from sota_casino.web import rules
from sota_casino.web import sota as sota_views
from sota_casino.web import stats as stats_views

TAGS = re.compile(r"<[^>]+>")


def text_of(html: str) -> str:
    """The page's words, tags removed and whitespace collapsed."""
    return " ".join(unescape(TAGS.sub(" ", html)).split())


def option_block(page: str, name: str) -> str:
    """The words that explain one Sota option on the rules page."""
    found = re.search(rf'<dd data-option="{name}">(.*?)</dd>', page, re.S)
    assert found, f"option {name} has no explanation on the page"
    return text_of(found.group(1))


def test_every_option_of_the_sota_engine_is_explained_with_each_of_its_values(
    client: FlaskClient,
) -> None:
    page = client.get("/rules/sota").get_data(as_text=True)
    for option in fields(sota.SotaRules):
        assert f'id="opt-{option.name}"' in page, option.name
        words = option_block(page, option.name)
        about = rules.SOTA_OPTION_TEXT[option.name]
        assert about["about"] in words and about["origin"] in words
        listed = re.findall(r'data-value="([^"]+)"', page.split(f'data-option="{option.name}"')[1])
        for value in rules.option_values(option.name):
            text = rules.SOTA_VALUE_TEXT[option.name][value]
            low, high = rules.RANGES.get(option.name, (0, 0))
            assert text.format(low=low, high=high) in words, (option.name, value)
            shown = f"{low}–\u2060{high}" if value == "number" else rules._shown(value)
            assert shown in listed, (option.name, value)


def test_an_option_added_to_the_engine_without_words_is_noticed() -> None:
    with pytest.raises(KeyError):
        rules.option_values("a_new_option")
    missing = set(f.name for f in fields(sota.SotaRules)) - set(rules.SOTA_OPTION_TEXT)
    assert missing == set()


def test_every_preset_and_variant_says_where_it_comes_from(client: FlaskClient) -> None:
    words = text_of(client.get("/rules/sota").get_data(as_text=True))
    for name in sota.PRESETS:
        texts = (sota_views.PRESET_TITLES[name], rules.PRESET_ORIGINS[name])
        title, about = (" ".join(text.split()) for text in texts)  # as text_of
        assert title in words and about in words
    for name in ("Nordic", "English", "Syrian", "Rauha", "Pjanitsa", "Tod und Leben"):
        assert name in words
    assert "Prisoners of War" in words and "two against two" in words


def test_the_sota_war_example_is_drawn_with_cards_and_played_by_the_engine(
    client: FlaskClient,
) -> None:
    page = client.get("/rules/sota").get_data(as_text=True)
    example = page.split('data-testid="war-example"')[1].split("</section>")[0]
    drawn = re.findall(r'data-card="(\w\w)"', example)
    assert sorted(drawn) == sorted(rules.SOTA_EXAMPLE_DEAL)
    result = text_of(page.split('data-testid="example-result">')[1].split("</p>")[0])
    assert result == (
        "Your queen beats the dealer's five: you take all 10 cards and put them under your "
        "pile. You now hold 31 cards and the dealer 21."
    )


def test_sota_payouts_follow_the_engine_and_the_edge_is_zero(client: FlaskClient) -> None:
    page = client.get("/rules/sota").get_data(as_text=True)
    rows = re.findall(r'<tr data-seats="(\d)"( data-teams="true")?>(.*?)</tr>', page, re.S)
    paid = {(int(seats), bool(teams)): text_of(cells) for seats, teams, cells in rows}
    assert paid == {
        (2, False): "2 20 sweets 10 sweets 0 sweets",
        (3, False): "3 30 sweets 10 sweets 0 sweets",
        (4, False): "4 40 sweets 10 sweets 0 sweets",
        (4, True): "4, in teams of two 20 sweets 10 sweets 0 sweets",
    }
    # Fair odds only for seats equally likely to win: the page said 0 % "under every rule
    # set", where a gather by seat order favours the player's seat (test_sota_games.py).
    assert "Sota takes no house edge (0 %) in its payouts." in text_of(page)
    assert "under every rule set" not in page
    odds = re.search(r'data-testid="sota-seat-odds">(.*?)</p>', page, re.S)
    assert odds is not None and "Gathering the pot in seat order" in odds[1]
    assert "yours wins more often" in odds[1]


def test_the_casino_war_page_explains_every_table_option_and_pays_as_the_core(
    client: FlaskClient,
) -> None:
    page = client.get("/rules/casino-war").get_data(as_text=True)
    words = text_of(page)
    for option in fields(casino_war.TableRules):
        assert f'id="opt-{option.name}"' in page
        assert rules.WAR_OPTION_TEXT[option.name][1] in words
    rows = dict(re.findall(r'<tr data-outcome="(\w+)">(.*?)</tr>', page, re.S))
    assert set(rows) == set(casino_war.OUTCOMES)
    assert text_of(rows["war_tie"]).endswith("+1 ante +2 antes")
    assert text_of(rows["surrender"]).endswith("−½ ante −½ ante")
    assert text_of(rows["war_lose"]).endswith("−2 antes −2 antes")
    example = page.split('data-testid="war-example"')[1].split("</section>")[0]
    assert re.findall(r'data-card="(\w\w)"', example) == ["9S", "9H", "4C", "2C", "7D", "JC", "KD"]
    assert "a net win of +10 chips" in words


def edge_shown(page: str, field: str) -> str:
    shown = rf'<dd data-field="{field}" title="exactly ([\d,/]+)">([\d.]+)\u00a0%</dd>'
    found = re.search(shown, page)
    assert found, field
    return found.group(1).replace(",", "")  # its digits grouped as English groups them


def test_the_house_edge_is_that_of_the_tables_present_settings(app: Flask) -> None:
    client = app.test_client()
    standard = client.get("/rules/casino-war").get_data(as_text=True)
    assert edge_shown(standard, "war") == "142853/4965115"  # 6 decks, 2.88 %
    assert edge_shown(standard, "surrender") == "23/622"
    olga = add_user(app, "olga", "operator")
    session = db(app)
    settings.update_table(session, olga, "casino_war", {"decks": 2, "bonus": "ante", "burn": 0})
    session.close()
    changed = client.get("/rules/casino-war").get_data(as_text=True)
    figures = odds.casino_war_odds(casino_war.TableRules(decks=2, bonus="ante"))
    exact = figures.house_edge_war
    assert edge_shown(changed, "war") == f"{exact.numerator}/{exact.denominator}"
    assert "none at this table" in changed  # no burned cards in the example any more
    assert 'id="opt-burn"' in changed


def test_the_tables_and_every_option_of_the_rule_picker_link_to_the_rules(
    player: FlaskClient,
) -> None:
    war = player.get("/casino-war").get_data(as_text=True)
    assert 'href="/rules/casino-war"' in war
    picker = player.get("/sota").get_data(as_text=True)
    assert 'href="/rules/sota"' in picker
    linked = set(re.findall(r'href="/rules/sota#opt-(\w+)"', picker))
    assert linked == {f.name for f in fields(sota.SotaRules)}
    page = player.get("/rules/sota").get_data(as_text=True)
    for anchor in re.findall(r'href="/rules/sota#([\w-]+)"', picker):
        assert f'id="{anchor}"' in page, anchor
    assert 'href="/stats"' in picker  # the header


# --- statistics ------------------------------------------------------------------------------


def play_a_few(client: FlaskClient) -> None:
    """Four Casino War rounds (every tie taken to war) and two Sota games, as the browser."""
    headers = {"X-CSRF-Token": csrf_token(client)}
    for _ in range(4):
        bet = {"bet": 200, "tie_bet": 100}
        played = client.post("/api/v1/casino-war/rounds", json=bet, headers=headers).get_json()
        if played["status"] == "awaiting_decision":
            url = f"/api/v1/casino-war/rounds/{played['id']}/decision"
            client.post(url, json={"choice": "war"}, headers=headers)
    for preset in ("nordic", "english"):
        game = {"stake": 2, "preset": preset}
        assert client.post("/api/v1/sota/games", json=game, headers=headers).status_code == 201


def figures_of(page: str) -> dict[str, str]:
    totals = page.split('data-testid="totals"')[1].split("</table>")[0]
    found = {}
    for game in ("casino_war", "sota"):
        row = totals.split(f'data-game="{game}"')[1].split("</tr>")[0]
        for field in ("rounds", "handle", "net"):
            cell = re.search(rf'data-field="{field}">(.*?)</td>', row, re.S)
            assert cell
            found[f"{game}.{field}"] = text_of(cell.group(1))
    return found


def test_the_statistics_page_shows_the_players_own_figures_and_charts(
    app: Flask, player: FlaskClient
) -> None:
    play_a_few(player)
    api = player.get("/api/v1/me/stats").get_json()
    page = player.get("/stats").get_data(as_text=True)
    shown = figures_of(page)
    war, game = api["casino_war"], api["sota"]
    assert shown["casino_war.rounds"] == str(war["rounds"])
    assert war["rounds"] == 4 and war["open_rounds"] == 0 and war["handle"] >= 1200
    assert shown["sota.rounds"] == "2" and game["handle"] == 4
    assert shown["sota.handle"] == "4 sweets"
    # Each chart is drawn for a wide panel and for a narrow one (a phone's).
    assert page.count('<svg xmlns="http://www.w3.org/2000/svg" class="chart wide"') == 2
    assert page.count('<svg xmlns="http://www.w3.org/2000/svg" class="chart narrow"') == 2
    assert 'data-testid="balance-chips"' in page and 'data-testid="balance-sweets"' in page
    realized = Fraction(war["realized_edge"]["exact"])
    # The minus sign (U+2212), and a no-break space before the percent sign.
    assert f"{float(realized) * 100:.2f}\u00a0%".replace("-", "−") in page
    assert 'data-testid="luck"' in page
    # Sota's 0 is the payouts' edge, not the exact edge of every rule set played.
    assert "The exact house edge<" not in page and "The house edge of the payouts<" in page
    assert "When the pot is gathered in seat order your seat wins more often" in page


def test_the_statistics_page_sends_each_balance_point_once(player: FlaskClient) -> None:
    """Both drawings of a chart carried every point and its tooltip, so the page sent them
    twice; the narrow drawing now shows the wide one's points (``<use>``), under its own axes."""
    play_a_few(player)
    history = player.get("/api/v1/me/stats").get_json()["balance_history"]
    page = player.get("/stats").get_data(as_text=True)
    for currency, name in (("chips", "chips balance"), ("sweets", "sweets balance")):
        figure = page.split(f'data-testid="balance-{currency}"')[1].split("</figure>")[0]
        points = re.findall(rf"<title>{name} [^<]*</title>", figure)
        assert len(points) == len(history[currency]) > 1, currency
        data = re.search(r'<g id="(chart-[0-9a-f]+)">', figure)
        assert data and figure.count(f'<use href="#{data.group(1)}"') == 1, currency


def test_moves_in_one_second_are_points_of_their_own_under_one_time_label(app: Flask) -> None:
    # A bet and its settlement land in the same second: the axis read "03:41:35 (2)", "(3)".
    times = ["03:41:34", "03:41:35", "03:41:35", "03:41:35", "03:41:36"]
    points = [BalancePoint(f"2026-12-07T{t}Z", 100_000 - 500 * i) for i, t in enumerate(times)]
    with app.test_request_context("/stats"):
        chart = str(stats_views.balance_chart(points, "chips"))
    wide = chart.split('class="chart narrow"')[0]
    labels = re.findall(r'text-anchor="middle" fill="#444444">([^<]*)</text>', wide)
    assert labels == ["03:41:34", "03:41:35", "03:41:36"]
    assert "(2)" not in chart
    tooltips = re.findall(r"<title>chips balance ([^<]*)</title>", chart)
    assert tooltips == [f"{t}: {1_000 - 5 * i:,}" for i, t in enumerate(times)]


def test_a_new_player_sees_empty_statistics(player: FlaskClient) -> None:
    page = player.get("/stats")
    assert page.status_code == 200
    words = text_of(page.get_data(as_text=True))
    assert "No settled Casino War rounds yet." in words and "No settled Sota games yet." in words
    stats = player.get("/api/v1/me/stats").get_json()
    assert stats["casino_war"]["realized_edge"] is None and stats["casino_war"]["interval"] is None
    assert [p["balance"] for p in stats["balance_history"]["chips"]] == [100_000]


@pytest.mark.parametrize("role", ["operator", "auditor"])
def test_staff_have_no_statistics(app: Flask, role: str) -> None:
    user_id = add_user(app, "staffer", role)
    page = client_as(app, user_id).get("/stats")
    assert page.status_code == 403
    api: Any = app.test_client().get("/api/v1/me/stats", headers=staff_bearer(app, "staffer"))
    assert api.status_code == 403 and api.get_json()["error"]["code"] == "forbidden"


def test_visitors_are_sent_to_log_in_or_refused(client: FlaskClient) -> None:
    page = client.get("/stats")
    assert page.status_code == 303 and "/auth/login" in page.headers["Location"]
    assert client.get("/api/v1/me/stats").status_code == 401
    assert client.get("/rules/sota").status_code == 200
    assert client.get("/rules/casino-war").status_code == 200


def test_the_balance_charts_speak_the_page_language(player: FlaskClient) -> None:
    player.post("/language", data={"locale": "fi", "csrf_token": csrf_token(player)})
    page = player.get("/stats").get_data(as_text=True)
    assert "chips balance" not in page and "balance over time" not in page
    assert "1,000" not in page
    assert "1\u00a0000" in page  # the axis groups thousands as Finnish writes them


#: A number and the percent sign after it with a space a line may break at between them.
BREAKABLE_PERCENT = re.compile(r"\S*\d[ \t\r\n]+%")
#: The scripts' data (their messages hold placeholders such as "%(digest)s"), not page text.
SCRIPTS = re.compile(r"<script\b.*?</script>", re.S)


def shown_text(page: str) -> str:
    """The page's text as written, whitespace kept: its tags and scripts removed."""
    return unescape(TAGS.sub("", SCRIPTS.sub("", page)))


@pytest.mark.parametrize("language", ["en", "fi", "nb", "pt"])
def test_a_percentage_keeps_its_sign_on_its_line(
    app: Flask, player: FlaskClient, language: str
) -> None:
    """ "2.88 %" was written with a plain space, so a narrow column or a phone's line put the
    sign alone on the next line: every percentage's space is a no-break one."""
    play_a_few(player)
    staff = client_as(app, add_user(app, "olga", "operator"))
    for client in (player, staff):
        client.set_cookie("lang", language)
    pages = {
        path: player.get(path).get_data(as_text=True)
        for path in (
            "/casino-war",
            "/casino-war/odds",
            "/rules/casino-war",
            "/rules/sota",
            "/stats",
        )
    }
    pages["/operator/ledger"] = staff.get("/operator/ledger").get_data(as_text=True)
    assert "%" in pages["/operator/ledger"] and "%" in pages["/stats"]
    broken = {path: BREAKABLE_PERCENT.findall(shown_text(page)) for path, page in pages.items()}
    assert {path: found for path, found in broken.items() if found} == {}


@pytest.mark.parametrize("language", ["en", "fi", "nb", "pt"])
def test_the_teams_option_names_the_partner_as_the_game_names_seat_2(
    client: FlaskClient, language: str
) -> None:
    """Teams are seats 0+2 against 1+3 (the rule book), and the game calls seat 2 CPU 1 and
    seat 3 CPU 2: the rules page named the player's partner the second computer player."""
    client.set_cookie("lang", language)
    teams = option_block(client.get("/rules/sota").get_data(as_text=True), "teams")
    books = i18n.catalogue(language)
    partner, rival = (books.gettext("CPU %(num)s") % {"num": n} for n in (1, 2))
    assert partner in teams and rival in teams, teams
    assert teams.index(partner) < teams.index(rival), teams

"""Errors come out in the request's format, with the right status, and never as a 500."""

from __future__ import annotations

import json
import re

import pytest
from flask import Flask
from flask.testing import FlaskClient
from web_support import post_form
from web_support import refusal_kinds

from sota_casino.web.errors import refusal_headers
from sota_casino.web.errors import status_of_kind


def test_an_unknown_page_is_a_friendly_404_page(client: FlaskClient) -> None:
    response = client.get("/no/such/page")
    assert response.status_code == 404
    assert response.mimetype == "text/html"
    assert "Nothing here" in response.get_data(as_text=True)


def test_an_unknown_api_path_is_a_json_404(client: FlaskClient) -> None:
    response = client.get("/api/v1/no/such/thing")
    assert response.status_code == 404
    assert response.get_json() == {
        "error": {"code": "not_found", "message": "no such endpoint or resource"}
    }


def test_a_path_with_a_double_slash_is_a_404_in_its_format_not_a_redirect(
    player: FlaskClient, auth: dict[str, str]
) -> None:
    """Werkzeug would answer an HTML 308 to the merged path, to a POST too."""
    for method in ("GET", "POST"):
        api = player.open("/api/v1//me", method=method, headers=auth, json={})
        assert api.status_code == 404, (method, api.status_code)
        assert api.get_json()["error"]["code"] == "not_found"
    page = player.get("/lobby//")
    assert page.status_code == 404 and page.mimetype == "text/html"


def test_a_wrong_method_is_405_in_both_formats(client: FlaskClient) -> None:
    page = client.delete("/lobby")
    assert page.status_code == 405 and page.mimetype == "text/html"
    assert "GET" in page.headers["Allow"]
    api = client.put("/api/v1/casino-war/rounds", json={})
    assert api.status_code == 405
    assert api.get_json()["error"]["code"] == "method_not_allowed"


def test_a_body_over_the_limit_is_413_in_both_formats(
    player: FlaskClient, auth: dict[str, str]
) -> None:
    huge = "x" * (70 * 1024)
    api = player.post(
        "/api/v1/casino-war/rounds", data=huge, headers=auth, content_type="application/json"
    )
    assert api.status_code == 413
    assert api.get_json()["error"]["code"] == "payload_too_large"
    page = player.post("/casino-war/rounds", data={"bet": huge})
    assert page.status_code == 413 and page.mimetype == "text/html"


def test_a_request_line_or_header_over_the_limits_is_refused_in_both_formats(
    player: FlaskClient, auth: dict[str, str]
) -> None:
    """The app's own limits, below gunicorn's: 4094 bytes of request line, 100 header fields
    of 8190 bytes each. An API path answers JSON, a page the error page."""
    long_query = "?q=" + "x" * 4100
    padding = {"X-Padding": "y" * 8190}
    many = {f"X-Field-{n}": "z" for n in range(101)}
    cases = [
        (long_query, {}, 414, "uri_too_long"),
        ("", padding, 431, "header_fields_too_large"),
        ("", many, 431, "header_fields_too_large"),
    ]
    for query, headers, status, code in cases:
        api = player.get("/api/v1/me" + query, headers={**auth, **headers})
        assert api.status_code == status, (status, api.status_code)
        assert api.get_json()["error"]["code"] == code
        page = player.get("/lobby" + query, headers=headers)
        assert page.status_code == status and page.mimetype == "text/html", (status, query)
        assert "<html" in page.get_data(as_text=True)
    fitting = {"X-Padding": "y" * (8190 - len("X-Padding: "))}
    assert player.get("/lobby", headers=fitting).status_code == 200


def test_huge_or_malformed_ids_in_urls_are_404s(player: FlaskClient, auth: dict[str, str]) -> None:
    huge = ("99999999999999999999999", "9223372036854775808", str(2**53))
    for path in (*huge, "0", "-1", "1.5", "abc"):
        assert player.get(f"/casino-war/rounds/{path}").status_code == 404, path
        api = player.get(f"/api/v1/casino-war/rounds/{path}", headers=auth)
        assert api.status_code == 404, path
        assert api.get_json()["error"]["code"] == "not_found"


def test_ids_past_what_a_browser_reads_exactly_are_refused_as_the_document_says(
    player: FlaskClient, auth: dict[str, str]
) -> None:
    """The casino writes no number past 2**53 - 1, which a browser reads inexactly (the page's
    verifier refuses one): an id is no exception, in the API's document as in what it takes."""
    largest = 2**53 - 1
    assert player.get(f"/api/v1/rounds?before={largest}", headers=auth).status_code == 200
    refused = player.get(f"/api/v1/rounds?before={largest + 1}", headers=auth)
    assert refused.status_code == 422
    assert refused.get_json()["error"]["field"] == "before"
    document = player.get("/api/v1/openapi.json").get_json()
    schemas = json.dumps(document)
    assert str(2**63 - 1) not in schemas and f'"maximum": {largest}' in schemas


def test_a_refused_form_flashes_the_reason_and_goes_back(player: FlaskClient) -> None:
    player.get("/sota")
    response = post_form(
        player, "/sota/games", {"stake": "abc"}, headers={"Referer": "http://localhost/sota"}
    )
    assert response.status_code == 303
    assert response.location == "/sota"
    page = player.get("/sota").get_data(as_text=True)
    assert "must be a whole number of sweets" in page


def test_a_refused_sota_stake_goes_back_beside_its_field_focused_as_typed(
    player: FlaskClient,
) -> None:
    """The table's page once drew the refusal at its top and the stake back at 5, unmarked: on a
    phone the message and the field, under the Deal bar, could not both be seen, and the field
    showed no error. The page after the refusal has the message in the form, above the stake
    and the seats; the stake as typed, marked invalid and focused; the seats and rule set as
    picked. The next visit is the plain table again."""
    player.get("/sota")
    table = {"Referer": "http://localhost/sota"}
    form = {"stake": "100000", "seats": "3", "preset": "english"}
    response = post_form(player, "/sota/games", form, headers=table)
    assert (response.status_code, response.location) == (303, "/sota")
    page = player.get("/sota").get_data(as_text=True)
    main = page.split('<main id="main">', 1)[1]
    assert main.index('id="form-error"') > main.index('<form method="post"'), "in the form"
    # Shown once: the stake's own words for the browser's check are an attribute, not shown.
    shown = re.sub(r'<input id="stake"[^>]*>', "", main)
    assert shown.count("must be a whole number of sweets from 1 to 100") == 1
    stake = re.search(r'<input id="stake"[^>]*>', page)
    assert stake is not None
    for attribute in ('value="100000"', 'aria-invalid="true"', 'aria-errormessage="form-error"'):
        assert attribute in stake.group(), attribute
    assert " autofocus" in stake.group()
    assert re.search(r'<option value="3" selected>', page)
    assert re.search(r'value="english" checked', page)
    again = player.get("/sota").get_data(as_text=True)
    assert 'aria-invalid="true"' not in again and 'id="form-error"' not in again
    # A refusal about the rule set stands above the rule sets, the one checked focused.
    rules = {"stake": "5", "preset": "nope"}
    post_form(player, "/sota/games", rules, headers=table)
    page = player.get("/sota").get_data(as_text=True)
    main = page.split('<main id="main">', 1)[1]
    assert main.index("Rule set</h2>") < main.index('id="form-error"') < main.index('"presets"')
    nordic = re.search(r'<input type="radio" name="preset" id="preset-nordic"[^>]*>', page)
    assert nordic is not None and " checked" in nordic.group() and " autofocus" in nordic.group()
    assert 'aria-describedby="form-error"' in nordic.group()
    assert 'aria-invalid="true"' not in re.search(r'<input id="stake"[^>]*>', page).group()


def test_a_refused_option_of_ones_own_rules_goes_back_beside_it_as_typed(
    player: FlaskClient,
) -> None:
    """A refused option of one's own rules was drawn at the page's top, and the rules back at
    their defaults. The refusal stands beside the option, marked and focused, in the rules as
    they were sent, open."""
    player.get("/sota")
    form = {
        "stake": "5",
        "seats": "3",
        "preset": "custom",
        "rule_deck": "piquet32",
        "rule_war_down": "1",
        "rule_max_tricks": "300",
        "rule_lead": "",
        "rule_teams": "on",
        "rule_peace": "on",
    }
    post_form(player, "/sota/games", form, headers={"Referer": "http://localhost/sota"})
    page = player.get("/sota").get_data(as_text=True)
    assert '<details class="custom" id="custom-rules" open>' in page
    assert re.search(r'id="preset-custom" value="custom" checked', page)
    teams = re.search(r'<input type="checkbox" name="rule_teams"[^>]*>', page)
    assert teams is not None and " checked" in teams.group() and " autofocus" in teams.group()
    assert 'aria-invalid="true"' in teams.group()
    assert page.index('id="form-error"') < teams.start()
    assert page.count('aria-invalid="true"') == 1
    for kept in ('id="rule_deck-piquet32" value="piquet32" checked', 'value="1" checked'):
        assert kept in page, kept
    assert re.search(r'id="rule_peace" value="on" checked', page)
    assert re.search(r'id="rule_max_tricks"[^>]* value="300"', page)
    # A number the form itself cannot read is marked beside its option as well.
    unread = {**form, "rule_teams": "", "rule_max_tricks": "-5"}
    post_form(player, "/sota/games", unread, headers={"Referer": "http://localhost/sota"})
    page = player.get("/sota").get_data(as_text=True)
    limit = re.search(r'<input id="rule_max_tricks"[^>]*>', page)
    assert limit is not None and 'aria-invalid="true"' in limit.group()
    assert 'value="-5"' in limit.group() and " autofocus" in limit.group()


def test_a_refused_bet_focuses_the_field_it_is_about(player: FlaskClient) -> None:
    """Without JavaScript the table's page focuses the field to fix (casino.css keeps it above
    the Deal row on a phone): the ante or the tie bet, whichever the refusal is about."""
    player.get("/casino-war")
    for form, field in (
        ({"bet": "900"}, "bet"),
        ({"bet": "5", "tie_bet": "2.5"}, "tie_bet"),
    ):
        page = post_form(player, "/casino-war/rounds", form).get_data(as_text=True)
        focused = re.findall(r'<input id="([^"]+)"[^>]* autofocus', page)
        assert focused == [field], (form, focused)


def test_a_refused_bet_stays_on_the_table_with_the_amounts_as_typed(player: FlaskClient) -> None:
    player.get("/casino-war")
    response = post_form(player, "/casino-war/rounds", {"bet": "-3", "tie_bet": "2"})
    assert response.status_code == 422
    page = response.get_data(as_text=True)
    assert "The ante cannot be negative" in page
    assert 'name="bet" type="number"' in page and 'value="-3"' in page and 'value="2"' in page
    huge = post_form(player, "/casino-war/rounds", {"bet": "100000000000000000000000"})
    assert "The ante is far too large" in huge.get_data(as_text=True)


def test_a_refused_form_never_goes_back_to_another_site(player: FlaskClient) -> None:
    response = post_form(
        player, "/sota/games", {"stake": "x"}, headers={"Referer": "https://evil.example/"}
    )
    assert response.status_code == 303
    assert response.location == "/"


def test_a_refused_page_load_shows_the_error_page_with_its_status(player: FlaskClient) -> None:
    response = player.get("/history/12345")
    assert response.status_code == 404
    assert "no round 12345 of yours" in response.get_data(as_text=True)


def test_bad_query_values_on_pages_are_422_pages_not_500(player: FlaskClient) -> None:
    response = player.get("/history?before=abc")
    assert response.status_code == 422
    assert "before must be a whole number" in response.get_data(as_text=True)


def test_page_messages_name_fields_in_words_and_count_right(player: FlaskClient) -> None:
    table = player.get("/sota").get_data(as_text=True)
    for code in ("standard52", "winner_first", "tied_only_return"):
        assert f"<strong>{code}</strong>" not in table and f"> {code} " not in table
    blank = post_form(player, "/fairness/rotate", {"client_seed": "   "})
    assert blank.status_code == 303
    page = player.get("/fairness").get_data(as_text=True)
    assert "Enter a client seed: 1 to 64 characters, not only spaces" in page
    assert "Client_seed" not in page and "client_seed must" not in page


def test_amounts_say_one_chip_and_one_sweet() -> None:
    from sota_casino.web.format import chips_text
    from sota_casino.web.format import plural
    from sota_casino.web.format import sweets_text
    from sota_casino.web.format import when

    assert chips_text(100) == "1\u00a0chip" and chips_text(150) == "1.50\u00a0chips"
    assert chips_text(-100, signed=True) == "−1\u00a0chip" and chips_text(200) == "2\u00a0chips"
    assert sweets_text(1, signed=True) == "+1\u00a0sweet" and sweets_text(3) == "3\u00a0sweets"
    assert plural(1, "sweet") == "1\u00a0sweet" and plural(100, "chip") == "1\u00a0chip"
    # The English locale's medium date and short time (CLDR puts a narrow space before AM).
    assert when("2026-12-01T08:31:13.842813Z") == "Dec 1, 2026, 8:31\u202fAM UTC"


def test_a_host_header_that_is_no_host_name_is_a_400_in_the_requests_format(
    client: FlaskClient,
) -> None:
    """A Host no URL can be built for (a label over 63 letters, an empty one) leaves no page
    able to link anywhere: the page that tried was a 500 from the server, logged as a bug."""
    for host in ("a" * 64 + ".example", "casino..example", ".example"):
        for path in ("/", "/lobby", "/healthz", "/static/casino.css", "/no/such/page"):
            page = client.get(path, headers={"Host": host})
            assert page.status_code == 400, (host, path, page.status_code)
            assert page.mimetype == "text/plain", (host, path)
            assert "That request did not make sense" in page.get_data(as_text=True)
            assert page.headers["Content-Security-Policy"].startswith("default-src 'self'")
            assert page.headers["Cache-Control"] == "no-store"
        api = client.get("/api/v1/me", headers={"Host": host})
        assert api.status_code == 400
        assert api.get_json()["error"]["code"] == "bad_request"


def test_a_refusal_answered_429_or_503_cannot_be_made_without_its_wait(app: Flask) -> None:
    """So its ``Retry-After`` is always its own wait, never a guess of the web layer's."""
    waiting = [kind for kind in refusal_kinds() if status_of_kind(kind) in (429, 503)]
    assert {kind.code for kind in waiting} == {"rate_limited", "unavailable"}
    for kind in waiting:
        with pytest.raises(TypeError, match="retry_after"):
            kind()
        for path in ("/api/v1/me", "/lobby"):
            with app.test_request_context(path):
                assert refusal_headers(kind(retry_after=7)) == {"Retry-After": "7"}, kind

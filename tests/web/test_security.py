"""Security plumbing: headers, CSRF, cookies, server-side sessions, API credentials."""

from __future__ import annotations

from flask.testing import FlaskClient
from web_support import PASSWORD
from web_support import csrf_token
from web_support import post_form
from web_support import register_page

CSP = (
    "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; "
    "frame-ancestors 'none'; base-uri 'none'; form-action 'self'"
)


def session_cookie(client: FlaskClient) -> str:
    cookie = client.get_cookie("session")
    assert cookie is not None
    return cookie.value


def test_every_kind_of_response_carries_the_security_headers(player: FlaskClient) -> None:
    for url in ("/lobby", "/api/v1/me", "/static/casino.css", "/no-such-page", "/api/v1/nope"):
        with player.get(url) as response:
            assert response.headers["Content-Security-Policy"] == CSP, url
            assert response.headers["X-Content-Type-Options"] == "nosniff"
            assert response.headers["X-Frame-Options"] == "DENY"
            assert response.headers["Referrer-Policy"] == "same-origin"
            assert "Strict-Transport-Security" not in response.headers


def test_hsts_is_sent_only_over_https(client: FlaskClient) -> None:
    response = client.get("/", base_url="https://casino.example")
    assert response.headers["Strict-Transport-Security"].startswith("max-age=")


def test_pages_have_no_inline_scripts_or_styles(player: FlaskClient) -> None:
    for url in ("/", "/lobby", "/casino-war", "/sota", "/history", "/fairness", "/auth/password"):
        page = player.get(url).get_data(as_text=True)
        assert "style=" not in page, url
        assert "<script>" not in page and "onclick" not in page, url
        for tag in page.split("<script")[1:]:
            assert 'src="' in tag.split(">")[0] or 'type="application/json"' in tag, url


def test_a_form_without_its_csrf_token_is_refused_with_400(player: FlaskClient) -> None:
    for url, data in (
        ("/casino-war/rounds", {"bet": "5"}),
        ("/sota/games", {"stake": "1", "preset": "nordic"}),
        ("/fairness/rotate", {}),
        ("/lobby/topup", {"currency": "chips"}),
        ("/auth/logout", {}),
        ("/auth/password", {"old": PASSWORD, "new": "x" * 12, "confirm": "x" * 12}),
    ):
        response = player.post(url, data=data)
        assert response.status_code == 400, url
        assert "security token" in response.get_data(as_text=True)
    assert player.get("/lobby").status_code == 200  # still logged in: nothing happened


def test_a_wrong_csrf_token_is_refused_too(client: FlaskClient) -> None:
    csrf_token(client)
    response = client.post(
        "/auth/register",
        data={
            "csrf_token": "forged",
            "username": "mallory",
            "password": PASSWORD,
            "confirm": PASSWORD,
        },
    )
    assert response.status_code == 400
    login = client.post("/api/v1/auth/token", json={"username": "mallory", "password": PASSWORD})
    assert login.status_code == 401  # the account was never made


def test_session_cookie_is_httponly_and_samesite_lax(client: FlaskClient) -> None:
    response = client.get("/auth/login")
    header = response.headers["Set-Cookie"]
    assert "HttpOnly" in header and "SameSite=Lax" in header and "Secure" not in header


def test_session_cookie_is_secure_when_configured(app, client: FlaskClient) -> None:  # type: ignore[no-untyped-def]
    app.config["SESSION_COOKIE_SECURE"] = True
    header = client.get("/auth/login", base_url="https://casino.example").headers["Set-Cookie"]
    assert "Secure" in header


def test_logging_in_changes_the_session_id(client: FlaskClient) -> None:
    register_page(client, "alice")
    with client.session_transaction() as session:
        first, first_csrf = session["sid"], session["csrf"]
    post_form(client, "/auth/logout")
    post_form(client, "/auth/login", {"username": "alice", "password": PASSWORD})
    with client.session_transaction() as session:
        assert session["sid"] != first
        assert session["csrf"] != first_csrf


def test_a_copied_cookie_stops_working_after_logout(app, player: FlaskClient) -> None:  # type: ignore[no-untyped-def]
    stolen = session_cookie(player)
    assert post_form(player, "/auth/logout").status_code == 303
    thief = app.test_client()
    thief.set_cookie("session", stolen)
    page = thief.get("/lobby")
    assert page.status_code == 303 and "/auth/login" in page.location
    api = thief.get("/api/v1/me")
    assert api.status_code == 401
    assert api.get_json()["error"]["code"] == "unauthorized"


def test_changing_the_password_ends_other_sessions_and_tokens(app, player: FlaskClient) -> None:  # type: ignore[no-untyped-def]
    other = app.test_client()
    other.set_cookie("session", session_cookie(player))
    token = player.post(
        "/api/v1/auth/token", json={"username": "alice", "password": PASSWORD}
    ).get_json()["token"]
    new = "a brand new passphrase"
    response = post_form(player, "/auth/password", {"old": PASSWORD, "new": new, "confirm": new})
    assert response.status_code == 303
    assert player.get("/lobby").status_code == 200  # this browser got a fresh session
    assert other.get("/lobby").status_code == 303
    headers = {"Authorization": f"Bearer {token}"}
    assert player.get("/api/v1/me", headers=headers).status_code == 401


def test_a_cookie_alone_never_authorizes_an_api_post(player: FlaskClient) -> None:
    response = player.post("/api/v1/casino-war/rounds", json={"bet": 500})
    assert response.status_code == 401
    assert "X-CSRF-Token" in response.get_json()["error"]["message"]
    me = player.get("/api/v1/me").get_json()
    assert me["balances"]["chips"] == 100_000  # nothing moved


def test_browser_scripts_may_post_with_the_cookie_and_the_csrf_header(player: FlaskClient) -> None:
    headers = {"X-CSRF-Token": csrf_token(player)}
    response = player.post("/api/v1/casino-war/rounds", json={"bet": 500}, headers=headers)
    assert response.status_code == 201
    wrong = player.post(
        "/api/v1/casino-war/rounds", json={"bet": 500}, headers={"X-CSRF-Token": "nope"}
    )
    assert wrong.status_code == 401


def test_a_bad_authorization_header_is_401(client: FlaskClient) -> None:
    for header in ("Basic abc", "Bearer", "Bearer not-a-token", "token"):
        response = client.get("/api/v1/me", headers={"Authorization": header})
        assert response.status_code == 401, header
        assert response.headers["WWW-Authenticate"] == "Bearer"


def test_login_redirects_only_to_this_site(client: FlaskClient) -> None:
    register_page(client, "alice")
    post_form(client, "/auth/logout")
    for target, expected in (
        ("/history", "/history"),
        ("//evil.example/x", "/lobby"),
        ("https://evil.example/", "/lobby"),
    ):
        response = post_form(
            client, "/auth/login", {"username": "alice", "password": PASSWORD, "next": target}
        )
        assert response.status_code == 303
        assert response.location == expected, target
        post_form(client, "/auth/logout")


def test_pages_send_a_visitor_to_the_login_page_and_back(client: FlaskClient) -> None:
    response = client.get("/history?game=sota")
    assert response.status_code == 303
    assert response.location == "/auth/login?next=/history?game%3Dsota"


def test_a_form_sent_after_logout_goes_to_the_login_page_and_bets_nothing(
    player: FlaskClient,
) -> None:
    post_form(player, "/auth/logout")
    response = post_form(player, "/casino-war/rounds", {"bet": "5"})
    assert response.status_code == 303 and response.location == "/auth/login"
    post_form(player, "/auth/login", {"username": "alice", "password": PASSWORD})
    assert player.get("/api/v1/rounds").get_json()["rounds"] == []

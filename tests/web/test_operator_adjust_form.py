"""The console's adjustment form: amounts read as the page's language writes them, and a refused
amount shown beside the form it came from, in that language, with what was typed kept."""

from __future__ import annotations

from typing import Any

import pytest
from flask import Flask
from operator_support import CSRF
from operator_support import add_user
from operator_support import balances
from operator_support import client_as


@pytest.fixture
def staff(app: Flask) -> dict[str, Any]:
    player = add_user(app, "alice", "player")
    operator = add_user(app, "olga", "operator")
    return {"player": player, "page": client_as(app, operator)}


def preview(staff: dict[str, Any], lang: str, **data: str) -> Any:
    page = staff["page"]
    page.set_cookie("lang", lang)
    form = {"csrf_token": CSRF, "direction": "credit", "currency": "chips", "reason": "x", **data}
    return page.post(f"/operator/players/{staff['player']}/adjust/preview", data=form)


@pytest.mark.parametrize(
    ("lang", "typed", "shown"),
    [
        ("fi", "12,50", "+12,50"),
        ("nb", "12,50", "+12,50"),
        ("pt", "12,50", "+12,50"),
        ("fi", "1 000,5", "+1\u00a0000,50"),
        ("en", "1,000.50", "+1,000.50"),
        ("en", "12.5", "+12.50"),
    ],
)
def test_an_amount_is_read_as_the_page_language_writes_it(
    staff: dict[str, Any], lang: str, typed: str, shown: str
) -> None:
    response = preview(staff, lang, amount=typed)
    assert response.status_code == 200
    assert shown in response.get_data(as_text=True)


@pytest.mark.parametrize(
    ("lang", "typed", "currency", "counted"),
    [
        ("en", "2,000", "chips", "(200,000\u00a0hundredths of a chip)"),
        ("fi", "2 000", "chips", "(200\u00a0000\u00a0pelimerkin sadasosaa)"),
        ("pt", "2.000", "chips", "(200.000\u00a0centésimos de ficha)"),
        ("nb", "20 000", "sweets", "(20\u00a0000\u00a0godterier)"),
    ],
)
def test_the_confirmation_groups_the_units_it_counts_as_the_page_writes_numbers(
    staff: dict[str, Any], lang: str, typed: str, currency: str, counted: str
) -> None:
    """The confirmation counted "(200000 hundredths of a chip)" beside a grouped amount."""
    response = preview(staff, lang, amount=typed, currency=currency)
    assert response.status_code == 200
    assert counted in response.get_data(as_text=True)


@pytest.mark.parametrize(
    ("lang", "typed", "currency"),
    [
        ("fi", "12,505", "chips"),
        ("en", "12,50", "chips"),
        ("fi", "1,5", "sweets"),
        ("en", "abc", "chips"),
    ],
)
def test_an_amount_the_language_does_not_write_so_is_refused_beside_the_form(
    staff: dict[str, Any], lang: str, typed: str, currency: str
) -> None:
    response = preview(staff, lang, amount=typed, currency=currency, reason="typed reason")
    page = response.get_data(as_text=True)
    assert response.status_code == 422
    assert 'id="adjust-error"' in page  # beside the form, not on the bare error page
    assert f'value="{typed}"' in page and "typed reason</textarea>" in page


def test_a_debit_over_the_balance_is_refused_in_words_in_the_page_language(
    app: Flask, staff: dict[str, Any]
) -> None:
    held = balances(app, staff["player"])["chips"]
    response = preview(staff, "fi", direction="debit", amount="99 999", reason="liikaa")
    page = response.get_data(as_text=True)
    assert response.status_code == 409
    assert 'id="adjust-error"' in page
    assert "minor units" not in page and "would make it negative" not in page
    assert "Ei juuri nyt" not in page  # not the error page's "Not right now"
    assert "99\u00a0999" in page and f"{held // 100:,}".replace(",", "\u00a0") in page
    assert 'value="99 999"' in page and "liikaa</textarea>" in page
    assert '<option value="debit" selected>' in page

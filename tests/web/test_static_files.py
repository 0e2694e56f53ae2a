"""The stylesheet, the scripts and the scripts' words: named by their content in every page,
kept by browsers for a year under that name, asked for again on every use under any other."""

from __future__ import annotations

import hashlib
import re
from pathlib import Path
from typing import Final

import pytest
from flask import Flask
from flask.testing import FlaskClient
from web_support import SCRIPT_WORDS_URL
from web_support import post_form
from web_support import scripts_words

from sota_casino.web import assets
from sota_casino.web.i18n import LANGUAGES

#: Every static URL a page names.
STATIC_URL = re.compile(r'(?:src|href)="(/static/[^"]+)"')


def static_urls(client: FlaskClient, path: str) -> list[str]:
    page = client.get(path)
    assert page.status_code == 200, path
    return STATIC_URL.findall(page.get_data(as_text=True))


def content_version(app: Flask, filename: str) -> str:
    data = (Path(str(app.static_folder)) / filename).read_bytes()
    return hashlib.sha256(data).hexdigest()[:12]


@pytest.mark.parametrize("path", ("/", "/fairness", "/auth/login", "/rules/casino-war"))
def test_every_static_url_of_a_page_names_its_files_content(
    app: Flask, client: FlaskClient, path: str
) -> None:
    """Each page asked for its stylesheet and each script again on every visit (a round trip
    a file, on a phone too): their URLs now change only when the files do."""
    urls = static_urls(client, path)
    assert any(url.startswith("/static/casino.css?") for url in urls)
    for url in urls:
        filename, _, query = url.removeprefix("/static/").partition("?")
        assert query == f"v={content_version(app, filename)}", url
        with client.get(url) as answer:
            assert answer.status_code == 200, url
            assert answer.headers["Cache-Control"] == "public, max-age=31536000, immutable", url


def test_a_static_url_without_its_version_or_with_another_is_asked_for_again(
    client: FlaskClient,
) -> None:
    """A page drawn before a release names the files as they were: what it gets under that
    name now must not be kept for a year."""
    for url in ("/static/casino.css", "/static/casino.css?v=000000000000"):
        with client.get(url) as answer:
            assert answer.status_code == 200, url
            assert "max-age" not in answer.headers.get("Cache-Control", ""), url
            assert answer.headers["ETag"], url


def test_a_file_changed_while_the_service_runs_gets_a_new_version(tmp_path: Path) -> None:
    """In development a file is edited under a running ``flask run``: its next page must name
    the new content, not the version first read."""
    edited = tmp_path / "casino.css"
    edited.write_text("body { color: red }")
    first = assets._version_of(edited)
    edited.write_text("body { color: blue; }")
    second = assets._version_of(edited)
    assert first != second
    assert second == hashlib.sha256(edited.read_bytes()).hexdigest()[:12]
    assert assets._version_of(tmp_path / "missing.css") is None


#: What the landing page weighed with its scripts' words in it (68,279 bytes, 64,125 of them
#: the words); its HTML alone is a few kilobytes in any language.
PAGE_MOST: Final = 16_000


@pytest.mark.parametrize("language", sorted(LANGUAGES))
def test_a_page_names_its_languages_words_for_its_scripts_and_carries_none(
    client: FlaskClient, language: str
) -> None:
    """Every page carried its scripts' words in a block of its own, 64 KB of the landing page's
    68 KB, sent again with each page. A page now names them in a script whose URL names their
    version, kept by the browser for a year, and their words are the page's language's."""
    if language != "en":
        post_form(client, "/language", {"locale": language, "next": "/"})
    for path in ("/", "/fairness", "/rules/sota"):
        page = client.get(path).get_data(as_text=True)
        assert 'id="translations"' not in page and "SotaTranslations" not in page, path
        url = SCRIPT_WORDS_URL.search(page)
        assert url and url.group(1).startswith(f"/language/{language}.js?v="), path
        with client.get(url.group(1)) as answer:
            assert answer.headers["Cache-Control"] == assets.KEPT
            assert answer.content_type == "text/javascript; charset=utf-8"
            version = hashlib.sha256(answer.get_data()).hexdigest()[:12]
            assert url.group(1).endswith(f"?v={version}")
    assert len(client.get("/").get_data()) < PAGE_MOST
    words = scripts_words(client, page)
    assert words["locale"] == language
    assert (
        words["messages"]["Dealer"]
        == {"en": "Dealer", "fi": "Jakaja", "nb": "Dealer", "pt": "Crupiê"}[language]
    )


def test_the_scripts_words_under_another_version_or_none_are_asked_for_again(
    client: FlaskClient,
) -> None:
    """A page drawn before a release names the words as they were: what it gets now under that
    name must not be kept for a year; asked again, unchanged words are a 304. A language the
    casino does not speak is no script at all."""
    for url in ("/language/fi.js", "/language/fi.js?v=000000000000"):
        with client.get(url) as answer:
            assert answer.status_code == 200, url
            assert answer.headers["Cache-Control"] == "no-cache", url
            assert answer.get_data(as_text=True).startswith("window.SotaTranslations = {")
            etag = answer.headers["ETag"]
        again = client.get(url, headers={"If-None-Match": etag})
        assert (again.status_code, again.get_data()) == (304, b""), url
    for unknown in ("/language/xx.js", "/language/EN.js", "/language/en.json"):
        assert client.get(unknown).status_code == 404, unknown

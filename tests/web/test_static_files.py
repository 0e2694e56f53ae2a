"""The stylesheet and scripts: named by their content in every page, kept by browsers for a
year under that name, asked for again on every use under any other."""

from __future__ import annotations

import hashlib
import re
from pathlib import Path

import pytest
from flask import Flask
from flask.testing import FlaskClient

from sota_casino.web import assets

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

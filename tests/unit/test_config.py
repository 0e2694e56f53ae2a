"""Settings read from the environment: a value the service cannot start with is named, and
the README's table of settings names every one the service reads with its default."""

from __future__ import annotations

import os
import re
import runpy
import subprocess
from pathlib import Path

import pytest

from sota_casino import config
from sota_casino.services.context import load_or_create_signing_key


@pytest.mark.parametrize("value", ["abc", "-1", "1.5", "1e3", "٣", ""])
def test_a_whole_number_setting_takes_digits_only(value: str) -> None:
    if value == "":  # unset, as an empty variable is: the default stands
        assert "DB_LOCK_TIMEOUT_MS" not in config.from_environment({"DB_LOCK_TIMEOUT_MS": value})
        return
    with pytest.raises(config.SettingsError, match=r"^DB_LOCK_TIMEOUT_MS must be a whole number"):
        config.from_environment({"DB_LOCK_TIMEOUT_MS": value})


def test_a_whole_number_setting_is_read_as_its_number() -> None:
    assert config.from_environment({"DB_LOCK_TIMEOUT_MS": "2500"}) == {"DB_LOCK_TIMEOUT_MS": 2500}


def test_a_signing_key_file_holding_no_key_is_named(tmp_path: Path) -> None:
    path = tmp_path / "key.pem"
    path.write_text("not a key\n")
    with pytest.raises(config.SettingsError, match="holds no unencrypted Ed25519 private key"):
        load_or_create_signing_key(path)
    assert path.read_text() == "not a key\n"  # left as it was


ROOT = Path(__file__).resolve().parents[2]


def readme_settings() -> dict[str, str]:
    """Each setting the README's table names, with the default it gives."""
    section = (ROOT / "README.md").read_text().split("\n## Settings\n", 1)[1].split("\n## ")[0]
    found: dict[str, str] = {}
    for row in re.findall(r"^\| (`[A-Z].*?) \| (.*?) \|", section, re.M):
        names = re.findall(r"`([A-Z][A-Z0-9_]+)`", row[0])
        defaults = row[1].split(" / ") if len(names) > 1 else [row[1]]
        assert len(defaults) == len(names), row
        found.update(zip(names, defaults, strict=True))
    return found


def test_the_readme_names_every_setting_with_its_default() -> None:
    documented = readme_settings()
    candidates = set(documented) | set(config.defaults()) | set(config.INT_SETTINGS)
    read = config.from_environment({name: "1" for name in candidates})
    assert sorted(documented) == sorted(read)
    for name, default in config.INT_SETTINGS.items():
        assert documented[name] == str(default), name
    assert documented["FORWARDED_ALLOW_IPS"] == f"`{config.FORWARDED_ALLOW_IPS}`"


class _Log:
    def __init__(self) -> None:
        self.warnings: list[str] = []

    def warning(self, message: str) -> None:
        self.warnings.append(message)


class _Server:
    """What gunicorn.conf.py's ``on_starting`` reads of gunicorn's arbiter."""

    def __init__(self) -> None:
        self.log = _Log()
        self.cfg = type("Config", (), {"timeout": 30})()


@pytest.mark.parametrize("hosts", [None, "casino.example,www.casino.example"])
def test_gunicorn_warns_at_start_when_any_host_name_would_be_answered(
    hosts: str | None, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Unset, a forged Host is answered, and pages build addresses from it (docs/security.md).
    monkeypatch.delenv("TRUSTED_HOSTS", raising=False)
    if hosts is not None:
        monkeypatch.setenv("TRUSTED_HOSTS", hosts)
    server = _Server()
    gunicorn_conf = runpy.run_path(str(ROOT / "gunicorn.conf.py"))
    gunicorn_conf["on_starting"](server)
    if hosts is None:
        [warning] = server.log.warnings
        assert warning.startswith("TRUSTED_HOSTS is unset, so a request for any host name is")
        assert "127.0.0.1,localhost on this computer only" in warning
    else:
        assert server.log.warnings == []


def test_make_run_answers_for_this_computers_own_names_unless_told_otherwise() -> None:
    def run_recipe(**environment: str) -> str:
        env = {k: v for k, v in os.environ.items() if k != "TRUSTED_HOSTS"} | environment
        made = subprocess.run(
            ["make", "-n", "run"], cwd=ROOT, env=env, capture_output=True, text=True, check=True
        )
        return made.stdout.rpartition("HOST=127.0.0.1 ")[2]

    assert "TRUSTED_HOSTS=127.0.0.1,localhost " in run_recipe()
    assert "TRUSTED_HOSTS=casino.example " in run_recipe(TRUSTED_HOSTS="casino.example")


@pytest.mark.parametrize(
    ("value", "secure"),
    [("1", True), ("TRUE", True), ("yes", True), ("on", True)]
    + [("0", False), ("false", False), ("No", False), ("off", False)],
)
def test_an_on_off_setting_reads_its_words_either_way(value: str, secure: bool) -> None:
    # "off" and "no" turned every cookie Secure: logins over plain HTTP then failed.
    found = config.from_environment({"SESSION_COOKIE_SECURE": value})
    assert found["SESSION_COOKIE_SECURE"] is secure


@pytest.mark.parametrize("value", ["2", "maybe", "secure"])
def test_an_on_off_setting_refuses_any_other_word(value: str) -> None:
    with pytest.raises(config.SettingsError, match=r"^SESSION_COOKIE_SECURE must be 1 or 0"):
        config.from_environment({"SESSION_COOKIE_SECURE": value})


@pytest.mark.parametrize("name", ["SESSION_HOURS", "TOKEN_HOURS"])
def test_a_lifetime_of_no_hours_is_refused_at_start(name: str) -> None:
    # 0 was taken: every session or token then ended as it began.
    with pytest.raises(config.SettingsError, match=rf"^{name} must be 1 or more: "):
        config.from_environment({name: "0"})
    assert config.from_environment({name: "1"}) == {name: 1}

"""Settings read from the environment: a value the service cannot start with is named, and
the README's table of settings names every one the service reads with its default."""

from __future__ import annotations

import re
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

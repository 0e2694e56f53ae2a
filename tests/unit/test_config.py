"""Settings read from the environment: a value the service cannot start with is named."""

from __future__ import annotations

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

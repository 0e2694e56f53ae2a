"""The Sota rule set: defaults, presets, validation with messages that list the valid values."""

from __future__ import annotations

import json
from typing import Any

import pytest

from sota_casino.core.errors import InvalidRules
from sota_casino.core.sota import PRESETS
from sota_casino.core.sota import TABLE_OPTIONS
from sota_casino.core.sota import SotaRules
from sota_casino.core.sota import SotaTable

DEFAULTS = {
    "seats": 2,
    "deck": "standard52",
    "war_down": 3,
    "won_cards": "bottom",
    "gather": "winner_first",
    "short": "lose",
    "multi_tie": "tied_only",
    "end": "all_cards",
    "max_tricks": 2000,
    "lead": None,
    "peace": False,
    "auto_war_twos": False,
    "underdog": False,
    "prisoners_of_war": False,
    "teams": False,
}


def test_the_defaults_are_those_of_the_rule_book_and_every_option_is_listed() -> None:
    assert SotaRules().to_dict() == DEFAULTS
    assert json.loads(json.dumps(SotaRules().to_dict())) == DEFAULTS


def test_a_rule_set_round_trips_through_its_dict() -> None:
    rules = SotaRules.from_dict(
        {"seats": 4, "teams": True, "war_down": "by_rank", "lead": 10, "gather": "shuffled"}
    )
    assert SotaRules.from_dict(rules.to_dict()) == rules


def test_lead_off_may_be_written_as_off_or_null() -> None:
    assert SotaRules.from_dict({"lead": "off"}).lead is None
    assert SotaRules.from_dict({"lead": None}).lead is None


def test_the_presets_are_the_named_rule_sets() -> None:
    assert SotaRules.from_preset("nordic") == SotaRules()
    assert SotaRules.from_preset("english").war_down == 1
    tod = SotaRules.from_preset("tod_und_leben")
    assert (tod.deck, tod.end) == ("piquet32", "single_pass")
    assert SotaRules.from_preset("pjanitsa").deck == "pjanitsa36"
    assert SotaRules.from_preset("rauha").peace is True
    assert SotaRules.from_preset("syrian").war_down == "by_rank"
    assert SotaRules.from_preset("kids_15_min").max_tricks == 300
    assert set(PRESETS) == {
        "nordic",
        "english",
        "tod_und_leben",
        "pjanitsa",
        "rauha",
        "syrian",
        "kids_15_min",
    }


def test_an_unknown_preset_lists_the_presets() -> None:
    with pytest.raises(InvalidRules, match="nordic, english, tod_und_leben"):
        SotaRules.from_preset("blitz")


def test_an_unknown_option_lists_the_valid_ones() -> None:
    with pytest.raises(InvalidRules, match="unknown option 'jokers'; valid: seats, deck, war_down"):
        SotaRules.from_dict({"jokers": True})


def test_rules_must_be_an_object() -> None:
    with pytest.raises(InvalidRules):
        SotaRules.from_dict(["seats", 2])  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("options", "message"),
    [
        ({"seats": 5}, "seats must be one of: 2, 3, 4"),
        ({"seats": True}, "seats must be one of: 2, 3, 4"),
        ({"seats": "2"}, "seats must be one of: 2, 3, 4"),
        ({"deck": "tarot78"}, "deck must be one of: standard52, jokers54, pjanitsa36, piquet32"),
        ({"war_down": 2}, "war_down must be one of: 3, 1, by_rank"),
        ({"war_down": True}, "war_down must be one of: 3, 1, by_rank"),
        ({"war_down": 3.0}, "war_down must be one of: 3, 1, by_rank"),
        ({"won_cards": "top"}, "won_cards must be one of: bottom, won_pile"),
        ({"gather": "random"}, "gather must be one of: winner_first, table, shuffled"),
        ({"short": "win"}, "short must be one of: lose, last_card_up"),
        ({"multi_tie": "none"}, "multi_tie must be one of: tied_only, tied_only_return, all"),
        ({"end": "timer"}, "end must be one of: all_cards, single_pass"),
        ({"max_tricks": 0}, "max_tricks must be a whole number from 1 to 100000"),
        ({"max_tricks": 100_001}, "max_tricks must be a whole number from 1 to 100000"),
        ({"max_tricks": True}, "max_tricks must be a whole number"),
        ({"max_tricks": "300"}, "max_tricks must be a whole number"),
        ({"lead": 0}, "lead must be off \\(null\\) or a whole number from 1 to 54"),
        ({"lead": False}, "lead must be off"),
        ({"peace": 1}, "peace must be true or false"),
        ({"underdog": "yes"}, "underdog must be true or false"),
        ({"teams": True}, "teams needs 4 seats"),
        ({"teams": True, "seats": 3}, "teams needs 4 seats"),
    ],
)
def test_a_bad_value_is_refused_naming_the_valid_ones(
    options: dict[str, Any], message: str
) -> None:
    with pytest.raises(InvalidRules, match=message) as refused:
        SotaRules.from_dict(options)
    assert refused.value.code == "invalid_rules"


def test_the_constructor_validates_too() -> None:
    with pytest.raises(InvalidRules, match="gather"):
        SotaRules(gather="sorted")


# --- a Sota table's settings ---------------------------------------------------------------

TABLE = {"min_stake": 1, "max_stake": 100, "presets": ["nordic", "rauha"], "custom_rules": True}


def test_a_tables_settings_round_trip_with_each_preset_once() -> None:
    doubled = TABLE | {"presets": ["rauha", "nordic", "rauha"]}
    table = SotaTable.from_dict(doubled)
    assert table == SotaTable(1, 100, ("rauha", "nordic"), True)
    assert table.to_dict() == doubled | {"presets": ["rauha", "nordic"]}


@pytest.mark.parametrize(
    ("change", "option", "words"),
    [
        ({"seats": 2}, "seats", "unknown option 'seats'"),
        ({"min_stake": 0}, "min_stake", "from 1 to 1000000000"),
        ({"min_stake": True}, "min_stake", "whole number of sweets"),
        ({"max_stake": "100"}, "max_stake", "whole number of sweets"),
        ({"max_stake": 10**9 + 1}, "max_stake", "from 1 to 1000000000"),
        ({"min_stake": 101}, "min_stake", "must not exceed max_stake"),
        ({"presets": []}, "presets", "non-empty list of: nordic, english"),
        ({"presets": "nordic"}, "presets", "non-empty list"),
        ({"presets": ["nordic", "chess"]}, "presets", "non-empty list"),
        ({"custom_rules": 1}, "custom_rules", "true or false"),
        ({"custom_rules": None}, "custom_rules", "true or false"),
    ],
)
def test_a_bad_table_setting_is_refused_by_name(
    change: dict[str, Any], option: str, words: str
) -> None:
    with pytest.raises(InvalidRules) as refused:
        SotaTable.from_dict(TABLE | change)
    assert refused.value.details["option"] == option
    assert words in str(refused.value)


def test_a_table_setting_left_out_is_refused_not_defaulted() -> None:
    for option in TABLE_OPTIONS:
        with pytest.raises(InvalidRules) as refused:
            SotaTable.from_dict({k: v for k, v in TABLE.items() if k != option})
        assert refused.value.details["option"] == option

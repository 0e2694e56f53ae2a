"""The rules a Casino War bet names are the core's table options, in the core's ranges."""

from __future__ import annotations

from sota_casino.core import casino_war
from sota_casino.web.schemas import CasinoWarRules


def test_a_bet_names_every_option_of_a_table_in_the_cores_ranges() -> None:
    # A bet names the rules the page showed, a table's whole to_dict(): an option the core
    # gained and this model lacked would refuse every bet the page sends.
    fields = CasinoWarRules.model_json_schema()["properties"]
    assert set(fields) == set(casino_war.TableRules().to_dict())
    assert set(CasinoWarRules.model_json_schema()["required"]) == set(fields)
    for name, (low, high) in casino_war.RANGES.items():
        assert (fields[name]["minimum"], fields[name]["maximum"]) == (low, high), name
    assert fields["bonus"]["enum"] == list(casino_war.BONUS_MODES)

"""The offline verifier reads every number as the fairness page does, or refuses it: one written
with a fraction or an exponent, zero written with a minus sign, or an integer beyond 2^53 - 1,
none of which the casino writes (docs/fairness.md, "Numbers both verifiers read alike"). The
page's reader (static/js/casino_json.js) is held to the same words by
tests/browser/test_page_and_offline_verifiers_agree.py.
"""

from __future__ import annotations

import copy
import json
from pathlib import Path

import pytest
from test_verify_cli import GOOD
from test_verify_cli import KEY_HEX
from test_verify_cli import _run
from test_verify_cli import _write
from test_verify_unplaced_actions import _records

from sota_casino.core.fairness import MAX_EXACT_INTEGER
from sota_casino.core.fairness import NumberWritten
from sota_casino.core.fairness import WrittenOtherwise
from sota_casino.core.fairness import whole_number_json

WHOLE = "the casino writes whole numbers only"
ZERO = "the casino writes zero without a minus sign"
TOO_LARGE = "the casino writes none beyond 2^53 - 1, past which a browser reads them inexactly"


@pytest.mark.parametrize(
    ("text", "refusal"),
    [
        ('{"rounds": [{"document": {"nonce": 0.0}}]}', f"0.0 at rounds[0].document.nonce: {WHOLE}"),
        ('{"a": [1, {"b": 2, "c": [[], [1e0]]}]}', f"1e0 at a[1].c[1][0]: {WHOLE}"),
        ('{"a": "1.5, \\"x\\": 2.5", "b": -3E+2}', f"-3E+2 at b: {WHOLE}"),
        ('{"odd key": 1.5}', f'1.5 at ["odd key"]: {WHOLE}'),
        ('{"a": 1.5, "a": 1}', f"1.5 at a: {WHOLE}"),  # every number written, as the page
        ('{"id": 9007199254740992}', f"9007199254740992 at id: {TOO_LARGE}"),
        ("[-9007199254740992]", f"-9007199254740992 at [0]: {TOO_LARGE}"),
        ("1" * 5000, f"{'1' * 5000} at $: {TOO_LARGE}"),
        ('{"rounds": [{"document": {"nonce": -0}}]}', f"-0 at rounds[0].document.nonce: {ZERO}"),
        ("-0", f"-0 at $: {ZERO}"),
        ('{"a": [0, -0.0]}', f"-0.0 at a[1]: {WHOLE}"),
    ],
)
def test_a_number_the_casino_does_not_write_is_refused_naming_its_place(
    text: str, refusal: str
) -> None:
    with pytest.raises(NumberWritten) as refused:
        whole_number_json(text)
    assert str(refused.value) == f"a number is written {refusal}"


def test_whole_numbers_up_to_2_53_less_1_are_read_exactly_and_what_is_not_json_is_not_json() -> (
    None
):
    text = json.dumps({"a": [MAX_EXACT_INTEGER, -MAX_EXACT_INTEGER, 0, "1.5"], "b": None})
    assert whole_number_json(text) == {
        "a": [MAX_EXACT_INTEGER, -MAX_EXACT_INTEGER, 0, "1.5"],
        "b": None,
    }
    for not_json in ('{"a": NaN}', '{"a": 1.5,}', "\ufeff{}", '{"a": Infinity}'):
        with pytest.raises(ValueError) as refused:
            whole_number_json(not_json)
        assert not isinstance(refused.value, NumberWritten), not_json


def test_a_bundle_file_with_a_number_written_as_a_float_is_unusable_input_naming_it(
    tmp_path: Path,
) -> None:
    served = copy.deepcopy(GOOD)
    served["rounds"][0]["document"]["nonce"] = 0.0  # signed over 0
    path = _write(tmp_path, "bundle.json", served)
    code, out, _ = _run(path, "--public-key", KEY_HEX)
    assert code == 2
    assert (
        f"Unusable input {path}: a number is written 0.0 at rounds[0].document.nonce: {WHOLE}"
    ) in out


def test_a_records_file_with_a_number_written_as_a_float_is_unusable_input_naming_it(
    tmp_path: Path,
) -> None:
    records = _records((101, 12, "war"))
    records["actions"][0]["seed_pair_id"] = 12.0
    path = _write(tmp_path, "records.json", records)
    bundle = _write(tmp_path, "bundle.json", GOOD)
    code, out, _ = _run(bundle, "--records", path, "--public-key", KEY_HEX)
    assert code == 2
    assert (
        f"cannot read records file {path}: a number is written 12.0 at "
        f"actions[0].seed_pair_id: {WHOLE}"
    ) in out


TWICE = "the casino writes each member of an object once, and readers differ in which they keep"


@pytest.mark.parametrize(
    ("text", "place"),
    [
        ('{"payout": 1, "payout": 2}', "payout"),
        (
            '{"rounds": [{"document": {"payout": 0, "nonce": 1, "payout": 900}}]}',
            "rounds[0].document.payout",
        ),
        ('{"a": {"b": 1}, "c": [{}, {"x": 1, "x": 1}]}', "c[1].x"),
        ('{"pay\\u006fut": 1, "payout": 2}', "payout"),  # one member, however its name is written
        ('{"odd key": 1, "odd key": 1.5}', '["odd key"]'),  # the first refusal in the text
    ],
)
def test_a_member_written_twice_is_refused_naming_its_place(text: str, place: str) -> None:
    """Every reader keeps one of two values given for one member, but not the same one (Python's
    and the browser's the last, others the first): a document signed over one payout and
    served with another beside it would be read apart, so both verifiers refuse it."""
    with pytest.raises(WrittenOtherwise) as refused:
        whole_number_json(text)
    assert str(refused.value) == f"a member is written twice at {place}: {TWICE}"


def test_a_member_of_the_same_name_in_two_objects_is_no_member_written_twice() -> None:
    text = '[{"a": 1}, {"a": 2, "b": {"a": 3}}, {"a": {"a": 4}}]'
    assert whole_number_json(text) == [{"a": 1}, {"a": 2, "b": {"a": 3}}, {"a": {"a": 4}}]


def test_a_bundle_file_with_a_signed_member_written_twice_is_unusable_input_naming_it(
    tmp_path: Path,
) -> None:
    """The receipt signed over its payout, served with another payout written before it: both
    readers keep the last, the one signed, and passed it; a reader keeping the first would read
    another payout from a bundle that verifies."""
    payout = GOOD["rounds"][2]["document"]["payout"]
    marked = copy.deepcopy(GOOD)
    marked["rounds"][2]["document"]["payout"] = "written here"
    text = json.dumps(marked).replace('"written here"', f'{payout + 1000}, "payout": {payout}')
    assert json.loads(text) == GOOD  # as Python reads it, nothing changed
    path = tmp_path / "bundle.json"
    path.write_text(text, encoding="utf-8")
    code, out, _ = _run(str(path), "--public-key", KEY_HEX)
    assert code == 2
    assert (
        f"Unusable input {path}: a member is written twice at rounds[2].document.payout: {TWICE}"
    ) in out

"""gpupool.jsonio: JSON as RFC 8259 has it, with every key once (issue 7, items 5 and 6)."""

from __future__ import annotations

import json
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from gpupool.jsonio import JsonProblem, loads

_SCALARS = st.one_of(st.none(), st.booleans(), st.integers(),
                     st.floats(allow_nan=False, allow_infinity=False), st.text(max_size=8))
_VALUES = st.recursive(_SCALARS, lambda inner: st.one_of(
    st.lists(inner, max_size=4), st.dictionaries(st.text(max_size=6), inner, max_size=4)),
    max_leaves=20)


@given(_VALUES)
def test_valid_json_reads_as_json_loads_does(value: Any) -> None:
    text = json.dumps(value)
    assert loads(text) == json.loads(text)
    assert loads(text.encode("utf-16")) == json.loads(text)


@given(st.dictionaries(st.text(max_size=6), _SCALARS, min_size=1, max_size=5), st.data())
def test_any_repeated_key_is_refused_and_named(obj: dict[str, Any], data: st.DataObject) -> None:
    key = data.draw(st.sampled_from(sorted(obj)))
    body = json.dumps(obj)[:-1] + f", {json.dumps(key)}: 1}}"  # the key once more, at the end
    nested = '{"outer": [' + body + "]}"
    with pytest.raises(JsonProblem) as err:
        loads(nested)
    assert f"key {json.dumps(key)}: expected each key once" in str(err.value)


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ('{"a": NaN}', 'line 1 column 7 (key "a"): expected a JSON number, got NaN'),
        ('{"a": [1,\n  Infinity]}', "line 2 column 3: expected a JSON number, got Infinity"),
        ('{"a": -Infinity}', "got -Infinity (not JSON)"),
        ('{"a": 1e400}', 'expected a finite number, got 1e400'),
        ('{"a": -' + "1" * 400 + ".5}", "expected a finite number, got -11111111111111111111..."),
        ('{"a": ' + "7" * 4301 + "}", "expected a number of at most 4,300 digits"),
        ("[" * 50_000 + "]" * 50_000, "nesting too deep"),
    ],
)
def test_what_json_loads_lets_through(text: str, expected: str) -> None:
    with pytest.raises(JsonProblem) as err:
        loads(text)
    assert expected in str(err.value)
    assert "\n" not in str(err.value)


def test_strings_that_look_like_constants_are_just_strings() -> None:
    assert loads('{"a": "NaN", "b": "1e999", "c": 1e308}') == {"a": "NaN", "b": "1e999",
                                                                "c": 1e308}

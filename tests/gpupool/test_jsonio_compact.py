"""gpupool.jsonio's cheaper duplicate proof for compact documents, held to the hook's reading.

A compact document (Terraform's ``show -json``) is parsed plainly and its keys counted against
an upper bound of the keys in the text; only equality skips the object_pairs_hook. Whatever
the text (keys and strings holding ``":``, backslash runs, ``\\u0022:``, strings starting with a
colon, a duplicate at any depth), the result or the error is the hook's.
"""

from __future__ import annotations

import json
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from gpupool import jsonio

# Text that stresses the count: quotes, colons, backslashes and the escapes json writes for them
_TRICKY = st.text(alphabet=st.sampled_from(['"', ":", "\\", "a", "é", " ", "\n", "u"]), max_size=6)
_KEYS = st.one_of(_TRICKY, st.sampled_from(['":', '\\":', ':', '\\', '\\\\":', "a"]))
_SCALARS = st.one_of(st.none(), st.booleans(), st.integers(), _TRICKY,
                     st.floats(allow_nan=False, allow_infinity=False))
_VALUES = st.recursive(_SCALARS, lambda inner: st.one_of(
    st.lists(inner, max_size=4), st.dictionaries(_KEYS, inner, max_size=4)), max_leaves=20)


def _hooked(raw: bytes | str) -> Any:
    """Today's reading: every object through the duplicate hook."""
    return json.loads(raw, object_pairs_hook=jsonio._pairs, parse_constant=jsonio._constant,
                      parse_float=jsonio._finite)


def _outcome(read: Any, raw: bytes | str) -> Any:
    try:
        return ("ok", read(raw))
    except jsonio.JsonProblem as e:
        return ("problem", str(e))
    except ValueError as e:
        return ("error", type(e).__name__, str(e))


def _reference(raw: bytes | str) -> Any:
    try:
        return ("ok", _hooked(raw))
    except jsonio._Duplicate as e:
        return ("duplicate", e.key)
    except ValueError as e:
        return ("error", type(e).__name__, str(e))


def _compact(value: Any, escape: bool) -> str:
    return json.dumps(value, separators=(",", ":"), ensure_ascii=escape)


def _with_duplicate(text: str, key: str, at: int) -> str:
    """The text with ``"key":0,`` written again after the at-th object's ``{`` outside strings."""
    seen = 0
    in_string = escaped = False
    for i, ch in enumerate(text):
        if in_string:
            escaped, in_string = (False, True) if escaped else (ch == "\\", ch != '"')
        elif ch == '"':
            in_string = True
        elif ch == "{":
            if seen == at:
                entry = json.dumps(key) + ":0"
                rest = text[i + 1:]
                tail = "" if rest[:1] == "}" else ","
                return f"{text[:i + 1]}{entry},{entry}{tail}{rest}"
            seen += 1
    return text


@given(_VALUES, st.booleans())
def test_compact_documents_read_as_the_hook_reads_them(value: Any, escape: bool) -> None:
    text = _compact(value, escape)
    assert _outcome(jsonio.loads, text) == _outcome(_hooked, text)
    raw = text.encode("utf-8")
    assert _outcome(jsonio.loads, raw) == _outcome(_hooked, raw)


def _same_as_the_hook(text: str) -> None:
    expected = _reference(text)
    got = _outcome(jsonio.loads, text.encode("utf-8"))
    if expected[0] == "duplicate":
        assert got[0] == "problem"
        assert str(got[1]).startswith(jsonio._key(expected[1]) + ": expected each key once")
    else:
        assert got == expected


@given(_VALUES, _KEYS, st.integers(0, 5), st.booleans())
def test_a_duplicate_at_any_depth_is_refused_as_the_hook_refuses_it(
        value: Any, key: str, at: int, escape: bool) -> None:
    _same_as_the_hook(_with_duplicate(_compact({"doc": value}, escape), key, at))


@pytest.mark.parametrize("text", [
    '{"a":1,"a":2}',
    '{"x":{"k\\\\":1,"k\\\\":2}}',  # a key ending in a backslash: its quote is not escaped
    '{"s":"\\":","a":1,"a":2}',  # an escaped quote and colon in a value
    '{"s":"\\u0022:","a":{"b":1,"b":2}}',  # the same escaped as \u0022
    '{"s":":x","a":1}',  # a string starting with a colon: the bound is loose, the hook reads
    '[{"a":1},{"b":[{"c":1,"c":1}]}]',
])
def test_compact_texts_the_count_could_get_wrong(text: str) -> None:
    _same_as_the_hook(text)


def test_a_compact_document_takes_the_count_not_the_hook(monkeypatch: pytest.MonkeyPatch) -> None:
    calls: list[int] = []
    real = jsonio._pairs

    def pairs(items: list[tuple[str, Any]]) -> dict[str, Any]:
        calls.append(len(items))
        return real(items)

    monkeypatch.setattr(jsonio, "_pairs", pairs)
    doc = {"resource_changes": [{"address": f'm["{i}"]', "change": {"after": {"policy":
                                 '{"Version":"2012-10-17"}'}}} for i in range(20)]}
    assert jsonio.loads(_compact(doc, True).encode()) == doc
    assert calls == []  # main: one call per object (61)
    assert jsonio.loads(json.dumps(doc, indent=2).encode()) == doc  # indented: the hook reads
    assert len(calls) == 61

"""gpupool.jsonio's cheaper duplicate proof for compact documents, held to the hook's reading.

A compact document (Terraform's ``show -json``, blanks around it allowed) is parsed plainly and
its keys counted against an upper bound of the keys in the text; only equality skips the
object_pairs_hook. Whatever the text (keys and strings holding ``":``, backslash runs,
``\\u0022:``, strings starting with a colon, a duplicate at any depth, any layout: indentation,
blanks before or after colons and commas, around the document), the result or the error is the
hook's.
"""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path
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


_BLANKS = st.text(alphabet=" \t\r\n", max_size=3)
_LAYOUTS = st.tuples(st.one_of(st.none(), st.integers(0, 4), _BLANKS),  # indent
                     _BLANKS, _BLANKS, _BLANKS,  # after a comma, before and after a colon
                     _BLANKS, _BLANKS)  # before and after the document

ROOT = Path(__file__).resolve().parents[2]


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


def _laid_out(value: Any, escape: bool, layout: tuple[Any, ...]) -> str:
    indent, comma, before, after, head, tail = layout
    text = json.dumps(value, ensure_ascii=escape, indent=indent,
                      separators=("," + comma, before + ":" + after))
    return head + text + tail


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


@given(_VALUES, st.booleans(), _LAYOUTS)
def test_documents_of_any_layout_read_as_the_hook_reads_them(
        value: Any, escape: bool, layout: tuple[Any, ...]) -> None:
    text = _laid_out(value, escape, layout)
    assert _outcome(jsonio.loads, text) == _outcome(_hooked, text)
    raw = text.encode("utf-8")
    assert _outcome(jsonio.loads, raw) == _outcome(_hooked, raw)
    assert _outcome(jsonio.loads, b"\xef\xbb\xbf" + raw) == _outcome(_hooked, b"\xef\xbb\xbf" + raw)


@given(_VALUES, _KEYS, st.integers(0, 5), st.booleans(), _LAYOUTS)
def test_a_duplicate_in_any_layout_is_refused_as_the_hook_refuses_it(
        value: Any, key: str, at: int, escape: bool, layout: tuple[Any, ...]) -> None:
    _same_as_the_hook(_with_duplicate(_laid_out({"doc": value}, escape, layout), key, at))


@pytest.mark.parametrize("text", [
    '{"a":1,"a":2}',
    '{"a":1,"a":2}\n',  # show -json's final line break
    '\r\n\t {"a":[{"b":1,"b":2}]} \r\n',
    '{"a" :1,"b":1,"b":2}',  # a key the count misses (blank before its colon), a duplicate
    '{"a"\t:1,"b":1,"b":2}\n',
    '{"a"\n:1,"b":1,"b":2}',
    '{"a"' + " " * 70 + ':1,"b":1,"b":2}',
    " " * 70 + '{"a":1,"b":1,"b":2}' + " \n" * 70,  # blanks beyond what is looked past
    '{"a":1,"b":1,"b":2}' + " " * 70 + "\n",
    '"a" \n',
    "\n",
    '{"a":1,"a":2}\n{"a":1}\n',  # JSON lines: extra data, as the hook says it
    '{"a":1,"a":2}\x0c',  # not JSON whitespace
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


def _generated(name: str, n: int) -> Any:
    spec = importlib.util.spec_from_file_location(name, ROOT / "bench" / f"{name}.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.generate(n)


@pytest.mark.parametrize("end", ["\n", "\r\n", " \n\n"])
def test_a_terraform_plan_ending_in_a_line_break_takes_the_count(
        end: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """``terraform show -json`` ends with a line break: main read every object of such a plan
    through the hook (15,515 calls for 1,000 resources)."""
    calls: list[int] = []
    real = jsonio._pairs

    def pairs(items: list[tuple[str, Any]]) -> dict[str, Any]:
        calls.append(len(items))
        return real(items)

    monkeypatch.setattr(jsonio, "_pairs", pairs)
    plan = _generated("gen_tfplan", 20)
    raw = (json.dumps(plan, separators=(",", ":")) + end).encode()
    assert jsonio.loads(raw) == plan
    assert calls == []
    twice = raw.replace(b'{"format_version":', b'{"format_version":"1.2","format_version":', 1)
    with pytest.raises(jsonio.JsonProblem) as err:
        jsonio.loads(twice)
    assert str(err.value).startswith('key "format_version": expected each key once')


def _bound_by_counts(data: bytes) -> int:
    """The bound as three counts worked it out (before the split)."""
    escaped = data.count(b'\\":')
    return data.count(b'":') - (escaped - data.count(b'\\\\":') if escaped else 0)


@given(st.lists(st.sampled_from([b'"', b"\\", b":", b"a"]), max_size=40).map(b"".join))
def test_the_split_bound_is_the_counts_bound(data: bytes) -> None:
    assert jsonio._key_bound(data) == _bound_by_counts(data)
    assert jsonio._key_bound(bytearray(data)) == _bound_by_counts(data)


class _Scans(bytes):
    """Bytes that record each whole-text scan (count, split, find) made of them."""

    scans: list[str]

    def count(self, *args: Any) -> int:  # type: ignore[override]
        self.scans.append("count")
        return super().count(*args)

    def split(self, *args: Any, **kwargs: Any) -> list[bytes]:  # type: ignore[override]
        self.scans.append("split")
        return super().split(*args, **kwargs)


def test_the_bound_takes_two_scans_of_the_text() -> None:
    data = _Scans(json.dumps({"policy": json.dumps({"Version": "2012"}), "a\\": 1},
                             separators=(",", ":")).encode())
    data.scans = []
    assert jsonio._key_bound(data) == 2
    assert data.scans == ["split", "count"]  # the counts took three

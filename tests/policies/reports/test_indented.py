"""policies.reports.indented.dumps is ``json.dumps(..., indent=2, ensure_ascii=False)``, byte for
byte: the same text on reports and on any JSON-like document, the same exceptions on what JSON
cannot hold, and fewer calls (the reason it exists)."""

from __future__ import annotations

import json
import sys
from enum import IntEnum, StrEnum
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st
from report_samples import advisory_only_result, empty_result, full_result

from policies.engine import evaluate
from policies.model import UNKNOWN
from policies.reports import indented
from policies.reports.sarif import to_sarif
from policies.settings import Settings
from policies.sources import load_plan

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures"


def _reference(doc: Any, **kw: Any) -> str:
    return json.dumps(doc, indent=2, ensure_ascii=False, **kw)


class _Colour(StrEnum):
    RED = "red"


class _Size(IntEnum):
    BIG = 7


class _Text(str):
    pass


class _Number(float):
    pass


def test_reports_of_hand_built_and_fixture_results_are_json_dumps_byte_for_byte() -> None:
    results = [full_result(), advisory_only_result(), empty_result()]
    for name in ("terraform/upsize-g4dn.json", "terraform/proxy-tiers.json",
                 "pulumi/preview-mixed.json", "terraform/real/terraform-show-json-modules.json"):
        results.append(evaluate([load_plan(FIXTURES / name)], Settings.default()))
    for result in results:
        doc = result.to_json()
        assert indented.dumps(doc, default=str, allow_nan=False) == _reference(
            doc, default=str, allow_nan=False)
        sarif = to_sarif(result)
        assert indented.dumps(sarif) == _reference(sarif)


def test_subclasses_keys_and_defaults_as_json_writes_them() -> None:
    doc = {
        "enum": _Colour.RED, "int_enum": _Size.BIG, "text": _Text("x\u2192\"y\"\n"),
        "number": _Number(1.5), "tuple": (1, (), [], {}), "unknown": UNKNOWN,
        3: "int key", 2.5: "float key", True: "bool key", None: "null key",
        "nested": [[{"a": [None, False, True, 0, -1, 1e300, 10**30]}]], "empty": "",
        "set": {3},
    }
    assert indented.dumps(doc, default=str) == _reference(doc, default=str)
    def as_list(o: Any) -> Any:
        return [repr(o), {"of": type(o).__name__}]

    assert indented.dumps(doc, default=as_list) == _reference(doc, default=as_list)
    for scalar in ("a", 1, 1.25, None, True, [], {}, _Colour.RED):
        assert indented.dumps(scalar) == _reference(scalar)


def test_what_json_refuses_it_refuses_with_the_same_error() -> None:
    circular: list[Any] = []
    circular.append(circular)
    looped: dict[str, Any] = {}
    looped["self"] = [looped]
    cases: list[tuple[Any, dict[str, Any]]] = [
        ({"x": float("nan")}, {"allow_nan": False}),
        ([float("inf")], {"allow_nan": False}),
        ({"x": -float("inf")}, {"allow_nan": False}),
        ({"x": object()}, {}),
        ({(1, 2): 3}, {}),
        (circular, {}),
        (looped, {"default": str}),
    ]
    for doc, kw in cases:
        with pytest.raises((TypeError, ValueError)) as ours:
            indented.dumps(doc, **kw)
        with pytest.raises((TypeError, ValueError)) as theirs:
            _reference(doc, **kw)
        assert (type(ours.value), str(ours.value)) == (type(theirs.value), str(theirs.value))
    specials = [float("nan"), float("inf"), -float("inf")]
    assert indented.dumps(specials) == _reference(specials)


# Repeated strings (and subclasses of str equal to them) as well as any text: dumps remembers
# each string's escaped text.
_TEXTS = st.one_of(st.text(), st.sampled_from(["a", "ü→", "\"q\"", ""]),
                   st.sampled_from(["a", "ü→"]).map(_Text))
_LEAVES = st.one_of(st.none(), st.booleans(), st.integers(), _TEXTS,
                    st.floats(allow_nan=False, allow_infinity=False))
_DOCS = st.recursive(_LEAVES, lambda inner: st.one_of(
    st.lists(inner, max_size=5), st.tuples(inner, inner),
    st.dictionaries(st.one_of(_TEXTS, st.integers(), st.booleans(), st.none()), inner,
                    max_size=5)), max_leaves=40)


@given(_DOCS)
def test_any_json_like_document_is_written_as_json_writes_it(doc: Any) -> None:
    assert indented.dumps(doc, default=str, allow_nan=False) == _reference(
        doc, default=str, allow_nan=False)


def _calls(fn: Any) -> int:
    """Python function calls (frames entered; generators resumed count too) while ``fn`` runs."""
    count = 0

    def tracer(frame: Any, event: str, arg: Any) -> None:
        nonlocal count
        if event == "call":
            count += 1

    sys.setprofile(tracer)
    try:
        fn()
    finally:
        sys.setprofile(None)
    return count


def test_one_call_per_container_not_one_per_token() -> None:
    """A report of 200 findings: json's indenting encoder makes several calls per value (a
    generator step per token); dumps about one per container, leaves written inline."""
    doc = {"violations": [{"policy": f"p{i}", "resource": f"r{i}", "unknown": i % 2 == 0,
                           "waived_by": None, "resources": [f"r{i}", f"s{i}"],
                           "detail": {"missing": ["team"], "count": i}} for i in range(200)]}
    ours = _calls(lambda: indented.dumps(doc, default=str, allow_nan=False))
    theirs = _calls(lambda: _reference(doc, default=str, allow_nan=False))
    assert ours < theirs / 3, (ours, theirs)
    # a finding: one call for its dict, each of its 2 lists and its detail, and one the first
    # time each of its 3 strings of its own is seen (values are told apart inline)
    assert ours <= 200 * 7 + 10, ours


def test_each_distinct_string_is_escaped_once(monkeypatch: pytest.MonkeyPatch) -> None:
    """A report repeats its strings (the plan's path in every finding, resource addresses in
    ``resource`` and ``resources``, policy ids, messages): each is escaped once, keys too."""
    escaped: list[str] = []

    def counting(text: str) -> str:
        escaped.append(text)
        return json.encoder.encode_basestring(text)  # type: ignore[attr-defined,no-any-return]

    doc = {"violations": [{"policy": f"p{i % 4}", "resource": f"r{i}", "source": "plan.json",
                           "resources": [f"r{i}", "shared"], "detail": {"source": "plan.json"}}
                          for i in range(50)], "summary": {"sources": ["plan.json"]}}
    monkeypatch.setattr(indented, "encode_basestring", counting)
    text = indented.dumps(doc)
    assert text == _reference(doc)
    distinct = {"violations", "policy", "resource", "source", "resources", "detail", "summary",
                "sources", "plan.json", "shared"} | {f"p{i}" for i in range(4)} | {
                    f"r{i}" for i in range(50)}
    assert sorted(escaped) == sorted(distinct)


class _SameAsOne(str):
    """A string that passes for "one" in a dict: json writes its own text, never that one's."""

    def __eq__(self, other: object) -> bool:
        return True

    def __hash__(self) -> int:
        return hash("one")


def test_a_subclass_of_str_is_written_as_itself_not_as_an_equal_string() -> None:
    doc = {"k": "one", _SameAsOne("key"): _SameAsOne("two"), "list": ["one", _SameAsOne("3")]}
    assert indented.dumps(doc) == _reference(doc)

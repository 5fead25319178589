"""policies.reports.columns.dumps_utf8 is ``json.dumps(..., indent=2, ensure_ascii=False)``'s
UTF-8, byte for byte, on reports and on any JSON-like document (rows of one shape above all), with
json's exceptions; and it makes a few Python calls per column, not one per row or value."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st
from report_samples import advisory_only_result, empty_result, full_result

from policies.engine import evaluate
from policies.reports import columns, render_utf8
from policies.reports import json as json_report
from policies.reports.sarif import to_sarif
from policies.settings import Settings
from policies.sources import load_plan

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures"


def _reference(doc: Any, **kw: Any) -> bytes:
    return json.dumps(doc, indent=2, ensure_ascii=False, **kw).encode("utf-8")


class _SameAsOne(str):
    """A key that passes for "one" (equal, same hash): json writes its own text."""

    def __eq__(self, other: object) -> bool:
        return True

    def __hash__(self) -> int:
        return hash("one")


def test_reports_are_json_dumps_utf8_byte_for_byte() -> None:
    results = [full_result(), advisory_only_result(), empty_result()]
    for name in ("terraform/upsize-g4dn.json", "terraform/proxy-tiers.json",
                 "pulumi/preview-mixed.json", "terraform/real/terraform-show-json-modules.json"):
        results.append(evaluate([load_plan(FIXTURES / name)], Settings.default()))
    for result in results:
        doc = result.to_json()
        assert columns.dumps_utf8(doc, default=str, allow_nan=False) == _reference(
            doc, default=str, allow_nan=False)
        assert json_report.render_utf8(result) == json_report.render(result).encode("utf-8")
        assert render_utf8(result, "json") == json_report.render(result).encode("utf-8")
        sarif = to_sarif(result)
        assert columns.dumps_utf8(sarif) == _reference(sarif)


def test_equal_values_of_other_kinds_and_signs_keep_their_own_text() -> None:
    """1, 1.0 and True are equal, and so are 0.0 and -0.0: none is written from another's."""
    rows = [{"x": v, "y": [v, -0.0], "z": {"w": v}}
            for v in (1, 1.0, True, 0, 0.0, -0.0, False, None, "1", 2.5, -2.5)]
    for doc in (rows, [*reversed(rows)], [[0.0, -0.0], [-0.0, 0.0], [0.0], [-0.0]],
                {"a": [0.0, 0.0], "b": [-0.0, 0.0], "c": [1.0, True, 1]}):
        assert columns.dumps_utf8(doc) == _reference(doc)


def test_keys_are_their_own_text() -> None:
    """A subclass of str is written as itself, even where it passes for another key; and
    keys json converts (numbers, None, True) are converted as json does."""
    docs: list[Any] = [
        [{"one": 1}, {_SameAsOne("key"): 2}], [{_SameAsOne("key"): 1}, {"one": 2}],
        {"k": [{"one": "one"}, {"one": _SameAsOne("two")}]},
        [{1: "a"}, {"1": "b"}, {None: 1, True: 2, 2.5: 3}], {"%s": "%d", "%%": ["%"]},
        [{"a": 1, "b": 2}, {"b": 1, "a": 2}, {}, {"a": {}}, {"a": []}],
    ]
    for doc in docs:
        assert columns.dumps_utf8(doc, default=str) == _reference(doc, default=str)


def test_what_json_refuses_it_refuses_with_the_same_error() -> None:
    circular: list[Any] = []
    circular.append(circular)
    branching: dict[str, Any] = {}
    branching["a"] = branching["b"] = branching
    cases: list[tuple[Any, dict[str, Any]]] = [
        ([{"x": 1.0}, {"x": float("nan")}], {"allow_nan": False}),
        ({"x": [float("inf")]}, {"allow_nan": False}),
        ([{"x": object()}], {}), ({(1, 2): 3}, {}), (circular, {}), (branching, {}),
        ({"x": "a\ud800"}, {}), ([{"\udfff": 1}], {}),
    ]
    for doc, kw in cases:
        with pytest.raises((TypeError, ValueError)) as ours:
            columns.dumps_utf8(doc, **kw)
        with pytest.raises((TypeError, ValueError)) as theirs:
            _reference(doc, **kw)
        assert (type(ours.value), str(ours.value)) == (type(theirs.value), str(theirs.value))
    specials = [{"x": float("nan")}, {"x": float("inf")}, {"x": -float("inf")}]
    assert columns.dumps_utf8(specials) == _reference(specials)
    deep: Any = "leaf"
    for _ in range(150):
        deep = [deep]
    assert columns.dumps_utf8(deep) == _reference(deep)


_KEYS = st.one_of(st.sampled_from(["a", "b", "ü→", "\"q\"\n", "%s", ""]), st.text(max_size=4))
_LEAVES = st.one_of(
    st.none(), st.booleans(), st.integers(), st.text(),
    st.sampled_from(["a", "ü→", "\"q\"\\", "", "\x00\x1f", 0, 1, 0.0, -0.0, 1.0, True, False]),
    st.floats(allow_nan=False, allow_infinity=False))
_DOCS = st.recursive(_LEAVES, lambda inner: st.one_of(
    st.lists(inner, max_size=5), st.tuples(inner, inner),
    st.dictionaries(_KEYS, inner, max_size=4),
    st.lists(st.dictionaries(st.sampled_from(["a", "b", "c"]), inner, max_size=3), max_size=6),
    st.dictionaries(st.one_of(_KEYS, st.integers(), st.booleans(), st.none()), inner,
                    max_size=3)), max_leaves=40)


@given(_DOCS)
def test_any_json_like_document_is_written_as_json_writes_it(doc: Any) -> None:
    assert columns.dumps_utf8(doc, default=str, allow_nan=False) == _reference(
        doc, default=str, allow_nan=False)


@given(_DOCS)
def test_with_nan_allowed_too(doc: Any) -> None:
    doc = [doc, float("nan"), {"x": [float("inf"), doc]}]
    assert columns.dumps_utf8(doc) == _reference(doc)


def _calls(fn: Any) -> int:
    """Python function calls (frames entered) of the writer while ``fn`` runs (not a collector's
    callback that a large run may trigger)."""
    count = 0

    def tracer(frame: Any, event: str, arg: Any) -> None:
        nonlocal count
        if event == "call" and frame.f_code.co_filename == columns.__file__:
            count += 1

    sys.setprofile(tracer)
    try:
        fn()
    finally:
        sys.setprofile(None)
    return count


def _findings(n: int) -> dict[str, Any]:
    return {"violations": [{"policy": f"p{i % 3}", "resource": f"r{i}", "unknown": i % 2 == 0,
                            "waived_by": None, "resources": [f"r{i}", f"s{i}"],
                            "detail": {"missing": ["team"], "count": i, "price": i / 8}}
                           for i in range(n)], "summary": {"sources": ["plan.json"]}}


def test_a_few_calls_per_column_not_per_row() -> None:
    """The Python calls of a report of 20 findings and of 2,000 are the same: its columns'."""
    small, large = _findings(20), _findings(2000)
    assert columns.dumps_utf8(large) == _reference(large)
    calls = _calls(lambda: columns.dumps_utf8(small))
    assert calls == _calls(lambda: columns.dumps_utf8(large))
    assert calls < 60, calls

"""The result's verdict and JSON rows, read without a Python call per violation: they must say
what Violation.blocking and Violation.resources say, on violations of every shape."""

from __future__ import annotations

import sys
from types import FrameType
from typing import Any

from hypothesis import given
from hypothesis import strategies as st

from policies.result import CostLine, Ref, Result, RuleError, Violation
from policies.rules.params import Enforcement

_VIOLATION = st.builds(
    Violation, policy=st.just("p"), enforcement=st.sampled_from(list(Enforcement)),
    resource=st.sampled_from(["a", "b"]), message=st.just("m"),
    resource_type=st.sampled_from(["", "aws_instance"]),
    waived_by=st.one_of(st.none(), st.just("w1")),
    also=st.lists(st.builds(Ref, st.sampled_from(["c", "d"]), st.just("t")), max_size=2).map(
        tuple))


def _result(violations: list[Violation], errors: list[RuleError]) -> Result:
    return Result(violations=violations, errors=errors, sources=["plan.json"], policies=[],
                  resources_evaluated=len(violations))


@given(st.lists(_VIOLATION, max_size=5), st.booleans())
def test_the_verdict_and_rows_say_what_the_violations_say(violations: list[Violation],
                                                          error: bool) -> None:
    errors = [RuleError("p", "raised")] if error else []
    result = _result(violations, errors)
    failed = errors or any(v.blocking for v in violations)
    assert result.verdict == ("fail" if failed else "pass")
    rows = result.to_json()["violations"]
    assert [row["resources"] for row in rows] == [[r.address for r in v.resources]
                                                  for v in violations]
    summary = result.to_json()["summary"]
    assert (summary["mandatory"], summary["advisory"], summary["waived"]) == (
        sum(1 for v in violations if v.blocking),
        sum(1 for v in violations if v.enforcement is Enforcement.ADVISORY and v.waived_by is None),
        sum(1 for v in violations if v.waived_by is not None))


def test_the_verdict_makes_no_call_per_violation() -> None:
    violations = [Violation("p", Enforcement.ADVISORY, f"r{i}", "m") for i in range(20)]
    result = _result(violations, [])
    calls: list[str] = []

    def count(frame: FrameType, event: str, arg: Any) -> None:
        if event == "call":
            calls.append(frame.f_code.co_name)

    sys.setprofile(count)
    try:
        assert result.verdict == "pass"
    finally:
        sys.setprofile(None)
    assert calls == ["verdict"]


def test_the_json_rows_and_counts_make_no_call_per_violation() -> None:
    violations = [Violation("p", Enforcement.MANDATORY, f"r{i}", "m") for i in range(5)]
    result = _result(violations, [])
    calls: list[str] = []

    def count(frame: FrameType, event: str, arg: Any) -> None:
        if event == "call":
            calls.append(frame.f_code.co_name)

    sys.setprofile(count)
    try:
        rows = result.to_json()["violations"]
    finally:
        sys.setprofile(None)
    assert [row["resources"] for row in rows] == [[f"r{i}"] for i in range(5)]
    assert "resources" not in calls and "blocking" not in calls


_PRICE = st.one_of(st.none(), st.floats(0, 100, allow_nan=False), st.integers(0, 9))


@given(st.lists(st.tuples(_PRICE, _PRICE), max_size=5))
def test_cost_rows_and_total_say_what_each_lines_delta_says(
        prices: list[tuple[float | None, float | None]]) -> None:
    cost = [CostLine(f"r{i}", before, after, "n") for i, (before, after) in enumerate(prices)]
    result = Result(violations=[], errors=[], sources=[], policies=[], resources_evaluated=0,
                    cost=cost)
    calls: list[str] = []

    def count(frame: FrameType, event: str, arg: Any) -> None:
        if event == "call":
            calls.append(frame.f_code.co_name)

    sys.setprofile(count)
    try:
        doc = result.to_json()
    finally:
        sys.setprofile(None)
    assert "delta_per_hour" not in calls
    assert [row["delta_per_hour"] for row in doc["cost"]] == [c.delta_per_hour for c in cost]
    known = [c.delta_per_hour for c in cost if c.delta_per_hour is not None]
    assert doc["summary"]["cost_delta_per_hour"] == (round(sum(known), 6) if known else None)

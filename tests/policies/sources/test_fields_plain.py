"""fields.check proves a group's and a scaling policy's plain inputs valid in one pass (and an
instance type without a call).

Checking a group's sizes and overrides through a call per value and three nested generators
(each override's key path formatted) cost ~29k instructions per group on a valid plan. The one
pass (``_plainly_valid``) may only say "valid" where the full reading passes; anything else is
read as ever, so a wrong value is still named by its key.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

import policies.sources.fields as fields
from gpupool.errors import InputError
from policies.model import UNKNOWN, ResourceKind
from policies.sources import load_plan

_VALUE = st.one_of(
    st.sampled_from([None, UNKNOWN, "", "7", " 8 ", "x", True, False, [], {}, 2**31 - 1, 2**31,
                     float("inf"), float("nan"), "1e400", "12.5"]),
    st.sampled_from([-1, 0, 1]).map(lambda d: 2**1023 + d),  # the float bound, either side
    st.integers(-3, 1200), st.floats(allow_nan=False, width=32))


def _blocks(inner: st.SearchStrategy[Any]) -> st.SearchStrategy[Any]:
    return st.one_of(_VALUE, inner, st.lists(st.one_of(inner, _VALUE), max_size=2))


_OVERRIDE = st.fixed_dictionaries({}, optional={"instance_type": _VALUE,
                                                "weighted_capacity": _VALUE})
_LT = st.fixed_dictionaries({}, optional={"override": _blocks(_OVERRIDE),
                                          "overrides": _blocks(_OVERRIDE)})
_MIP = st.fixed_dictionaries({}, optional={"launch_template": _blocks(_LT)})
_GROUP = st.fixed_dictionaries({}, optional={
    "min_size": _VALUE, "max_size": _VALUE, "desired_capacity": _VALUE,
    "mixed_instances_policy": _blocks(_MIP)})
_POLICY = st.fixed_dictionaries({}, optional={"target_tracking_configuration": _blocks(
    st.fixed_dictionaries({}, optional={"target_value": _VALUE}))})


def _full_check(kind: ResourceKind, inputs: dict[str, Any]) -> str | None:
    """check's verdict with the one pass out of the way: None (passes) or the message."""
    real = fields._plainly_valid
    fields._plainly_valid = lambda kind, inputs: False  # type: ignore[assignment]
    try:
        fields.check(kind, inputs, "plan.json", lambda path: path)
    except InputError as e:
        return str(e)
    finally:
        fields._plainly_valid = real  # type: ignore[assignment]
    return None


@given(st.one_of(st.tuples(st.just(ResourceKind.AUTOSCALING_GROUP), _GROUP),
                 st.tuples(st.just(ResourceKind.SCALING_POLICY), _POLICY)))
def test_the_one_pass_says_valid_only_where_the_full_reading_passes(
        case: tuple[ResourceKind, dict[str, Any]]) -> None:
    kind, inputs = case
    if fields._plainly_valid(kind, inputs):
        assert _full_check(kind, inputs) is None
    try:
        fields.check(kind, inputs, "plan.json", lambda path: path)
        verdict = None
    except InputError as e:
        verdict = str(e)
    assert verdict == _full_check(kind, inputs)


def test_a_valid_bench_plan_reads_typed_inputs_without_a_call_per_value(
        bench_plan: Callable[[str, int], Path], monkeypatch: pytest.MonkeyPatch) -> None:
    slow: list[str] = []
    real_whole, real_blocks = fields._whole, fields._blocks

    def whole(value: Any, origin: str, where: Any, path: str, low: int, high: int) -> None:
        slow.append(path)
        real_whole(value, origin, where, path, low, high)

    def blocks(inputs: Any, key: str) -> Any:
        slow.append(key)
        return real_blocks(inputs, key)

    def type_name(value: Any, origin: str, where: Any, path: str) -> None:
        slow.append(path)

    monkeypatch.setattr(fields, "_type_name", type_name)
    monkeypatch.setattr(fields, "_whole", whole)
    monkeypatch.setattr(fields, "_blocks", blocks)
    for generator in ("gen_tfplan", "gen_preview"):
        plan = load_plan(bench_plan(generator, 100))
        kinds = {c.kind for c in plan.changes}
        assert {ResourceKind.AUTOSCALING_GROUP, ResourceKind.SCALING_POLICY,
                ResourceKind.INSTANCE, ResourceKind.LAUNCH_TEMPLATE} <= kinds
    assert slow == []

"""PlanIndex's memoised facts (own types, instance types, launch templates): asked once per
resource and side they are computed once, asked again they cost no further Python call, and a
different change object under the same address gets its own answer."""

from __future__ import annotations

import sys
from collections.abc import Callable
from types import FrameType
from typing import Any

from policies.facts import PlanIndex
from policies.model import ChangeKind, ResourceChange, ResourceKind


def _changes() -> list[ResourceChange]:
    lt = ResourceChange(address="aws_launch_template.gpu", type="aws_launch_template", name="gpu",
                        change=ChangeKind.CREATE, new={"name": "gpu", "instance_type": "g5.xlarge"},
                        old=None, source="test", kind=ResourceKind.LAUNCH_TEMPLATE)
    asg = ResourceChange(address="aws_autoscaling_group.gpu", type="aws_autoscaling_group",
                         name="gpu", change=ChangeKind.UPDATE,
                         new={"name": "gpu", "launch_template": [{"name": "gpu"}]},
                         old={"name": "gpu", "launch_template": [{"name": "gpu"}]}, source="test",
                         kind=ResourceKind.AUTOSCALING_GROUP)
    return [lt, asg]


def _python_calls(ask: Callable[[], Any]) -> int:
    """Python-level calls made by ``ask`` (its own frame not counted)."""
    calls = [0]

    def count(frame: FrameType, event: str, arg: Any) -> None:
        if event == "call":
            calls[0] += 1

    sys.setprofile(count)
    try:
        ask()
    finally:
        sys.setprofile(None)
    return calls[0] - 1


def test_a_memoised_fact_asked_again_makes_no_further_call() -> None:
    lt, asg = _changes()
    index = PlanIndex([lt, asg])
    asks: list[Callable[[], Any]] = [
        lambda: index.own_types(lt), lambda: index.own_types(asg, "old"),
        lambda: index.instance_types(asg), lambda: index.instance_types(asg, "old"),
        lambda: index.launch_templates(asg), lambda: index.launch_templates(asg, "old"),
    ]
    first = [ask() for ask in asks]
    assert index.instance_types(asg).known == ("g5.xlarge",)
    assert index.launch_templates(asg).targets == (lt,)
    for ask, answer in zip(asks, first, strict=True):
        assert ask() is answer
        assert _python_calls(ask) == 1  # the fact's own method; no helper behind it


def test_facts_are_computed_once_per_resource_and_side(monkeypatch: Any) -> None:
    lt, asg = _changes()
    computed: list[tuple[str, str, str]] = []
    for name in ("_instance_types", "_launch_templates"):
        real = getattr(PlanIndex, name)

        def counted(self: PlanIndex, change: ResourceChange, side: Any, real: Any = real,
                    name: str = name) -> Any:
            computed.append((name, change.address, side))
            return real(self, change, side)

        monkeypatch.setattr(PlanIndex, name, counted)
    index = PlanIndex([lt, asg])
    for _ in range(3):
        for side in ("new", "old"):
            index.instance_types(asg, side)
            index.launch_templates(asg, side)
    assert sorted(computed) == sorted(set(computed))
    assert len(computed) == 4


def test_another_change_under_the_same_address_gets_its_own_answer() -> None:
    lt, asg = _changes()
    index = PlanIndex([lt, asg])
    assert index.own_types(lt).known == ("g5.xlarge",)
    other = ResourceChange(address=lt.address, type=lt.type, name=lt.name, change=lt.change,
                           new={"name": "gpu", "instance_type": "p4d.24xlarge"}, old=None,
                           source="test", kind=lt.kind)
    assert index.own_types(other).known == ("p4d.24xlarge",)
    assert index.own_types(lt).known == ("g5.xlarge",)

"""The work cost_lines does per priced resource, and that its cheaper ways say the same."""

from __future__ import annotations

import dis
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from gpupool.catalog import load_catalog
from policies import cost
from policies.facts import PlanIndex
from policies.model import UNKNOWN, ChangeKind, Plan, ResourceChange, ResourceKind
from policies.result import CostLine
from policies.rules._common import prices_of

_NOTES = st.sampled_from(["", "max size not set", "old inputs not known",
                          "no recorded price for p4d.24xlarge"]) | st.text(max_size=8)


def _listed(word: str, prices: str, before: str, after: str) -> str:
    """The note as cost_lines built it before: a list of parts, joined."""
    notes = [n for n in (f"before: {before}" if before else "",
                         f"after: {after}" if after else "") if n]
    if before and before == after:
        notes = [before]
    return "; ".join([word, prices, *notes])


@given(st.sampled_from(["create", "update", "delete", "replace"]), st.text(max_size=12),
       _NOTES, _NOTES)
def test_a_lines_note_is_the_joined_parts_it_always_was(word: str, prices: str, before: str,
                                                         after: str) -> None:
    assert cost._note(word, prices, before, after) == _listed(word, prices, before, after)


def test_a_price_is_three_slot_stores_and_holds_its_fields() -> None:
    ops = [i.opname for i in dis.get_instructions(cost._Price.__init__)]
    assert ops.count("STORE_ATTR") == 3
    assert "__setattr__" not in cost._Price.__init__.__code__.co_names
    price = cost._Price(2.5, True, "at max size 2 x g5.xlarge")
    assert (price.per_hour, price.gpu, price.note) == (2.5, True, "at max size 2 x g5.xlarge")
    assert cost._Price(None, False).note == ""
    assert not hasattr(price, "__dict__")


def _reference_lines(plan: Plan, index: PlanIndex, catalog: Any) -> list[CostLine]:
    """cost_lines as it read before: each side's presence asked of the price function."""
    out = []
    for change in plan.changes:
        if change.change in (ChangeKind.NOOP, ChangeKind.READ):
            continue
        price = {ResourceKind.INSTANCE: cost._instance_price,
                 ResourceKind.AUTOSCALING_GROUP: cost._group_price,
                 ResourceKind.EKS_NODE_GROUP: cost._group_price}.get(change.kind)
        if price is None:
            continue
        sides = []
        for side in ("old", "new"):
            if side == "old":
                present = False if change.change is ChangeKind.CREATE else (
                    None if change.old is None else True)
            else:
                present = change.change is not ChangeKind.DELETE and change.new is not None
            sides.append(cost._NOTHING if present is False else
                         cost._Price(None, False, "old inputs not known") if present is None
                         else price(change, side, index, catalog))
        before, after = sides
        if before.gpu or after.gpu:
            out.append(CostLine(change.address, None if before.per_hour is None else
                                round(before.per_hour, 6), None if after.per_hour is None else
                                round(after.per_hour, 6), cost._note(
                                    change.change.value, prices_of(catalog), before.note,
                                    after.note)))
    return out


_INPUTS = st.one_of(st.none(), st.fixed_dictionaries({}, optional={
    "instance_type": st.sampled_from(["g5.xlarge", "m7i.large", "p4d.24xlarge", UNKNOWN]),
    "max_size": st.one_of(st.integers(0, 4), st.just(UNKNOWN)),
    "mixed_instances_policy": st.just({"launch_template": {"overrides": [
        {"instance_type": "g5.2xlarge", "weighted_capacity": 2}]}})}))


@settings(max_examples=300, deadline=None)
@given(st.lists(st.tuples(st.sampled_from([ResourceKind.INSTANCE, ResourceKind.AUTOSCALING_GROUP,
                                           ResourceKind.EKS_NODE_GROUP, ResourceKind.OTHER]),
                          st.sampled_from(list(ChangeKind)), _INPUTS, _INPUTS), max_size=6))
def test_lines_equal_the_reading_that_asked_each_side_of_its_price(
        rows: list[tuple[ResourceKind, ChangeKind, Any, Any]]) -> None:
    changes = [ResourceChange(address=f"r.r{i}", type="t", name=f"r{i}", change=change,
                              new=new, old=old, source="test", kind=kind)
               for i, (kind, change, new, old) in enumerate(rows)]
    plan = Plan(source="test", origin="plan.json", changes=tuple(changes), meta={})
    catalog = load_catalog()
    index = PlanIndex(plan.changes, catalog)
    assert cost.cost_lines(plan, index, catalog) == _reference_lines(plan, index, catalog)


def test_a_created_instance_is_priced_once_its_new_side(monkeypatch: Any) -> None:
    asked: list[str] = []
    real = cost._instance_price

    def counted(change: ResourceChange, side: Any, index: PlanIndex, catalog: Any) -> Any:
        asked.append(side)
        return real(change, side, index, catalog)

    monkeypatch.setattr(cost, "_instance_price", counted)
    changes = tuple(ResourceChange(address=f"aws_instance.i{i}", type="aws_instance", name="i",
                                   change=ChangeKind.CREATE, new={"instance_type": "g5.xlarge"},
                                   old=None, source="test", kind=ResourceKind.INSTANCE)
                    for i in range(10))
    plan = Plan(source="test", origin="plan.json", changes=changes, meta={})
    catalog = load_catalog()
    lines = cost.cost_lines(plan, PlanIndex(changes, catalog), catalog)
    assert len(lines) == 10 and all(line.before_per_hour == 0.0 for line in lines)
    assert asked == ["new"] * 10

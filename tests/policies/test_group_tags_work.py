"""An autoscaling group's tag list is walked by one function (``group_tag_items``) that
``group_tags``, ``group_propagates`` and the role tags share: each must say what its own walk
said before, failing closed on anything unknown, on tag lists of every shape."""

from __future__ import annotations

from collections.abc import Mapping
from types import MappingProxyType
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from policies.facts import tags as tag_facts
from policies.facts.network import roles
from policies.facts.values import blocks, flag, is_map
from policies.model import UNKNOWN, ChangeKind, ResourceChange, ResourceKind, is_unknown

REQUIRED = ["team", "cost-center"]


def _old_walk(inputs: Mapping[str, Any]) -> list[tuple[str, Any, Any]] | Any:
    """(key, value, propagate_at_launch) of every tag, as group_tags and group_propagates each
    walked the list before they shared one walk; UNKNOWN at the first unknown list, tag or key."""
    out = []
    for key in ("tag", "tags"):
        value = inputs.get(key)
        if key == "tags" and is_map(value):
            continue
        items = blocks(value)
        if items is UNKNOWN:
            return UNKNOWN
        for item in items:
            if item is UNKNOWN:
                return UNKNOWN
            if not is_map(item):
                continue
            name = item.get("key")
            if name is UNKNOWN:
                return UNKNOWN
            if isinstance(name, str) and name:
                out.append((name, item.get("value"), item.get("propagate_at_launch")))
    return out


class _List(list[Any]):
    pass


_KEY = st.one_of(st.sampled_from(["team", "cost-center", "gpupool:role", ""]), st.just(UNKNOWN),
                 st.none(), st.integers(0, 1))
_FIELDS = st.fixed_dictionaries({"key": _KEY}, optional={
    "value": st.one_of(st.sampled_from(["ml", "", "gpu-proxy"]), st.just(UNKNOWN), st.none()),
    "propagate_at_launch": st.one_of(st.booleans(), st.sampled_from(["true", " True", "no"]),
                                     st.just(UNKNOWN), st.none())})
_TAG = st.one_of(_FIELDS, _FIELDS.map(MappingProxyType), st.just(UNKNOWN), st.none(),
                 st.text(max_size=2), st.integers(0, 1))
_LIST = st.one_of(st.lists(_TAG, max_size=4), st.lists(_TAG, max_size=3).map(_List),
                  st.lists(_TAG, max_size=3).map(tuple), _TAG, st.just(UNKNOWN), st.none(),
                  st.dictionaries(st.sampled_from(["team", "gpupool:role"]), st.just("x"),
                                  max_size=2))


def _inputs(tag: Any, tags: Any) -> dict[str, Any]:
    return {k: v for k, v in (("tag", tag), ("tags", tags)) if v is not None}


@given(tag=_LIST, tags=_LIST, required=st.lists(_KEY.filter(lambda k: isinstance(k, str)),
                                                min_size=1, max_size=3))
def test_each_reading_says_what_its_own_walk_said(tag: Any, tags: Any,
                                                  required: list[str]) -> None:
    inputs = _inputs(tag, tags)
    old = _old_walk(inputs)
    got = tag_facts.group_tags(inputs)
    if old is UNKNOWN:
        assert got is UNKNOWN
        assert tag_facts.group_propagates(inputs, required) is False  # no verdict
        assert roles._group_tag(inputs, "gpupool:role") == (UNKNOWN, None)
        return
    assert [(t.key, t.value, t.propagate_at_launch) for t in got] == [
        (k, v, flag(p)) for k, v, p in old]
    propagated = {k for k, _, p in old if p is True or flag(p) is True}
    assert tag_facts.group_propagates(inputs, required) == (set(required) <= propagated)
    first = next(((True, v) for k, v, _ in old if k == "gpupool:role"), (False, None))
    found = roles._group_tag(inputs, "gpupool:role")
    assert found == first or (found[0] is True and is_unknown(found[1]) and
                              is_unknown(first[1]))


def test_the_three_readings_share_one_walk(monkeypatch: pytest.MonkeyPatch) -> None:
    walks = [0]
    real = tag_facts.group_tag_items

    def counted(inputs: Mapping[str, Any]) -> Any:
        walks[0] += 1
        return real(inputs)

    monkeypatch.setattr(tag_facts, "group_tag_items", counted)
    monkeypatch.setattr(roles, "group_tag_items", counted)
    inputs = {"tags": [{"key": k, "value": "x", "propagate_at_launch": True}
                       for k in (*REQUIRED, "gpupool:role")]}
    asg = ResourceChange(address="aws_autoscaling_group.g", type="aws_autoscaling_group",
                         name="g", change=ChangeKind.CREATE, new=inputs, old=None, source="test",
                         kind=ResourceKind.AUTOSCALING_GROUP)
    assert len(tag_facts.group_tags(inputs)) == 3
    assert tag_facts.group_propagates(inputs, REQUIRED)
    assert roles.own_tag(asg, "gpupool:role") == "x"
    assert walks[0] == 3

"""ebs-encrypted's applies_to: the removal of the account's encryption default, and otherwise
exactly what Rule.applies_to says, asked without a further call per judged resource."""

from __future__ import annotations

import sys
from types import FrameType
from typing import Any

from hypothesis import given
from hypothesis import strategies as st

from policies.model import ChangeKind, ResourceChange, ResourceKind
from policies.rules import get_rule
from policies.rules.base import Rule

RULE = get_rule("ebs-encrypted")


def _change(kind: ResourceKind, change: ChangeKind) -> ResourceChange:
    gone = change in (ChangeKind.DELETE,)
    return ResourceChange(address="r.r", type="t", name="r", change=change,
                          new=None if gone else {}, old={} if gone else None, source="test",
                          kind=kind)


@given(st.sampled_from(list(ResourceKind)), st.sampled_from(list(ChangeKind)))
def test_it_applies_where_it_always_did(kind: ResourceKind, change: ChangeKind) -> None:
    c = _change(kind, change)
    removal = kind is ResourceKind.EBS_ENCRYPTION_DEFAULT and c.is_removal
    assert RULE.applies_to(c) == (removal or Rule.applies_to(RULE, c))


def test_a_judged_volume_is_asked_with_no_further_call() -> None:
    c = _change(ResourceKind.EBS_VOLUME, ChangeKind.CREATE)
    calls: list[str] = []

    def count(frame: FrameType, event: str, arg: Any) -> None:
        if event == "call":
            calls.append(frame.f_code.co_name)

    sys.setprofile(count)
    try:
        assert RULE.applies_to(c)
    finally:
        sys.setprofile(None)
    assert calls == ["applies_to"]

"""How much work the engine does per plan, counted (not timed): a resource-scope rule is called
once for each judged change of a kind it reads and for nothing else; a rule's own
``applies_to`` is asked only about changes of its kinds; findings stay in plan order."""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable
from datetime import date
from typing import Any

import pytest

from policies.engine import evaluate
from policies.model import ChangeKind, Plan, ResourceChange, ResourceKind
from policies.rules import get_rule
from policies.rules.base import Finding, RuleContext
from policies.settings import Settings

TODAY = date(2026, 6, 1)


def _change(i: int, rtype: str, kind: ResourceKind, change: ChangeKind,
            new: dict[str, Any] | None) -> ResourceChange:
    return ResourceChange(address=f"{rtype}.r{i}", type=rtype, name=f"r{i}", change=change,
                          new=new, old=None, source="test", kind=kind)


def _plan() -> Plan:
    """40 GPU instances (10 of them deleted, 5 only read), 200 buckets, 30 launch templates,
    interleaved so that plan order and kind order differ."""
    changes = []
    for i in range(200):
        changes.append(_change(i, "aws_s3_bucket", ResourceKind.OTHER, ChangeKind.CREATE,
                               {"bucket": f"b{i}"}))
        if i < 40:
            state = (ChangeKind.DELETE if i % 4 == 0 else ChangeKind.READ if i % 8 == 1
                     else ChangeKind.CREATE)
            changes.append(_change(i, "aws_instance", ResourceKind.INSTANCE, state, None
                                   if state is ChangeKind.DELETE else
                                   {"instance_type": "g4dn.xlarge", "metadata_options": [
                                       {"http_tokens": "optional"}]}))
        if i < 30:
            changes.append(_change(i, "aws_launch_template", ResourceKind.LAUNCH_TEMPLATE,
                                   ChangeKind.UPDATE, {"instance_type": "g4dn.xlarge"}))
    return Plan("test", "plan.json", tuple(changes))


def test_a_resource_rule_is_called_once_per_change_of_its_kinds_and_never_for_others(
        monkeypatch: pytest.MonkeyPatch) -> None:
    rule = get_rule("imdsv2-required")
    called: Counter[str] = Counter()
    kinds: set[ResourceKind] = set()
    original = rule.check_resource

    def counted(change: ResourceChange, ctx: RuleContext) -> Iterable[Finding]:
        called[change.address] += 1
        kinds.add(change.kind)
        return original(change, ctx)

    monkeypatch.setattr(rule, "check_resource", counted)
    plan = _plan()
    result = evaluate([plan], Settings.default(), today=TODAY)
    judged = [c.address for c in plan.changes if c.kind in rule.meta.kinds
              and c.change not in (ChangeKind.DELETE, ChangeKind.READ)]
    assert len(judged) == 30 + 25  # templates, and the instances neither deleted nor read
    assert list(called) == judged  # plan order, each once
    assert set(called.values()) == {1}
    assert kinds <= rule.meta.kinds
    found = [v.resource for v in result.violations if v.policy == "imdsv2-required"]
    assert found == [a for a in judged if a in set(found)]  # in plan order
    assert {a for a in judged if a.startswith("aws_instance.")} <= set(found)  # IMDSv1 on


def test_a_rules_own_applies_to_is_asked_only_about_its_kinds(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """ebs-encrypted has its own applies_to (the removal of the account default counts): it
    is asked about every change of its kinds (deleted ones too) and about nothing else."""
    rule = get_rule("ebs-encrypted")
    asked: list[ResourceChange] = []
    original = rule.applies_to

    def counted(change: ResourceChange) -> bool:
        asked.append(change)
        return original(change)

    monkeypatch.setattr(rule, "applies_to", counted)
    plan = _plan()
    evaluate([plan], Settings.default(), today=TODAY)
    assert [c.address for c in asked] == [c.address for c in plan.changes
                                          if c.kind in rule.meta.kinds]

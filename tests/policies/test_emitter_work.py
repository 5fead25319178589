"""The engine's emitter turns a rule's finding into a violation: its enforcement is what
``level`` says on every kind of finding and policy, and the common finding (neither advisory
only nor unknown) is given it with no call to ``level``."""

from __future__ import annotations

from typing import Any
from unittest import mock

from hypothesis import given
from hypothesis import strategies as st

from policies import engine
from policies.facts import PlanIndex
from policies.model import ChangeKind, Plan, ResourceChange, ResourceKind
from policies.rules import get_rule
from policies.rules.base import Finding
from policies.rules.params import Enforcement
from policies.settings import PolicySettings

RULE = get_rule("imdsv2-required")
_CHANGE = ResourceChange(address="aws_instance.i", type="aws_instance", name="i",
                         change=ChangeKind.CREATE, new={}, old=None, source="test",
                         kind=ResourceKind.INSTANCE, origin="main.tf:3")


def _emit(finding: Finding, policy: PolicySettings) -> list[Any]:
    out: list[Any] = []
    plan = Plan("test", "plan.json", (_CHANGE,))
    engine._Emitter(RULE, policy, plan, PlanIndex(plan.changes), out)(finding)
    return out


@given(enforcement=st.sampled_from([Enforcement.MANDATORY, Enforcement.ADVISORY]),
       unknown_at=st.sampled_from(["mandatory", "advisory"]), unknown=st.booleans(),
       advisory_only=st.booleans(), prop=st.sampled_from([None, "metadata_options"]),
       resource=st.sampled_from(["aws_instance.i", "aws_instance.elsewhere"]))
def test_a_violation_is_what_the_finding_and_policy_say(
        enforcement: Enforcement, unknown_at: str, unknown: bool, advisory_only: bool,
        prop: str | None, resource: str) -> None:
    policy = PolicySettings(enforcement=enforcement,
                            configured=RULE.parse_params({"unknownEnforcement": unknown_at}))
    finding = Finding(resource, "m", unknown=unknown, advisory_only=advisory_only,
                      detail={"a": 1}, prop=prop)
    [v] = _emit(finding, policy)
    known = resource == _CHANGE.address
    assert (v.policy, v.enforcement, v.resource, v.message, v.resource_type, v.source,
            v.unknown, v.waived_by, dict(v.detail), v.also, v.prop) == (
        "imdsv2-required", engine.level(finding, policy), resource, "m",
        "aws_instance" if known else "", "main.tf:3" if known else "plan.json", unknown,
        None, {"a": 1}, (), prop or RULE.meta.prop)


def test_a_plain_finding_takes_the_rules_enforcement_with_no_level_call() -> None:
    policy = PolicySettings(enforcement=Enforcement.MANDATORY, configured=RULE.parse_params())
    with mock.patch.object(engine, "level", wraps=engine.level) as asked:
        [v] = _emit(Finding(_CHANGE.address, "m"), policy)
        assert asked.call_count == 0
        _emit(Finding(_CHANGE.address, "m", unknown=True), policy)
        assert asked.call_count == 1
    assert v.enforcement is Enforcement.MANDATORY

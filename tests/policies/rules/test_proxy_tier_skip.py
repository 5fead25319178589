"""The proxy-tier rules are skipped on a plan without a GPU proxy or client, and only there.

``gpu-proxy-network-budget``, ``gpu-proxy-placement`` and ``gpu-proxy-private`` judge the
resources tagged ``gpupool:role = gpu-proxy`` or ``gpu-client`` and what those reach; the
engine asks :func:`policies.facts.network.roles.has_tier` once per plan and neither imports
nor runs them when it says no. Held here: the question agrees with the roles the rules read
(property test), a plan with one proxy or one client runs them, an unanswerable question runs
them. tests/policies/rules/test_registry.py runs them on every example and fixture plan the
question says "no" to (no finding); tests/cli/test_check_imports.py counts the modules.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from gpupool.catalog import load_catalog
from gpupool.tags import ROLE_TAG
from policies import engine
from policies.facts import PlanIndex
from policies.facts.network.roles import CLIENT, PROXY, has_tier
from policies.model import Plan
from policies.rules import get_rule
from policies.rules.base import Example
from policies.settings import load_settings

TIER_RULES = ("gpu-proxy-placement", "gpu-proxy-private", "gpu-proxy-network-budget")
CATALOG = load_catalog()
_UNKNOWN = "(known after apply)"
_ROLE = st.sampled_from([PROXY, CLIENT, "web", "", _UNKNOWN])


@st.composite
def _resource(draw: st.DrawFn, i: int, n: int) -> dict[str, Any]:
    """An instance, group or launch template (Terraform's shape), its role tagged in any of the
    places a role is read from or nowhere, maybe launching from another resource's template."""
    rtype = draw(st.sampled_from(["aws_instance", "aws_autoscaling_group",
                                  "aws_launch_template", "aws_eks_node_group"]))
    new: dict[str, Any] = {"name": f"r{i}"}
    where = draw(st.sampled_from(["none", "tags", "tags_all", "unknown", "own"]))
    if where in ("tags", "tags_all"):
        new[where] = {ROLE_TAG: draw(_ROLE), "team": "ml"}
    elif where == "unknown":
        new["tags"] = _UNKNOWN
    elif where == "own" and rtype == "aws_autoscaling_group":
        new["tag"] = [{"key": ROLE_TAG, "value": draw(_ROLE), "propagate_at_launch": True}]
    elif where == "own" and rtype == "aws_launch_template":
        new["tag_specifications"] = [{"resource_type": draw(st.sampled_from(["instance",
                                                                            "volume"])),
                                      "tags": {ROLE_TAG: draw(_ROLE)}}]
    if rtype != "aws_launch_template" and draw(st.booleans()):
        target = draw(st.sampled_from([_UNKNOWN, *(f"r{j}" for j in range(n))]))
        new["launch_template"] = [{"name": target}]
    change = draw(st.sampled_from(["create", "update", "delete", "read", "no-op"]))
    resource: dict[str, Any] = {"type": rtype, "name": f"r{i}", "address": f"{rtype}.r{i}",
                                "change": change, "new": None if change == "delete" else new}
    if change in ("update", "delete", "no-op"):
        resource["old"] = new
    return resource


@st.composite
def _plans(draw: st.DrawFn) -> list[dict[str, Any]]:
    n = draw(st.integers(1, 5))
    return [draw(_resource(i, n)) for i in range(n)]


@given(_plans())
def test_no_tier_means_no_proxy_no_client_and_no_finding(resources: list[dict[str, Any]]
                                                         ) -> None:
    changes = Example("t", True, resources).changes()
    net = PlanIndex(changes, CATALOG).network
    tier = has_tier(changes)
    assert tier or (net.proxies() == [] and net.clients() == [])
    if not tier:
        for rule_id in TIER_RULES:
            assert get_rule(rule_id).run(changes, CATALOG) == [], rule_id
    if net.proxies() or net.clients():
        assert tier


def _instance(role: str | None) -> dict[str, Any]:
    tags = {"team": "ml"} if role is None else {"team": "ml", ROLE_TAG: role}
    return {"type": "aws_instance", "name": "node", "address": "aws_instance.node",
            "new": {"instance_type": "g4dn.xlarge", "tags": tags}}


@pytest.fixture
def loaded(monkeypatch: pytest.MonkeyPatch) -> Iterator[list[str]]:
    """The rule IDs the engine loads, in order."""
    seen: list[str] = []
    real = engine.load

    def counted(rule_id: str) -> Any:
        seen.append(rule_id)
        return real(rule_id)

    monkeypatch.setattr(engine, "load", counted)
    yield seen


def _evaluate(*resources: Mapping[str, Any]) -> list[str]:
    plan = Plan("test", "plan.json", tuple(Example("t", True, resources).changes()))
    result = engine.evaluate([plan], load_settings(None, None))
    assert result.errors == []
    return sorted({v.policy for v in result.violations} & set(TIER_RULES))


def test_a_plan_without_a_tier_loads_none_of_the_tier_rules(loaded: list[str]) -> None:
    assert _evaluate(_instance(None), _instance("web") | {"address": "aws_instance.web"}) == []
    assert loaded and set(loaded).isdisjoint(TIER_RULES)  # the other rules did run


@pytest.mark.parametrize("role", [PROXY, CLIENT])
def test_one_proxy_or_one_client_runs_the_tier_rules(role: str, loaded: list[str]) -> None:
    found = _evaluate(_instance(role))
    assert set(TIER_RULES) <= set(loaded)
    # A bare proxy instance: no budget tags, no placement group, a subnet whose public IPs
    # are not known; a client in no placement group: placement says so.
    assert found == (sorted(TIER_RULES) if role == PROXY else ["gpu-proxy-placement"])


def test_a_tier_question_that_raises_runs_the_tier_rules(
        loaded: list[str], monkeypatch: pytest.MonkeyPatch) -> None:
    def boom(changes: object) -> bool:
        raise TypeError("unhashable")

    monkeypatch.setattr(engine, "has_tier", boom)
    assert _evaluate(_instance(None)) == []
    assert set(TIER_RULES) <= set(loaded)


def test_a_role_that_cannot_be_read_still_fails_the_check() -> None:
    """A group's role tag whose value is a list: the question cannot answer (as the rules cannot
    read the role), so the three rules run and each is a rule error, never a pass."""
    group = {"type": "aws_autoscaling_group", "name": "g", "address": "aws_autoscaling_group.g",
             "new": {"name": "g", "tag": [{"key": ROLE_TAG, "value": [PROXY],
                                           "propagate_at_launch": True}]}}
    plan = Plan("test", "plan.json", tuple(Example("t", True, [group]).changes()))
    result = engine.evaluate([plan], load_settings(None, None))
    assert sorted(e.policy for e in result.errors) == sorted(TIER_RULES)
    assert result.verdict == "fail"


def test_the_tier_is_asked_once_per_plan(monkeypatch: pytest.MonkeyPatch) -> None:
    asked: list[int] = []

    def counted(changes: Any) -> bool:
        asked.append(len(changes))
        return has_tier(changes)

    monkeypatch.setattr(engine, "has_tier", counted)
    _evaluate(_instance(None))
    assert asked == [1]


def test_the_tier_rules_are_the_rules_that_say_so() -> None:
    from policies.rules.registry import INFOS

    assert {i.id for i in INFOS if i.proxy_tier} == set(TIER_RULES)

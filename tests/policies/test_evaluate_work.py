"""Work a check does once rather than per resource or per rule, held by counting: property
names worked out once per type and path, the cost lines' price words once per plan, a
launch template's role and each tag the network facts ask of a resource taken once per plan,
and enum members read through their class once per plan."""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable
from contextlib import AbstractContextManager
from pathlib import Path
from typing import Any

import pytest

from gpupool.catalog import load_catalog
from gpupool.tags import ROLE_TAG
from policies import cost
from policies.engine import evaluate
from policies.facts import PlanIndex
from policies.facts.network import roles
from policies.rules import _common
from policies.rules.registry import load
from policies.settings import load_settings
from policies.sources import load_plan

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures"


@pytest.mark.parametrize("generator", ["gen_preview", "gen_tfplan"])
def test_evaluation_reads_no_enum_member_through_its_class_per_resource(
        generator: str, bench_plan: Callable[[str, int], Path],
        enum_reads: Callable[[], AbstractContextManager[Counter[str]]]) -> None:
    """On Python 3.11 ``ResourceKind.INSTANCE`` is a Python-level call (EnumType defines
    ``__getattr__``, so every class attribute read takes the slow hook), ~10x a global: the
    per-resource paths test kinds against module constants. Counted: evaluating the bench's
    fleet (Pulumi preview, Terraform plan) of 200 resources reads exactly as many members through
    their class as evaluating 100 (per plan and rule, never per resource)."""
    settings = load_settings(None, None)
    plans = {}
    for n in (100, 200):
        plans[n] = load_plan(bench_plan(generator, n))
        assert len(plans[n].changes) >= n
        evaluate([plans[n]], settings)  # rule modules imported (their module-level reads)
    reads: dict[int, Counter[str]] = {}
    for n in (100, 200):
        with enum_reads() as reads[n]:
            result = evaluate([plans[n]], settings)
        assert result.resources_evaluated >= n and not result.errors
    assert reads[100]  # counted at all: the engine reads a few per plan
    assert reads[200] == reads[100]


def test_a_property_name_is_worked_out_once_per_type_and_path() -> None:
    _common.prop.cache_clear()
    cases = [("aws:ec2/instance:Instance", "metadata_options.http_tokens"),
             ("aws_instance", "metadata_options.http_tokens"),
             ("aws:autoscaling/group:Group", "mixed_instances_policy.launch_template.override"),
             ("kubernetes_manifest", "spec.template.spec")]
    for _ in range(50):
        got = [_common.prop(t, p) for t, p in cases]
    assert got == [_common.prop.__wrapped__(t, p) for t, p in cases] == [
        "metadataOptions.httpTokens", "metadata_options.http_tokens",
        "mixedInstancesPolicy.launchTemplate.overrides", "manifest.spec.template.spec"]
    worked = _common.prop.cache_info()
    assert (worked.misses, worked.hits) == (len(cases), 49 * len(cases))
    assert worked.maxsize is not None  # bounded: types and paths come from the plan


def test_cost_lines_word_their_prices_once_per_plan(monkeypatch: pytest.MonkeyPatch) -> None:
    plan = load_plan(FIXTURES / "pulumi" / "preview-upsize.json")
    catalog = load_catalog()
    asked: list[object] = []
    real = cost.prices_of

    def counted(c: Any) -> str:
        asked.append(c)
        return real(c)

    monkeypatch.setattr(cost, "prices_of", counted)
    lines = cost.cost_lines(plan, PlanIndex(plan.changes, catalog), catalog)
    assert len(lines) > 1
    assert asked == [catalog]
    assert all(real(catalog) in line.note for line in lines)


def test_a_launch_templates_role_is_read_once(monkeypatch: pytest.MonkeyPatch) -> None:
    """Proxies and clients: a template a launcher starts from is read for the launcher, and
    not once more as a template of its own (the budget examples' Terraform tiers: a group
    launching a proxy template tagged with the role)."""
    examples = [e for e in load("gpu-proxy-network-budget").examples
                if any(r["type"] == "aws_autoscaling_group" for r in e.resources)]
    assert examples
    changes = examples[0].changes()
    index = PlanIndex(changes, load_catalog())
    asked: list[tuple[str, str]] = []
    real = roles.own_tag

    def counted(change: Any, key: str, side: str = "new") -> Any:
        asked.append((change.address, key))
        return real(change, key, side)

    monkeypatch.setattr(roles, "own_tag", counted)
    net = index.network
    proxies = net.proxies()
    net.clients()
    assert proxies
    role_reads = [a for a, k in asked if k == ROLE_TAG]
    assert len(role_reads) == len(set(role_reads))
    templates = {t.address for t in net.templates}
    assert templates & set(role_reads)  # some templates are read: through their launchers


@pytest.mark.parametrize("fixture", ["terraform/proxy-tiers.json",
                                     "pulumi/preview-proxy-tiers.json"])
def test_a_tag_is_read_once_per_resource_and_key(fixture: str,
                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    """The three proxy-tier rules each ask a proxy's role, budget and where its clients are:
    the network facts read each tag off each resource once per plan (``RoleFacts.own``)."""
    plan = load_plan(FIXTURES / fixture)
    net = PlanIndex(plan.changes, load_catalog()).network
    asked: Counter[tuple[str, str]] = Counter()
    real = roles.own_tag

    def counted(change: Any, key: str, side: str = "new") -> Any:
        asked[(change.address, key)] += 1
        return real(change, key, side)

    monkeypatch.setattr(roles, "own_tag", counted)
    for _ in range(3):  # as each rule asks
        proxies = net.proxies()
        for proxy in proxies:
            net.budget(proxy)
            net.clients_where(proxy)
        assert net.clients() and proxies
    assert len(asked) > len(proxies) and max(asked.values()) == 1, asked.most_common(3)

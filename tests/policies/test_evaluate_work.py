"""Work a check does once rather than per resource or per rule, held by counting: property
names worked out once per type and path, the cost lines' price words once per plan, a
launch template's role read once, and enum members read through their class once per plan."""

from __future__ import annotations

import enum
import importlib.util
import json
from collections import Counter
from collections.abc import Callable
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

ROOT = Path(__file__).resolve().parents[2]
FIXTURES = ROOT / "tests" / "fixtures"


def _generator(name: str) -> Callable[[int], dict[str, Any]]:
    spec = importlib.util.spec_from_file_location(name, ROOT / "bench" / f"{name}.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.generate  # type: ignore[no-any-return]


@pytest.mark.parametrize("generator", ["gen_preview", "gen_tfplan"])
def test_evaluation_reads_no_enum_member_through_its_class_per_resource(
        generator: str, tmp_path: Path) -> None:
    """On Python 3.11 ``ResourceKind.INSTANCE`` is a Python-level call (EnumType defines
    ``__getattr__``, so every class attribute read takes the slow hook), ~10x a global: the
    per-resource paths test kinds against module constants. Counted: evaluating the bench's
    fleet (Pulumi preview, Terraform plan) of 200 resources reads exactly as many members through
    their class as evaluating 100 (per plan and rule, never per resource)."""
    settings = load_settings(None, None)
    plans = {}
    for n in (100, 200):
        path = tmp_path / f"plan-{n}.json"
        path.write_text(json.dumps(_generator(generator)(n)))
        plans[n] = load_plan(path)
        assert len(plans[n].changes) >= n
        evaluate([plans[n]], settings)  # rule modules imported (their module-level reads)
    real = type.__getattribute__
    reads: Counter[tuple[int, str]] = Counter()
    counting = [0]

    def counted(cls: type, name: str) -> Any:
        found = real(cls, name)
        if counting[0] and isinstance(found, enum.Enum) and type(found) is cls:
            reads[(counting[0], name)] += 1
        return found

    enum.EnumType.__getattribute__ = counted  # type: ignore[method-assign,assignment]
    try:
        for n in (100, 200):
            counting[0] = n
            result = evaluate([plans[n]], settings)
            assert result.resources_evaluated >= n and not result.errors
        counting[0] = 0
    finally:
        del enum.EnumType.__getattribute__  # type: ignore[misc]
    small = Counter({name: k for (n, name), k in reads.items() if n == 100})
    large = Counter({name: k for (n, name), k in reads.items() if n == 200})
    assert small  # counted at all: the engine reads a few per plan
    assert large == small
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

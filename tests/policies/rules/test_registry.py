"""The generated rule index (policies/rules/_index.py) says what the rules say, and a rule finds
nothing in a plan without the kinds it names: what lets a check import only the rules it runs."""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from functools import cache
from pathlib import Path
from typing import Any

import pytest

from gpupool.catalog import load_catalog
from gpupool.record import replace
from policies.facts.network.roles import CLIENT, PROXY, has_tier
from policies.model import ResourceChange
from policies.rules import ALL_RULES, get_rule, registry, rule_ids
from policies.rules.base import Rule
from policies.sources import load_plans

ROOT = Path(__file__).resolve().parents[3]
RULES_DIR = ROOT / "policies" / "rules"
FIXTURES = ROOT / "tests" / "fixtures"
PLAN_FILES = sorted([*(FIXTURES / "terraform").glob("*.json"),
                     *(FIXTURES / "pulumi").glob("*.json"),
                     *(FIXTURES / "gpupool").glob("*.json")])


def test_the_committed_index_matches_the_rules() -> None:
    assert registry.index_path().read_text() == registry.render_index(), (
        "run: python -m policies.rules.registry")
    assert registry.main(["--check"]) == 0


def test_check_mode_reports_a_stale_index(tmp_path: Path) -> None:
    stale = tmp_path / "_index.py"
    stale.write_text("RULES = ()\n")
    assert registry.main(["--check", "--output", str(stale)]) == 1
    assert registry.main(["--output", str(stale)]) == 0
    assert stale.read_text() == registry.render_index()


def test_every_rule_module_is_listed() -> None:
    defining = sorted(p.stem for p in RULES_DIR.glob("*.py")
                      if re.search(r"^RULE = ", p.read_text(), re.MULTILINE))
    assert sorted(registry.MODULES) == defining
    assert len(set(registry.MODULES)) == len(registry.MODULES)


def test_the_index_is_each_rules_metadata_in_report_order() -> None:
    assert rule_ids() == tuple(r.meta.id for r in ALL_RULES)
    for info, rule in zip(registry.INFOS, ALL_RULES, strict=True):
        m = rule.meta
        assert (info.id, info.title, info.default_enforcement, info.scope, info.rationale,
                info.kinds, info.needs_old_inputs) == (
            m.id, m.title, m.default_enforcement, m.scope, m.rationale, m.kinds,
            m.needs_old_inputs)
        assert get_rule(info.id) is rule and registry.load(info.id) is rule
        assert registry.default_params(info.id) == rule.meta.params()


def test_an_unknown_id_names_the_known_ones() -> None:
    with pytest.raises(KeyError, match="did you mean imdsv2-required"):
        get_rule("imdsv2-requird")


@cache
def _fixture_changes() -> tuple[tuple[str, tuple[ResourceChange, ...]], ...]:
    out = [(f"{rule.meta.id}: {ex.title}", tuple(ex.changes()))
           for rule in ALL_RULES for ex in rule.examples]
    for path in PLAN_FILES:
        for plan in load_plans([str(path)]):
            out.append((path.name, plan.changes))
    return tuple(out)


def _param_sets(rule: Rule) -> list[Mapping[str, Any]]:
    """The defaults and every configuration the rule's own examples run with."""
    seen: list[Mapping[str, Any]] = [{}]
    for ex in rule.examples:
        if ex.params and ex.params not in seen:
            seen.append(ex.params)
    return seen


@pytest.mark.parametrize("rule", ALL_RULES, ids=lambda r: r.meta.id)
def test_a_rule_finds_nothing_without_the_kinds_it_names(rule: Rule) -> None:
    """Every example of every rule and every fixture plan, with the rule's kinds taken out,
    under its defaults and each of its examples' configurations: no finding. So the engine may
    skip (and not import) a rule on a plan that holds none of its kinds."""
    catalog = load_catalog()
    tried = 0
    for params in _param_sets(rule):
        for name, changes in _fixture_changes():
            others: Sequence[ResourceChange] = [c for c in changes
                                                if c.kind not in rule.meta.kinds]
            if not others:
                continue
            tried += 1
            findings = rule.run(others, catalog, params)
            assert findings == [], (name, params, [f.message for f in findings])
    assert tried > 50


def _renamed(value: Any, roles: tuple[str, ...]) -> Any:
    """Inputs with every value of ``roles`` turned into another role."""
    if isinstance(value, Mapping):
        return {k: _renamed(v, roles) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return type(value)(_renamed(v, roles) for v in value)
    return "batch" if isinstance(value, str) and value in roles else value


@cache
def _tier_cases() -> tuple[tuple[str, tuple[ResourceChange, ...]], ...]:
    """Every example and fixture plan (the live and real captures too), and each that holds a
    proxy tier again with its proxies', its clients' and both roles renamed: the same network,
    a tier of clients only, of proxies only, none."""
    out = list(_fixture_changes())
    for path in sorted({*FIXTURES.glob("*/live/**/*.json"), *FIXTURES.glob("*/real/*.json")}):
        try:
            plans = load_plans([str(path)])
        except Exception:  # (captures that are not plans: their tests say why)
            continue
        out += [(path.name, plan.changes) for plan in plans]
    renamed = [(f"{name}, {' and '.join(roles)} renamed", tuple(
        replace(c, new=_renamed(c.new, roles), old=_renamed(c.old, roles)) for c in changes))
        for name, changes in out if has_tier(changes)
        for roles in ((PROXY, CLIENT), (PROXY,), (CLIENT,))]
    return tuple(out + renamed)


@pytest.mark.parametrize("rule", [r for r in ALL_RULES if r.meta.proxy_tier],
                         ids=lambda r: r.meta.id)
def test_a_proxy_tier_rule_finds_nothing_where_the_plan_has_no_tier(rule: Rule) -> None:
    """Every case :func:`has_tier` says holds no GPU proxy or client, under the rule's defaults
    and each of its examples' configurations: no finding. So the engine may skip (and not
    import) a ``proxy_tier`` rule on such a plan."""
    catalog = load_catalog()
    tried = renamed = 0
    for params in _param_sets(rule):
        for name, changes in _tier_cases():
            if not changes or has_tier(changes):
                continue
            tried += 1
            renamed += name.endswith(" renamed")
            findings = rule.run(changes, catalog, params)
            assert findings == [], (name, params, [f.message for f in findings])
    assert tried > 100 and renamed > 20, (tried, renamed)


def test_capacity_rule_names_what_its_kubernetes_part_reads() -> None:
    from policies.rules import _k8s_raise, gpu_capacity_vs_utilisation

    assert gpu_capacity_vs_utilisation.KUBE_KINDS == _k8s_raise.KINDS

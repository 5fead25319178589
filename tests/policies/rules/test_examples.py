"""Every example of every rule, as the docs show it: allowed ones pass, denied ones say why."""

from __future__ import annotations

import pytest

from gpupool.catalog import load_catalog
from policies.rules import ALL_RULES, get_rule
from policies.rules.base import Example, Rule
from policies.rules.param_schema import json_schema

CASES = [
    pytest.param(rule, ex, id=f"{rule.meta.id}:{ex.title}")
    for rule in ALL_RULES for ex in rule.examples
]


@pytest.mark.parametrize(("rule", "example"), CASES)
def test_example(rule: Rule, example: Example) -> None:
    findings = rule.run(example.changes(), load_catalog(), example.params)
    blocking = [f for f in findings if not f.advisory_only]
    if example.allowed:
        assert blocking == [], [f.message for f in blocking]
        return
    assert blocking, f"{example.title}: expected a finding, got none"
    matching = [f for f in blocking
                if all(phrase in f.message for phrase in example.message_contains)]
    assert matching, (example.message_contains, [f.message for f in blocking])
    assert all(f.unknown is example.unknown for f in matching)


def test_every_rule_has_allowed_and_denied_examples() -> None:
    for rule in ALL_RULES:
        kinds = {ex.allowed for ex in rule.examples}
        assert kinds == {True, False}, rule.meta.id
        assert any(ex.unknown for ex in rule.examples), f"{rule.meta.id}: no unknown example"
        assert all(ex.message_contains for ex in rule.examples if not ex.allowed), rule.meta.id


def test_rule_ids_are_the_fixed_ones_in_order() -> None:
    assert [r.meta.id for r in ALL_RULES] == [
        "gpu-no-vertical-upsize", "gpu-smallest-instance", "gpu-pool-scales-on-utilisation",
        "gpu-capacity-vs-utilisation", "gpu-chargeback-tags", "imdsv2-required",
        "ebs-encrypted", "gpu-proxy-placement", "gpu-proxy-private", "gpu-proxy-network-budget",
        "team-gpu-quota", "k8s-gpu-per-container", "k8s-gpu-limits", "k8s-gpu-namespace-quota",
        "k8s-gpu-workload-autoscaled", "karpenter-gpu-smallest", "gpu-nodes-tainted",
        "k8s-cpu-pods-off-gpu-nodes", "k8s-gpu-job-deadline", "karpenter-gpu-consolidation",
    ]
    assert get_rule("ebs-encrypted") is ALL_RULES[6]
    with pytest.raises(KeyError, match="known: gpu-no-vertical-upsize"):
        get_rule("gpu-nope")


def test_params_take_camel_case_and_common_unknown_enforcement() -> None:
    for rule in ALL_RULES:
        schema = json_schema(rule.meta.params)
        assert "unknownEnforcement" in schema["properties"], rule.meta.id
        assert rule.parse_params().unknown_enforcement == "advisory"
        assert all("_" not in key for key in schema["properties"]), rule.meta.id
    params = get_rule("gpu-smallest-instance").parse_params({"maxPerGpuPremiumPct": 5})
    assert params.max_per_gpu_premium_pct == 5  # type: ignore[attr-defined]
    with pytest.raises(ValueError, match="unknownEnforcement"):
        get_rule("ebs-encrypted").parse_params({"unknownEnforcement": "disabled"})

"""Attribute-based instance selection judged against the catalog (issue 16, item 5).

An ``instance_requirements`` block was "cannot verify: an override selects types by attributes"
(advisory: a pass), whatever it could launch; a launch template's own requirements were not read
at all. Now the catalog says which GPU types each block can launch, in Terraform's shape and
Pulumi's, and every GPU rule reads them.
"""

from __future__ import annotations

from typing import Any

import pytest

from gpupool.catalog import load_catalog
from policies.engine import evaluate
from policies.facts.requirements import Selection, select
from policies.model import UNKNOWN, ChangeKind, Plan, ResourceChange, resource_kind
from policies.rules.base import Example
from policies.settings import Settings

CATALOG = load_catalog()


def _select(block: dict[str, Any]) -> Selection:
    found = select(block, "instance_requirements", CATALOG)
    assert found is not None
    return found


def test_terraform_writes_an_unset_max_as_zero() -> None:
    """``vcpu_count { min = 4 }`` plans as ``{"min": 4, "max": 0}``: no maximum; and
    ``accelerator_count { max = 0 }`` as ``{"min": 0, "max": 0}``: no accelerators."""
    one_t4 = _select({"accelerator_names": ["t4"], "vcpu_count": [{"min": 4, "max": 0}],
                      "memory_mib": [{"min": 16384, "max": 0}]})
    assert "g4dn.16xlarge" in one_t4.types and one_t4.asks_for_gpus
    assert set(one_t4.types) == {"g4dn.xlarge", "g4dn.2xlarge", "g4dn.4xlarge", "g4dn.8xlarge",
                                 "g4dn.12xlarge", "g4dn.16xlarge"}  # not g4dn.metal
    assert _select({"accelerator_count": [{"min": 0, "max": 0}],
                    "vcpu_count": [{"min": 2, "max": 16}]}).types == ()


def test_pulumi_and_terraform_read_alike() -> None:
    terraform = _select({"accelerator_count": [{"min": 1, "max": 1}],
                         "accelerator_manufacturers": ["nvidia"],
                         "vcpu_count": [{"min": 4, "max": 8}], "memory_mib": [{"min": 16384}]})
    pulumi = _select({"accelerator_count": {"min": 1, "max": 1},
                      "accelerator_manufacturers": ["nvidia"],
                      "vcpu_count": {"min": 4, "max": 8}, "memory_mib": {"min": 16384}})
    assert terraform.types == pulumi.types and "g5.2xlarge" in pulumi.types
    assert not any(t.startswith("g4ad") for t in pulumi.types)  # AMD
    assert all(CATALOG.get(t).gpu_count <= 1 for t in pulumi.types)  # type: ignore[union-attr]


def test_no_accelerator_named_admits_gpu_types_as_ec2_does() -> None:
    cpu_sized = _select({"vcpu_count": {"min": 2, "max": 8}, "memory_mib": {"min": 4096}})
    assert not cpu_sized.asks_for_gpus
    assert {"g4dn.xlarge", "g4dn.2xlarge", "g5g.2xlarge"} <= set(cpu_sized.types)


@pytest.mark.parametrize(("block", "only"), [
    ({"cpu_manufacturers": ["amazon-web-services"], "vcpu_count": {"min": 1}}, "g5g."),
    ({"allowed_instance_types": ["g6.*"], "vcpu_count": {"min": 1}}, "g6."),
    ({"allowed_instance_types": ["G4DN.*"], "vcpu_count": {"min": 1}}, "g4dn."),
    ({"accelerator_names": ["radeon-pro-v520"], "vcpu_count": {"min": 1}}, "g4ad."),
    ({"accelerator_total_memory_mib": {"min": 90000}, "accelerator_count": {"max": 1},
      "vcpu_count": {"min": 1}}, "g7e."),
])
def test_keys_the_catalog_can_judge(block: dict[str, Any], only: str) -> None:
    chosen = _select(block)
    assert chosen.types and all(t.startswith(only) for t in chosen.types), chosen.types


def test_bare_metal_burstable_excluded_types_and_network() -> None:
    assert "g4dn.metal" not in _select({"vcpu_count": {"min": 1}}).types  # EC2's default
    assert "g4dn.metal" in _select({"vcpu_count": {"min": 1}, "bare_metal": "included"}).types
    assert _select({"vcpu_count": {"min": 1}, "bare_metal": "required"}).types == (
        "g4dn.metal", "g5g.metal")
    assert _select({"vcpu_count": {"min": 1}, "burstable_performance": "required"}).types == ()
    # Excluded patterns as written: a capitalised pattern excludes nothing EC2 names.
    kept = _select({"vcpu_count": {"min": 1}, "excluded_instance_types": ["G4DN.*", "g5*"]})
    assert any(t.startswith("g4dn.") for t in kept.types)
    assert not any(t.startswith("g5") for t in kept.types)
    fast = _select({"accelerator_names": ["t4"], "vcpu_count": {"min": 1},
                    "network_bandwidth_gbps": {"min": 50}})
    assert set(fast.types) == {"g4dn.8xlarge", "g4dn.12xlarge", "g4dn.16xlarge"}


def test_cpu_only_patterns_and_accelerators_that_are_not_gpus() -> None:
    assert _select({"allowed_instance_types": ["c7i.*"], "vcpu_count": {"min": 1}}).types == ()
    chips = _select({"accelerator_names": ["inferentia"], "vcpu_count": {"min": 1}})
    assert chips.types == () and chips.uncatalogued == ()
    assert _select({"accelerator_types": ["fpga"], "vcpu_count": {"min": 1}}).types == ()


def test_what_cannot_be_judged_says_why() -> None:
    assert _select({"vcpu_count": {"min": UNKNOWN}}).unknown == (
        "instance_requirements.vcpu_count unknown until apply")
    assert "unexpected value" in (_select({"vcpu_count": {"min": "four"}}).unknown or "")
    old = _select({"accelerator_names": ["k80"], "vcpu_count": {"min": 1}})
    assert old.uncatalogued == ("k80",) and old.types == ()
    assert select(UNKNOWN, "x", CATALOG) == Selection("x", unknown="x unknown until apply")
    assert select(None, "x", CATALOG) is None


# --------------------------------------------------------------------------- through the rules


def _change(type_: str, new: dict[str, Any], name: str = "pool",
            old: dict[str, Any] | None = None) -> ResourceChange:
    return Example("x", True, [{"type": type_, "name": name, "new": new,
                                **({"old": old} if old else {})}]).changes()[0]


def _findings(*changes: ResourceChange) -> set[tuple[str, str, bool]]:
    plan = Plan(source="pulumi-preview", origin="t", changes=tuple(changes))
    result = evaluate([plan], Settings.default())
    return {(v.policy, str(v.enforcement), v.unknown) for v in result.violations}


def _cpu_policy(group: str) -> ResourceChange:
    return _change("aws:autoscaling/policy:Policy", {
        "autoscalingGroupName": group, "policyType": "TargetTrackingScaling",
        "targetTrackingConfiguration": {"targetValue": 50, "predefinedMetricSpecification": {
            "predefinedMetricType": "ASGAverageCPUUtilization"}}}, name="cpu")


def test_a_gpu_selection_is_a_gpu_pool_for_every_rule() -> None:
    group = _change("aws:autoscaling/group:Group", {
        "name": "gpu-pool", "maxSize": 4, "mixedInstancesPolicy": {"launchTemplate": {
            "overrides": [{"instanceRequirements": {
                "acceleratorNames": ["t4"], "vcpuCount": {"min": 4, "max": 4},
                "memoryMib": {"min": 16384, "max": 16384}}}]}}})
    assert resource_kind(group.type).name == "AUTOSCALING_GROUP"
    found = _findings(group, _cpu_policy("gpu-pool"))
    assert ("gpu-pool-scales-on-utilisation", "mandatory", False) in found
    assert ("gpu-chargeback-tags", "advisory", False) in found  # a GPU group: tags wanted


def test_an_uncatalogued_gpu_selection_is_never_a_pass() -> None:
    group = _change("aws:autoscaling/group:Group", {
        "name": "old", "mixedInstancesPolicy": {"launchTemplate": {"overrides": [
            {"instanceRequirements": {"acceleratorNames": ["k80"], "vcpuCount": {"min": 4}}}]}}})
    found = _findings(group, _cpu_policy("old"))
    assert ("gpu-smallest-instance", "advisory", True) in found
    assert ("gpu-pool-scales-on-utilisation", "advisory", True) in found


def test_a_cpu_group_that_excludes_accelerators_is_out_of_scope() -> None:
    group = _change("aws:autoscaling/group:Group", {
        "name": "web", "mixedInstancesPolicy": {"launchTemplate": {"overrides": [
            {"instanceRequirements": {"acceleratorCount": {"max": 0},
                                      "vcpuCount": {"min": 2, "max": 64}}}]}}})
    assert _findings(group, _cpu_policy("web")) == set()


def test_requirements_that_grow_the_smallest_size_are_vertical_scaling() -> None:
    def lt(vcpus: int) -> dict[str, Any]:
        return {"instanceRequirements": {"acceleratorNames": ["t4"],
                                         "vcpuCount": {"min": vcpus}}}

    template = _change("aws:ec2/launchTemplate:LaunchTemplate", lt(16), old=lt(4))
    assert template.change is ChangeKind.UPDATE
    found = _findings(template)
    assert ("gpu-no-vertical-upsize", "mandatory", False) in found
    assert ("gpu-smallest-instance", "mandatory", False) in found

# ruff: noqa: RUF001  (the multiplication sign of the messages under test)
"""gpu-no-vertical-upsize and gpu-smallest-instance beyond their documented examples."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import pytest

from gpupool.catalog import load_catalog
from policies.model import ResourceChange
from policies.rules import get_rule
from policies.rules.base import Example, Finding

UPSIZE = get_rule("gpu-no-vertical-upsize")
SMALLEST = get_rule("gpu-smallest-instance")


def changes(*resources: Mapping[str, Any]) -> list[ResourceChange]:
    return Example("test", True, resources).changes()


def run(rule_id: str, *resources: Mapping[str, Any], **params: Any) -> list[Finding]:
    return get_rule(rule_id).run(changes(*resources), load_catalog(), params)


def instance(old: str | None, new: str | None, **extra: Any) -> dict[str, Any]:
    r: dict[str, Any] = {"type": "aws:ec2/instance:Instance", "name": "gpu", **extra}
    if old is not None:
        r["old"] = {"instanceType": old}
    if new is not None:
        r["new"] = {"instanceType": new}
    return r


# ------------------------------------------------------------------ gpu-no-vertical-upsize


def test_the_issue_message_word_for_word() -> None:
    [f] = run("gpu-no-vertical-upsize", instance("g4dn.xlarge", "g4dn.16xlarge"))
    assert f.message == (
        "g4dn.xlarge → g4dn.16xlarge adds 60 vCPU and 240 GiB memory but no GPU power "
        "(still 1 × T4): +$3.826/h (+$2,792.98/month), no GPU added; "
        "add 1 × g4dn.xlarge for $0.526/h instead "
        "(us-east-1 on-demand prices; the plan names no region)"
    )
    assert not f.unknown and not f.advisory_only
    assert f.detail["delta_per_month"] == 2792.98


def test_packing_names_the_gpu_count_change_and_n_smallest() -> None:
    [f] = run("gpu-no-vertical-upsize", instance("p5.4xlarge", "p5.48xlarge"))
    assert "1 × H100 → 8 × H100, +7 GPUs" in f.message
    assert "add 7 × p5.4xlarge for $48.160/h instead" in f.message
    assert run("gpu-no-vertical-upsize", instance("p5.4xlarge", "p5.48xlarge"),
               allowGpuPacking=True) == []


def test_packing_that_saves_money_is_still_packing_with_a_negative_delta() -> None:
    [f] = run("gpu-no-vertical-upsize", instance("g4dn.16xlarge", "g4dn.12xlarge"))
    assert "packs more GPUs" in f.message
    assert "-$0.440/h (-$321.20/month)" in f.message


def test_fractional_gpus_keep_their_fraction() -> None:
    [f] = run("gpu-no-vertical-upsize", instance("g6f.large", "g6f.xlarge"))
    assert "still 1/8 × L4" in f.message and "no GPU power" in f.message


def test_unpriced_types_are_denied_without_inventing_a_price() -> None:
    """eu-west-1 records no g6 price (the sources sell none there): unknown, never zero."""
    catalog = load_catalog(region="eu-west-1")
    [f] = UPSIZE.run(changes(instance("g6.xlarge", "g6.4xlarge")), catalog)
    assert "cost change unknown (no recorded price)" in f.message
    assert "add 1 × g6.xlarge instead (no recorded price)" in f.message


@pytest.mark.parametrize(("old", "new"), [
    ("g4dn.16xlarge", "g4dn.xlarge"),  # downsize
    ("g4dn.xlarge", "m7i.large"),  # off GPUs
    ("m7i.large", "g4dn.16xlarge"),  # onto GPUs: a size question, not an upsize
    ("g4dn.xlarge", "g4dn.xlarge"),
])
def test_changes_that_are_not_upsizes(old: str, new: str) -> None:
    assert run("gpu-no-vertical-upsize", instance(old, new)) == []


def test_create_delete_and_replace() -> None:
    assert run("gpu-no-vertical-upsize", instance(None, "g4dn.16xlarge")) == []
    assert run("gpu-no-vertical-upsize", instance("g4dn.16xlarge", None)) == []
    [f] = run("gpu-no-vertical-upsize",
              instance("g4dn.xlarge", "g4dn.2xlarge", change="replace"))
    assert "g4dn.xlarge → g4dn.2xlarge" in f.message


def test_update_without_old_inputs_cannot_be_verified_when_gpu_is_involved() -> None:
    no_baseline = {"type": "aws:ec2/instance:Instance", "name": "gpu", "change": "update",
                   "new": {"instanceType": "g4dn.16xlarge"}}
    [f] = run("gpu-no-vertical-upsize", no_baseline)
    assert f.unknown and "no baseline" in f.message
    cpu = {**no_baseline, "new": {"instanceType": "m7i.large"}}
    assert run("gpu-no-vertical-upsize", cpu) == []


def test_unknown_type_is_reported_only_when_it_could_be_an_upsize() -> None:
    unknown = "(known after apply)"
    [f] = run("gpu-no-vertical-upsize", instance("g4dn.xlarge", unknown))
    assert f.unknown
    assert run("gpu-no-vertical-upsize", instance("m7i.large", unknown)) == []
    [f] = run("gpu-no-vertical-upsize", instance(unknown, "g5.2xlarge"))
    assert f.unknown and "old instance type unknown" in f.message


def test_override_lists_of_different_length_pair_by_gpu() -> None:
    asg = {"type": "aws:autoscaling/group:Group", "name": "pool",
           "old": {"mixedInstancesPolicy": {"launchTemplate": {"overrides": [
               {"instanceType": "g5.xlarge"}, {"instanceType": "g4dn.xlarge"}]}}},
           "new": {"mixedInstancesPolicy": {"launchTemplate": {"overrides": [
               {"instanceType": "g4dn.2xlarge"}]}}}}
    [f] = run("gpu-no-vertical-upsize", asg)
    assert "g4dn.xlarge → g4dn.2xlarge" in f.message


def test_gpu_model_change_is_information_with_both_per_gpu_prices() -> None:
    [f] = run("gpu-no-vertical-upsize", instance("g4dn.xlarge", "g6.xlarge"))
    assert f.advisory_only and not f.unknown
    assert "$0.526 per GPU-hour → $0.8048 per GPU-hour" in f.message


# ------------------------------------------------------------------ gpu-smallest-instance


def test_premium_parameter_allows_a_bounded_per_gpu_premium() -> None:
    assert run("gpu-smallest-instance", instance(None, "g4dn.2xlarge"),
               maxPerGpuPremiumPct=50) == []
    [f] = run("gpu-smallest-instance", instance(None, "g4dn.4xlarge"), maxPerGpuPremiumPct=50)
    assert "+129 %" in f.message


@pytest.mark.parametrize("ok", ["p4d.24xlarge", "p4de.24xlarge", "p5.48xlarge", "g5g.xlarge",
                                "g6f.large", "m7i.large", "t3.micro"])
def test_smallest_or_as_cheap_per_gpu_or_not_a_gpu(ok: str) -> None:
    assert run("gpu-smallest-instance", instance(None, ok)) == []


def test_partitioned_gpu_slices_compare_with_the_same_slice() -> None:
    [f] = run("gpu-smallest-instance", instance(None, "g6f.xlarge"))
    assert "g6f.large" in f.message and "$1.900 per GPU-hour" in f.message


def test_unknown_price_or_uncatalogued_gpu_type_cannot_be_verified() -> None:
    catalog = load_catalog(region="eu-west-1")  # no g6 price recorded there
    [f] = SMALLEST.run(changes(instance(None, "g6.4xlarge")), catalog)
    assert f.unknown and "no recorded price" in f.message
    [f] = run("gpu-smallest-instance", instance(None, "g5.96xlarge"))
    assert f.unknown and "not in the GPU catalog" in f.message


def test_attribute_based_overrides_and_unknown_node_group_types() -> None:
    asg = {"type": "aws:autoscaling/group:Group", "name": "pool",
           "new": {"mixedInstancesPolicy": {"launchTemplate": {"overrides": [
               {"instanceRequirements": {"vcpuCount": {"min": 4}}}]}}}}
    [f] = run("gpu-smallest-instance", asg)  # issue 16 item 5: judged, no longer unknown
    assert not f.unknown and "names no accelerator" in f.message
    assert "mixedInstancesPolicy.launchTemplate.overrides.instanceRequirements" in f.message
    ng = {"type": "aws_eks_node_group", "name": "gpu", "address": "aws_eks_node_group.gpu",
          "new": {"instance_types": "(known after apply)"}}
    [f] = run("gpu-smallest-instance", ng)
    assert f.unknown and "instance_types unknown until apply" in f.message


def test_deleted_resources_are_not_judged() -> None:
    assert run("gpu-smallest-instance", instance("g4dn.16xlarge", None)) == []

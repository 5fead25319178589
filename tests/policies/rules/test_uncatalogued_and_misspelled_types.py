# ruff: noqa: RUF001  (the multiplication sign of the messages under test)
"""Issue 7 item 2: GPU types the catalog lacked were invisible, and so were types written in
another case or with spaces. Now every current GPU type is a catalog row; a type of a GPU family
the catalog does not know is a "cannot verify" finding at unknownEnforcement; and a type written
otherwise than EC2 names it is judged as the type it names, with a finding saying AWS refuses it
as written (EC2 takes InstanceType as one of its listed lowercase values: anything else is
InvalidParameterValue).
"""

from __future__ import annotations

from collections.abc import Mapping
from datetime import date
from typing import Any

import pytest

from gpupool.catalog import canonical_instance_type, load_catalog
from policies.engine import evaluate
from policies.model import Plan
from policies.result import Result
from policies.rules import get_rule
from policies.rules.base import Example, Finding
from policies.settings import parse_config

CATALOG = load_catalog()
UPSIZE = get_rule("gpu-no-vertical-upsize")
SMALLEST = get_rule("gpu-smallest-instance")


def run(rule: Any, *resources: Mapping[str, Any]) -> list[Finding]:
    return rule.run(Example("t", True, resources).changes(), CATALOG)


def instance(old: str | None, new: str) -> dict[str, Any]:
    r: dict[str, Any] = {"type": "aws:ec2/instance:Instance", "name": "gpu",
                         "new": {"instanceType": new}}
    if old is not None:
        r["old"] = {"instanceType": old}
    return r


def check(*resources: Mapping[str, Any], config: Mapping[str, Any] | None = None) -> Result:
    """The two GPU size rules alone, through the engine (enforcement as reported)."""
    only = {"gpu-pool-scales-on-utilisation": "disabled", "gpu-chargeback-tags": "disabled",
            "imdsv2-required": "disabled", "ebs-encrypted": "disabled", **(config or {})}
    plan = Plan("test", "plan.json", tuple(Example("t", True, resources).changes()))
    return evaluate([plan], parse_config(only, "p.yaml"), today=date(2026, 6, 1))


# --------------------------------------------------------------------------- the catalog


@pytest.mark.parametrize("name", [
    "p3.2xlarge", "p3.8xlarge", "p3.16xlarge", "p3dn.24xlarge",
    "g4ad.xlarge", "g4ad.2xlarge", "g4ad.4xlarge", "g4ad.8xlarge", "g4ad.16xlarge",
    "g4dn.xlarge", "g5.xlarge", "g5g.xlarge", "g6.xlarge", "g6e.xlarge", "g6f.large",
    "gr6.4xlarge", "gr6f.4xlarge", "g7.2xlarge", "g7e.2xlarge",
    "p4d.24xlarge", "p4de.24xlarge", "p5.4xlarge", "p5.48xlarge", "p5e.48xlarge",
    "p5en.48xlarge", "p6-b200.48xlarge", "p6-b300.48xlarge",
])
def test_every_current_gpu_type_is_a_catalog_row(name: str) -> None:
    assert CATALOG.get(name) is not None


def test_supplemented_rows_match_the_published_specifications() -> None:
    p3 = CATALOG.get("p3.16xlarge")
    assert p3 is not None
    assert (p3.gpu_model, p3.gpu_count, p3.gpu_memory_mib, p3.vcpus) == ("V100", 8, 16384, 64)
    assert p3.memory_mib == 488 * 1024 and p3.network_baseline_gbps == 25.0
    assert p3.price_per_hour == 24.48
    g4ad = CATALOG.get("g4ad.xlarge")
    assert g4ad is not None
    assert (g4ad.gpu_maker, g4ad.gpu_model, g4ad.gpu_memory_mib) == ("AMD", "Radeon Pro V520",
                                                                    8192)
    assert (g4ad.network_baseline_gbps, g4ad.network_burst_gbps) == (2.0, 10.0)
    assert "supplement.json" in CATALOG.meta["source"]["supplement"]


def test_the_smallest_v100_is_p3_2xlarge_although_every_p3_costs_the_same_per_gpu() -> None:
    assert {CATALOG.get(t).price_per_gpu_hour  # type: ignore[union-attr]
            for t in ("p3.2xlarge", "p3.8xlarge", "p3.16xlarge")} == {3.06}
    assert CATALOG.smallest_like("p3.16xlarge").instance_type == "p3.2xlarge"  # type: ignore[union-attr]


# --------------------------------------------------------------------------- upsize of p3


def test_p3_2xlarge_to_p3_16xlarge_is_the_1_to_8_v100_change_it_is() -> None:
    [f] = run(UPSIZE, instance("p3.2xlarge", "p3.16xlarge"))
    assert not f.unknown
    assert "1 × V100 → 8 × V100" in f.message and "+7 GPUs" in f.message
    assert "+$21.420/h" in f.message and "add 7 × p3.2xlarge for $21.420/h instead" in f.message
    result = check(instance("p3.2xlarge", "p3.16xlarge"))
    assert result.verdict == "fail"
    assert [(v.policy, v.enforcement.value) for v in result.violations] == [
        ("gpu-no-vertical-upsize", "mandatory")]  # p3.16xlarge costs p3.2xlarge's per GPU


# --------------------------------------------------------------------------- unknown GPU types


@pytest.mark.parametrize(("old", "new", "phrase"), [
    ("p2.xlarge", "p2.16xlarge", "NVIDIA K80"),  # a family recorded without rows
    ("p7.xlarge", "p7.8xlarge", "p7 is not a family the catalog knows"),  # a family to come
    ("g4dn.xlarge", "g4dn.24xlarge", "g4dn instances carry GPUs, but the catalog has no"),
])
def test_uncatalogued_gpu_types_cannot_be_verified_never_pass(
    old: str, new: str, phrase: str
) -> None:
    findings = run(UPSIZE, instance(old, new))
    assert findings and all(f.unknown for f in findings)
    assert any(phrase in f.message and "cannot verify" in f.message for f in findings)
    [f] = run(SMALLEST, instance(None, new))
    assert f.unknown and "is not in the GPU catalog" in f.message


def test_cannot_verify_follows_unknown_enforcement() -> None:
    r = instance("p2.xlarge", "p2.16xlarge")
    default = check(r)
    assert default.verdict == "pass"
    assert {(v.policy, v.enforcement.value) for v in default.violations} == {
        ("gpu-no-vertical-upsize", "advisory"), ("gpu-smallest-instance", "advisory")}
    strict = check(r, config={"gpu-no-vertical-upsize": {
        "enforcementLevel": "mandatory", "unknownEnforcement": "mandatory"}})
    assert strict.verdict == "fail"


def test_ultraserver_only_gpu_family_is_a_gpu_type() -> None:
    [f] = run(SMALLEST, instance(None, "p6e-gb200.36xlarge"))
    assert f.unknown and "UltraServers" in f.message


@pytest.mark.parametrize("name", ["m7i.large", "c7gn.xlarge", "trn1.2xlarge", "inf2.xlarge"])
def test_cpu_and_other_accelerator_types_stay_out_of_scope(name: str) -> None:
    assert run(SMALLEST, instance(None, name)) == []
    assert run(UPSIZE, instance("m7i.large", name)) == []


def test_override_lists_of_different_length_with_an_unknown_gpu_type() -> None:
    def asg(types: list[str]) -> dict[str, Any]:
        return {"mixedInstancesPolicy": {"launchTemplate": {
            "overrides": [{"instanceType": t} for t in types]}}}

    group = {"type": "aws:autoscaling/group:Group", "name": "pool",
             "old": asg(["p2.xlarge"]), "new": asg(["p2.8xlarge", "m7i.large"])}
    [f] = run(UPSIZE, group)
    assert f.unknown and "p2.8xlarge replaced p2.xlarge" in f.message


def test_group_of_an_uncatalogued_gpu_type_still_needs_gpu_scaling() -> None:
    group = {"type": "aws:autoscaling/group:Group", "name": "pool", "new": {
        "minSize": 1, "maxSize": 4,
        "mixedInstancesPolicy": {"launchTemplate": {"overrides": [{"instanceType": "p2.xlarge"}]}},
    }}
    findings = get_rule("gpu-pool-scales-on-utilisation").run(
        Example("t", True, [group]).changes(), CATALOG)
    assert findings and "no target-tracking scaling policy" in findings[0].message


# --------------------------------------------------------------------------- spellings


def test_ec2_names_are_lowercase_without_spaces() -> None:
    assert canonical_instance_type(" G4DN.16XLARGE ") == "g4dn.16xlarge"
    assert canonical_instance_type("g4dn.xlarge") == "g4dn.xlarge"


@pytest.mark.parametrize("written", ["G4DN.16XLARGE", " g4dn.16xlarge ", "g4dn.16xlarge\t",
                                     "G4dn.16xLarge"])
def test_a_respelled_upsize_is_judged_as_the_type_it_names(written: str) -> None:
    findings = run(UPSIZE, instance("g4dn.xlarge", written))
    [f] = findings
    assert not f.unknown and "g4dn.xlarge → g4dn.16xlarge" in f.message
    assert "no GPU power" in f.message
    [spelling, size] = run(SMALLEST, instance(None, written))
    assert spelling.unknown and repr(written) in spelling.message
    assert "AWS refuses it as written" in spelling.message
    assert not size.unknown and "g4dn.16xlarge is not the smallest size" in size.message
    assert check(instance("g4dn.xlarge", written)).verdict == "fail"


@pytest.mark.parametrize("resource", [
    {"type": "aws_launch_template", "name": "lt", "address": "aws_launch_template.lt",
     "old": {"instance_type": "g5.xlarge"}, "new": {"instance_type": "G5.4XLARGE"}},
    {"type": "aws_autoscaling_group", "name": "pool", "address": "aws_autoscaling_group.pool",
     "old": {"mixed_instances_policy": [{"launch_template": [{
         "override": [{"instance_type": "g5.xlarge"}]}]}]},
     "new": {"mixed_instances_policy": [{"launch_template": [{
         "override": [{"instance_type": " g5.4xlarge"}]}]}]}},
    {"type": "aws:eks/nodeGroup:NodeGroup", "name": "gpu",
     "old": {"instanceTypes": ["g5.xlarge"]}, "new": {"instanceTypes": ["G5.4xlarge"]}},
])
def test_respelled_types_are_judged_on_every_kind(resource: dict[str, Any]) -> None:
    [f] = run(UPSIZE, resource)
    assert "g5.xlarge → g5.4xlarge" in f.message and not f.unknown


def test_a_respelled_smallest_type_still_says_aws_refuses_it() -> None:
    [f] = run(SMALLEST, instance(None, "G4DN.XLARGE"))
    assert f.unknown and "judged as g4dn.xlarge" in f.message


def test_blank_instance_type_is_not_a_pass() -> None:
    [f] = run(SMALLEST, instance(None, "   "))
    assert f.unknown and "unexpected value" in f.message

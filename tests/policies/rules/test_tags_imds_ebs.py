"""gpu-chargeback-tags, imdsv2-required and ebs-encrypted beyond their documented examples."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from gpupool.catalog import load_catalog
from policies.rules import get_rule
from policies.rules.base import Example, Finding

U = "(known after apply)"
TAGS = {"team": "ml", "cost-center": "cc-42", "environment": "dev"}


def run(rule_id: str, *resources: Mapping[str, Any], **params: Any) -> list[Finding]:
    return get_rule(rule_id).run(Example("t", True, resources).changes(), load_catalog(), params)


def lt(**new: Any) -> dict[str, Any]:
    return {"type": "aws:ec2/launchTemplate:LaunchTemplate", "name": "lt",
            "new": {"name": "gpu-lt", "instanceType": "g4dn.xlarge", **new}}


def asg(**new: Any) -> dict[str, Any]:
    return {"type": "aws:autoscaling/group:Group", "name": "pool",
            "new": {"name": "pool", "launchTemplate": {"name": "gpu-lt"}, **new}}


# ------------------------------------------------------------------ chargeback tags


def test_launch_template_tags_on_itself_or_for_instances_but_not_for_volumes() -> None:
    assert run("gpu-chargeback-tags", lt(tags=TAGS)) == []
    volumes_only = lt(tagSpecifications=[{"resourceType": "volume", "tags": TAGS}])
    [f] = run("gpu-chargeback-tags", volumes_only)
    assert "missing chargeback tags: team, cost-center, environment" in f.message


def test_group_tags_reach_instances_by_propagation_or_by_its_template() -> None:
    propagated = [{"key": k, "value": v, "propagateAtLaunch": True} for k, v in TAGS.items()]
    assert run("gpu-chargeback-tags", lt(tags=TAGS), asg(tags=propagated)) == []
    templ = lt(tagSpecifications=[{"resourceType": "instance", "tags": TAGS}])
    kept = [{"key": k, "value": v, "propagateAtLaunch": False} for k, v in TAGS.items()]
    assert run("gpu-chargeback-tags", templ, asg(tags=kept)) == []
    findings = run("gpu-chargeback-tags", lt(tags=TAGS), asg(tags=kept))
    assert [f.message for f in findings] == [
        "tags not propagated at launch: team, cost-center, environment, so the group's "
        "instances will not carry them (set propagateAtLaunch = true)"]


def test_empty_values_and_custom_required_tags() -> None:
    [f] = run("gpu-chargeback-tags", lt(tags={**TAGS, "team": ""}))
    assert "missing chargeback tags: team" in f.message
    assert run("gpu-chargeback-tags", lt(tags={"owner": "x"}), requiredTags=["owner"]) == []


def test_group_of_unknown_types_is_flagged_only_if_tags_are_missing() -> None:
    outside = {"type": "aws:autoscaling/group:Group", "name": "pool",
               "new": {"launchTemplate": {"id": "lt-0abc"}}}
    [f] = run("gpu-chargeback-tags", outside)
    assert f.unknown and "lt-0abc is not in the plan" in f.message
    tagged = {**outside, "new": {**outside["new"], "tags": [
        {"key": k, "value": v, "propagateAtLaunch": True} for k, v in TAGS.items()]}}
    assert run("gpu-chargeback-tags", tagged) == []


def test_eks_node_group_and_non_gpu_resources() -> None:
    ng = {"type": "aws_eks_node_group", "name": "gpu", "address": "aws_eks_node_group.gpu",
          "new": {"instance_types": ["g6.xlarge"], "tags": {"team": "ml"}}}
    [f] = run("gpu-chargeback-tags", ng)
    assert "cost-center, environment" in f.message and not f.unknown
    cpu = {**ng, "new": {"instance_types": ["m7i.large"]}}
    assert run("gpu-chargeback-tags", cpu) == []


# ------------------------------------------------------------------ IMDSv2


def test_imds_endpoint_disabled_and_launch_configuration() -> None:
    off = {"type": "aws_instance", "name": "i", "address": "aws_instance.i",
           "new": {"metadata_options": [{"http_endpoint": "disabled"}]}}
    assert run("imdsv2-required", off) == []
    lc = {"type": "aws:ec2/launchConfiguration:LaunchConfiguration", "name": "lc",
          "new": {"metadataOptions": {"httpEndpoint": "enabled"}}}
    [f] = run("imdsv2-required", lc)
    assert "metadataOptions.httpTokens = not set" in f.message


def test_imds_terraform_empty_block_list_is_not_set() -> None:
    inst = {"type": "aws_instance", "name": "i", "address": "aws_instance.i",
            "new": {"metadata_options": []}}
    [f] = run("imdsv2-required", inst)
    assert "metadata_options is not set" in f.message and not f.unknown


def test_imds_from_a_launch_template_in_or_outside_the_plan() -> None:
    weak = lt(metadataOptions={"httpTokens": "optional"})
    inst = {"type": "aws:ec2/instance:Instance", "name": "i",
            "new": {"launchTemplate": {"name": "gpu-lt"}}}
    findings = run("imdsv2-required", weak, inst)
    assert len(findings) == 2  # the template, and the instance that uses it
    assert any("(launch template lt)" in f.message for f in findings)
    outside = {**inst, "new": {"launchTemplate": {"id": "lt-0abc"}}}
    [f] = run("imdsv2-required", outside)
    assert f.unknown and "lt-0abc is not in the plan" in f.message


def test_imds_tokens_unknown() -> None:
    inst = {"type": "aws_instance", "name": "i", "address": "aws_instance.i",
            "new": {"metadata_options": [{"http_tokens": U}]}}
    [f] = run("imdsv2-required", inst)
    assert f.unknown


# ------------------------------------------------------------------ EBS


def test_ebs_names_each_unencrypted_volume() -> None:
    inst = {"type": "aws_instance", "name": "i", "address": "aws_instance.i",
            "new": {"root_block_device": [{"encrypted": False}],
                    "ebs_block_device": [{"device_name": "/dev/sdf", "encrypted": True},
                                         {"device_name": "/dev/sdg", "encrypted": False}]}}
    [f] = run("ebs-encrypted", inst)
    assert f.message == ("root volume is not encrypted; set encrypted = true; "
                         "EBS volume /dev/sdg is not encrypted; set encrypted = true")


def test_ebs_instance_store_mappings_are_not_ebs() -> None:
    templ = lt(blockDeviceMappings=[
        {"deviceName": "/dev/xvda", "ebs": {"encrypted": "true"}},
        {"deviceName": "/dev/sdb", "virtualName": "ephemeral0"}])
    assert run("ebs-encrypted", templ) == []


def test_ebs_instance_judged_by_its_template() -> None:
    plain = lt(blockDeviceMappings=[{"deviceName": "/dev/xvda", "ebs": {"volumeSize": 100}}])
    inst = {"type": "aws:ec2/instance:Instance", "name": "i",
            "new": {"launchTemplate": {"name": "gpu-lt"}}}
    findings = run("ebs-encrypted", plain, inst)
    assert {f.message for f in findings} == {
        "EBS volume /dev/xvda is not encrypted; set encrypted = true",
        "EBS volume /dev/xvda is not encrypted; set encrypted = true (launch template lt)"}
    good = lt(blockDeviceMappings=[{"deviceName": "/dev/xvda", "ebs": {"encrypted": "true"}}])
    assert run("ebs-encrypted", good, inst) == []


def test_ebs_unknown_mapping_list() -> None:
    templ = {"type": "aws_launch_template", "name": "lt", "address": "aws_launch_template.lt",
             "new": {"block_device_mappings": U}}
    [f] = run("ebs-encrypted", templ)
    assert f.unknown and "block device mappings" in f.message

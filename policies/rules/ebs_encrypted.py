"""ebs-encrypted: every EBS volume a resource declares is encrypted."""

from __future__ import annotations

from collections.abc import Iterable

from policies.facts import Volume, volumes
from policies.model import UNKNOWN, ResourceChange, ResourceKind
from policies.rules._common import cannot_verify, prop
from policies.rules.base import Enforcement, Example, Finding, Rule, RuleContext, RuleMeta


class EbsEncrypted(Rule):
    meta = RuleMeta(
        id="ebs-encrypted",
        title="EBS volumes are encrypted",
        default_enforcement=Enforcement.MANDATORY,
        rationale=(
            "GPU hosts hold model weights, datasets and checkpoints on EBS. Every volume an "
            "instance, launch template or launch configuration declares must set encrypted = "
            "true. A root volume left undeclared takes the AMI snapshot's encryption (the public "
            "GPU AMIs are not encrypted), and account-level encryption by default is not visible "
            "in a plan, so it is a violation too. An instance without volume settings of its "
            "own is judged by its launch template when that is in the plan."
        ),
        scope="resource",
        kinds=frozenset({ResourceKind.INSTANCE, ResourceKind.LAUNCH_TEMPLATE,
                         ResourceKind.LAUNCH_CONFIGURATION}),
    )

    examples = (
        Example(
            title="Launch template with an encrypted gp3 root volume",
            allowed=True,
            resources=[{"type": "aws:ec2/launchTemplate:LaunchTemplate", "name": "pool",
                        "new": {"blockDeviceMappings": [{
                            "deviceName": "/dev/xvda",
                            "ebs": {"volumeType": "gp3", "encrypted": "true"}}]}}],
        ),
        Example(
            title="Terraform launch template with an unencrypted data volume",
            allowed=False,
            resources=[{"type": "aws_launch_template", "name": "pool",
                        "address": "aws_launch_template.pool",
                        "new": {"block_device_mappings": [
                            {"device_name": "/dev/xvda", "ebs": [{"encrypted": "true"}]},
                            {"device_name": "/dev/sdf", "ebs": [{"encrypted": "false"}]}]}}],
            message_contains=["EBS volume /dev/sdf is not encrypted"],
        ),
        Example(
            title="Instance whose root volume encryption is left to the AMI",
            allowed=False,
            resources=[{"type": "aws:ec2/instance:Instance", "name": "gpu",
                        "new": {"instanceType": "g4dn.xlarge"}}],
            message_contains=["root volume encryption is not set",
                              "set rootBlockDevice.encrypted = true"],
        ),
        Example(
            title="Launch configuration with encrypted root and data volumes",
            allowed=True,
            resources=[{"type": "aws:ec2/launchConfiguration:LaunchConfiguration",
                        "name": "legacy",
                        "new": {"rootBlockDevice": {"encrypted": True},
                                "ebsBlockDevices": [{"deviceName": "/dev/sdf",
                                                     "encrypted": True}]}}],
        ),
        Example(
            title="Root volume unknown until apply",
            allowed=False,
            unknown=True,
            resources=[{"type": "aws_instance", "name": "gpu", "address": "aws_instance.gpu",
                        "new": {"root_block_device": "(known after apply)"}}],
            message_contains=["cannot verify", "root volume"],
        ),
    )

    def check_resource(self, change: ResourceChange, ctx: RuleContext) -> Iterable[Finding]:
        found = volumes(change)
        where = ""
        if change.kind is ResourceKind.INSTANCE and not found[0].declared:
            link = ctx.plan.launch_templates(change)
            if link.declared:
                if not link.targets:
                    found = [*found[1:], Volume(
                        f"root volume (from a launch template: {link.unknown})", UNKNOWN)]
                else:
                    template = link.targets[0]
                    found = [*found[1:], *volumes(template)]
                    where = f" (launch template {template.name})"
        bad = [_problem(v, change) for v in found if v.encrypted is False]
        unknown = [v.label for v in found if v.encrypted is UNKNOWN]
        if bad:
            yield Finding(change.address, "; ".join(bad) + where,
                          detail={"volumes": [v.label for v in found if v.encrypted is False]})
        elif unknown:
            yield Finding(change.address, cannot_verify(
                f"encryption of {', '.join(unknown)} unknown until apply{where}"), unknown=True)


def _problem(volume: Volume, change: ResourceChange) -> str:
    if not volume.declared:
        if change.kind is ResourceKind.LAUNCH_TEMPLATE:
            fix = (f"declare the root device in {prop(change.type, 'block_device_mappings')} "
                   f"with {prop(change.type, 'ebs.encrypted')} = true")
        else:
            fix = f"set {prop(change.type, 'root_block_device.encrypted')} = true"
        return (f"{volume.label} encryption is not set: it comes from the AMI snapshot, "
                f"unencrypted unless the account encrypts by default; {fix}")
    return f"{volume.label} is not encrypted; set encrypted = true"

RULE = EbsEncrypted()

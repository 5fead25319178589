"""ebs-encrypted: every EBS volume a resource declares is encrypted."""

from __future__ import annotations

from collections.abc import Iterable

from policies.facts import Volume, all_encrypted, flag, volumes
from policies.model import UNKNOWN, ResourceChange, ResourceKind
from policies.rules._common import cannot_verify, prop
from policies.rules.base import (
    NOT_JUDGED,
    Enforcement,
    Example,
    Finding,
    Rule,
    RuleContext,
    RuleMeta,
    lazy_examples,
)

# Bound once: on Python 3.11 an enum member read through its class costs a call (EnumType's
# __getattr__), ~10x a global; these are tested per resource.
_INSTANCE, _LAUNCH_TEMPLATE = ResourceKind.INSTANCE, ResourceKind.LAUNCH_TEMPLATE
_VOLUME, _ACCOUNT_DEFAULT = ResourceKind.EBS_VOLUME, ResourceKind.EBS_ENCRYPTION_DEFAULT


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
            "own is judged by its launch template when that is in the plan. Standalone volumes "
            "(aws_ebs_volume, aws.ebs.Volume) must set encrypted = true as well. The account's "
            "default (aws_ebs_encryption_by_default, aws.ebs.EncryptionByDefault) is checked "
            "too: enabled = false, or removing the resource, turns encryption by default off "
            "for every new volume of the region. An enabled default in the plan does not excuse "
            "a volume that leaves encryption unset: it holds for one region only, for volumes "
            "created after it is applied, and the plan cannot show that ordering; keep it on as "
            "a second line of defence."
        ),
        scope="resource",
        kinds=frozenset({ResourceKind.INSTANCE, ResourceKind.LAUNCH_TEMPLATE,
                         ResourceKind.LAUNCH_CONFIGURATION, ResourceKind.EBS_VOLUME,
                         ResourceKind.EBS_ENCRYPTION_DEFAULT}),
    )

    examples = lazy_examples(lambda: (
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
        Example(
            title="Pulumi EBS volume that sets encryption",
            allowed=True,
            resources=[{"type": "aws:ebs/volume:Volume", "name": "datasets",
                        "new": {"availabilityZone": "us-east-1a", "size": 500,
                                "encrypted": True}}],
        ),
        Example(
            title="Terraform EBS volume that leaves encryption to the account default",
            allowed=False,
            resources=[{"type": "aws_ebs_volume", "name": "checkpoints",
                        "address": "aws_ebs_volume.checkpoints",
                        "new": {"availability_zone": "us-east-1a", "size": 500}}],
            message_contains=["EBS volume encryption is not set", "account's default",
                              "set encrypted = true"],
        ),
        Example(
            title="Account default for EBS encryption turned off",
            allowed=False,
            resources=[{"type": "aws_ebs_encryption_by_default", "name": "this",
                        "address": "aws_ebs_encryption_by_default.this",
                        "new": {"enabled": False}}],
            message_contains=["enabled = false turns EBS encryption by default off"],
        ),
        Example(
            title="Removing the account default",
            allowed=False,
            resources=[{"type": "aws:ebs/encryptionByDefault:EncryptionByDefault",
                        "name": "default", "old": {"enabled": True}, "new": None}],
            message_contains=["removing the account's EBS encryption by default"],
        ),
        Example(
            title="Account default on (enabled defaults to true)",
            allowed=True,
            resources=[{"type": "aws:ebs/encryptionByDefault:EncryptionByDefault",
                        "name": "default", "new": {}}],
        ),
    ))

    def applies_to(self, change: ResourceChange) -> bool:
        """Also the removal of the account default: it turns encryption by default off."""
        if change.kind is _ACCOUNT_DEFAULT and change.is_removal:
            return True
        # Rule.applies_to's test, inlined: asked of every judged resource of the rule's kinds
        return change.kind in self.meta.kinds and change.change not in NOT_JUDGED

    def check_resource(self, change: ResourceChange, ctx: RuleContext) -> Iterable[Finding]:
        if change.kind is _ACCOUNT_DEFAULT:
            yield from _account_default(change)
            return
        if all_encrypted(change):  # most resources: nothing to say, no Volume made
            return
        found = volumes(change)
        where = ""
        if change.kind is _INSTANCE and not found[0].declared:
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


def _account_default(change: ResourceChange) -> Iterable[Finding]:
    enabled = prop(change.type, "enabled")
    if change.is_removal:
        yield Finding(change.address, (
            "removing the account's EBS encryption by default turns it off for every new "
            "volume in the region; keep the resource with "
            f"{enabled} = true"))
        return
    value = change.after.get("enabled")
    if value is UNKNOWN:
        yield Finding(change.address, cannot_verify(
            f"whether EBS encryption by default stays on ({enabled} unknown until apply)"),
            unknown=True)
    elif value is not None and flag(value) is False:  # not set: the provider's default, true
        yield Finding(change.address, (
            f"{enabled} = false turns EBS encryption by default off for every new volume in "
            f"the region; set {enabled} = true"))


def _problem(volume: Volume, change: ResourceChange) -> str:
    if not volume.declared and change.kind is _VOLUME:
        return (f"{volume.label} encryption is not set: the volume takes the account's default "
                "for the region, which a plan cannot show; set "
                f"{prop(change.type, 'encrypted')} = true")
    if not volume.declared:
        if change.kind is _LAUNCH_TEMPLATE:
            fix = (f"declare the root device in {prop(change.type, 'block_device_mappings')} "
                   f"with {prop(change.type, 'ebs.encrypted')} = true")
        else:
            fix = f"set {prop(change.type, 'root_block_device.encrypted')} = true"
        return (f"{volume.label} encryption is not set: it comes from the AMI snapshot, "
                f"unencrypted unless the account encrypts by default; {fix}")
    return f"{volume.label} is not encrypted; set encrypted = true"

RULE = EbsEncrypted()

"""Scale-in protection for groups whose instances must not be scaled in while they work.

Training pools' instances run jobs, and a remote-GPU tier's proxies hold their clients' GPU
state (contexts, allocations): target tracking must not terminate one that is busy. Such a group
launches its instances protected from scale-in (``gpu_host.gpu_group``), and each instance
releases (and restores) its own protection with ``gpupool-scale-in-protection off|on``: the
helper installed by the boot script below, calling Auto Scaling through the VPC's
``autoscaling`` endpoint (``network.PROTECTION_SERVICES``) with a role that may set protection
on its own group only (:func:`release_policy`).
"""

from __future__ import annotations

import json
from typing import Final

import pulumi
import pulumi_aws as aws

PROTECTION_HELPER: Final = "/usr/local/bin/gpupool-scale-in-protection"


def protection_script(region: str) -> str:
    """Installs ``gpupool-scale-in-protection on|off|status`` on a protected group's instances.

    They launch protected from scale-in, so target tracking never terminates one that works. A
    job scheduler (or the job's last step, or a proxy's remoting server once its last client
    has gone) runs ``gpupool-scale-in-protection off`` on the instance when it has no more work:
    target tracking may then scale it in. ``on`` protects it again when new work lands. The instance
    finds its own id through IMDSv2 and its group through EC2 DescribeTags, and calls Auto
    Scaling through the VPC's autoscaling endpoint; its role may set protection on its own group
    only.
    """
    return f"""cat > {PROTECTION_HELPER} <<'GPUPOOL_PROTECTION'
#!/bin/bash
# gpupool: scale-in protection of this instance (on | off | status); see the gpupool README.
set -euo pipefail
token="$(curl -fsS -X PUT -H 'X-aws-ec2-metadata-token-ttl-seconds: 60' \\
  http://169.254.169.254/latest/api/token)"
id="$(curl -fsS -H "X-aws-ec2-metadata-token: $token" \\
  http://169.254.169.254/latest/meta-data/instance-id)"
group="$(aws ec2 describe-tags --region {region} --output text --query 'Tags[0].Value' \\
  --filters "Name=resource-id,Values=$id" "Name=key,Values=aws:autoscaling:groupName")"
case "${{1:-status}}" in
  on) aws autoscaling set-instance-protection --region {region} --instance-ids "$id" \\
        --auto-scaling-group-name "$group" --protected-from-scale-in ;;
  off) aws autoscaling set-instance-protection --region {region} --instance-ids "$id" \\
        --auto-scaling-group-name "$group" --no-protected-from-scale-in ;;
  status) aws autoscaling describe-auto-scaling-instances --region {region} \\
        --instance-ids "$id" --query 'AutoScalingInstances[0].ProtectedFromScaleIn' ;;
  *) echo "usage: $0 on|off|status" >&2; exit 2 ;;
esac
GPUPOOL_PROTECTION
chmod 0755 {PROTECTION_HELPER}
"""


def release_policy(owner: pulumi.Resource, name: str, role: aws.iam.Role,
                   group: aws.autoscaling.Group) -> aws.iam.RolePolicy:
    """The instances may set scale-in protection on their own group, and nothing more."""
    def document(arn: str) -> str:
        return json.dumps({
            "Version": "2012-10-17",
            "Statement": [{
                "Effect": "Allow",
                "Action": ["autoscaling:SetInstanceProtection"],
                "Resource": arn,
            }, {
                "Effect": "Allow",
                "Action": ["autoscaling:DescribeAutoScalingInstances"],
                "Resource": "*",  # a describe action: resource-level scoping is not offered
            }],
        })

    return aws.iam.RolePolicy(
        f"{name}-scale-in-protection",
        aws.iam.RolePolicyArgs(role=role.name, policy=group.arn.apply(document)),
        opts=pulumi.ResourceOptions(parent=owner),
    )

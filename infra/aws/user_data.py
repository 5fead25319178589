"""Boot script for pool instances: the CloudWatch agent publishing NVIDIA GPU metrics.

The pool scales on ``CWAgent/nvidia_smi_utilization_gpu`` with the single dimension
``AutoScalingGroupName``. The agent produces exactly that series when the group's name is appended
as a dimension and the metrics are aggregated over it. The agent resolves the group name through
EC2 DescribeTags, which is why the network carries an ``ec2`` interface endpoint.

Instances have no internet route: if the AMI lacks the agent, the package comes from the agent's
regional S3 bucket through the VPC's S3 gateway endpoint.
"""

from __future__ import annotations

import base64
import json
from typing import Any, Final

NAMESPACE: Final = "CWAgent"
UTILISATION_METRIC: Final = "nvidia_smi_utilization_gpu"
GROUP_DIMENSION: Final = "AutoScalingGroupName"
GPU_MEASUREMENTS: Final = (
    "utilization_gpu",
    "utilization_memory",
    "memory_used",
    "memory_total",
    "temperature_gpu",
    "power_draw",
)
AGENT_CONFIG_PATH: Final = "/opt/aws/amazon-cloudwatch-agent/etc/gpupool.json"
_CTL: Final = "/opt/aws/amazon-cloudwatch-agent/bin/amazon-cloudwatch-agent-ctl"


def agent_config(interval_seconds: int = 60) -> dict[str, Any]:
    """CloudWatch agent configuration: GPU metrics, one series per autoscaling group."""
    return {
        "agent": {"metrics_collection_interval": interval_seconds, "run_as_user": "root"},
        "metrics": {
            "namespace": NAMESPACE,
            "append_dimensions": {GROUP_DIMENSION: "${aws:AutoScalingGroupName}"},
            "aggregation_dimensions": [[GROUP_DIMENSION]],
            "metrics_collected": {
                "nvidia_gpu": {
                    "measurement": list(GPU_MEASUREMENTS),
                    "metrics_collection_interval": interval_seconds,
                }
            },
        },
    }


def boot_script(region: str, interval_seconds: int = 60, extra: str = "") -> str:
    """The cloud-init shell script (plain text); it fails loudly so a broken boot is visible.

    ``extra`` is appended after the agent starts (a proxy tier's discovery registration).
    """
    config = json.dumps(agent_config(interval_seconds), indent=2, sort_keys=True)
    bucket = f"https://amazoncloudwatch-agent-{region}.s3.{region}.amazonaws.com"
    return f"""#!/bin/bash
# gpupool: publish NVIDIA GPU metrics ({NAMESPACE}/{UTILISATION_METRIC} per {GROUP_DIMENSION}).
set -euo pipefail
if [ ! -x {_CTL} ]; then
  arch="$(dpkg --print-architecture)"
  curl -fsS --retry 5 -o /tmp/amazon-cloudwatch-agent.deb \\
    "{bucket}/ubuntu/${{arch}}/latest/amazon-cloudwatch-agent.deb"
  dpkg -i -E /tmp/amazon-cloudwatch-agent.deb
  rm -f /tmp/amazon-cloudwatch-agent.deb
fi
install -d -m 0755 "$(dirname {AGENT_CONFIG_PATH})"
cat > {AGENT_CONFIG_PATH} <<'GPUPOOL_AGENT_CONFIG'
{config}
GPUPOOL_AGENT_CONFIG
{_CTL} -a fetch-config -m ec2 -s -c file:{AGENT_CONFIG_PATH}
{extra}"""


def user_data(region: str, interval_seconds: int = 60, extra: str = "") -> str:
    """Launch templates take user data base64-encoded."""
    return base64.b64encode(boot_script(region, interval_seconds, extra).encode()).decode()


def agent_config_from_script(script: str) -> dict[str, Any]:
    """Read the agent configuration back out of a boot script (for tests and reports)."""
    start = script.index("<<'GPUPOOL_AGENT_CONFIG'\n") + len("<<'GPUPOOL_AGENT_CONFIG'\n")
    end = script.index("\nGPUPOOL_AGENT_CONFIG\n", start)
    return json.loads(script[start:end])


PROTECTION_HELPER: Final = "/usr/local/bin/gpupool-scale-in-protection"


def protection_script(region: str) -> str:
    """Installs ``gpupool-scale-in-protection on|off|status`` for training pools.

    Instances of a protected pool launch protected from scale-in, so target tracking never
    terminates one that runs a job. A job scheduler (or the job's last step) runs
    ``gpupool-scale-in-protection off`` on the instance when it has no more work: target
    tracking may then scale it in. ``on`` protects it again when a new job lands. The instance
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

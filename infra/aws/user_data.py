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

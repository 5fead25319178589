"""The offline answers that follow from the region's name, and the clearly marked placeholders.

Only two things about a region must be recorded (``fixtures/<region>.json``): its availability
zones and which zone offers which GPU type. Everything else the program asks is either derived
here, the way AWS itself defines it, or a placeholder that ``pulumi up`` replaces:

- derived: the partition and its DNS suffix (the partitions' region patterns, as in botocore's
  ``partitions.json``, the table the AWS SDKs resolve endpoints with), the S3 prefix list's
  *name* (``com.amazonaws.<region>.s3``), and which zone offers a type by zone *name* (the
  recorded offerings are by zone ID, which names the same physical zone in every account; the
  name → ID mapping is the account's own);
- placeholders, marked ``"placeholder"`` and listed in the plan: the AMI ids of AWS's public SSM
  parameters (``ami-offline-<region>-<image>``: no credentials here, and a ``latest`` parameter
  changes every release, so no recorded id would stay true), the DLAMI's root snapshot size, the
  S3 prefix list id, the account (123456789012) and the example VPC an existing-VPC stack names.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from typing import Any, Final

# The public parameters the program reads (infra.aws.gpu_host.AMI_PARAMETERS, the pools' DLAMI,
# and infra.aws.remote_gpu.CLIENT_AMI_PARAMETERS, the clients' Ubuntu); a test keeps them equal.
_DLAMI: Final = ("/aws/service/deeplearning/ami/{}/base-oss-nvidia-driver-gpu-ubuntu-22.04/"
                  "latest/ami-id")
_UBUNTU: Final = "/aws/service/canonical/ubuntu/server/22.04/stable/current/{}/hvm/ebs-gp2/ami-id"
AMI_PARAMETERS: Final[Mapping[str, tuple[str, str]]] = {  # parameter → (placeholder tail, arch)
    _DLAMI.format("x86_64"): ("dlami-x86-64", "x86_64"),
    _DLAMI.format("arm64"): ("dlami-arm64", "arm64"),
    _UBUNTU.format("amd64"): ("ubuntu-amd64", "x86_64"),
    _UBUNTU.format("arm64"): ("ubuntu-arm64", "arm64"),
}
DLAMI_NAME: Final = "Deep Learning Base OSS Nvidia Driver GPU AMI (Ubuntu 22.04) {}"
# The DLAMI's root device (Ubuntu AMIs boot from /dev/sda1) and a root snapshot size for the
# rootVolumeGib check; the real size is read from DescribeImages at pulumi up.
PLACEHOLDER_ROOT_GIB: Final = 75
PLACEHOLDER_ACCOUNT: Final = "123456789012"
EXAMPLE_VPC: Final = "vpc-0123456789abcdef0"  # what the existing-VPC example stacks name
RESOLVED_AT_UP: Final = "placeholder: resolved at pulumi up"
# partition → (region pattern, DNS suffix, reverse DNS prefix): botocore's partitions.json
# regionRegex and dnsSuffix (the table the AWS SDKs resolve endpoints with), copied because boto3
# is not a dependency of the plan; tests/infra/test_offline_regions.py holds them equal.
PARTITIONS: Final[Mapping[str, tuple[str, str, str]]] = {
    "aws": (r"^(us|eu|ap|sa|ca|me|af|il|mx)\-\w+\-\d+$", "amazonaws.com", "com.amazonaws"),
    "aws-cn": (r"^cn\-\w+\-\d+$", "amazonaws.com.cn", "cn.com.amazonaws"),
    "aws-us-gov": (r"^us\-gov\-\w+\-\d+$", "amazonaws.com", "com.amazonaws"),
}


class NotDerivable(Exception):
    """A region whose partition cannot be derived (not a region of any known partition)."""


def placeholder_ami(region: str, parameter: str) -> str:
    return f"ami-offline-{region}-{AMI_PARAMETERS[parameter][0]}"


def partition(region: str) -> dict[str, str]:
    """The partition record of ``aws.get_partition`` for ``region``, by the partitions' region
    patterns (AWS's own, as botocore's ``partitions.json`` gives them; a test keeps them equal)."""
    for name, (pattern, suffix, reverse) in PARTITIONS.items():
        if re.match(pattern, region):
            return {"partition": name, "dnsSuffix": suffix, "reverseDnsPrefix": reverse}
    raise NotDerivable(f"{region} is not a region of the {', '.join(PARTITIONS)} partitions "
                       "(their region patterns, botocore's partitions.json)")


def derived_tables(region: str) -> dict[str, Any]:
    """Every table of a fixture that is not recorded, for ``region``."""
    part = partition(region)
    parameters = {
        name: {"value": placeholder_ami(region, name), "type": "String", "version": 1,
               "placeholder": RESOLVED_AT_UP}
        for name in AMI_PARAMETERS
    }
    images = {
        placeholder_ami(region, name): {
            "name": DLAMI_NAME.format(arch), "architecture": arch, "imageOwnerAlias": "amazon",
            "rootDeviceName": "/dev/sda1",
            "blockDeviceMappings": [{"deviceName": "/dev/sda1", "ebs": {
                "volumeSize": PLACEHOLDER_ROOT_GIB, "volumeType": "gp3"}}],
            "placeholder": RESOLVED_AT_UP,
        }
        for name, (_, arch) in AMI_PARAMETERS.items() if "deeplearning" in name
    }
    s3 = f"{part['reverseDnsPrefix']}.{region}.s3"
    user = f"arn:{part['partition']}:iam::{PLACEHOLDER_ACCOUNT}:user/offline"
    return {
        "partition": part,
        "callerIdentity": {"accountId": PLACEHOLDER_ACCOUNT,
                           "arn": user,
                           "userId": "AIDAOFFLINEPLACEHOLDER", "placeholder": RESOLVED_AT_UP},
        "ssmParameters": parameters,
        "images": images,
        "prefixLists": {s3: {"id": f"pl-offline-{region}-s3", "cidrBlocks": [],
                             "placeholder": RESOLVED_AT_UP}},
        "vpcs": {EXAMPLE_VPC: {"cidrBlock": "10.20.0.0/16", "placeholder": "an example VPC; "
                               "describe yours under \"vpcs\" in an override fixture"}},
    }


def offerings_by_name(zones: Sequence[Mapping[str, Any]],
                      by_zone_id: Mapping[str, Sequence[str]]) -> dict[str, list[str]]:
    """Zone name → types, through the fixture's own name → ID mapping (the account's)."""
    return {z["name"]: sorted(by_zone_id[z["zoneId"]]) for z in zones
            if z.get("zoneId") in by_zone_id}

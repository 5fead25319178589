"""Record a region's offline fixture from the AWS APIs (``python -m infra.offline.record``).

Reads through boto3, so ``AWS_ENDPOINT_URL`` points it at a moto server (which carries AWS's own
availability-zone and instance-type-offering data) or, with credentials, at a real account. Values
the endpoint cannot supply (moto publishes neither the Deep Learning AMI parameters nor S3's
managed prefix list) are written as clearly marked examples, never passed off as recorded.

The bundled files were recorded against a moto server::

    .venv/bin/moto_server -H 127.0.0.1 -p 5055 &
    AWS_ENDPOINT_URL=http://127.0.0.1:5055 AWS_ACCESS_KEY_ID=testing \\
        AWS_SECRET_ACCESS_KEY=testing .venv/bin/python -m infra.offline.record --region us-east-1
"""

from __future__ import annotations

import argparse
import json
import os
from collections.abc import Sequence
from datetime import UTC, datetime
from importlib import resources
from pathlib import Path
from typing import Any, Final
from urllib.parse import urlsplit

from gpupool.catalog import load_catalog

# The Deep Learning Base OSS NVIDIA Driver GPU AMI parameters the pools read (see GpuPool).
_DLAMI: Final = "base-oss-nvidia-driver-gpu-ubuntu-22.04"
# ... and Canonical's Ubuntu 22.04 parameters, for the CPU clients of remote-GPU tiers.
_UBUNTU: Final = "/aws/service/canonical/ubuntu/server/22.04/stable/current/{}/hvm/ebs-gp2/ami-id"
AMI_PARAMETERS: Final = tuple(
    f"/aws/service/deeplearning/ami/{arch}/{_DLAMI}/latest/ami-id" for arch in ("x86_64", "arm64")
) + tuple(_UBUNTU.format(arch) for arch in ("amd64", "arm64"))
EXAMPLE_AMIS: Final = ("ami-0a1b2c3d4e5f60001", "ami-0a1b2c3d4e5f60002",
                       "ami-0a1b2c3d4e5f60003", "ami-0a1b2c3d4e5f60004")
EXAMPLE_VPC: Final = {"vpc-0123456789abcdef0": {"cidrBlock": "10.20.0.0/16", "example": True}}
_PARTITIONS: Final = {  # partition → (DNS suffix, reverse DNS prefix)
    "aws": ("amazonaws.com", "com.amazonaws"),
    "aws-us-gov": ("amazonaws.com", "com.amazonaws"),
    "aws-cn": ("amazonaws.com.cn", "cn.com.amazonaws"),
}
ABOUT: Final = (
    "Offline answers for the data-source calls of the gpupool Pulumi program in one region, used "
    "by `gpupool plan` (Pulumi mock runtime). Availability zones and instance type offerings are "
    "recorded from the endpoint named in `source`; entries marked \"example\": true (AMI ids "
    "and their images, the S3 prefix list id, the VPC) are examples, not real resources. A real "
    "`pulumi up` reads all of these from AWS."
)


def bundled_dir() -> Path:
    return Path(str(resources.files("infra.offline").joinpath("fixtures")))


def record(region: str, client_factory: Any = None) -> dict[str, Any]:
    """Query the endpoint and build the fixture document for ``region``."""
    import boto3
    from botocore.exceptions import ClientError

    session = boto3.session.Session(region_name=region)
    client = client_factory or session.client
    ec2, ssm, sts = client("ec2"), client("ssm"), client("sts")
    gpu_types = sorted(t.instance_type for t in load_catalog())

    zones = [
        {
            "name": z["ZoneName"],
            "zoneId": z["ZoneId"],
            "state": z.get("State", "available"),
            "optInStatus": z.get("OptInStatus", "opt-in-not-required"),
            "zoneType": z.get("ZoneType", "availability-zone"),
            "groupName": z.get("GroupName", region),
        }
        for z in ec2.describe_availability_zones(AllAvailabilityZones=True)["AvailabilityZones"]
    ]
    offerings: dict[str, set[str]] = {}
    pages = ec2.get_paginator("describe_instance_type_offerings").paginate(
        LocationType="availability-zone",
        Filters=[{"Name": "instance-type", "Values": gpu_types}],
    )
    for page in pages:
        for o in page["InstanceTypeOfferings"]:
            offerings.setdefault(o["Location"], set()).add(o["InstanceType"])

    identity = sts.get_caller_identity()
    partition = session.get_partition_for_region(region)
    dns_suffix, reverse = _PARTITIONS.get(partition, _PARTITIONS["aws"])

    parameters: dict[str, Any] = {}
    for name, example in zip(AMI_PARAMETERS, EXAMPLE_AMIS, strict=True):
        try:
            p = ssm.get_parameter(Name=name)["Parameter"]
            parameters[name] = {"value": p["Value"], "type": p["Type"], "version": p["Version"]}
        except ClientError:
            parameters[name] = {"value": example, "type": "String", "version": 1, "example": True}

    images = record_images(ec2, [parameters[n]["value"] for n in AMI_PARAMETERS[:2]],
                           ("x86_64", "arm64"))

    s3_name = f"{reverse}.{region}.s3"
    found = ec2.describe_prefix_lists(Filters=[{"Name": "prefix-list-name", "Values": [s3_name]}])
    # A real S3 prefix list always carries CIDRs; moto's has none and a random id per start.
    lists = [pl for pl in found.get("PrefixLists", []) if pl.get("Cidrs")]
    prefix_lists = {
        s3_name: (
            {"id": lists[0]["PrefixListId"], "cidrBlocks": sorted(lists[0]["Cidrs"])}
            if lists
            else {"id": "pl-0a1b2c3d4e5f6a7b8", "cidrBlocks": [], "example": True}
        )
    }
    endpoint = os.environ.get("AWS_ENDPOINT_URL")
    return {
        "about": ABOUT,
        "region": region,
        "source": {
            "endpoint": _describe_endpoint(endpoint),
            "calls": [
                "ec2:DescribeAvailabilityZones",
                "ec2:DescribeInstanceTypeOfferings (GPU types of the gpupool catalog)",
                "sts:GetCallerIdentity",
                "ssm:GetParameter",
                "ec2:DescribeImages (the DLAMI ids of the parameters)",
                "ec2:DescribePrefixLists",
            ],
            "recordedBy": "python -m infra.offline.record",
        },
        "recordedAt": datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ"),
        "partition": {
            "partition": partition,
            "dnsSuffix": dns_suffix,
            "reverseDnsPrefix": reverse,
        },
        "callerIdentity": {
            "accountId": identity["Account"],
            "arn": identity["Arn"],
            "userId": identity["UserId"],
        },
        "availabilityZones": zones,
        "instanceTypeOfferings": {z: sorted(ts) for z, ts in sorted(offerings.items())},
        "ssmParameters": parameters,
        "images": images,
        "prefixLists": prefix_lists,
        "vpcs": dict(EXAMPLE_VPC),
    }


# What the pools read from a DLAMI (root device and its snapshot size), for the example ids:
# Ubuntu AMIs boot from /dev/sda1; the size is an example, never passed off as recorded.
EXAMPLE_ROOT_GIB: Final = 75


def record_images(ec2: Any, image_ids: list[str], archs: tuple[str, ...]) -> dict[str, Any]:
    """DescribeImages for the pools' images; ids the endpoint does not know become examples."""
    from botocore.exceptions import ClientError

    out: dict[str, Any] = {}
    for image_id, arch in zip(image_ids, archs, strict=True):
        try:
            found = ec2.describe_images(ImageIds=[image_id])["Images"]
        except ClientError:
            found = []
        if found:
            i = found[0]
            out[image_id] = {
                "name": i.get("Name", ""), "architecture": i.get("Architecture"),
                "ownerId": i.get("OwnerId"), "imageOwnerAlias": i.get("ImageOwnerAlias"),
                "creationDate": i.get("CreationDate"),
                "rootDeviceName": i.get("RootDeviceName"),
                "blockDeviceMappings": [
                    {"deviceName": m["DeviceName"],
                     "ebs": {"volumeSize": m["Ebs"]["VolumeSize"],
                             "volumeType": m["Ebs"].get("VolumeType", "")}}
                    for m in i.get("BlockDeviceMappings", []) if "Ebs" in m
                ],
            }
        else:
            out[image_id] = {
                "name": f"Deep Learning Base OSS Nvidia Driver GPU AMI (Ubuntu 22.04) {arch}",
                "architecture": arch, "imageOwnerAlias": "amazon",
                "rootDeviceName": "/dev/sda1",
                "blockDeviceMappings": [{"deviceName": "/dev/sda1", "ebs": {
                    "volumeSize": EXAMPLE_ROOT_GIB, "volumeType": "gp3"}}],
                "example": True,
            }
    return out


def _describe_endpoint(url: str | None) -> str:
    if not url:
        return "AWS (the credentials' account)"
    host = urlsplit(url).hostname or url
    if host in {"127.0.0.1", "localhost"}:
        return "a local moto server, which carries AWS's zone and instance-type-offering data"
    return host


def write(doc: dict[str, Any], output_dir: Path) -> Path:
    output_dir.mkdir(parents=True, exist_ok=True)
    path = output_dir / f"{doc['region']}.json"
    path.write_text(json.dumps(doc, indent=2, sort_keys=False) + "\n")
    return path


def main(argv: Sequence[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m infra.offline.record", description=__doc__)
    p.add_argument("--region", action="append", required=True, help="repeat for several")
    p.add_argument("--output-dir", type=Path, default=None, help="default: the bundled fixtures")
    args = p.parse_args(argv)
    for region in args.region:
        path = write(record(region), args.output_dir or bundled_dir())
        print(f"wrote {path}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

"""Record what the offline plan cannot derive about a region (``python -m infra.offline.record``).

Two answers must be recorded per region (everything else is derived or a marked placeholder,
``infra.offline.derived``): the availability zones (names, zone IDs, types, opt-in status) and
which catalog GPU type each zone ID offers. Reads through boto3, so ``AWS_ENDPOINT_URL`` points it
at a moto server (which carries AWS's zone table and AWS's zone-ID offerings) or, with
credentials, at a real account (whose zone names it then records). Offerings are recorded by zone
ID, which names the same physical zone in every account; the plan derives them by zone name
through the recorded name → ID mapping, so a fixture never pairs one account's names with
another's offerings.

The bundled files, one per region with recorded prices, were recorded against a moto server::

    .venv/bin/moto_server -H 127.0.0.1 -p 5055 &
    AWS_ENDPOINT_URL=http://127.0.0.1:5055 AWS_ACCESS_KEY_ID=testing \\
        AWS_SECRET_ACCESS_KEY=testing .venv/bin/python -m infra.offline.record --priced
"""

from __future__ import annotations

import argparse
import json
import os
from collections.abc import Sequence
from datetime import UTC, datetime
from importlib import metadata, resources
from pathlib import Path
from typing import Any, Final
from urllib.parse import urlsplit

from gpupool.catalog import load_catalog
from gpupool.catalog.prices import load_price_table

ABOUT: Final = (
    "What the offline plan (`gpupool plan`, Pulumi mock runtime) cannot derive about one region: "
    "its availability zones and the catalog GPU types each zone ID offers, recorded from the "
    "endpoint named in `source`. Offerings by zone name, the partition and every placeholder "
    "(AMI ids, account, S3 prefix list id) are derived by infra/offline/derived.py. A real "
    "`pulumi up` asks AWS for all of these."
)
CALLS: Final = (
    "ec2:DescribeAvailabilityZones (AllAvailabilityZones)",
    "ec2:DescribeInstanceTypeOfferings (LocationType availability-zone-id, the catalog's types)",
)


def bundled_dir() -> Path:
    return Path(str(resources.files("infra.offline").joinpath("fixtures")))


def priced_regions() -> list[str]:
    """The regions with recorded prices: the ones the bundled fixtures cover."""
    return sorted(load_price_table().regions)


def record(region: str, botocore_session: Any = None) -> dict[str, Any]:
    """Query the endpoint and build the fixture document for ``region``; pass one botocore
    session for many regions (it loads EC2's service model once, not once a region)."""
    import boto3

    session = boto3.session.Session(region_name=region, botocore_session=botocore_session)
    ec2 = session.client("ec2")
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
    offered: dict[str, set[str]] = {}
    pages = ec2.get_paginator("describe_instance_type_offerings").paginate(
        LocationType="availability-zone-id",
        Filters=[{"Name": "instance-type", "Values": gpu_types}],
    )
    for page in pages:
        for o in page["InstanceTypeOfferings"]:
            offered.setdefault(o["Location"], set()).add(o["InstanceType"])
    listed = {z["zoneId"] for z in zones}
    source: dict[str, Any] = {"endpoint": _describe_endpoint(os.environ.get("AWS_ENDPOINT_URL")),
                              "calls": list(CALLS), "recordedBy": "python -m infra.offline.record"}
    unlisted = sorted(set(offered) - listed)
    if unlisted:  # offerings of a zone DescribeAvailabilityZones does not list: not plannable
        source["offeringsOfUnlistedZoneIds"] = unlisted
    return {
        "about": ABOUT,
        "region": region,
        "source": source,
        "recordedAt": datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ"),
        "availabilityZones": sorted(zones, key=lambda z: z["name"]),
        "instanceTypeOfferingsByZoneId": {
            zone: sorted(types) for zone, types in sorted(offered.items()) if zone in listed
        },
    }


def _describe_endpoint(url: str | None) -> str:
    if not url:
        return "AWS (the credentials' account: its zone names)"
    host = urlsplit(url).hostname or url
    if host in {"127.0.0.1", "localhost"}:
        try:
            version = f" {metadata.version('moto')}"
        except metadata.PackageNotFoundError:
            version = ""
        return (f"a local moto{version} server: AWS's zone table and zone-ID offerings as moto "
                "carries them (moto/ec2/models/availability_zones_and_regions.py, "
                "moto/ec2/resources/instance_type_offerings/availability-zone-id/)")
    return host


def write(doc: dict[str, Any], output_dir: Path) -> Path:
    output_dir.mkdir(parents=True, exist_ok=True)
    path = output_dir / f"{doc['region']}.json"
    path.write_text(json.dumps(doc, indent=1) + "\n")
    return path


def main(argv: Sequence[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m infra.offline.record", description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--region", action="append", default=[], help="repeat for several")
    p.add_argument("--priced", action="store_true",
                   help="every region with recorded prices (the bundled set)")
    p.add_argument("--output-dir", type=Path, default=None, help="default: the bundled fixtures")
    args = p.parse_args(argv)
    regions = [*args.region, *(priced_regions() if args.priced else [])]
    if not regions:
        p.error("name a --region or give --priced")
    import botocore.session

    shared = botocore.session.get_session()
    for region in dict.fromkeys(regions):
        path = write(record(region, shared), args.output_dir or bundled_dir())
        print(f"wrote {path}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

"""Which region offers which catalog GPU type: recorded from EC2, read by ``gpupool validate``.

``data/offerings.json`` is written by ``python -m gpupool.catalog.record_offerings`` from EC2
DescribeRegions and DescribeInstanceTypeOfferings (``LocationType=region``) through boto3, so
``AWS_ENDPOINT_URL`` points it at a moto server (which carries AWS's offering data; the bundled
file was recorded that way) or, with credentials, at real EC2 (the account's enabled regions).
A region without a record was not checked: validation says so rather than guessing. A region
where the endpoint offers no instance type at all (moto has no data for the newest regions) is
skipped for the same reason; an empty list means the region offers none of the catalog's GPUs.

It is a file of its own, not part of ``catalog refresh``: asking every region takes tens of
seconds against moto, and the catalog's rows do not depend on it.
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Sequence
from functools import cache

from gpupool.errors import InputError

TYPE_CHECKING = False  # typing's, without importing typing (not on a check's path)
if TYPE_CHECKING:
    from pathlib import Path
    from typing import Any, Final

OFFERINGS_FILE: Final = "offerings.json"
_COMMERCIAL: Final = r"^(?!us-gov-|cn-)[a-z]{2}-[a-z]+-\d$"  # compiled when a refresh runs


def bundled_path() -> Path:
    from pathlib import Path

    return Path(_bundled())


def _bundled() -> str:
    return os.path.join(os.path.dirname(__file__), "data", OFFERINGS_FILE)


@cache
def load_offerings() -> dict[str, Any]:
    """The recorded offerings: ``{"source", "recorded_at", "regions": {region: [types]}}``."""
    with open(_bundled()) as f:  # (as Path.read_text: no pathlib on a check's start-up)
        return dict(json.loads(f.read()))


def record(types: Sequence[str], regions: Sequence[str] | None = None,
           region: str = "us-east-1") -> dict[str, Any]:
    """Ask EC2 which of ``types`` each region offers (all enabled commercial regions when
    ``regions`` is None). A refused region is left out: no record means "not checked"."""
    import boto3
    from botocore.config import Config
    from botocore.exceptions import BotoCoreError, ClientError, NoCredentialsError

    config = Config(retries={"max_attempts": 2, "mode": "standard"}, connect_timeout=5)
    session = boto3.session.Session()
    try:
        if regions is None:
            client = session.client("ec2", region_name=region, config=config)
            regions = sorted(r["RegionName"] for r in client.describe_regions()["Regions"]
                             if re.match(_COMMERCIAL, r["RegionName"]))
        out: dict[str, list[str]] = {}
        skipped: list[str] = []
        for name in regions:
            ec2 = session.client("ec2", region_name=name, config=config)
            found: set[str] = set()
            try:
                for page in ec2.get_paginator("describe_instance_type_offerings").paginate(
                    LocationType="region",
                    Filters=[{"Name": "instance-type", "Values": list(types)}],
                ):
                    found.update(o["InstanceType"] for o in page.get("InstanceTypeOfferings", []))
                if not found and not ec2.describe_instance_type_offerings(
                        LocationType="region", MaxResults=5)["InstanceTypeOfferings"]:
                    skipped.append(name)  # the endpoint knows no type at all there: no data
                    continue
            except ClientError:
                skipped.append(name)
                continue
            out[name] = sorted(found)
    except NoCredentialsError:
        raise InputError("AWS credentials: expected credentials for "
                         "DescribeInstanceTypeOfferings") from None
    except BotoCoreError as e:
        raise InputError(f"expected a reachable EC2 endpoint ({e})") from None
    from datetime import UTC, datetime  # (a check reads the offerings, never records them)

    endpoint = os.environ.get("AWS_ENDPOINT_URL", "")
    return {
        "about": ("Region-level EC2 instance type offerings of the catalog's GPU types. A region "
                  "missing here was not checked; an empty list means it offers none of them."),
        "source": ("EC2 DescribeRegions + DescribeInstanceTypeOfferings (LocationType=region) "
                   "via " + ("a moto server, which carries AWS's offering data"
                             if endpoint.startswith(("http://127.0.0.1", "http://localhost"))
                             else "the AWS EC2 API")),
        "recorded_at": datetime.now(UTC).strftime("%Y-%m-%d"),
        "skipped": skipped,
        "regions": dict(sorted(out.items())),
    }

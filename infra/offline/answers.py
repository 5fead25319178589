"""The data-source calls of the program, answered from a region's :class:`Fixture`.

Each supported call is evaluated against the fixture the way the API would (filters included);
any other call, argument or filter is an :class:`UnansweredCall` naming what was asked, so the
plan fails loudly rather than proceeding on an empty answer. :func:`placeholder_notes` says which
answers are placeholders that ``pulumi up`` resolves (the plan lists them).
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Mapping
from typing import Any, Final

from infra.offline.fixtures import FIXTURES_ENV, Fixture, UnansweredCall

# --------------------------------------------------------------------------- call answering


def answer(fixture: Fixture, token: str, args: Mapping[str, Any]) -> dict[str, Any]:
    """The result the provider would return for ``token`` called with ``args`` (camelCase)."""
    handler = _HANDLERS.get(token)
    args = {k: v for k, v in args.items() if v is not None}
    if handler is None:
        raise UnansweredCall(
            f"no offline answer for {token}{_show(args)}; the fixtures answer "
            f"{', '.join(sorted(_HANDLERS))}"
        )
    region = args.pop("region", fixture.region)
    if region != fixture.region:
        raise UnansweredCall(f"{token}: asked about region {region}, fixture is {fixture.origin}")
    return handler(fixture, token, args)


def _show(args: Mapping[str, Any]) -> str:
    return f" with {json.dumps(args, sort_keys=True)}" if args else ""


def _unsupported(fixture: Fixture, token: str, args: Mapping[str, Any], allowed: set[str]) -> None:
    extra = sorted(set(args) - allowed)
    if extra:
        raise UnansweredCall(
            f"{token}: the offline fixture ({fixture.origin}) cannot evaluate argument(s) "
            f"{', '.join(extra)}{_show(args)}"
        )


def _filters(
    fixture: Fixture, token: str, args: Mapping[str, Any], fields: Mapping[str, str]
) -> list[tuple[str, set[str]]]:
    out = []
    for f in args.get("filters", []):
        name, values = f.get("name"), f.get("values", [])
        if name not in fields:
            raise UnansweredCall(
                f"{token}: filter {name!r} is not evaluated offline ({fixture.origin}); "
                f"supported: {', '.join(sorted(fields))}"
            )
        out.append((fields[name], set(values)))
    return out


def _availability_zones(fixture: Fixture, token: str, args: Mapping[str, Any]) -> dict[str, Any]:
    allowed = {"state", "filters", "allAvailabilityZones", "excludeNames", "excludeZoneIds"}
    _unsupported(fixture, token, args, allowed)
    fields = {
        "opt-in-status": "optInStatus",
        "zone-type": "zoneType",
        "zone-name": "name",
        "zone-id": "zoneId",
        "state": "state",
        "group-name": "groupName",
    }
    filters = _filters(fixture, token, args, fields)
    zones = []
    for z in fixture.data.get("availabilityZones", []):
        if not args.get("allAvailabilityZones") and z.get("optInStatus") == "not-opted-in":
            continue
        if "state" in args and z.get("state") != args["state"]:
            continue
        if z.get("name") in args.get("excludeNames", []):
            continue
        if z.get("zoneId") in args.get("excludeZoneIds", []):
            continue
        if all(z.get(key) in values for key, values in filters):
            zones.append(z)
    if not fixture.data.get("availabilityZones"):
        raise UnansweredCall(f"{token}: {fixture.origin} records no availability zones")
    return {
        "id": fixture.region,
        "names": [z["name"] for z in zones],
        "zoneIds": [z["zoneId"] for z in zones],
        "groupNames": sorted({z.get("groupName", fixture.region) for z in zones}),
        **({"state": args["state"]} if "state" in args else {}),
    }


def _instance_type_offerings(
    fixture: Fixture, token: str, args: Mapping[str, Any]
) -> dict[str, Any]:
    _unsupported(fixture, token, args, {"filters", "locationType"})
    location_type = args.get("locationType", "region")
    if location_type not in {"availability-zone", "region"}:
        raise UnansweredCall(f"{token}: locationType {location_type!r} is not recorded offline")
    filters = _filters(fixture, token, args, {"instance-type": "type", "location": "location"})
    offers = fixture.table("instanceTypeOfferings")
    if not offers:
        raise UnansweredCall(f"{token}: {fixture.origin} records no instance type offerings")
    pairs = sorted({(zone, t) for zone, types in offers.items() for t in types})
    if location_type == "region":
        pairs = sorted({(fixture.region, t) for _, t in pairs})
    rows = [
        {"location": loc, "type": t}
        for loc, t in pairs
        if all(
            (t if key == "type" else loc) in values for key, values in filters
        )
    ]
    return {
        "id": fixture.region,
        "locations": [r["location"] for r in rows],
        "instanceTypes": [r["type"] for r in rows],
        "locationTypes": [location_type] * len(rows),
    }


def _parameter(fixture: Fixture, token: str, args: Mapping[str, Any]) -> dict[str, Any]:
    _unsupported(fixture, token, args, {"name", "withDecryption"})
    name = str(args.get("name", ""))
    record = fixture.table("ssmParameters").get(name)
    if record is None:
        raise UnansweredCall(f"{token}: {fixture.origin} has no SSM parameter {name!r}")
    partition = fixture.record("partition")["partition"]
    return {
        "id": name,
        "name": name,
        "arn": f"arn:{partition}:ssm:{fixture.region}::parameter{name}",
        "type": record.get("type", "String"),
        "value": record["value"],
        "insecureValue": record["value"],
        "version": record.get("version", 1),
        "withDecryption": args.get("withDecryption", True),
    }


def _partition(fixture: Fixture, token: str, args: Mapping[str, Any]) -> dict[str, Any]:
    _unsupported(fixture, token, args, set())
    p = fixture.record("partition")
    return {"id": p["partition"], "partition": p["partition"], "dnsSuffix": p["dnsSuffix"],
            "reverseDnsPrefix": p["reverseDnsPrefix"]}


def _caller_identity(fixture: Fixture, token: str, args: Mapping[str, Any]) -> dict[str, Any]:
    _unsupported(fixture, token, args, set())
    c = fixture.record("callerIdentity")
    return {"id": c["accountId"], "accountId": c["accountId"], "arn": c["arn"],
            "userId": c["userId"]}


def _region(fixture: Fixture, token: str, args: Mapping[str, Any]) -> dict[str, Any]:
    _unsupported(fixture, token, args, {"name", "id", "endpoint"})
    asked = args.get("name") or args.get("id")
    if asked not in (None, fixture.region):
        raise UnansweredCall(f"{token}: asked about {asked}, fixture is {fixture.origin}")
    suffix = fixture.record("partition").get("dnsSuffix", "amazonaws.com")
    return {
        "id": fixture.region,
        "name": fixture.region,
        "region": fixture.region,
        "endpoint": f"ec2.{fixture.region}.{suffix}",
    }


def _prefix_list(fixture: Fixture, token: str, args: Mapping[str, Any]) -> dict[str, Any]:
    _unsupported(fixture, token, args, {"name", "prefixListId"})
    table = fixture.table("prefixLists")
    name = args.get("name")
    if name is None and "prefixListId" in args:
        name = next((n for n, r in table.items() if r.get("id") == args["prefixListId"]), None)
    record = table.get(str(name)) if name is not None else None
    if record is None:
        raise UnansweredCall(f"{token}: {fixture.origin} has no prefix list{_show(args)}")
    return {
        "id": record["id"],
        "prefixListId": record["id"],
        "name": name,
        "cidrBlocks": list(record.get("cidrBlocks", [])),
    }


def _vpc(fixture: Fixture, token: str, args: Mapping[str, Any]) -> dict[str, Any]:
    _unsupported(fixture, token, args, {"id"})
    vpc_id = str(args.get("id", ""))
    record = fixture.table("vpcs").get(vpc_id)
    if record is None:
        raise UnansweredCall(
            f"{token}: {fixture.origin} knows no VPC {vpc_id!r}; describe it under \"vpcs\" "
            f"in {fixture.region}.json in ${FIXTURES_ENV} to plan it offline"
        )
    account = fixture.record("callerIdentity")["accountId"]
    partition = fixture.record("partition")["partition"]
    return {
        "id": vpc_id,
        "arn": f"arn:{partition}:ec2:{fixture.region}:{account}:vpc/{vpc_id}",
        "cidrBlock": record["cidrBlock"],
        "default": False,
        "enableDnsHostnames": True,
        "enableDnsSupport": True,
        "ownerId": account,
        "state": "available",
    }


def _ami(fixture: Fixture, token: str, args: Mapping[str, Any]) -> dict[str, Any]:
    """DescribeImages as ``aws.ec2.get_ami`` calls it: exact filters over the recorded images."""
    _unsupported(fixture, token, args, {"filters", "owners", "mostRecent", "includeDeprecated"})
    fields = {"image-id": "imageId", "name": "name", "architecture": "architecture"}
    filters = _filters(fixture, token, args, fields)
    if not any(key in ("imageId", "name") for key, _ in filters):
        raise UnansweredCall(
            f"{token}: only images named by image-id or name can be answered from "
            f"{fixture.origin}{_show(args)}; AWS would search every image of the region")
    owners = set(args.get("owners") or [])
    found = []
    for image_id, record in fixture.table("images").items():
        values = {**record, "imageId": image_id}
        if owners and not owners & {record.get("ownerId"), record.get("imageOwnerAlias")}:
            continue
        if all(values.get(key) in wanted for key, wanted in filters):
            found.append(values)
    if not found:
        raise UnansweredCall(
            f"{token}: {fixture.origin} records no image{_show(args)}; describe it under "
            f"\"images\" in {fixture.region}.json in ${FIXTURES_ENV} to plan it offline")
    if len(found) > 1 and not args.get("mostRecent"):
        raise UnansweredCall(f"{token}: several images match{_show(args)} (AWS refuses this)")
    image = max(found, key=lambda r: str(r.get("creationDate", "")))
    return {
        "id": image["imageId"],
        "imageId": image["imageId"],
        "name": image.get("name", ""),
        "architecture": image.get("architecture"),
        "ownerId": image.get("ownerId"),
        "imageOwnerAlias": image.get("imageOwnerAlias"),
        "rootDeviceName": image.get("rootDeviceName"),
        "rootDeviceType": image.get("rootDeviceType", "ebs"),
        "blockDeviceMappings": [
            {"deviceName": m.get("deviceName"),
             # a map, not an object, in the provider's schema: Terraform's snake_case keys
             "ebs": {_snake(k): str(v) for k, v in m.get("ebs", {}).items()},
             "noDevice": "", "virtualName": m.get("virtualName", "")}
            for m in image.get("blockDeviceMappings", [])
        ],
        "state": image.get("state", "available"),
    }


def _snake(key: str) -> str:
    return re.sub(r"(?<=[a-z0-9])([A-Z])", r"_\1", key).lower()


_Handler = Callable[[Fixture, str, Mapping[str, Any]], dict[str, Any]]
_HANDLERS: Final[dict[str, _Handler]] = {
    "aws:index/getAvailabilityZones:getAvailabilityZones": _availability_zones,
    "aws:ec2/getInstanceTypeOfferings:getInstanceTypeOfferings": _instance_type_offerings,
    "aws:ssm/getParameter:getParameter": _parameter,
    "aws:index/getPartition:getPartition": _partition,
    "aws:index/getCallerIdentity:getCallerIdentity": _caller_identity,
    "aws:index/getRegion:getRegion": _region,
    "aws:ec2/getPrefixList:getPrefixList": _prefix_list,
    "aws:ec2/getVpc:getVpc": _vpc,
    "aws:ec2/getAmi:getAmi": _ami,
}


def placeholder_notes(fixture: Fixture, token: str, args: Mapping[str, Any],
                      result: Mapping[str, Any]) -> list[str]:
    """What in an answer is a marked placeholder, one line each, for the plan to list."""
    region = fixture.region
    if token == "aws:ssm/getParameter:getParameter":
        record = fixture.table("ssmParameters").get(str(result.get("name")), {})
        if record.get("placeholder"):
            return [f"{result['value']}: stands for SSM parameter {result['name']} in {region}, "
                    "resolved at pulumi up"]
    elif token == "aws:ec2/getAmi:getAmi":
        record = fixture.table("images").get(str(result.get("imageId")), {})
        if record.get("placeholder"):
            sizes = [m["ebs"].get("volume_size") for m in result.get("blockDeviceMappings", [])]
            return [f"{result['imageId']}: root device {result.get('rootDeviceName')} and "
                    f"{'/'.join(map(str, sizes))} GiB root snapshot stand for EC2 DescribeImages "
                    "at pulumi up"]
    elif token == "aws:ec2/getPrefixList:getPrefixList":
        record = fixture.table("prefixLists").get(str(result.get("name")), {})
        if record.get("placeholder"):
            return [f"{result['id']}: stands for the id of prefix list {result['name']}, "
                    "resolved at pulumi up"]
    elif token == "aws:index/getCallerIdentity:getCallerIdentity":
        if fixture.record("callerIdentity").get("placeholder"):
            return [f"account {result['accountId']}: stands for the credentials' account at "
                    "pulumi up"]
    elif token == "aws:ec2/getVpc:getVpc" and fixture.table("vpcs").get(
            str(result.get("id")), {}).get("placeholder"):
        return [f"{result['id']}: an example VPC ({result['cidrBlock']}); pulumi up reads "
                    "the real one"]
    return []

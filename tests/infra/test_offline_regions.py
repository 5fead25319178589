"""Issue 16 item 21: the offline plan answers every region with recorded prices.

What must be recorded per region (zones, zone-ID offerings) is bundled for each priced region;
what follows from the region's name is derived; the AMI ids are per-region placeholders that the
plan lists as resolved at ``pulumi up``. A region that is not priced is one line on aws:region.
"""

from __future__ import annotations

import json
import textwrap
from collections.abc import Callable
from pathlib import Path

import boto3
import pytest

from gpupool.catalog import load_catalog
from gpupool.catalog.prices import load_price_table
from gpupool.cli import main
from gpupool.config import load_stack
from gpupool.config.gpus import resolve_gpu
from infra.aws.gpu_host import AMI_PARAMETERS as POOL_AMIS
from infra.aws.remote_gpu import CLIENT_AMI_PARAMETERS
from infra.offline import OfflinePlan, load_fixture, run_offline
from infra.offline.derived import (
    AMI_PARAMETERS,
    PARTITIONS,
    NotDerivable,
    partition,
    placeholder_ami,
)
from infra.offline.fixtures import RECORDED, bundled_regions

from .conftest import EXISTING_VPC_STACK

PRICED = sorted(load_price_table().regions)
SUBNET = "aws:ec2/subnet:Subnet"
LT = "aws:ec2/launchTemplate:LaunchTemplate"
# GPU models in the order a region's test pool takes the first one offered in two zones
PREFERENCE = ("T4", "A10G", "L4", "L40S", "T4g", "A100", "H100", "H200", "B200", "B300")


def stack_text(region: str, gpu: str, arch: str, az_count: int) -> str:
    return textwrap.dedent(f"""\
        config:
          aws:region: {region}
          gpupool:environment: dev
          gpupool:team: ml
          gpupool:costCenter: cc-1
          gpupool:network: {{createVpc: true, azCount: {az_count}}}
          gpupool:pools:
            - {{name: gpu, gpu: {gpu}, arch: {arch}, minSize: 0, maxSize: 2}}
        """)


def pool_for(region: str) -> tuple[str, str, str, list[str]]:
    """(GPU, arch, instance type, zones offering it in AWS's order) for a region's test pool."""
    fx = load_fixture(region)
    offers = fx.table("instanceTypeOfferings")
    zones = [z["name"] for z in fx.data["availabilityZones"]]
    catalog = load_catalog()
    for gpu in PREFERENCE:
        for arch in ("x86_64", "arm64"):
            try:
                itype = resolve_gpu(gpu, arch, catalog).instance_type
            except ValueError:
                continue
            offering = [z for z in zones if itype in offers.get(z, [])]
            if len(offering) >= 2:
                return gpu, arch, itype, offering
    raise AssertionError(f"{region}: no catalog GPU in two zones")


def plan_region(region: str, tmp_path: Path) -> tuple[OfflinePlan, str, list[str]]:
    gpu, arch, itype, offering = pool_for(region)
    path = tmp_path / f"Pulumi.{region}.yaml"
    path.write_text(stack_text(region, gpu, arch, 2))
    return run_offline(load_stack(str(path))), itype, offering


def test_the_bundled_regions_are_the_priced_regions() -> None:
    assert bundled_regions() == PRICED
    assert len(PRICED) == 28 and {"eu-central-1", "ap-northeast-1"} <= set(PRICED)


@pytest.mark.parametrize("region", PRICED)
def test_every_priced_region_plans_in_zones_that_offer_its_type(region: str,
                                                                tmp_path: Path) -> None:
    plan, itype, offering = plan_region(region, tmp_path)
    assert plan.region == region
    zones = [r.inputs["availabilityZone"] for r in plan.of_type(SUBNET)]
    # the first two zones, in AWS's order, that offer the type: a zone without it is skipped
    assert sorted(set(zones)) == sorted(offering[:2])
    (lt,) = [r for r in plan.of_type(LT) if r.inputs.get("instanceType") == itype]
    arch = "arm64" if itype.startswith("g5g") else "x86_64"
    assert lt.inputs["imageId"] == placeholder_ami(region, POOL_AMIS[arch])
    assert f"{lt.inputs['imageId']}: stands for SSM parameter {POOL_AMIS[arch]} in {region}, " \
           "resolved at pulumi up" in plan.placeholders
    assert plan.envelope.price_region == region


def test_some_regions_skip_a_zone_that_does_not_offer_the_type() -> None:
    """The parametrised plans exercise the zone choice, not only the first zones."""
    skipped = []
    for region in PRICED:
        zones = [z["name"] for z in load_fixture(region).data["availabilityZones"]]
        offering = pool_for(region)[3]
        if offering[:2] != zones[:2]:
            skipped.append(region)
    assert len(skipped) >= 5, skipped


@pytest.mark.parametrize("region", ["eu-central-1", "ap-northeast-1"])
def test_gpupool_plan_runs_there_and_lists_its_placeholders(
    region: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    gpu, arch, _, _ = pool_for(region)
    path = tmp_path / f"Pulumi.{region}.yaml"
    path.write_text(stack_text(region, gpu, arch, 2))
    assert main(["plan", str(path), "--format", "json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc["region"] == region
    assert doc["offline"]["fixture"] == f"infra/offline/fixtures/{region}.json"
    notes = doc["offline"]["placeholders"]
    assert f"ami-offline-{region}-dlami-x86-64: root device /dev/sda1 and 75 GiB root " \
           "snapshot stand for EC2 DescribeImages at pulumi up" in notes
    assert main(["plan", str(path)]) == 0
    text = " ".join(capsys.readouterr().out.split())
    assert "Placeholders (data-source answers resolved at pulumi up):" in text
    assert f"ami-offline-{region}-dlami-x86-64: stands for SSM parameter " \
           f"{POOL_AMIS['x86_64']} in {region}, resolved at pulumi up" in text


def test_an_existing_vpc_plan_lists_the_prefix_list_and_vpc_placeholders(
    write_stack: Callable[[str, str], Path]
) -> None:
    plan = run_offline(load_stack(str(write_stack("vpc", EXISTING_VPC_STACK))))
    assert "pl-offline-us-east-1-s3: stands for the id of prefix list " \
           "com.amazonaws.us-east-1.s3, resolved at pulumi up" in plan.placeholders
    assert "vpc-0123456789abcdef0: an example VPC (10.20.0.0/16); pulumi up reads the real one" \
        in plan.placeholders


@pytest.mark.parametrize("region", ["ap-east-2", "mx-central-1", "us-gov-west-1"])
def test_a_region_without_prices_is_one_line_on_aws_region(
    region: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "Pulumi.far.yaml"
    path.write_text(stack_text(region, "T4", "x86_64", 1))
    assert main(["plan", str(path)]) == 2
    out, err = capsys.readouterr()
    assert out == ""
    (line,) = err.splitlines()
    assert line.startswith(f"gpupool plan: {path}: aws:region: expected a region the offline "
                           "plan answers, "
                           f"got {region} (no offline answers for {region}: the bundled ones "
                           "cover the 28 regions with recorded prices)")
    assert f"python -m infra.offline.record --region {region}" in line
    assert "Traceback" not in err


@pytest.mark.parametrize("region", PRICED)
def test_derived_partition_is_the_sdks(region: str) -> None:
    fx = load_fixture(region)
    assert fx.layers["partition"] == "derived"
    assert fx.record("partition")["partition"] == boto3.session.Session().get_partition_for_region(
        region)
    assert fx.record("partition")["dnsSuffix"] == "amazonaws.com"
    assert set(fx.table("prefixLists")) == {f"com.amazonaws.{region}.s3"}


def test_partition_patterns_are_botocores() -> None:
    """The plan derives partitions without boto3 (an extra); the copy is botocore's table."""
    import botocore

    doc = json.loads((Path(botocore.__file__).parent / "data" / "partitions.json").read_text())
    theirs = {p["id"]: (p["regionRegex"], p["outputs"]["dnsSuffix"]) for p in doc["partitions"]}
    for name, (pattern, suffix, _) in PARTITIONS.items():
        assert theirs[name] == (pattern, suffix), name
    assert partition("us-gov-west-1")["partition"] == "aws-us-gov"
    assert partition("cn-north-1")["dnsSuffix"] == "amazonaws.com.cn"
    with pytest.raises(NotDerivable):
        partition("eusc-de-east-1")


def test_only_zones_and_zone_id_offerings_are_recorded() -> None:
    for region in PRICED:
        fx = load_fixture(region)
        recorded = {k for k, layer in fx.layers.items() if layer == "recorded"}
        assert recorded - {"about", "region", "source", "recordedAt"} == set(RECORDED), region
        assert fx.layers["instanceTypeOfferings"] == "derived"
        for table in ("ssmParameters", "prefixLists", "images"):
            assert all(r["placeholder"] for r in fx.table(table).values()), (region, table)


def test_placeholders_cover_the_parameters_the_program_reads() -> None:
    assert set(AMI_PARAMETERS) == {*POOL_AMIS.values(), *CLIENT_AMI_PARAMETERS.values()}
    ids = {placeholder_ami(r, p) for r in PRICED for p in AMI_PARAMETERS}
    assert len(ids) == len(PRICED) * len(AMI_PARAMETERS)  # one per region and image


@pytest.mark.parametrize("region", PRICED)
def test_zone_offerings_add_up_to_the_region_level_record(region: str) -> None:
    """Two recordings made apart (zone IDs here, regions in the catalog) agree."""
    offers = load_fixture(region).table("instanceTypeOfferings")
    assert {t for ts in offers.values() for t in ts} == set(load_catalog().offered_in(region) or ())


def test_offerings_follow_the_accounts_own_zone_names(tmp_path: Path,
                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    """Zone names map to zone IDs per account: an override of the zones moves the offerings."""
    fx = load_fixture("us-east-1")
    zones = [dict(z) for z in fx.data["availabilityZones"]]
    ids = [z["zoneId"] for z in zones]
    for z, zone_id in zip(zones, ids[1:] + ids[:1], strict=True):  # another account's mapping
        z["zoneId"] = zone_id
    (tmp_path / "us-east-1.json").write_text(json.dumps({"availabilityZones": zones}))
    monkeypatch.setenv("GPUPOOL_OFFLINE_FIXTURES", str(tmp_path))
    moved = load_fixture("us-east-1")
    by_id = fx.table("instanceTypeOfferingsByZoneId")
    for z in zones:
        assert moved.table("instanceTypeOfferings").get(z["name"]) == by_id.get(z["zoneId"])
    assert moved.layers["availabilityZones"] == "override"

"""Issue 7 items 19-21: what a real ``pulumi up`` would have deployed broken.

19. The root device name and the least root volume come from the image (``aws.ec2.get_ami``,
    answered offline from the fixtures' recorded images): a wrong name would add a second volume,
    a too-small ``rootVolumeGib`` would fail every launch; both are caught at plan time.
20. The image is pinned per stack (``gpupool:images``) or, unpinned, kept as first deployed: a new
    DLAMI release does not roll every pool. An instance refresh keeps capacity (a one-instance
    pool never drops to zero: minimum healthy 100 %, maximum 200 %).
21. Training pools launch protected from scale-in and may release their own protection; every
    pool waits for the VPC endpoints it needs.
"""

from __future__ import annotations

import base64
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from gpupool.config import load_stack
from gpupool.errors import InputError
from infra.offline import OfflineError, load_fixture, run_offline
from infra.offline.runner import project_name, run_program, stack_program

from .conftest import ROOT

LT = "aws:ec2/launchTemplate:LaunchTemplate"
ASG = "aws:autoscaling/group:Group"
ENDPOINT = "aws:ec2/vpcEndpoint:VpcEndpoint"
DLAMI_X86 = "ami-offline-us-east-1-dlami-x86-64"  # the offline placeholder (75 GiB root)

ONE_POOL = """\
    config:
      aws:region: us-east-1
      gpupool:environment: test
      gpupool:team: vision
      gpupool:costCenter: cc-7
      gpupool:network: {createVpc: true, azCount: 2}
      gpupool:pools:
        - {name: solo, gpu: T4, minSize: 1, maxSize: 1, desiredCapacity: 1}
"""


def images_fixture(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                   images: dict[str, Any]) -> None:
    """Describe extra images for the offline plan (merged over the bundled us-east-1 fixture)."""
    extra = tmp_path / "fixtures"
    extra.mkdir(exist_ok=True)
    (extra / "us-east-1.json").write_text(json.dumps({"images": images}))
    monkeypatch.setenv("GPUPOOL_OFFLINE_FIXTURES", str(extra))


def image(root: str, size: int, arch: str = "x86_64") -> dict[str, Any]:
    return {"name": f"custom {arch}", "architecture": arch, "ownerId": "123456789012",
            "rootDeviceName": root,
            "blockDeviceMappings": [{"deviceName": root, "ebs": {"volumeSize": size}}]}


def only(plan: Any, type_: str) -> dict[str, Any]:
    (r,) = plan.of_type(type_)
    return dict(r.inputs)


# --------------------------------------------------------------------------- 19


def test_root_mapping_names_the_images_root_device(
    write_stack: Callable[[str, str], Path], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    images_fixture(tmp_path, monkeypatch, {"ami-0aaaaaaaaaaaaaaa1": image("/dev/xvda", 40)})
    text = ONE_POOL + "      gpupool:images: {x86_64: ami-0aaaaaaaaaaaaaaa1}\n"
    plan = run_offline(load_stack(str(write_stack("t", text))))
    lt = only(plan, LT)
    assert lt["imageId"] == "ami-0aaaaaaaaaaaaaaa1"
    (root,) = lt["blockDeviceMappings"]  # one mapping: the root, never a second volume
    assert root["deviceName"] == "/dev/xvda" and root["ebs"]["volumeSize"] == 100


def test_root_volume_smaller_than_the_snapshot_fails_at_plan_time(
    write_stack: Callable[[str, str], Path],
) -> None:
    text = ONE_POOL.replace("desiredCapacity: 1}", "desiredCapacity: 1, rootVolumeGib: 50}")
    with pytest.raises(OfflineError) as e:
        run_offline(load_stack(str(write_stack("t", text))))
    (line,) = e.value.problems
    assert line.endswith(
        f"pool solo: rootVolumeGib: expected at least 75 (the root snapshot of {DLAMI_X86}, "
        "Deep Learning Base OSS Nvidia Driver GPU AMI (Ubuntu 22.04) x86_64, is 75 GiB), got 50")


def test_pinned_image_of_another_architecture_is_refused(
    write_stack: Callable[[str, str], Path], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    images_fixture(tmp_path, monkeypatch,
                   {"ami-0bbbbbbbbbbbbbbb2": image("/dev/sda1", 30, arch="arm64")})
    text = ONE_POOL + "      gpupool:images: {x86_64: ami-0bbbbbbbbbbbbbbb2}\n"
    with pytest.raises(OfflineError) as e:
        run_offline(load_stack(str(write_stack("t", text))))
    assert "image ami-0bbbbbbbbbbbbbbb2 (custom arm64) is arm64, the pool is x86_64" in str(e.value)


def test_pinned_image_unknown_offline_says_how_to_describe_it(
    write_stack: Callable[[str, str], Path],
) -> None:
    text = ONE_POOL + "      gpupool:images: {x86_64: ami-0ccccccccccccccc3}\n"
    with pytest.raises(OfflineError) as e:
        run_offline(load_stack(str(write_stack("t", text))))
    assert 'describe it under "images"' in str(e.value)


# --------------------------------------------------------------------------- 20


def registrations(loaded: Any) -> dict[str, Any]:
    recording = run_program(stack_program(loaded), project=project_name(loaded.path),
                            stack=loaded.name, fixture=load_fixture("us-east-1"),
                            config=loaded.flat)
    return {r.urn: r for r in recording.registrations}


def test_unpinned_pools_keep_their_image_and_pinned_ones_follow_the_pin(
    write_stack: Callable[[str, str], Path], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A new DLAMI release (a new value of the `latest` parameter) must not roll every pool."""
    unpinned = registrations(load_stack(str(write_stack("a", ONE_POOL))))
    (lt,) = [r for r in unpinned.values() if r.type == LT]
    assert lt.inputs["imageId"] == DLAMI_X86 and lt.ignore_changes == ("imageId",)

    images_fixture(tmp_path, monkeypatch, {"ami-0aaaaaaaaaaaaaaa1": image("/dev/sda1", 75)})
    pinned = registrations(load_stack(str(write_stack(
        "b", ONE_POOL + "      gpupool:images: {x86_64: ami-0aaaaaaaaaaaaaaa1}\n"))))
    (lt,) = [r for r in pinned.values() if r.type == LT]
    assert lt.inputs["imageId"] == "ami-0aaaaaaaaaaaaaaa1" and lt.ignore_changes == ()


def test_image_pin_must_be_an_ami_id(write_stack: Callable[[str, str], Path]) -> None:
    text = ONE_POOL + "      gpupool:images: {x86_64: latest, riscv: ami-0aaaaaaaaaaaaaaa1}\n"
    with pytest.raises(InputError) as e:
        load_stack(str(write_stack("t", text)))
    assert any("gpupool:images.x86_64: expected an AMI id such as ami-0a1b2c3d4e5f67890" in line
               for line in e.value.problems)
    assert any("gpupool:images.riscv: expected a known key" in line for line in e.value.problems)


@pytest.mark.parametrize("stack", ["dev", "staging", "prod"])
def test_instance_refresh_keeps_capacity(stack: str, stack_plans: dict[str, Any]) -> None:
    _, plan = stack_plans[stack]
    gpu_groups = [g for g in plan.of_type(ASG) if "mixedInstancesPolicy" in g.inputs]
    assert gpu_groups  # pools and remote-GPU proxies (GpuPool's parts)
    for group in gpu_groups:
        prefs = group.inputs["instanceRefresh"]["preferences"]
        assert (prefs["minHealthyPercentage"], prefs["maxHealthyPercentage"]) == (100, 200)


def test_one_instance_pool_never_refreshes_to_zero(
    write_stack: Callable[[str, str], Path],
) -> None:
    plan = run_offline(load_stack(str(write_stack("t", ONE_POOL))))
    asg = only(plan, ASG)
    prefs = asg["instanceRefresh"]["preferences"]
    assert asg["maxSize"] == 1 and prefs["minHealthyPercentage"] == 100
    assert prefs["maxHealthyPercentage"] > 100  # a replacement launches before the old goes


# --------------------------------------------------------------------------- 21


def test_training_pools_launch_protected_and_may_release_themselves(
    stack_plans: dict[str, Any],
) -> None:
    loaded, plan = stack_plans["prod"]
    by_name = {r.name: r for r in plan.resources}
    training = by_name["prod-training-asg"].inputs
    assert training["protectFromScaleIn"] is True
    assert training["instanceRefresh"]["preferences"]["scaleInProtectedInstances"] == "Ignore"
    assert by_name["prod-inference-asg"].inputs["protectFromScaleIn"] is False
    policy = by_name["prod-training-scale-in-protection"]
    assert policy.property_dependencies["policy"] == (by_name["prod-training-asg"].urn,)
    doc = json.loads(policy.inputs["policy"])
    (release, describe) = doc["Statement"]
    assert release["Action"] == ["autoscaling:SetInstanceProtection"]
    assert release["Resource"].startswith("arn:aws:autoscaling:us-east-1:")
    assert release["Resource"].endswith("autoScalingGroupName/prod-training-asg-"
                                        + release["Resource"][-7:])
    assert describe["Action"] == ["autoscaling:DescribeAutoScalingInstances"]
    script = base64.b64decode(by_name["prod-training-lt"].inputs["userData"]).decode()
    assert "/usr/local/bin/gpupool-scale-in-protection" in script
    assert "--no-protected-from-scale-in" in script
    inference = base64.b64decode(by_name["prod-inference-lt"].inputs["userData"]).decode()
    assert "gpupool-scale-in-protection" not in inference
    # the instances reach the Auto Scaling API through the VPC, like every other AWS API
    services = {r.inputs["serviceName"] for r in plan.of_type(ENDPOINT)}
    assert "com.amazonaws.us-east-1.autoscaling" in services
    assert any(p.scale_in_protection for p in loaded.config.pools)


@pytest.mark.parametrize("stack", ["dev", "staging", "prod"])
def test_pools_wait_for_every_vpc_endpoint(stack: str) -> None:
    loaded = load_stack(str(ROOT / "stacks" / f"Pulumi.{stack}.yaml"))
    regs = registrations(loaded)
    endpoints = {u for u, r in regs.items() if r.type == ENDPOINT}
    assert len(endpoints) >= 7  # six interface endpoints and the S3 gateway at least
    groups = [r for r in regs.values() if r.type == ASG and "GpuPool" in r.urn]
    assert groups
    for group in groups:
        assert endpoints <= set(group.dependencies), group.name


def test_validate_says_which_images_are_pinned(
    write_stack: Callable[[str, str], Path], capsys: pytest.CaptureFixture[str]
) -> None:
    from gpupool.cli import main

    text = ONE_POOL.replace("- {name: solo", "- {name: arm, gpu: T4g, arch: arm64, maxSize: 1}\n"
                            "        - {name: solo")
    text += "      gpupool:images: {x86_64: ami-0aaaaaaaaaaaaaaa1}\n"
    assert main(["validate", str(write_stack("t", text))]) == 0
    out = capsys.readouterr().out
    assert "image x86_64: pinned to ami-0aaaaaaaaaaaaaaa1 (gpupool:images.x86_64)" in out
    assert "image arm64: the Deep Learning Base OSS NVIDIA Driver AMI current at first " \
           "deployment, kept after (pin gpupool:images.arm64 to move it)" in out


def test_remote_gpu_proxies_follow_the_same_image_rules() -> None:
    loaded = load_stack(str(ROOT / "stacks" / "Pulumi.staging.yaml"))
    assert loaded.config.remote_gpu
    regs = registrations(loaded)
    proxies = [r for r in regs.values() if r.type == LT and "RemoteGpuTier" in r.urn
               and r.inputs["imageId"] == DLAMI_X86]
    assert proxies
    for lt in proxies:
        assert lt.ignore_changes == ("imageId",)
        assert lt.inputs["blockDeviceMappings"][0]["deviceName"] == "/dev/sda1"

"""Issue 7 item 21: the helper a protected (training) pool's instances run, run for real.

``gpupool-scale-in-protection`` is installed by the pools' user data. Here the installing snippet
runs under bash, and the helper drives the real AWS CLI against a moto server over HTTP: a group
whose instances launch protected, the instance found through IMDSv2 (a stand-in ``curl`` that
answers only a request carrying the session token) and its group through EC2 DescribeTags, as on
an instance. ``off`` must leave the instance unprotected in Auto Scaling's own records, ``on``
protect it again.
"""

from __future__ import annotations

import os
import shutil
import stat
import subprocess
import uuid
from pathlib import Path

import boto3
import pytest

from infra.aws import protection

AWS_CLI = shutil.which("aws")
pytestmark = pytest.mark.skipif(AWS_CLI is None, reason="needs the AWS CLI (aws) on PATH")

# IMDSv2 as the helper must use it: a PUT for a token, then the instance id with that token.
FAKE_CURL = """#!/bin/bash
args="$*"
if [[ "$args" == *"-X PUT"* && "$args" == *"X-aws-ec2-metadata-token-ttl-seconds"* \\
      && "$args" == *"/latest/api/token"* ]]; then
  printf 'TOKEN-1'; exit 0
fi
if [[ "$args" == *"X-aws-ec2-metadata-token: TOKEN-1"* \\
      && "$args" == *"/latest/meta-data/instance-id"* ]]; then
  printf '%s' "$INSTANCE_ID"; exit 0
fi
echo "curl: (22) The requested URL returned error: 401" >&2; exit 22
"""


@pytest.fixture
def protected_instance(aws_env: str) -> tuple[str, str]:
    """A group of one instance launched protected from scale-in, in the moto server (which
    lives for the session: names are unique per test)."""
    suffix = uuid.uuid4().hex[:7]
    group = f"prod-training-asg-{suffix}"
    ec2 = boto3.client("ec2", region_name="us-east-1")
    image = ec2.describe_images(Owners=["amazon"], MaxResults=5)["Images"][0]["ImageId"]
    ec2.create_launch_template(LaunchTemplateName=f"training-lt-{suffix}", LaunchTemplateData={
        "ImageId": image, "InstanceType": "g5.xlarge"})
    autoscaling = boto3.client("autoscaling", region_name="us-east-1")
    autoscaling.create_auto_scaling_group(
        AutoScalingGroupName=group,
        LaunchTemplate={"LaunchTemplateName": f"training-lt-{suffix}", "Version": "$Latest"},
        MinSize=0, MaxSize=2, DesiredCapacity=1, AvailabilityZones=["us-east-1a"],
        NewInstancesProtectedFromScaleIn=True)
    (instance,) = autoscaling.describe_auto_scaling_groups(
        AutoScalingGroupNames=[group])["AutoScalingGroups"][0]["Instances"]
    assert instance["ProtectedFromScaleIn"] is True
    return instance["InstanceId"], group


def protected(instance_id: str) -> bool:
    autoscaling = boto3.client("autoscaling", region_name="us-east-1")
    (found,) = autoscaling.describe_auto_scaling_instances(
        InstanceIds=[instance_id])["AutoScalingInstances"]
    return bool(found["ProtectedFromScaleIn"])


def install(tmp_path: Path) -> tuple[Path, dict[str, str]]:
    """Run the user-data snippet (helper written under tmp_path) with curl stood in for."""
    bindir = tmp_path / "bin"
    bindir.mkdir()
    curl = bindir / "curl"
    curl.write_text(FAKE_CURL)
    curl.chmod(curl.stat().st_mode | stat.S_IXUSR)
    helper = tmp_path / "gpupool-scale-in-protection"
    snippet = protection.protection_script("us-east-1").replace(
        protection.PROTECTION_HELPER, str(helper))
    subprocess.run(["bash", "-euo", "pipefail", "-c", snippet], check=True, timeout=30)
    env = {**os.environ, "PATH": f"{bindir}{os.pathsep}{os.environ['PATH']}"}
    return helper, env


def run(helper: Path, env: dict[str, str], *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([str(helper), *args], env=env, capture_output=True, text=True,
                          timeout=120)


def test_helper_releases_and_restores_protection_through_the_aws_cli(
    protected_instance: tuple[str, str], tmp_path: Path
) -> None:
    instance_id, _ = protected_instance
    helper, env = install(tmp_path)
    assert os.access(helper, os.X_OK)
    env["INSTANCE_ID"] = instance_id

    off = run(helper, env, "off")
    assert off.returncode == 0, off.stderr
    assert protected(instance_id) is False  # target tracking may now scale it in

    on = run(helper, env, "on")
    assert on.returncode == 0, on.stderr
    assert protected(instance_id) is True

    wrong = run(helper, env, "maybe")
    assert wrong.returncode == 2 and "usage:" in wrong.stderr

    # IMDSv1 (no token) is what the launch templates turn off: the helper must not rely on it
    (Path(env["PATH"].split(os.pathsep)[0]) / "curl").write_text(
        FAKE_CURL.replace("printf 'TOKEN-1'; exit 0", "exit 22"))
    failed = run(helper, env, "off")
    assert failed.returncode != 0
    assert protected(instance_id) is True  # nothing changed on a failure

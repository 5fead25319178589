"""A proxy group from a module that is not in the repository (a registry or git module), read
where ``terraform init`` installed it.

Terraform's JSON configuration leaves ``dynamic`` blocks out, so a new group's unknown
``traffic_source`` is "not set" only when the group's ``.tf`` source is at hand and writes no
``dynamic "traffic_source"``. A module from a registry or git is not beside the plan, but
``terraform init`` puts it under ``.terraform/modules`` and lists it in ``modules.json``: the
reader finds it there. Real ``terraform init`` + ``plan`` (a module fetched over ``git::file://``,
as from any git host), so these tests skip where terraform, the provider mirror or git is
missing.
"""

from __future__ import annotations

import json
import shutil
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from policies.model import UNKNOWN
from policies.sources import load_plan
from tests.fixtures import terraform_live as live

MODULE = live.LIVE / "proxy-exposure" / "modules" / "proxy-group"
_DYNAMIC = '''
  dynamic "traffic_source" {
    for_each = var.traffic_sources
    content {
      identifier = traffic_source.value
      type       = "elbv2"
    }
  }
'''
_ROOT = '''
terraform {
  required_providers {
    aws = { source = "hashicorp/aws", version = "5.100.0" }
  }
}
variable "aws_endpoint" { type = string }
provider "aws" {
  region                      = "us-east-1"
  access_key                  = "testing"
  secret_key                  = "testing"
  skip_credentials_validation = true
  skip_requesting_account_id  = true
  skip_metadata_api_check     = true
  endpoints {
    autoscaling = var.aws_endpoint
    ec2         = var.aws_endpoint
    sts         = var.aws_endpoint
  }
}
resource "aws_vpc" "main" { cidr_block = "10.44.0.0/16" }
resource "aws_subnet" "private" {
  vpc_id            = aws_vpc.main.id
  cidr_block        = "10.44.1.0/24"
  availability_zone = "us-east-1a"
}
resource "aws_launch_template" "proxy" {
  name          = "proxy"
  image_id      = "ami-0abcdef1234567890"
  instance_type = "g4dn.xlarge"
}
module "plain" {
  source              = "git::file://REPO//plain"
  name                = "plain"
  launch_template_id  = aws_launch_template.proxy.id
  vpc_zone_identifier = [aws_subnet.private.id]
  tags                = { "gpupool:role" = "gpu-proxy" }
}
module "dynamic" {
  source              = "git::file://REPO//dynamic"
  name                = "dynamic"
  launch_template_id  = aws_launch_template.proxy.id
  vpc_zone_identifier = [aws_subnet.private.id]
  traffic_sources     = compact([aws_launch_template.proxy.arn])
  tags                = { "gpupool:role" = "gpu-proxy" }
}
module "dynamic_default" {
  source              = "git::file://REPO//dynamic"
  name                = "dynamic_default"
  launch_template_id  = aws_launch_template.proxy.id
  vpc_zone_identifier = [aws_subnet.private.id]
  tags                = { "gpupool:role" = "gpu-proxy" }
}
'''


def _git(repo: Path, *args: str) -> None:
    subprocess.run(["git", "-C", str(repo), *args], check=True, capture_output=True,
                   timeout=60)


@pytest.fixture(scope="module")
def root(moto_endpoint: str, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    """A root module calling the proxy-group module twice from a git repository (as written,
    and twice with a `dynamic "traffic_source"` over a variable: given values unknown until
    apply, and left at its default []), initialised and planned."""
    why = live.unavailable() or (None if shutil.which("git") else "git is not on PATH")
    if why is not None:
        pytest.skip(f"real terraform plans cannot be made here: {why}")
    scratch = tmp_path_factory.mktemp("installed")
    repo = scratch / "repo"
    shutil.copytree(MODULE, repo / "plain")
    shutil.copytree(MODULE, repo / "dynamic")
    tf = repo / "dynamic" / "main.tf"
    text = tf.read_text(encoding="utf-8")
    text = text.replace('  wait_for_capacity_timeout = "0"\n',
                        '  wait_for_capacity_timeout = "0"\n' + _DYNAMIC, 1)
    tf.write_text(text + '\nvariable "traffic_sources" {\n  type    = list(string)\n'
                  '  default = []\n}\n', encoding="utf-8")
    _git(repo, "init", "-q")
    _git(repo, "add", ".")
    _git(repo, "-c", "user.name=t", "-c", "user.email=t@example.invalid", "commit", "-q",
         "-m", "modules")
    work = scratch / "root"
    work.mkdir()
    (work / "main.tf").write_text(_ROOT.replace("REPO", str(repo)), encoding="utf-8")
    with live.terraform_env(scratch) as env:
        doc = live.plan_directory(work, moto_endpoint, env, {})
    (work / "plan.json").write_text(json.dumps(doc), encoding="utf-8")
    yield work


def _groups(plan_path: Path) -> dict[str, dict[str, Any]]:
    plan = load_plan(plan_path)
    return {name: dict(plan.by_address()[f"module.{name}.aws_autoscaling_group.this"].new or {})
            for name in ("plain", "dynamic", "dynamic_default")}


def test_the_installed_module_is_read_for_its_dynamic_blocks(root: Path) -> None:
    manifest = json.loads((root / ".terraform" / "modules" / "modules.json").read_text())
    assert {m["Key"] for m in manifest["Modules"]} >= {"plain", "dynamic", "dynamic_default"}
    doc = json.loads((root / "plan.json").read_text())
    sources = {k: c["source"] for k, c in
               doc["configuration"]["root_module"]["module_calls"].items()}
    assert all(s.startswith("git::file://") for s in sources.values())  # not in the repository
    groups = _groups(root / "plan.json")
    assert "traffic_source" not in groups["plain"]
    # for_each = var.traffic_sources, given a list of values unknown until apply
    assert groups["dynamic"]["traffic_source"] is UNKNOWN
    assert "traffic_source" not in groups["dynamic_default"]  # ... left at its default []
    for group in groups.values():  # null or [] through the module's variables: not set
        for key in ("availability_zones", "target_group_arns", "load_balancers"):
            assert key not in group, key


def test_without_the_installed_modules_both_stay_unknown(root: Path, tmp_path: Path) -> None:
    """The same plan and root sources without ``.terraform`` (a fresh checkout): the modules'
    sources are not at hand, so neither group's traffic_source is judged."""
    shutil.copy(root / "main.tf", tmp_path / "main.tf")
    shutil.copy(root / "plan.json", tmp_path / "plan.json")
    groups = _groups(tmp_path / "plan.json")
    assert all(g["traffic_source"] is UNKNOWN for g in groups.values())

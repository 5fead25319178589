"""SARIF points where a reviewer fixes the finding (issue 16, item 22).

A Terraform finding pointed into the plan JSON, which nobody edits; now it points at the ``.tf``
file and line that declare the resource (``--tf-root DIR``, or the plan's own directory, and the
local modules the plan's configuration names), the plan entry a related location, and falls
back to the plan with a note saying why. A stack finding about no particular key points at the
key the change since ``--base`` touched, not at the pool entry.
"""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest
from jsonschema import Draft7Validator

from policies.reports import sarif
from policies.result import Result, Violation
from policies.rules.base import Enforcement
from policies.tfsource.hcl import parse_blocks
from tests.cli.cli_support import run_in_process

LIVE = Path(__file__).resolve().parents[2] / "fixtures" / "terraform" / "live" / "gpu-asgs"
SCHEMA = Path(__file__).resolve().parents[2] / "fixtures" / "schemas" / "sarif-schema-2.1.0.json"


def _line_of(path: Path, text: str) -> int:
    return next(i for i, line in enumerate(path.read_text().splitlines(), 1) if text in line)


@pytest.fixture
def repo(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A checkout holding the live module and its real plan, the working directory."""
    shutil.copytree(LIVE, tmp_path / "infra")
    (tmp_path / ".git").mkdir()
    monkeypatch.chdir(tmp_path)
    return tmp_path


def _sarif(*args: str) -> dict[str, Any]:
    done = run_in_process(["check", *args, "--format", "sarif"])
    assert done.code in (0, 1), done.err
    doc: dict[str, Any] = json.loads(done.out)
    assert not list(Draft7Validator(json.loads(SCHEMA.read_text())).iter_errors(doc))
    return doc


def _results(doc: dict[str, Any]) -> dict[tuple[str, str], dict[str, Any]]:
    return {(r["ruleId"], r["locations"][0]["logicalLocations"][0]["fullyQualifiedName"]): r
            for r in doc["runs"][0]["results"]}


def _where(result: dict[str, Any]) -> tuple[str, int, int]:
    phys = result["locations"][0]["physicalLocation"]
    return (phys["artifactLocation"]["uri"], phys["region"]["startLine"],
            phys["region"]["startColumn"])


def test_terraform_findings_point_at_their_tf_lines(repo: Path) -> None:
    found = _results(_sarif("infra/plan-create.json"))
    infra = repo / "infra"
    group = found[("gpu-pool-scales-on-utilisation", "aws_autoscaling_group.cpu_scaled")]
    assert _where(group) == ("infra/launch-template.tf", _line_of(
        infra / "launch-template.tf", 'resource "aws_autoscaling_group" "cpu_scaled"'), 1)
    assert group["locations"][0]["message"]["text"] == (
        "aws_autoscaling_group.cpu_scaled: declared here")
    related = group["relatedLocations"][0]["physicalLocation"]
    assert related["artifactLocation"]["uri"] == "infra/plan-create.json"
    assert related["region"]["startLine"] > 1
    # the argument the finding is about, where the block writes it
    selection = found[("gpu-smallest-instance", "aws_autoscaling_group.any_size")]
    uri, line, column = _where(selection)
    text = (infra / "instance-requirements.tf").read_text().splitlines()[line - 1]
    assert uri == "infra/instance-requirements.tf" and text.strip() == "instance_requirements {"
    assert column == text.index("instance_requirements") + 1


def test_a_resource_of_a_local_module_points_into_the_module(repo: Path) -> None:
    found = _results(_sarif("infra/plan-create.json"))
    training = found[("gpu-smallest-instance",
                      'module.pool["training"].aws_launch_template.this')]
    module = repo / "infra" / "modules" / "gpu-pool" / "main.tf"
    assert _where(training) == ("infra/modules/gpu-pool/main.tf",
                                _line_of(module, "instance_type = var.instance_type"), 3)


def test_tf_root_when_the_plan_is_elsewhere(repo: Path) -> None:
    (repo / "plans").mkdir()
    shutil.move(repo / "infra" / "plan-create.json", repo / "plans" / "plan.json")
    key = ("gpu-pool-scales-on-utilisation", "aws_autoscaling_group.cpu_scaled")
    fallback = _results(_sarif("plans/plan.json"))[key]
    assert _where(fallback)[0] == "plans/plan.json" and _where(fallback)[1] > 1
    assert fallback["locations"][0]["message"]["text"] == (
        "no Terraform sources (*.tf) in plans; pointing at the plan (give --tf-root DIR for "
        "the sources)")
    placed = _results(_sarif("plans/plan.json", "--tf-root", "infra"))[key]
    assert _where(placed)[0] == "infra/launch-template.tf"


def test_sources_that_do_not_declare_the_resource(repo: Path) -> None:
    (repo / "infra" / "launch-template.tf").unlink()
    found = _results(_sarif("infra/plan-create.json"))
    group = found[("gpu-pool-scales-on-utilisation", "aws_autoscaling_group.cpu_scaled")]
    assert _where(group)[0] == "infra/plan-create.json"
    assert group["locations"][0]["message"]["text"].startswith(
        "resource aws_autoscaling_group.cpu_scaled is not declared in the .tf files of infra")


def test_tf_root_must_be_a_directory(repo: Path) -> None:
    done = run_in_process(["check", "infra/plan-create.json", "--tf-root", "nowhere"])
    assert done.code == 2 and done.err_lines == [
        "gpupool check: --tf-root: expected the directory of the Terraform root module's "
        "sources (*.tf), got 'nowhere' (no such directory)"]


def test_blocks_in_strings_comments_and_heredocs_are_not_blocks(tmp_path: Path) -> None:
    tf = tmp_path / "main.tf"
    tf.write_text('# resource "aws_instance" "comment" {\n'
                  'locals {\n  doc = <<-EOT\n    resource "aws_instance" "heredoc" {\n  EOT\n}\n'
                  'resource "aws_instance" "real" {\n  instance_type = "g4dn.xlarge"\n}\n')
    blocks = [(b.type, b.labels, b.line) for b in parse_blocks(tf)]
    assert blocks == [("locals", (), 2), ("resource", ("aws_instance", "real"), 7)]
    (tmp_path / "broken.tf").write_text('resource "aws_instance" {{{\n')
    assert parse_blocks(tmp_path / "broken.tf") == []


# --------------------------------------------------------------------------- the kit's stacks

STACK = """\
config:
  gpupool:environment: dev
  gpupool:pools:
    - name: inference
      gpu: T4
      minSize: 1
      maxSize: {max}
"""
URN = ("urn:pulumi:dev::gpupool::gpupool:aws:GpuPool$aws:autoscaling/group:Group"
       "::dev-inference-asg")


def _git(repo: Path, *args: str) -> None:
    subprocess.run(["git", "-C", str(repo), *args], check=True, capture_output=True,
                   env={"GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@example.com",
                        "GIT_COMMITTER_NAME": "t", "GIT_COMMITTER_EMAIL": "t@example.com",
                        "PATH": "/usr/bin:/bin:/usr/local/bin"})


def test_a_stack_finding_points_at_the_key_the_change_touched(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "stacks").mkdir()
    stack = tmp_path / "stacks" / "Pulumi.dev.yaml"
    stack.write_text(STACK.format(max=4))
    _git(tmp_path, "init", "-q")
    _git(tmp_path, "add", "-A")
    _git(tmp_path, "commit", "-q", "-m", "base")
    stack.write_text(STACK.format(max=8))
    monkeypatch.chdir(tmp_path)
    origin = "stack dev @ HEAD..worktree"
    v = Violation("gpu-capacity-vs-utilisation", Enforcement.MANDATORY, URN, "raises maxSize",
                  source=origin)
    loc = sarif.to_sarif(Result([v], [], [origin], [], 1))["runs"][0]["results"][0][
        "locations"][0]
    assert loc["physicalLocation"]["region"] == {"startLine": 7, "startColumn": 7}
    assert loc["message"]["text"] == "set by gpupool:pools[0].maxSize"
    # the working tree alone (no base): the pool entry, as before
    alone = Violation("gpu-capacity-vs-utilisation", Enforcement.MANDATORY, URN, "m",
                      source="stack dev (working tree)")
    loc = sarif.to_sarif(Result([alone], [], [], [], 1))["runs"][0]["results"][0]["locations"][0]
    assert loc["physicalLocation"]["region"]["startLine"] == 4

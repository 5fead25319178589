"""What a user of Checkov or conftest expects of ``gpupool check`` (issue 16, item 23).

``--soft-fail``, ``--check ID,…`` and ``--skip-check ID,…`` as Checkov users type them; a plan
JSON inside a directory scan is a plan, not a manifest; a ``.tf`` file, a directory of them and
``terraform plan``/``show`` text get the command that makes the JSON plan.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from cli_support import FIXTURES, TF_UPSIZE, run_in_process

LIVE = FIXTURES / "terraform" / "live" / "gpu-asgs"
SHOW_JSON = "run `terraform plan -out=tfplan && terraform show -json tfplan > plan.json`"


def _json(*args: str) -> tuple[int, dict]:  # type: ignore[type-arg]
    done = run_in_process(["check", *args, "--format", "json"])
    return done.code, json.loads(done.out)


def _policies(doc: dict) -> set[str]:  # type: ignore[type-arg]
    return {v["policy"] for v in doc["violations"]}


def test_check_runs_only_the_policies_named() -> None:
    code, doc = _json(str(TF_UPSIZE), "--check", "gpu-smallest-instance,imdsv2-required")
    assert code == 1 and _policies(doc) == {"gpu-smallest-instance"}
    enforcement = {p["id"]: p["enforcement"] for p in doc["policies"]}
    assert enforcement["gpu-no-vertical-upsize"] == "disabled"
    assert enforcement["gpu-smallest-instance"] == "mandatory"


def test_skip_check_repeated_and_patterns() -> None:
    _, everything = _json(str(TF_UPSIZE))
    assert {"gpu-no-vertical-upsize", "gpu-smallest-instance"} <= _policies(everything)
    _, doc = _json(str(TF_UPSIZE), "--skip-check", "gpu-no-vertical-upsize",
                   "--skip-check", "gpu-smallest-*,gpu-chargeback-tags")
    assert _policies(doc) == _policies(everything) - {
        "gpu-no-vertical-upsize", "gpu-smallest-instance", "gpu-chargeback-tags"}
    both = run_in_process(["check", str(TF_UPSIZE), "--check", "gpu-*",
                           "--skip-check", "gpu-no-vertical-upsize", "--format", "json"])
    assert _policies(json.loads(both.out)) <= {"gpu-smallest-instance",
                                               "gpu-pool-scales-on-utilisation",
                                               "gpu-chargeback-tags"}


def test_soft_fail_reports_and_exits_zero() -> None:
    done = run_in_process(["check", str(TF_UPSIZE), "--soft-fail", "--format", "json"])
    doc = json.loads(done.out)
    assert done.code == 0
    assert doc["verdict"] == "fail" and doc["soft_fail"] is True and doc["exit_code"] == 0
    assert doc["summary"]["mandatory"] == 5
    assert "--soft-fail: 5 mandatory violations reported, exit 0" in done.err
    sarif = run_in_process(["check", str(TF_UPSIZE), "--soft-fail", "--format", "sarif"])
    assert json.loads(sarif.out)["runs"][0]["invocations"][0]["exitCode"] == 0


def test_soft_fail_does_not_hide_bad_input(tmp_path: Path) -> None:
    bad = tmp_path / "plan.json"
    bad.write_text("{", encoding="utf-8")
    assert run_in_process(["check", str(bad), "--soft-fail"]).code == 2


@pytest.mark.parametrize(("flag", "typed", "meant"), [
    ("--check", "gpu-smalest-instance", "gpu-smallest-instance"),
    ("--skip-check", "imdsv2-requird", "imdsv2-required"),
])
def test_unknown_ids_get_did_you_mean(flag: str, typed: str, meant: str) -> None:
    done = run_in_process(["check", str(TF_UPSIZE), flag, typed])
    assert done.code == 2 and done.out == ""
    assert done.err_lines == [
        f"gpupool check: {flag}: unknown policy ID {typed!r} (did you mean {meant}?)"]


def test_every_bad_id_at_once_and_nothing_left_to_run() -> None:
    done = run_in_process(["check", str(TF_UPSIZE), "--check", "nope,k9s-*", "--skip-check", ","])
    assert done.code == 2 and len(done.err_lines) == 4, done.err
    assert "'k9s-*' matches no policy ID" in done.err
    assert "expected comma-separated policy IDs, got an empty one" in done.err
    empty = run_in_process(["check", str(TF_UPSIZE), "--check", "gpu-smallest-instance",
                            "--skip-check", "gpu-smallest-instance"])
    assert empty.code == 2 and "no policy is left to run" in empty.err


def test_waivers_of_a_skipped_policy_are_set_aside(tmp_path: Path) -> None:
    waivers = tmp_path / "waivers.yaml"
    waivers.write_text(
        "waivers:\n  - id: W-1\n    policy: gpu-smallest-instance\n    resource: nothing.*\n"
        "    owner: ml\n    reason: r\n    expires: 2099-01-01\n", encoding="utf-8")
    _, kept = _json(str(TF_UPSIZE), "--waivers", str(waivers))
    assert "gpupool-waiver" in _policies(kept)  # matched no finding: a stale waiver
    _, skipped = _json(str(TF_UPSIZE), "--waivers", str(waivers),
                       "--skip-check", "gpu-smallest-instance")
    assert "gpupool-waiver" not in _policies(skipped)


def test_a_plan_in_a_directory_scan_is_read_as_a_plan(tmp_path: Path) -> None:
    shutil.copy(LIVE / "plan-create.json", tmp_path / "plan.json")
    shutil.copy(FIXTURES / "kubernetes" / "gpu-operator-gpu-pod.yaml", tmp_path / "pod.yaml")
    code, doc = _json(str(tmp_path))
    assert code == 1
    sources = doc["summary"]["sources"]
    assert sources == [f"{tmp_path}/plan.json", str(tmp_path)]  # the plan, the manifests
    assert ("gpu-pool-scales-on-utilisation", "aws_autoscaling_group.cpu_scaled") in {
        (v["policy"], v["resource"]) for v in doc["violations"]}


def test_terraform_configuration_in_json_syntax_in_a_scan(tmp_path: Path) -> None:
    (tmp_path / "main.tf.json").write_text(json.dumps(
        {"resource": {"aws_instance": {"x": {"instance_type": "g4dn.xlarge"}}}}), "utf-8")
    done = run_in_process(["check", str(tmp_path)])
    assert done.code == 2
    assert done.err_lines == [
        f"gpupool check: {tmp_path}/main.tf.json: expected a plan file (terraform show -json), "
        f"got Terraform configuration in JSON syntax (*.tf.json); {SHOW_JSON} and check "
        "plan.json"]


@pytest.mark.parametrize("name", ["main.tf", "launch-template.tf"])
def test_a_tf_file_says_what_to_run(name: str, tmp_path: Path) -> None:
    source = LIVE / name
    done = run_in_process(["check", str(source)])
    assert done.code == 2
    assert done.err_lines == [
        f"gpupool check: {source}: expected a plan file (terraform show -json), got Terraform "
        f"configuration (HCL); {SHOW_JSON} and check plan.json"]


def test_a_directory_of_terraform_configuration(tmp_path: Path) -> None:
    for f in LIVE.glob("*.tf"):
        shutil.copy(f, tmp_path / f.name)
    done = run_in_process(["check", str(tmp_path)])
    assert done.code == 2 and len(done.err_lines) == 1
    assert "got a directory of Terraform configuration (*.tf)" in done.err
    assert SHOW_JSON in done.err


# What `terraform plan` prints (terraform 1.11, captured with and without colours).
TEXT_PLAN = """
Terraform used the selected providers to generate the following execution
plan. Resource actions are indicated with the following symbols:
  + create

Terraform will perform the following actions:

  # aws_launch_template.gpu will be created
  + resource "aws_launch_template" "gpu" {
      + instance_type   = "g4dn.xlarge"
    }

Plan: 1 to add, 0 to change, 0 to destroy.
"""


@pytest.mark.parametrize("text", [TEXT_PLAN, TEXT_PLAN.replace(
    "  # aws_launch_template.gpu", "\x1b[1m  # aws_launch_template.gpu\x1b[0m")])
def test_terraform_plan_text_output(text: str, tmp_path: Path) -> None:
    saved = tmp_path / "plan.txt"
    saved.write_text(text, encoding="utf-8")
    done = run_in_process(["check", str(saved)])
    assert done.code == 2 and len(done.err_lines) == 1
    assert "got the text `terraform plan` or `terraform show` prints" in done.err
    assert SHOW_JSON in done.err

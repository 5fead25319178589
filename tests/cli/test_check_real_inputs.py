"""``gpupool check`` on inputs real tools wrote (issue 7): the verdict a user sees."""

from __future__ import annotations

import json
from pathlib import Path

from cli_support import FIXTURES, run_in_process, run_process

GPU_PREVIEW = FIXTURES / "pulumi" / "preview-gpu-upsize-null-deps.json"
_IMDSV1 = {"instance_type": "t3.micro", "metadata_options": [{"http_tokens": "optional"}],
           "root_block_device": [{"encrypted": True}]}
_MIXED = {"format_version": "1.2", "resource_changes": [
    {"address": f"aws_instance.{n}", "mode": "managed", "type": "aws_instance", "name": n,
     "change": {"actions": [a], "before": None if a == "create" else _IMDSV1,
                "after": _IMDSV1}}
    for n, a in (("old", "no-op"), ("new", "create"), ("changed", "update"))]}
STREAM = FIXTURES / "pulumi" / "real" / "pulumi-display-webserver-userdata.json"


def test_a_real_shaped_pulumi_preview_with_a_gpu_upsize_fails_the_check() -> None:
    run = run_process(["check", str(GPU_PREVIEW), "--format", "json"])
    assert run.code == 1, run.err
    doc = json.loads(run.out)
    upsized = sorted(v["resource"].rsplit("::", 1)[-1] for v in doc["violations"]
                     if v["policy"] == "gpu-no-vertical-upsize")
    assert upsized == ["notebook", "trainer"]
    assert doc["summary"]["cost_delta_per_hour"] > 30


def test_a_streamed_preview_is_checked_like_a_digest() -> None:
    run = run_in_process(["check", str(STREAM), "--format", "json"])
    assert run.code == 1, run.err
    policies = {v["policy"] for v in json.loads(run.out)["violations"]}
    assert policies == {"imdsv2-required", "ebs-encrypted"}


def test_an_empty_plan_is_still_a_plan_and_says_so(tmp_path: Path) -> None:
    """Issue 7, item 4: a pass on no resources is said out loud."""
    path = tmp_path / "plan.json"
    path.write_text(json.dumps({"format_version": "1.2",
                                "planned_values": {"root_module": {}}}))
    run = run_in_process(["check", str(path)])
    assert run.code == 0
    assert f"gpupool check: note: {path}: no resources to judge" in run.err_lines


def test_changed_only_on_the_command_line(tmp_path: Path) -> None:
    """Issue 7, item 4: ``--changed-only`` leaves the unchanged IMDSv1 instance alone."""
    path = tmp_path / "plan.json"
    path.write_text(json.dumps(_MIXED))
    default = json.loads(run_in_process(["check", str(path), "--format", "json"]).out)
    run = run_in_process(["check", str(path), "--format", "json", "--changed-only"])
    assert run.code == 1
    doc = json.loads(run.out)
    assert doc["summary"]["resources_evaluated"] == 2
    assert default["summary"]["resources_evaluated"] == 3
    assert "aws_instance.old" not in {v["resource"] for v in doc["violations"]}

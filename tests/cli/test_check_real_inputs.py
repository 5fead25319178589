"""``gpupool check`` on inputs real tools wrote (issue 7): the verdict a user sees."""

from __future__ import annotations

import json

from cli_support import FIXTURES, run_in_process, run_process

GPU_PREVIEW = FIXTURES / "pulumi" / "preview-gpu-upsize-null-deps.json"
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

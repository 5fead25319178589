"""``gpupool check --stack prod --base REF --utilisation FILE`` judges both halves of prod.

A throwaway repository holds the kit; its working tree raises prod's on-premises L40S
Kubernetes pool (the embeddings workload's maxReplicas, so its KEDA ScaledObject's
maxReplicaCount, and the research team's gpuQuota, so its namespace's ResourceQuota) and the
AWS inference pool's maxSize, in the stack config, versus the commit. Both sides are planned
for real (the offline Pulumi plan) and diffed; the snapshot says which pools are idle.
"""

from __future__ import annotations

import json
import shutil
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
from cli_support import ROOT, run_in_process

from tests.conftest import commit, git

RID = "gpu-capacity-vs-utilisation"


@pytest.fixture(scope="module")
def kit(tmp_path_factory: pytest.TempPathFactory) -> Path:
    repo = tmp_path_factory.mktemp("kit")
    ignore = shutil.ignore_patterns("__pycache__", "*.pyc")
    for name in ("gpupool", "infra", "stacks"):
        shutil.copytree(ROOT / name, repo / name, ignore=ignore)
    shutil.copy(ROOT / "Pulumi.yaml", repo / "Pulumi.yaml")
    git(repo, "init", "-q")
    commit(repo, "base")
    prod = repo / "stacks" / "Pulumi.prod.yaml"
    text = prod.read_text()
    raised = (text.replace("          maxReplicas: 6\n", "          maxReplicas: 12\n", 1)
              .replace("          costCenter: cc-research-2001\n          gpuQuota: 8\n",
                       "          costCenter: cc-research-2001\n          gpuQuota: 16\n", 1)
              .replace("      minSize: 3\n      maxSize: 24\n", "      minSize: 3\n"
                       "      maxSize: 32\n", 1))
    assert raised.count("maxReplicas: 12") == raised.count("gpuQuota: 16") == 1
    assert "maxSize: 32" in raised
    prod.write_text(raised)
    return repo


def _onprem(utilisation: float | None, status: str) -> dict[str, Any]:
    """The on-premises pool's row as `gpupool debt --prometheus --stack prod` writes it."""
    used = None if utilisation is None else round(1344.0 * utilisation, 1)
    return {"pool": "onprem", "platform": "on-prem", "role": "pool", "team": "ml-platform",
            "instance_type": "", "gpus_per_instance": 2.0, "status": status,
            "allocated_gpu_hours": 1344.0, "used_gpu_hours": used,
            "debt_gpu_hours": None if used is None else round(1344.0 - used, 1),
            "utilisation": utilisation, "debt_usd": None if used is None else 0.0,
            "price_per_gpu_hour": 0.0}


def _inference(utilisation: float) -> dict[str, Any]:
    return {"pool": "prod-inference-asg-1a2b3c4", "platform": "aws", "role": "pool",
            "team": "ml-platform", "instance_type": "g4dn.xlarge", "gpus_per_instance": 1,
            "status": "measured", "min_size": 3, "max_size": 24, "desired_capacity": 4,
            "allocated_gpu_hours": 672.0, "used_gpu_hours": 672.0 * utilisation,
            "debt_gpu_hours": 672.0 * (1 - utilisation), "utilisation": utilisation,
            "debt_usd": round(672.0 * (1 - utilisation) * 0.526, 2)}


def _snapshot(tmp: Path, pools: list[dict[str, Any]]) -> Path:
    taken = datetime.now(UTC) - timedelta(hours=1)
    doc = {"format": "gpupool-debt", "version": 1,
           "generated_at": taken.strftime("%Y-%m-%dT%H:%M:%SZ"),
           "window": {"start": (taken - timedelta(days=7)).strftime("%Y-%m-%dT%H:00:00Z"),
                      "end": taken.strftime("%Y-%m-%dT%H:00:00Z"), "period_s": 3600},
           "pools": pools, "teams": [], "totals": {}}
    path = tmp / "utilisation.json"
    path.write_text(json.dumps(doc))
    return path


def _check(kit: Path, snap: Path, monkeypatch: pytest.MonkeyPatch) -> dict[str, dict[str, Any]]:
    monkeypatch.chdir(kit)
    run = run_in_process(["check", "--stack", "prod", "--base", "HEAD", "--utilisation",
                          str(snap), "--format", "json"])
    assert run.code in (0, 1), run.err
    doc = json.loads(run.out)
    return {v["resource"]: v for v in doc["violations"] if v["policy"] == RID}


def _by_kind(found: dict[str, dict[str, Any]], token: str) -> dict[str, Any]:
    (one,) = [v for address, v in found.items() if token in address]
    return one


def test_raising_the_idle_onprem_pool_is_denied_and_the_aws_half_still_judged(
        kit: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    snap = _snapshot(tmp_path, [_onprem(0.08, "measured"), _inference(0.12)])
    found = _check(kit, snap, monkeypatch)
    keda = _by_kind(found, "ScaledObject")
    assert (keda["enforcement"], keda["unknown"]) == ("mandatory", False)
    assert keda["message"].startswith(
        "raises ScaledObject gpu-ml-platform/embeddings maxReplicaCount 6 → 12 on GPU pool "
        "onprem, which ran at 8.0% GPU utilisation over 7 days")
    assert "1,236.5 GPU-hours allocated and not used ($0.00) of 1,344.0" in keda["message"]
    quota = _by_kind(found, "ResourceQuota")
    assert quota["enforcement"] == "mandatory"
    assert ("raises ResourceQuota gpu-research/gpu-quota hard.requests.nvidia.com/gpu 8 → 16; "
            "hard.limits.nvidia.com/gpu 8 → 16 on GPU pool onprem") in quota["message"]
    asg = _by_kind(found, "autoscaling/group:Group::prod-inference")
    assert asg["enforcement"] == "mandatory"
    assert "max_size 24 → 32 (+8 GPUs of capacity" in asg["message"].replace("maxSize", "max_size")
    assert len(found) == 3, sorted(found)  # nothing else in prod changed


def test_a_busy_pool_may_grow_and_a_partial_one_cannot_vouch(
        kit: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    busy = _check(kit, _snapshot(tmp_path, [_onprem(0.72, "measured"), _inference(0.81)]),
                  monkeypatch)
    assert busy == {}
    # exporter gaps, as the real Prometheus fixture's week has them: fail closed
    partial = _check(kit, _snapshot(tmp_path, [_onprem(0.3915, "partial"), _inference(0.81)]),
                     monkeypatch)
    assert {(v["unknown"], "could not measure (partial" in v["message"])
            for v in partial.values()} == {(True, True)}
    assert len(partial) == 2

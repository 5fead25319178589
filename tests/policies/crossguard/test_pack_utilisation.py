
"""gpu-capacity-vs-utilisation in the CrossGuard pack, over its real gRPC Analyzer protocol.

CrossGuard passes only new inputs: without a baseline every group looks new. The snapshot
records each pool's sizes, so the pack still sees that ``maxSize`` 4 became 8.
"""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest

from policies.testing import PackRpcError, PolicyPackHarness, Resource

ASG = "aws:autoscaling/group:Group"
RID = "gpu-capacity-vs-utilisation"


def write_snapshot(path: Path, utilisation: float | None, age: timedelta = timedelta(hours=1)
                   ) -> str:
    taken = datetime.now(UTC) - age
    path.write_text(json.dumps({
        "generated_at": taken.strftime("%Y-%m-%dT%H:%M:%SZ"),
        "window": {"start": (taken - timedelta(days=7)).strftime("%Y-%m-%dT%H:00:00Z"),
                   "end": taken.strftime("%Y-%m-%dT%H:00:00Z"), "period_s": 3600},
        "pools": [{"pool": "prod-inference-asg-3c9f0e1", "team": "ml",
                   "instance_type": "g4dn.xlarge", "gpus_per_instance": 1,
                   "status": "measured" if utilisation is not None else "not measured",
                   "min_size": 3, "desired_capacity": 4, "max_size": 4,
                   "allocated_gpu_hours": 672.0, "utilisation": utilisation,
                   "debt_gpu_hours": None if utilisation is None else 672 * (1 - utilisation),
                   "debt_usd": None}]}))
    return str(path)


def group(max_size: int) -> Resource:
    """The kit's prod inference group as the engine registers it (autonamed at create)."""
    props: dict[str, Any] = {
        "name": "prod-inference-asg-3c9f0e1", "minSize": 3, "maxSize": max_size,
        "desiredCapacity": 4,
        "mixedInstancesPolicy": {"launchTemplate": {
            "launchTemplateSpecification": {"launchTemplateId": "lt-0123", "version": "1"},
            "overrides": [{"instanceType": "g4dn.xlarge"}]}}}
    return Resource(ASG, "prod-inference-asg", props)


def diagnostics(pack: PolicyPackHarness, config: dict[str, Any], max_size: int
                ) -> list[tuple[str, str]]:
    pack.configure({"all": "disabled", RID: {"enforcementLevel": "mandatory", **config}})
    result = pack.analyze_stack([group(max_size)])
    return [(d.enforcement_level, d.detail) for d in result.diagnostics
            if d.policy_name == RID]


def test_raise_on_an_idle_pool_is_denied_at_deploy_time(pack: PolicyPackHarness,
                                                        tmp_path: Path) -> None:
    snap = write_snapshot(tmp_path / "u.json", 0.15)
    ((level, message),) = diagnostics(pack, {"utilisationSnapshot": snap}, 8)
    assert level == "mandatory"
    assert message.startswith("raises maxSize 4 → 8 (+4 GPUs of capacity, up to +$2.104/h) "
                              "on GPU pool prod-inference-asg-3c9f0e1, which ran at 15.0% GPU")
    assert diagnostics(pack, {"utilisationSnapshot": snap}, 4) == []  # no raise, no finding


def test_busy_pool_stale_snapshot_and_no_snapshot(pack: PolicyPackHarness,
                                                  tmp_path: Path) -> None:
    busy = write_snapshot(tmp_path / "busy.json", 0.75)
    assert diagnostics(pack, {"utilisationSnapshot": busy}, 8) == []
    stale = write_snapshot(tmp_path / "stale.json", 0.15, age=timedelta(days=5))
    ((level, message),) = diagnostics(pack, {"utilisationSnapshot": stale}, 8)
    taken = json.loads(Path(stale).read_text())["generated_at"][:16].replace("T", " ")
    assert level == "advisory" and "cannot verify" in message
    assert f"was taken {taken} UTC, more than maxSnapshotAgeHours (48) ago" in message
    # no snapshot and no baseline: the group is new to the pack, nothing to judge or say
    assert diagnostics(pack, {}, 8) == []


def test_a_missing_snapshot_is_refused_at_configure(pack: PolicyPackHarness,
                                                    tmp_path: Path) -> None:
    with pytest.raises(PackRpcError) as e:
        pack.configure({RID: {"utilisationSnapshot": str(tmp_path / "nope.json")}})
    assert e.value.code.name == "INVALID_ARGUMENT"
    assert f"{tmp_path / 'nope.json'}: no such file" in e.value.details

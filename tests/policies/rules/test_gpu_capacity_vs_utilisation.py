# ruff: noqa: RUF003  (→ and × as users read them in messages)
"""gpu-capacity-vs-utilisation on real plan files, with snapshots as `gpupool debt` writes them.

The snapshots are written by the report's own JSON renderer (through the debt package's
synthetic fleet), dated now, so "fresh" means fresh; the stale case is dated ten days ago.
"""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest

from gpupool.catalog import load_catalog
from gpupool.record import replace
from policies.engine import evaluate
from policies.model import ChangeKind, ResourceChange, normalise_inputs, resource_kind
from policies.result import Result
from policies.rules import get_rule
from policies.rules.base import RuleContext
from policies.settings import PolicySettings, Settings
from policies.sources import load_plan

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures"
RAISE = FIXTURES / "terraform" / "raise-gpu-pools.json"
PREVIEW = FIXTURES / "pulumi" / "preview-gpu-upsize-null-deps.json"
RULE = get_rule("gpu-capacity-vs-utilisation")
RID = RULE.meta.id


def pool(name: str, utilisation: float | None, *, itype: str = "g4dn.xlarge",
         min_size: int = 1, max_size: int = 8, desired: int = 2,
         allocated: float = 336.0) -> dict[str, Any]:
    used = None if utilisation is None else allocated * utilisation
    debt = None if used is None else allocated - used
    price = load_catalog().price_per_gpu_hour(itype)
    return {"pool": name, "team": "ml-platform", "instance_type": itype, "gpus_per_instance": 1,
            "status": "measured" if utilisation is not None else "not measured",
            "min_size": min_size, "max_size": max_size, "desired_capacity": desired,
            "allocated_gpu_hours": allocated, "used_gpu_hours": used, "debt_gpu_hours": debt,
            "utilisation": utilisation,
            "debt_usd": None if debt is None or price is None else round(debt * price, 2)}


def snapshot(tmp_path: Path, pools: list[dict[str, Any]], *, age: timedelta = timedelta(hours=2),
             name: str = "utilisation.json") -> Path:
    taken = datetime.now(UTC) - age
    doc = {"format": "gpupool-debt", "version": 1,
           "generated_at": taken.strftime("%Y-%m-%dT%H:%M:%SZ"),
           "window": {"start": (taken - timedelta(days=7)).strftime("%Y-%m-%dT%H:00:00Z"),
                      "end": taken.strftime("%Y-%m-%dT%H:00:00Z"), "period_s": 3600},
           "pools": pools, "teams": [], "totals": {}, "api_calls": 7}
    path = tmp_path / name
    path.write_text(json.dumps(doc))
    return path


FLEET = [pool("gpu-inference", 0.12), pool("gpu-batch", 0.81, min_size=0, max_size=4, desired=0),
         pool("gpu-vision", None, max_size=4, desired=1)]


def settings_with(**params: Any) -> Settings:
    base = Settings.default()
    policy = base.policies[RID]
    updated = PolicySettings(policy.enforcement, RULE.parse_params(params))
    return replace(base, policies={**base.policies, RID: updated})


def findings(result: Result) -> dict[str, tuple[str, bool, str]]:
    """Resource → (enforcement, unknown, message) of this rule's findings."""
    return {v.resource: (v.enforcement.value, v.unknown, v.message)
            for v in result.violations if v.policy == RID}


def test_raises_on_an_idle_pool_are_denied_with_the_figures(tmp_path: Path) -> None:
    snap = snapshot(tmp_path, FLEET)
    got = findings(evaluate([load_plan(str(RAISE))],
                            settings_with(utilisationSnapshot=str(snap))))
    level, unknown, message = got["aws_autoscaling_group.gpu_inference"]
    assert (level, unknown) == ("mandatory", False)
    assert message.startswith(
        "raises min_size 1 → 2 (+1 GPUs allocated, +$384/month); max_size 8 → 16 (+8 GPUs of "
        "capacity, up to +$4.208/h) on GPU pool gpu-inference, which ran at 12.0% GPU "
        "utilisation over 7 days to ")
    assert "(threshold 40 %): 295.7 GPU-hours allocated and not used ($155.53) of 336.0" in message
    # the busy pool may grow; the unmeasured one cannot be verified; the new one is advisory
    assert "aws_autoscaling_group.gpu_batch" not in got
    assert got["aws_autoscaling_group.gpu_vision"][:2] == ("advisory", True)
    assert "which the snapshot could not measure (not measured" in got[
        "aws_autoscaling_group.gpu_vision"][2]
    assert got["aws_autoscaling_group.gpu_research"][:2] == ("advisory", False)
    assert "a new GPU pool has no utilisation history" in got[
        "aws_autoscaling_group.gpu_research"][2]


def test_without_a_snapshot_nothing_blocks(tmp_path: Path) -> None:
    result = evaluate([load_plan(str(RAISE))], Settings.default())
    got = findings(result)
    assert {v[0] for v in got.values()} == {"advisory"}
    assert "no utilisation snapshot is configured" in got["aws_autoscaling_group.gpu_inference"][2]
    assert "aws_autoscaling_group.gpu_research" not in got  # a first deployment: nothing said
    assert len(got) == 3


def test_a_stale_snapshot_is_its_own_finding(tmp_path: Path) -> None:
    snap = snapshot(tmp_path, FLEET, age=timedelta(days=10))
    got = findings(evaluate([load_plan(str(RAISE))],
                            settings_with(utilisationSnapshot=str(snap))))
    level, unknown, message = got["aws_autoscaling_group.gpu_inference"]
    assert (level, unknown) == ("advisory", True)  # reported at unknownEnforcement
    taken = json.loads(snap.read_text())["generated_at"][:16].replace("T", " ")
    assert (f"was taken {taken} UTC, more than maxSnapshotAgeHours (48) ago; it measured 12.0% "
            "then") in message
    strict = findings(evaluate([load_plan(str(RAISE))], settings_with(
        utilisationSnapshot=str(snap), unknownEnforcement="mandatory")))
    assert strict["aws_autoscaling_group.gpu_inference"][0] == "mandatory"
    fresh_enough = findings(evaluate([load_plan(str(RAISE))], settings_with(
        utilisationSnapshot=str(snap), maxSnapshotAgeHours=24 * 11)))
    assert fresh_enough["aws_autoscaling_group.gpu_inference"][0] == "mandatory"


def test_thresholds_per_pool_pattern(tmp_path: Path) -> None:
    snap = snapshot(tmp_path, FLEET)
    got = findings(evaluate([load_plan(str(RAISE))], settings_with(
        utilisationSnapshot=str(snap), thresholds={"gpu-inf*": 10, "gpu-*": 90})))
    assert "aws_autoscaling_group.gpu_inference" not in got  # 12 % ≥ 10 %: first match wins
    assert "threshold 90 %" in got["aws_autoscaling_group.gpu_batch"][2]  # 81 % < 90 %


def test_pulumi_preview_raise_and_new_gpu_type(tmp_path: Path) -> None:
    snap = snapshot(tmp_path, [pool("trainer-5e0e2ac", 0.2, max_size=4)])
    got = findings(evaluate([load_plan(str(PREVIEW))],
                            settings_with(utilisationSnapshot=str(snap))))
    ((address, (level, _, message)),) = got.items()
    assert address.endswith("aws:autoscaling/group:Group::trainer") and level == "mandatory"
    assert message.startswith("raises maxSize 4 → 8")  # Pulumi's spelling of the property
    assert "ran at 20.0%" in message
    # g4dn.xlarge → g4dn.16xlarge swaps the type (gpu-no-vertical-upsize's business): no more
    # types than before, so it is no added GPU type here
    assert "adds GPU type" not in message


def _change(name: str, logical: str, max_size: int, old_max: int | None) -> ResourceChange:
    new = {"name": name, "minSize": 1, "maxSize": max_size, "mixedInstancesPolicy": {
        "launchTemplate": {"overrides": [{"instanceType": "g4dn.xlarge"}]}}}
    old = None if old_max is None else {**new, "maxSize": old_max}
    type_ = "aws:autoscaling/group:Group"
    return ResourceChange(
        address=f"urn:pulumi:dev::gpupool::gpupool:aws:GpuPool${type_}::{logical}", type=type_,
        name=logical, change=ChangeKind.CREATE if old is None else ChangeKind.UPDATE,
        new=normalise_inputs(new), old=None if old is None else normalise_inputs(old),
        source="test", kind=resource_kind(type_))


def test_pulumi_autonames_match_by_logical_name(tmp_path: Path) -> None:
    """An offline plan (or a pack without a baseline) names the group dev-inference-asg-440a86a
    while AWS holds dev-inference-asg-7f3e9c1: both are the logical name plus Pulumi's suffix.
    Without old inputs the snapshot's recorded sizes are the 'before'."""
    snap = snapshot(tmp_path, [pool("dev-inference-asg-7f3e9c1", 0.1, max_size=4)])
    params = {"utilisationSnapshot": str(snap)}
    change = _change("dev-inference-asg-440a86a", "dev-inference-asg", 8, None)
    (f,) = RULE.run([change], load_catalog(), params)
    assert f.message.startswith("raises maxSize 4 → 8") and not f.advisory_only
    same = _change("dev-inference-asg-440a86a", "dev-inference-asg", 4, None)
    assert RULE.run([same], load_catalog(), params) == []
    other = _change("dev-training-asg-0000000", "dev-training-asg", 8, None)
    (f,) = RULE.run([other], load_catalog(), params)
    assert f.advisory_only and "does not know this pool" in f.message


def test_an_unreadable_snapshot_is_bad_config_and_fails_closed(tmp_path: Path) -> None:
    bad = tmp_path / "bad.json"
    bad.write_text('{"window": {}, "pools": []}')
    with pytest.raises(ValueError, match=r"bad\.json: window\.start: expected a value: this key"):
        RULE.parse_params({"utilisationSnapshot": str(bad)})
    # a snapshot that breaks after the config was read: a blocking finding, never a pass
    good = snapshot(tmp_path, FLEET)
    params = RULE.parse_params({"utilisationSnapshot": str(good)})
    good.write_text("{")
    change = _change("gpu-inference", "pool", 8, 4)
    ctx = RuleContext(load_catalog(), params, {change.address: change})
    (f,) = list(RULE.check([change], ctx))
    assert not f.unknown and not f.advisory_only
    assert f.message.startswith("utilisation snapshot cannot be read: ")


def test_check_cli_takes_the_snapshot(tmp_path: Path, capsys: pytest.CaptureFixture[str]
                                      ) -> None:
    from gpupool.cli import main

    snap = snapshot(tmp_path, FLEET)
    config = tmp_path / "policy.yaml"
    config.write_text("all: disabled\ngpu-capacity-vs-utilisation: mandatory\n")
    args = ["check", str(RAISE), "--config", str(config), "--format", "json"]
    assert main(args) == 0  # without measurements: advisories only
    doc = json.loads(capsys.readouterr().out)
    assert doc["verdict"] == "pass"
    assert main([*args, "--utilisation", str(snap)]) == 1
    doc = json.loads(capsys.readouterr().out)
    blocking = [v for v in doc["violations"] if v["enforcement"] == "mandatory"]
    assert [v["resource"] for v in blocking] == ["aws_autoscaling_group.gpu_inference"]
    # the config may name the snapshot too; --utilisation wins over it
    config.write_text(f"gpu-capacity-vs-utilisation:\n  utilisationSnapshot: {tmp_path}/none\n")
    assert main([*args, "--utilisation", str(snap)]) == 2
    err = capsys.readouterr().err
    assert "none: no such file" in err  # the config itself is still checked


def test_check_cli_bad_snapshot_is_exit_2(tmp_path: Path,
                                          capsys: pytest.CaptureFixture[str]) -> None:
    from gpupool.cli import main

    bad = tmp_path / "u.json"
    bad.write_text('{"window": {"start": "2026-11-01T00:00:00Z", "end": "x", "period_s": 3600},'
                   ' "pools": []}')
    assert main(["check", str(RAISE), "--utilisation", str(bad)]) == 2
    out, err = capsys.readouterr()
    assert out == "" and err.splitlines() == [
        f"gpupool check: {bad}: window.end: expected an ISO 8601 time such as "
        "2026-11-30T06:00:00Z, got 'x'"]


def test_remote_gpu_proxy_tiers_are_judged_like_pools(tmp_path: Path) -> None:
    """Proxies own GPUs: raising an idle tier's max is denied; its CPU clients are no GPU pool.
    The five-tier plan with the `good` tier's groups turned into updates that raise max 2 → 4."""
    plan = json.loads((FIXTURES / "terraform" / "proxy-tiers.json").read_text())
    names = {"module.good.aws_autoscaling_group.proxy": "good-proxy-20261130",
             "module.good.aws_autoscaling_group.client": "good-client-20261130"}
    for rc in plan["resource_changes"]:
        if rc["address"] in names:
            change = rc["change"]
            change["after"]["name"] = names[rc["address"]]
            change["after_unknown"].pop("name", None)
            change["before"] = {**change["after"], "max_size": 2}
            change["actions"] = ["update"]
    path = tmp_path / "raise-proxies.json"
    path.write_text(json.dumps(plan))
    snap = snapshot(tmp_path, [pool("good-proxy-20261130", 0.08, max_size=2)])
    got = findings(evaluate([load_plan(str(path))],
                            settings_with(utilisationSnapshot=str(snap))))
    enforcement, unknown, message = got["module.good.aws_autoscaling_group.proxy"]
    assert (enforcement, unknown) == ("mandatory", False)
    assert "raises max_size 2 → 4 (+2 GPUs of capacity" in message
    assert "ran at 8.0% GPU utilisation" in message
    assert "module.good.aws_autoscaling_group.client" not in got


def test_a_kubernetes_node_group_is_said_to_be_measured_elsewhere(tmp_path: Path) -> None:
    nodes = {**pool("gpu-inference", None), "role": "kubernetes-nodes"}
    snap = snapshot(tmp_path, [nodes])
    got = findings(evaluate([load_plan(str(RAISE))], settings_with(utilisationSnapshot=str(snap))))
    _, unknown, message = got["aws_autoscaling_group.gpu_inference"]
    assert unknown and "a Kubernetes node group, whose GPUs' use is in Prometheus" in message

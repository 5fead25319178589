"""`gpupool check` on Terraform and Pulumi plans of remote-GPU proxy tiers (the fixtures of
``tests/fixtures/proxy_tiers.py``): a spread placement group, a public IP, an ALB in front and a
g5g.xlarge under a 5 Gbps budget each block with the message a reviewer needs; the compliant
tier passes on its own; and the pack, over its real gRPC protocol, says the same words."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from gpupool.cli import main
from policies.engine import evaluate
from policies.settings import Settings
from policies.sources import load_plan, parse_document
from policies.testing import UNKNOWN, UNKNOWN_SENTINEL, PolicyPackHarness, Resource

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures"
PACK_DIR = Path(__file__).resolve().parents[3] / "policies"
TF = FIXTURES / "terraform" / "proxy-tiers.json"
PULUMI = FIXTURES / "pulumi" / "preview-proxy-tiers.json"
TIER_URN = "urn:pulumi:staging::gpupool::gpupool:aws:RemoteGpuTier$aws:autoscaling/group:Group"

BLOCKING = {
    "spread": ("gpu-proxy-placement", "placement group {pg} has strategy spread: GPU proxies "
               "need cluster"),
    "public": ("gpu-proxy-private", "GPU proxy gets a public IP from launch template {lt} "
               "({nic} = true)"),
    "alb": ("gpu-proxy-private", "a load balancer is in the data path: front ({att})"),
    "arm": ("gpu-proxy-network-budget", "g5g.xlarge's baseline bandwidth is 1.25 Gbps (its 'up "
            "to' 10 does not count), below the budget's 5 Gbps (gpupool:remoting-min-gbps); "
            "g5g.4xlarge (5 Gbps baseline, $0.828/h) is the smallest T4g size that meets it"),
}


def check(path: Path, capsys: pytest.CaptureFixture[str]) -> tuple[int, dict[str, Any]]:
    code = main(["check", str(path), "--format", "json"])
    return code, json.loads(capsys.readouterr().out)


@pytest.mark.parametrize(("path", "address", "words"), [
    (TF, "module.{tier}.aws_autoscaling_group.proxy",
     {"pg": "tier", "lt": "proxy", "nic": "network_interfaces.associate_public_ip_address",
      "att": "aws_autoscaling_attachment"}),
    (PULUMI, TIER_URN + "::{tier}-proxy-asg",
     {"pg": "spread-pg", "lt": "public-proxy-lt",
      "nic": "networkInterfaces.associatePublicIpAddress",
      "att": "aws:autoscaling/attachment:Attachment"}),
], ids=["terraform", "pulumi-preview"])
def test_each_faulty_tier_blocks_with_its_reason_and_nothing_else_is_said(
        path: Path, address: str, words: dict[str, str],
        capsys: pytest.CaptureFixture[str]) -> None:
    code, doc = check(path, capsys)
    assert code == 1 and doc["verdict"] == "fail" and doc["errors"] == []
    found = {(v["policy"], v["resource"]): v for v in doc["violations"]}
    assert set(found) == {(policy, address.format(tier=tier))
                          for tier, (policy, _) in BLOCKING.items()}
    for tier, (policy, phrase) in BLOCKING.items():
        v = found[(policy, address.format(tier=tier))]
        assert v["enforcement"] == "mandatory"
        assert phrase.format(**words) in v["message"], v["message"]


def without(doc: dict[str, Any], *tiers: str) -> dict[str, Any]:
    """The Terraform plan with some tiers (and the load balancer) removed."""
    out = json.loads(json.dumps(doc))
    out["resource_changes"] = [
        rc for rc in doc["resource_changes"]
        if not any(rc["address"].startswith(f"module.{t}.") for t in tiers)
        and not rc["address"].startswith(("aws_lb", "aws_autoscaling_attachment"))]
    out["configuration"]["root_module"]["module_calls"] = {
        k: v for k, v in doc["configuration"]["root_module"]["module_calls"].items()
        if k not in tiers}
    return out


def test_the_compliant_tier_passes_on_its_own(tmp_path: Path,
                                              capsys: pytest.CaptureFixture[str]) -> None:
    good = tmp_path / "good.json"
    good.write_text(json.dumps(without(json.loads(TF.read_text()), *BLOCKING)))
    code, doc = check(good, capsys)
    assert code == 0 and doc["verdict"] == "pass"
    assert doc["violations"] == []


def test_without_configuration_references_links_cannot_be_proven(tmp_path: Path) -> None:
    """Every id in the plan is unknown until apply: only the configuration says which placement
    group and which subnet a group uses. Without it, the rules say so; nothing passes unseen."""
    doc = without(json.loads(TF.read_text()), *BLOCKING)
    doc.pop("configuration")
    plan = tmp_path / "no-config.json"
    plan.write_text(json.dumps(doc))
    result = evaluate([load_plan(str(plan))], Settings.default())
    said = {(v.policy, v.unknown) for v in result.violations
            if v.resource == "module.good.aws_autoscaling_group.proxy"}
    assert ("gpu-proxy-placement", True) in said and ("gpu-proxy-private", True) in said
    assert not [v for v in result.violations if v.blocking]


# --------------------------------------------------------------------------- the pack


def preview_resources(doc: dict[str, Any]) -> list[Resource]:
    """The preview's new states as the engine sends them to the pack (unknowns included)."""
    out = []
    for step in doc["steps"]:
        state = step.get("newState") or {}
        if not state.get("custom", True) or state["type"].startswith("pulumi:"):
            continue
        deps = state.get("propertyDependencies") or {}
        out.append(Resource(
            type=state["type"], name=step["urn"].rsplit("::", 1)[1],
            properties=_unknowns(state.get("inputs", {})), urn=step["urn"],
            parent=state.get("parent", ""),
            dependencies=sorted({u for urns in deps.values() for u in urns}),
            property_dependencies=deps))
    return out


def _unknowns(value: Any) -> Any:
    """The harness's UNKNOWN where the preview wrote Pulumi's unknown sentinel."""
    if value == UNKNOWN_SENTINEL:
        return UNKNOWN
    if isinstance(value, dict):
        return {k: _unknowns(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_unknowns(v) for v in value]
    return value


@pytest.fixture(scope="module")
def pack() -> Any:
    with PolicyPackHarness(PACK_DIR, stack="staging", project="gpupool") as h:
        h.configure({})
        yield h


def test_the_pack_over_grpc_says_what_check_says(pack: PolicyPackHarness) -> None:
    doc = json.loads(PULUMI.read_text())
    rs = preview_resources(doc)
    diags = [d for r in rs for d in pack.analyze_resource(r)] + list(pack.analyze_stack(rs))
    network = sorted((d.policy_name, d.enforcement_level, d.urn, d.detail) for d in diags
                     if d.policy_name.startswith("gpu-proxy"))
    engine = evaluate([parse_document(doc, "preview.json")], Settings.default())
    expected = sorted((v.policy, str(v.enforcement), r.address, v.message)
                      for v in engine.violations if v.policy.startswith("gpu-proxy")
                      for r in v.resources)
    assert network == expected
    assert {(d.policy_name, d.urn.rsplit("::", 1)[1]) for d in diags if d.mandatory} == {
        ("gpu-proxy-placement", "spread-proxy-asg"), ("gpu-proxy-private", "public-proxy-asg"),
        ("gpu-proxy-private", "alb-proxy-asg"), ("gpu-proxy-network-budget", "arm-proxy-asg")}


def test_pack_parameters_move_the_rtt_floor(pack: PolicyPackHarness) -> None:
    """A measured 150 µs TCP round trip (policy config) makes the 200 µs budget the floor's."""
    rs = preview_resources(json.loads(PULUMI.read_text()))
    pack.configure({"gpu-proxy-network-budget": {"tcpRttFloorUs": 250}})
    try:
        diags = list(pack.analyze_stack(rs))
    finally:
        pack.configure({})
    budget = [d for d in diags if d.policy_name == "gpu-proxy-network-budget"]
    good = [d for d in budget if d.urn.endswith("::good-proxy-asg")]
    assert good and all("reaches ~250 µs at best" in d.detail for d in good)
    assert all(d.mandatory for d in good)

"""team-gpu-quota through the pack over real gRPC: the teams file comes from the pack's config."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from policies.testing import PackRpcError, PolicyPackHarness, Resource

TEAMS = Path(__file__).resolve().parents[2] / "fixtures" / "golden" / "teams.yaml"
ASG = "aws:autoscaling/group:Group"


def group(instance_type: str, max_size: int, team: str, env: str) -> dict[str, Any]:
    return {"maxSize": max_size, "minSize": 1,
            "mixedInstancesPolicy": {"launchTemplate": {
                "overrides": [{"instanceType": instance_type}]}},
            "tags": [{"key": "team", "value": team, "propagateAtLaunch": True},
                     {"key": "environment", "value": env, "propagateAtLaunch": True}]}


def quota_findings(pack: PolicyPackHarness, resources: list[Resource]) -> list[Any]:
    return pack.analyze_stack(resources).for_policy("team-gpu-quota")


def test_the_pack_reads_the_teams_file_from_its_config(pack: PolicyPackHarness) -> None:
    pack.configure({"team-gpu-quota": {"teamsFile": str(TEAMS)}})
    within = [Resource(ASG, "a", group("g6.xlarge", 4, "research", "dev"))]
    assert quota_findings(pack, within) == []
    over = [*within, Resource(ASG, "b", group("g4dn.xlarge", 2, "research", "dev"))]
    [d] = quota_findings(pack, over)
    assert d.enforcement_level == "mandatory"
    assert "team research in dev: 6 GPUs at max exceeds its quota of 4" in d.detail
    assert f"{TEAMS}: teams.research.gpuQuota.dev" in d.detail
    assert d.urn == pack.urn(ASG, "a")  # the largest holder


def test_budget_over_the_wire(pack: PolicyPackHarness) -> None:
    pack.configure({"team-gpu-quota": {"teamsFile": str(TEAMS)}})
    [d] = quota_findings(pack, [Resource(ASG, "arm", group("g5g.xlarge", 2, "vision", "dev"))])
    assert "team vision: $613.20/month at max exceeds its monthly budget of $500.00" in d.detail


def test_inline_teams_and_levels_from_config(pack: PolicyPackHarness) -> None:
    teams = {"ops": {"owners": ["@acme/ops"], "costCenter": "cc-9", "allowedGpus": ["T4"],
                     "gpuQuota": {"prod": 1}, "monthlyBudgetUsd": 10000}}
    pack.configure({"team-gpu-quota": {"enforcementLevel": "advisory", "teams": teams}})
    [d] = quota_findings(pack, [Resource(ASG, "g", group("g4dn.xlarge", 3, "ops", "prod"))])
    assert d.enforcement_level == "advisory" and "3 GPUs at max exceeds its quota of 1" in d.detail


def test_a_broken_teams_file_is_refused_at_configure(pack: PolicyPackHarness,
                                                      tmp_path: Path) -> None:
    bad = tmp_path / "teams.yaml"
    bad.write_text("teams:\n  research: {owners: [], costCenter: cc, allowedGpus: [T4], "
                   "monthlyBudgetUsd: 1}\n")
    with pytest.raises(PackRpcError) as e:
        pack.configure({"team-gpu-quota": {"teamsFile": str(bad)}}, as_cli=False)
    assert "teams.research.owners: expected at least 1 item(s)" in str(e.value)
    with pytest.raises(PackRpcError) as e:
        pack.configure({"team-gpu-quota": {"teamsFile": str(tmp_path / "none.yaml")}},
                       as_cli=False)
    assert "none.yaml: no such file" in str(e.value)
    pack.configure({})


def test_without_a_teams_file_nothing_is_judged(pack: PolicyPackHarness) -> None:
    pack.configure({})
    assert quota_findings(pack, [Resource(ASG, "g", group("p5.48xlarge", 99, "x", "prod"))]) == []

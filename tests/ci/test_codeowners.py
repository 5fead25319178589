"""CODEOWNERS gives what judges pull requests to the platform team, and each team its stacks."""

from __future__ import annotations

import fnmatch
from pathlib import Path

import pytest

from gpupool.ci.trusted import GOVERNED
from gpupool.teams import load_teams

ROOT = Path(__file__).resolve().parents[2]
PLATFORM = "@gpupool/platform"


def rules() -> list[tuple[str, list[str]]]:
    out = []
    for line in (ROOT / ".github" / "CODEOWNERS").read_text().splitlines():
        line = line.split("#", 1)[0].strip()
        if line:
            pattern, *owners = line.split()
            out.append((pattern, owners))
    return out


def owners_of(path: str) -> list[str]:
    """GitHub's reading: the last matching pattern wins; a leading / anchors at the root, a
    trailing / matches everything below."""
    found: list[str] = []
    for pattern, owners in rules():
        p = pattern.lstrip("/")
        if p.endswith("/"):
            hit = path.startswith(p)
        elif pattern == "*":
            hit = True
        else:
            hit = fnmatch.fnmatch(path, p)
        if hit:
            found = owners
    return found


@pytest.mark.parametrize("path", [
    "policy-config.json", "waivers.yaml", "stacks/teams.yaml", "action.yml",
    "policies/rules/team_gpu_quota.py", "policies/PulumiPolicy.yaml",
    ".github/workflows/gpupool.yml", ".github/CODEOWNERS", "gpupool/ci/action.py",
])
def test_what_judges_pull_requests_belongs_to_the_platform_team(path: str) -> None:
    assert owners_of(path) == [PLATFORM], path


def test_every_governed_pattern_of_the_action_has_owners() -> None:
    samples = {".github/**": ".github/workflows/x.yml", "action.yml": "action.yml",
               "CODEOWNERS": ".github/CODEOWNERS", "policies/**": "policies/engine.py"}
    assert set(samples) == set(GOVERNED)
    for path in samples.values():
        assert owners_of(path) == [PLATFORM]


def test_each_team_owns_its_own_stacks() -> None:
    teams = load_teams(ROOT / "stacks" / "teams.yaml")
    for name, team in teams.teams.items():
        assert owners_of(f"stacks/Pulumi.{name}-dev.yaml") == team.owners, name
    # the platform stacks and the teams file itself stay the platform team's
    assert owners_of("stacks/Pulumi.prod.yaml") == [PLATFORM]

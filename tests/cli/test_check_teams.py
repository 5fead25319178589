# ruff: noqa: RUF001, RUF003  (× is the multiplication sign the messages use)
"""``gpupool check --teams FILE``: team-gpu-quota judges by the teams file it is given."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml
from cli_support import FIXTURES, TF_UPSIZE, run_in_process

TEAM = {"owners": ["@acme/ml"], "costCenter": "cc-ml-1042", "allowedGpus": ["T4", "T4g"],
        "monthlyBudgetUsd": 100000}


def teams_file(tmp_path: Path, **quota: int) -> str:
    path = tmp_path / "teams.yaml"
    path.write_text(yaml.safe_dump({"teams": {
        "ml-platform": {**TEAM, "gpuQuota": quota},
        "ml-research": {**TEAM, "gpuQuota": quota}}}))
    return str(path)


@pytest.fixture(scope="module")
def dev_plan(tmp_path_factory: pytest.TempPathFactory) -> str:
    """The dev stack's offline plan, made once (planning is the slow part of check --stack)."""
    out = tmp_path_factory.mktemp("plan") / "dev.json"
    r = run_in_process(["plan", "dev", "--format", "json", "--output", str(out)])
    assert r.code == 0, r.err
    return str(out)


def quota_violations(out: str) -> list[dict[str, str]]:
    return [v for v in json.loads(out)["violations"] if v["policy"] == "team-gpu-quota"]


def test_a_stack_over_its_teams_quota_fails(tmp_path: Path) -> None:
    r = run_in_process(["check", "--stack", "dev", "--teams", teams_file(tmp_path, dev=2),
                        "--format", "json"])
    assert r.code == 1, r.err
    [v] = quota_violations(r.out)
    assert v["enforcement"] == "mandatory"
    assert "team ml-platform in dev: 6 GPUs at max exceeds its quota of 2" in v["message"]
    assert "dev-inference-asg 4 × T4 (maxSize 4); dev-arm-inference-asg 2 × T4g" in v["message"]


def test_within_quota_passes_and_without_teams_nothing_is_judged(tmp_path: Path,
                                                                 dev_plan: str) -> None:
    r = run_in_process(["check", dev_plan, "--teams", teams_file(tmp_path, dev=6),
                        "--format", "json"])
    assert r.code == 0 and quota_violations(r.out) == []
    r = run_in_process(["check", dev_plan, "--format", "json"])
    assert r.code == 0 and quota_violations(r.out) == []


def test_terraform_plan_counts_by_tags(tmp_path: Path) -> None:
    r = run_in_process(["check", str(TF_UPSIZE), "--teams", teams_file(tmp_path, prod=1),
                        "--format", "json"])
    found = quota_violations(r.out)
    assert found and all("exceeds its quota of 1" in v["message"] for v in found)


def test_teams_flag_wins_over_the_config(tmp_path: Path, dev_plan: str) -> None:
    config = tmp_path / "policy.yaml"
    config.write_text(yaml.safe_dump({"team-gpu-quota": {
        "teamsFile": teams_file(tmp_path, dev=100)}}))
    strict = tmp_path / "strict"
    strict.mkdir()
    r = run_in_process(["check", dev_plan, "--config", str(config), "--format", "json"])
    assert r.code == 0
    r = run_in_process(["check", dev_plan, "--config", str(config), "--teams",
                        teams_file(strict, dev=1), "--format", "json"])
    assert r.code == 1 and quota_violations(r.out)


def test_bad_teams_file_is_bad_input(tmp_path: Path) -> None:
    bad = tmp_path / "teams.yaml"
    bad.write_text("teams:\n  ml-platform: {owners: [nobody], costCenter: cc, allowedGpus: [T9],"
                   " monthlyBudgetUsd: -1}\n")
    r = run_in_process(["check", str(FIXTURES / "pulumi" / "preview-empty.json"),
                        "--teams", str(bad)])
    assert r.code == 2
    assert r.err_lines == [
        f"gpupool check: {bad}: teams.ml-platform.owners[0]: expected a GitHub user or team "
        "(@user, @org/team) or an e-mail address, got 'nobody'",
        f"gpupool check: {bad}: teams.ml-platform.monthlyBudgetUsd: expected more than 0.0, "
        "got -1",
    ]
    r = run_in_process(["check", str(FIXTURES / "pulumi" / "preview-empty.json"),
                        "--teams", str(tmp_path / "missing.yaml")])
    assert r.code == 2 and r.err_lines == [
        f"gpupool check: {tmp_path / 'missing.yaml'}: no such file"]


def test_config_with_a_broken_teams_file_names_the_policy(tmp_path: Path) -> None:
    config = tmp_path / "policy.yaml"
    config.write_text(yaml.safe_dump({"team-gpu-quota": {"teamsFile": "nowhere.yaml"}}))
    r = run_in_process(["check", str(FIXTURES / "pulumi" / "preview-empty.json"),
                        "--config", str(config)])
    assert r.code == 2 and len(r.err_lines) == 1
    assert "team-gpu-quota" in r.err and "nowhere.yaml: no such file" in r.err

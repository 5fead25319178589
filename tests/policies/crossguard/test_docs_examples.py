"""The documented CI workflow and config do what the docs say, against today's CLI and pack.

A workflow that calls a renamed flag, or a config file one tool rejects, fails silently in a
user's CI; these tests fail here instead.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml

from gpupool.cli import build_parser
from policies.settings import load_settings
from policies.testing import PolicyPackHarness

PACK_DIR = Path(__file__).resolve().parents[3] / "policies"

DOCS = PACK_DIR.parent / "docs"
WORKFLOW = DOCS / "examples" / "github-actions.yml"
CONFIG = DOCS / "examples" / "policy-config.json"
ACTION = PACK_DIR.parent / "action.yml"


@pytest.fixture(scope="module")
def workflow() -> dict[str, Any]:
    return yaml.safe_load(WORKFLOW.read_text())


def _runs(job: dict[str, Any]) -> list[str]:
    return [s["run"] for s in job["steps"] if "run" in s]


def test_the_check_job_runs_the_action_with_inputs_it_declares(
    workflow: dict[str, Any],
) -> None:
    [step] = [s for s in workflow["jobs"]["check"]["steps"]
              if s.get("uses", "").startswith("gpupool/gpupool@")]
    declared = yaml.safe_load(ACTION.read_text())["inputs"]
    assert set(step["with"]) <= set(declared)
    assert step["with"]["base-ref"] == "${{ github.event.pull_request.base.sha }}"
    # the command the action runs per stack (gpupool/ci/action.py) parses with today's CLI
    argv = ["check", "--stack", "dev", "--base", "origin/main", "--config", "c.json",
            "--teams", "teams.yaml", "--format", "sarif=dev.sarif", "--format", "markdown=dev.md"]
    args = build_parser().parse_args(argv)
    assert (args.stack, args.base) == (["dev"], "origin/main")
    assert {f.split("=")[0] for f in args.format} == {"sarif", "markdown"}


def test_workflow_uploads_sarif_comments_and_previews_only_with_credentials(
    workflow: dict[str, Any],
) -> None:
    check = workflow["jobs"]["check"]
    assert check["permissions"]["security-events"] == "write"
    assert check["permissions"]["pull-requests"] == "write"
    assert check["steps"][0]["with"]["fetch-depth"] == 0  # --base needs history
    assert "secrets" not in json.dumps(check)  # the offline check needs none
    action_uses = [s.get("uses", "") for s in yaml.safe_load(ACTION.read_text())["runs"]["steps"]]
    assert any(u.startswith("github/codeql-action/upload-sarif@") for u in action_uses)
    assert any(u.startswith("marocchino/sticky-pull-request-comment@") for u in action_uses)
    preview = workflow["jobs"]["preview"]
    assert "vars.AWS_ROLE_ARN" in preview["if"]
    # the pull request's program, judged by the base branch's pack
    assert any("--policy-pack .gpupool-base/policies" in r for r in _runs(preview))


def test_the_documented_config_serves_check_and_the_pack(tmp_path: Path) -> None:
    settings = load_settings(str(CONFIG), None)
    assert settings.enforcement("gpu-chargeback-tags") == "advisory"
    # The pack reads the baseline it names; give it one where the docs put it.
    pack_dir = tmp_path / "policies"
    shutil.copytree(PACK_DIR, pack_dir, ignore=shutil.ignore_patterns("__pycache__"))
    (pack_dir / "baseline.json").write_text(json.dumps(
        {"version": 3, "deployment": {"resources": []}}))
    with PolicyPackHarness(pack_dir) as pack:
        sent = pack.configure(json.loads(CONFIG.read_text()))
        assert sent["gpu-smallest-instance"]["allowedInstanceTypes"] == ["p5.48xlarge"]
        result = pack.analyze("aws:ec2/instance:Instance", "x", {"instanceType": "p5.48xlarge"})
        assert result.for_policy("gpu-smallest-instance") == []  # allowed by the config
        [tags] = result.for_policy("gpu-chargeback-tags")
        assert tags.enforcement_level == "advisory"


def test_the_workflows_config_step_adds_the_baseline_the_pack_then_reads(
    workflow: dict[str, Any], tmp_path: Path,
) -> None:
    step = next(r for r in _runs(workflow["jobs"]["preview"]) if "policy-pack-config.json" in r
                and "<<'PY'" in r)
    program = step.split("<<'PY'\n", 1)[1].rsplit("PY", 1)[0]
    base = tmp_path / ".gpupool-base"  # the base branch's checkout: its config and teams file
    (base / "stacks").mkdir(parents=True)
    shutil.copy(CONFIG, base / "policy-config.json")
    shutil.copy(PACK_DIR.parent / "stacks" / "teams.yaml", base / "stacks" / "teams.yaml")
    baseline = tmp_path / "baseline-dev.json"
    baseline.write_text(json.dumps({"version": 3, "deployment": {"resources": []}}))
    env = {**os.environ, "RUNNER_TEMP": str(tmp_path), "BASELINE": str(baseline)}
    subprocess.run([sys.executable, "-c", program], cwd=tmp_path, env=env, check=True,
                   timeout=30)
    config = json.loads((tmp_path / "policy-pack-config.json").read_text())
    assert config["gpu-no-vertical-upsize"] == {"enforcementLevel": "mandatory",
                                                "baseline": str(baseline)}
    assert config["team-gpu-quota"] == {"teamsFile": str(base / "stacks" / "teams.yaml")}
    with PolicyPackHarness(PACK_DIR) as pack:
        pack.configure(config)  # refused with INVALID_ARGUMENT if the pack could not read it

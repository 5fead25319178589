"""Fixtures for the action tests: a git repository with a base and a head commit, and the
action's module run in it as action.yml runs it."""

from __future__ import annotations

import shutil
import sys
from pathlib import Path

import pytest
import yaml

sys.path.insert(0, str(Path(__file__).resolve().parent))
from action_support import CONFIG, FAKE, ROOT, TEAMS, Repo, RunAction, git


@pytest.fixture
def repo(tmp_path: Path) -> Repo:
    path = tmp_path / "infra-repo"
    (path / "stacks").mkdir(parents=True)
    shutil.copy(ROOT / "Pulumi.yaml", path / "Pulumi.yaml")
    for name in ("dev", "staging"):
        stack = f"Pulumi.{name}.yaml"
        shutil.copy(ROOT / "stacks" / stack, path / "stacks" / stack)
    (path / "stacks" / "teams.yaml").write_text(yaml.safe_dump(TEAMS))
    (path / "policy-config.json").write_text(yaml.safe_dump(CONFIG))
    git(path, "init", "-q", "-b", "main")
    git(path, "config", "user.email", "ci@example.com")
    git(path, "config", "user.name", "ci")
    r = Repo(path)
    r.base = r.commit("base")
    git(path, "checkout", "-q", "-b", "pr")
    return r


@pytest.fixture
def fake_command() -> str:
    import sys

    return f"{sys.executable} {FAKE}"



@pytest.fixture
def run_action(repo: Repo, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str],
               tmp_path: Path) -> RunAction:
    """Run the action's module in the repository, as action.yml does (inputs in GPUPOOL_*)."""
    from gpupool.ci.action import main

    def run(*args: str, **env: str) -> tuple[int, str]:
        monkeypatch.chdir(repo.path)
        outputs = tmp_path / "github-output"
        outputs.write_text("")
        monkeypatch.setenv("GITHUB_OUTPUT", str(outputs))
        for key in ("GITHUB_BASE_REF", "GITHUB_STEP_SUMMARY"):
            monkeypatch.delenv(key, raising=False)
        for key, value in env.items():
            monkeypatch.setenv(key, value)
        code = main(list(args))
        captured = capsys.readouterr()
        return code, captured.out + captured.err

    return run

"""``gpupool check --stack S --base REF`` end to end: real git worktrees, real ``gpupool plan``.

A throwaway repository holds a copy of the kit (gpupool/, infra/, Pulumi.yaml, stacks/) with
three tagged commits: ``no-dev`` (no dev stack), ``broken`` (a typo in the dev stack) and
``good``; the working tree then raises the inference pool's maxSize from 4 to 6.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest

from gpupool.errors import InputError
from policies.model import ChangeKind
from policies.sources.diff import plan_stack

ROOT = Path(__file__).resolve().parents[3]
pytestmark = pytest.mark.skipif(
    not (ROOT / "gpupool" / "commands" / "plan.py").is_file() or shutil.which("git") is None,
    reason="needs the gpupool plan command and git",
)
_GIT_ENV = {"GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@example.com",
            "GIT_COMMITTER_NAME": "t", "GIT_COMMITTER_EMAIL": "t@example.com"}


def _git(repo: Path, *args: str) -> str:
    done = subprocess.run(["git", "-C", str(repo), *args], capture_output=True, text=True,
                          check=True, env={**os.environ, **_GIT_ENV})
    return done.stdout


def _commit(repo: Path, tag: str) -> None:
    _git(repo, "add", "-A")
    _git(repo, "commit", "-q", "--allow-empty", "-m", tag)
    _git(repo, "tag", tag)


@pytest.fixture(scope="module")
def repo(tmp_path_factory: pytest.TempPathFactory) -> Path:
    repo = tmp_path_factory.mktemp("kit")
    ignore = shutil.ignore_patterns("__pycache__", "*.pyc")
    for name in ("gpupool", "infra"):
        shutil.copytree(ROOT / name, repo / name, ignore=ignore)
    shutil.copytree(ROOT / "stacks", repo / "stacks", ignore=ignore)
    shutil.copy(ROOT / "Pulumi.yaml", repo / "Pulumi.yaml")
    dev = repo / "stacks" / "Pulumi.dev.yaml"
    good = dev.read_text()
    assert "maxSize: 4" in good
    _git(repo, "init", "-q")
    dev.unlink()
    _commit(repo, "no-dev")
    dev.write_text(good.replace("minSize:", "minSzie:", 1))
    _commit(repo, "broken")
    dev.write_text(good)
    _commit(repo, "good")
    dev.write_text(good.replace("maxSize: 4", "maxSize: 6", 1))
    return repo


def _worktrees(repo: Path) -> int:
    return _git(repo, "worktree", "list", "--porcelain").count("worktree ")


def test_diff_against_a_ref_gives_old_and_new_inputs(repo: Path) -> None:
    plan = plan_stack("dev", base="good", cwd=repo)
    assert plan.origin == "stack dev @ good..worktree" and plan.source == "gpupool-plan"
    changed = [c for c in plan.changes if c.change is not ChangeKind.NOOP]
    assert [(c.type, c.change) for c in changed] == [
        ("aws:autoscaling/group:Group", ChangeKind.UPDATE)]
    (asg,) = changed
    assert (asg.old["max_size"], asg.new["max_size"]) == (4, 6)
    assert len(plan.changes) > 20 and all(c.old is not None for c in plan.changes)
    assert _worktrees(repo) == 1  # the ref's worktree is gone


def test_stack_missing_at_the_ref_means_everything_is_created(repo: Path) -> None:
    plan = plan_stack("stacks/Pulumi.dev.yaml", base="no-dev", cwd=repo)
    assert plan.changes and {c.change for c in plan.changes} == {ChangeKind.CREATE}
    assert _worktrees(repo) == 1


def test_a_plan_failure_at_the_ref_is_one_line_with_its_reason(repo: Path) -> None:
    with pytest.raises(InputError) as err:
        plan_stack("dev", base="broken", cwd=repo)
    (line,) = err.value.problems
    assert line.startswith("stack dev @ broken: gpupool plan failed: gpupool plan: ")
    assert "minSzie" in line
    assert _worktrees(repo) == 1


def test_unknown_ref_and_not_a_repository(repo: Path, tmp_path: Path) -> None:
    with pytest.raises(InputError, match=r"^--base nope: expected a commit of .*\(git rev-parse: "):
        plan_stack("dev", base="nope", cwd=repo)
    with pytest.raises(InputError, match=r"^--base '-x': expected a git ref"):
        plan_stack("dev", base="-x", cwd=repo)
    outside = tmp_path / "project"
    outside.mkdir()
    with pytest.raises(InputError, match=r"^--base HEAD: expected .* in a git repository"):
        plan_stack("dev", base="HEAD", cwd=outside)


def test_without_base_the_working_tree_plan_is_all_creates(repo: Path) -> None:
    plan = plan_stack("dev", base=None, cwd=repo)
    assert plan.origin == "stack dev (working tree)"
    assert {c.change for c in plan.changes} == {ChangeKind.CREATE}
    by = plan.by_address()
    lts = [c for c in plan.changes if c.type == "aws:ec2/launchTemplate:LaunchTemplate"]
    assert {c.new["instance_type"] for c in lts} == {"g4dn.xlarge", "g5g.xlarge"}
    policies = [c for c in plan.changes if c.type == "aws:autoscaling/policy:Policy"]
    assert policies and all(
        by[p.references["autoscaling_group_name"]].type == "aws:autoscaling/group:Group"
        for p in policies)
    asg = next(c for c in plan.changes if c.name == "dev-inference-asg")
    assert asg.new["max_size"] == 6  # the working tree, not the last commit

"""``gpupool check --stack S --base REF`` end to end: real git worktrees, real ``gpupool plan``.

A throwaway repository holds a copy of the kit (``tests.conftest.make_kit_repo``): tags
``no-dev``, ``broken`` and ``good``; the working tree raises the inference pool's maxSize 4 → 6.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from gpupool.errors import InputError
from policies.model import ChangeKind
from policies.sources.diff import plan_stack, plan_stacks
from tests.conftest import git, make_kit_repo

ROOT = Path(__file__).resolve().parents[3]
pytestmark = pytest.mark.skipif(
    not (ROOT / "gpupool" / "commands" / "plan.py").is_file() or shutil.which("git") is None,
    reason="needs the gpupool plan command and git",
)
@pytest.fixture(scope="module")
def repo(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return make_kit_repo(tmp_path_factory.mktemp("kit"))


def _worktrees(repo: Path) -> int:
    return git(repo, "worktree", "list", "--porcelain").count("worktree ")


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


def test_several_stacks_share_one_checkout_of_the_ref(repo: Path) -> None:
    dev, staging = plan_stacks(["dev", "stacks/Pulumi.staging.yaml"], base="no-dev", cwd=repo)
    assert dev.origin == "stack dev @ no-dev..worktree"
    assert {c.change for c in dev.changes} == {ChangeKind.CREATE}  # no dev stack at the ref
    assert staging.origin == "stack stacks/Pulumi.staging.yaml @ no-dev..worktree"
    assert {c.change for c in staging.changes} == {ChangeKind.NOOP}  # unchanged since
    assert _worktrees(repo) == 1

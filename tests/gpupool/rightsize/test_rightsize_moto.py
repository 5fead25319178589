"""``gpupool rightsize`` end to end: the kit's own stacks, a seeded idle week on a moto server.

The prod stack's groups are built as the kit tags them (environment, gpupool:pool, team,
managed-by), with the history the test states; ``rightsize`` must change exactly the keys that
history calls for, leave the rest of the file byte for byte, and say why it left each other
pool alone. The edited stack then validates and passes ``gpupool check --stack prod --base
HEAD`` in a throwaway git repository, as the check tests run it.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import boto3
import pytest
from debt_fleet import PoolSpec, build_fleet
from hybrid_fleet import prod_specs

from gpupool.cli import main
from gpupool.debt.window import Window, iso, resolve_window

ROOT = Path(__file__).resolve().parents[3]
T4 = 0.526  # g4dn.xlarge us-east-1 on-demand, per GPU-hour (catalog)
MOTO_NOISE = "Unable to find appropriate backend"


def kit(tmp: Path) -> Path:
    ignore = shutil.ignore_patterns("__pycache__", "*.pyc")
    for name in ("gpupool", "infra", "policies", "stacks"):
        shutil.copytree(ROOT / name, tmp / name, ignore=ignore)
    shutil.copy(ROOT / "Pulumi.yaml", tmp / "Pulumi.yaml")
    return tmp


def prod_fleet(window: Window) -> None:
    """The prod stack's groups over the window (six hourly buckets), and somebody else's."""
    n = window.buckets
    build_fleet(boto3.session.Session(), [
        *prod_specs(n),
        # somebody else's GPU group
        PoolSpec("adhoc", "g4dn.xlarge", "vision", max_size=2, in_service=[1] * n,
                 utilisation=[1] * n),
    ], window)


def rightsize(capsys: pytest.CaptureFixture[str], window: Window, *args: str
              ) -> tuple[int, str, str]:
    code = main(["rightsize", "--stack", "prod", "--start", iso(window.start), "--end",
                 iso(window.end), "--period", "3600", "--min-span", "6h",
                 "--no-prometheus", *args])
    out, err = capsys.readouterr()
    out = "".join(x for x in out.splitlines(keepends=True) if not x.startswith(MOTO_NOISE))
    return code, out, err


@pytest.fixture
def window(moto: str) -> Window:
    w = resolve_window(since="6h", start=None, end=None, period=3600)
    prod_fleet(w)
    return w


EXPECTED = {  # line changes the history calls for: (old line, new line)
    ("      minSize: 3", "      minSize: 1"),
    ("      desiredCapacity: 4", "      desiredCapacity: 1"),
    ("      maxSize: 24", "      maxSize: 4"),  # peak 3 x 1.25, and the on-demand base 3
    ("      maxSize: 8", "      maxSize: 3"),  # the tier: peak 2 x 1.25 → 3, the floor 3
}


def changed_lines(before: str, after: str) -> set[tuple[str, str]]:
    a, b = before.splitlines(), after.splitlines()
    assert len(a) == len(b)
    return {(x, y) for x, y in zip(a, b, strict=True) if x != y}


def test_diff_then_write_changes_exactly_the_expected_keys(
        window: Window, tmp_path: Path, capsys: pytest.CaptureFixture[str],
        monkeypatch: pytest.MonkeyPatch) -> None:
    repo = kit(tmp_path)
    monkeypatch.chdir(repo)
    stack = repo / "stacks" / "Pulumi.prod.yaml"
    before = stack.read_text()

    code, out, err = rightsize(capsys, window)
    assert code == 0, err
    assert stack.read_text() == before  # no --write: nothing written
    assert out.startswith("--- a/stacks/Pulumi.prod.yaml\n+++ b/stacks/Pulumi.prod.yaml\n")
    minus = {x[1:] for x in out.splitlines() if x.startswith("-") and not x.startswith("---")}
    plus = {x[1:] for x in out.splitlines() if x.startswith("+") and not x.startswith("+++")}
    assert minus == {o for o, _ in EXPECTED} and plus == {n for _, n in EXPECTED}
    assert "prod-training: left alone: its team tag is 'ml-platform', its stack entry " \
           "charges 'research': never changed across teams" in err
    assert "prod-l4: left alone: not measured" in err
    assert "adhoc: left alone: not the kit's" in err
    assert "onprem: left alone: not read (--no-prometheus)" in err

    code, _, err = rightsize(capsys, window, "--write", "--pr-body", str(tmp_path / "pr.md"))
    assert code == 0, err
    after = stack.read_text()
    assert changed_lines(before, after) == EXPECTED  # and every other byte is the file's own
    # the lines are the first such lines of their pools: inference and llm-decode
    assert after.index("minSize: 1") < after.index("name: training")
    assert after.index("maxSize: 3") > after.index("name: llm-decode")

    body = (tmp_path / "pr.md").read_text()
    # inference: 3 instances at the floor every hour, 1 needed → 2 T4 fewer, 6 h → month
    month = 2 * 6 * 730 / 6
    assert f"${month * T4:,.2f}" in body
    assert "**1 pool(s) changed" not in body and "**2 pool(s) changed" in body
    assert "`minSize` 3 → 1" in body and "6 (6 h)" in body and "5.0%" in body
    assert f"saving ${month * T4:,.2f}/month" in body  # the tier saves nothing now

    assert main(["validate", "prod"]) == 0


def test_written_stack_passes_check_against_head(
        window: Window, tmp_path: Path, capsys: pytest.CaptureFixture[str],
        monkeypatch: pytest.MonkeyPatch) -> None:
    repo = kit(tmp_path)
    env = {**os.environ, "GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@example.com",
           "GIT_COMMITTER_NAME": "t", "GIT_COMMITTER_EMAIL": "t@example.com"}
    for cmd in (["init", "-q"], ["add", "-A"], ["commit", "-qm", "kit"]):
        subprocess.run(["git", "-C", str(repo), *cmd], check=True, env=env, capture_output=True)
    monkeypatch.chdir(repo)
    code, _, err = rightsize(capsys, window, "--write")
    assert code == 0, err
    done = subprocess.run([sys.executable, "-m", "gpupool", "check", "--stack", "prod",
                           "--base", "HEAD", "--format", "json"], cwd=repo,
                          capture_output=True, text=True, env={**env, "PYTHONPATH": str(repo)})
    assert done.returncode == 0, done.stderr + done.stdout
    assert '"stack prod @ HEAD..worktree"' in done.stdout


def test_a_stack_pool_without_a_group_is_said(
        moto: str, tmp_path: Path, capsys: pytest.CaptureFixture[str],
        monkeypatch: pytest.MonkeyPatch) -> None:
    """A pool of the stack whose group is missing (or lost its tags) is never silently
    skipped; another region than the stack's says it was not read."""
    w = resolve_window(since="6h", start=None, end=None, period=3600)
    build_fleet(boto3.session.Session(),
                [s for s in prod_specs(w.buckets) if s.name != "prod-l4"], w)
    monkeypatch.chdir(kit(tmp_path / "kit"))
    code, out, err = rightsize(capsys, w)
    assert code == 0, err
    assert ("gpupool rightsize: prod/l4-inference: left alone: no group in us-east-1 is tagged "
            "managed-by=gpupool, environment=prod, gpupool:pool=l4-inference: not deployed, "
            "or its tags changed\n") in err
    assert "prod/inference:" not in err and "-      minSize: 3" in out  # matched ones: not
    code, out, err = rightsize(capsys, w, "--region", "us-west-2")
    assert code == 0 and out == "", err
    said = [x for x in err.splitlines() if "not read: the stack is in us-east-1, --region is "
            "us-west-2" in x]
    assert [x.split(":")[1].strip() for x in said] == [
        "prod/inference", "prod/training", "prod/l4-inference", "prod/llm-decode"]

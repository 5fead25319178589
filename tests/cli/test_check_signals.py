"""SIGTERM or SIGINT in the middle of ``gpupool check --stack S --base REF`` leaves nothing behind
(issue 7, item 11): no git worktree, no temporary directory, no ``gpupool plan`` child running.

For real: the check runs as a process in a throwaway git repository holding the kit, is
signalled once both of its ``gpupool plan`` children run and the ref's worktree is checked out,
and everything is looked for afterwards (``git worktree list``, the process's own TMPDIR, the
children's pids).
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from cli_support import ROOT

from tests.conftest import git, make_kit_repo

pytestmark = pytest.mark.skipif(not Path("/proc/self/stat").exists(), reason="needs /proc")


@pytest.fixture(scope="module")
def repo(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return make_kit_repo(tmp_path_factory.mktemp("kit"))


def _stat(pid: int) -> list[str] | None:
    try:
        text = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    return text.rsplit(")", 1)[1].split()  # [state, ppid, ...]


def _plan_children(parent: int) -> set[int]:
    """Running ``gpupool plan`` processes whose parent is ``parent``."""
    out = set()
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        fields = _stat(int(entry.name))
        if fields is None or int(fields[1]) != parent:
            continue
        try:
            argv = (entry / "cmdline").read_bytes().split(b"\0")
        except OSError:
            continue
        if b"gpupool" in argv and b"plan" in argv:
            out.add(int(entry.name))
    return out


def _running(pid: int) -> bool:
    fields = _stat(pid)
    return fields is not None and fields[0] not in ("Z", "X")


def _worktrees(repo: Path) -> list[str]:
    return [line for line in git(repo, "worktree", "list", "--porcelain").splitlines()
            if line.startswith("worktree ")]


def _default_sigint() -> None:
    signal.signal(signal.SIGINT, signal.SIG_DFL)


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGINT], ids=["SIGTERM", "SIGINT"])
def test_a_signal_mid_run_removes_worktree_temp_dirs_and_children(
        repo: Path, tmp_path: Path, sig: signal.Signals) -> None:
    tmp = tmp_path / "tmp"
    tmp.mkdir()
    env = {k: v for k, v in os.environ.items() if k not in ("GPUPOOL_DEBUG", "FORCE_COLOR")}
    env |= {"PYTHONPATH": str(ROOT), "TMPDIR": str(tmp)}
    proc = subprocess.Popen(
        [sys.executable, "-m", "gpupool", "check", "--stack", "dev", "--base", "good"],
        cwd=repo, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
        # as from a terminal: a test run started in the background (``make test &`` from a
        # non-interactive shell) ignores SIGINT, and a child inherits that; the command rightly
        # keeps an ignored SIGINT ignored, so the user's Ctrl-C is restored here
        preexec_fn=_default_sigint)
    try:
        children: set[int] = set()
        polls = 0  # a guard against a hang, counted: 3,000 polls, minutes on any machine
        while len(children) < 2 or len(_worktrees(repo)) < 2:  # mid-run: both plans running
            assert proc.poll() is None, proc.communicate()
            assert polls < 3000, "the check never reached its two plans"
            polls += 1
            time.sleep(0.05)
            children = _plan_children(proc.pid)
        assert any(p.name.startswith("gpupool-base-") for p in tmp.iterdir())
        proc.send_signal(sig)
        out, err = proc.communicate(timeout=60)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.communicate()
    left_running = [pid for pid in children if _running(pid)]
    for pid in left_running:  # do not leak them into the rest of the test run
        os.kill(pid, signal.SIGKILL)
    assert left_running == []
    assert _worktrees(repo) == [f"worktree {repo.resolve()}"]
    assert not list((repo / ".git" / "worktrees").glob("*"))
    assert list(tmp.iterdir()) == []
    assert proc.returncode == 128 + sig, err
    assert err.strip() == f"gpupool check: stopped by {sig.name}", err
    assert out == ""

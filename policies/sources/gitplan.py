"""Run ``gpupool plan`` for a stack, in the working tree or at a git ref, as a subprocess.

A subprocess, not an in-process call: the Pulumi mock runtime is process-global, and the ref's
plan must run the ref's own code. For a ref, the commit is checked out with ``git worktree add
--detach`` into a temporary directory (always removed afterwards) and planned there with
``cwd`` and ``PYTHONPATH`` pointing into it, so the ref's program, catalog and stack file are
the ones used. Every failure is one InputError line, carrying the failing command's own words.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager, suppress
from pathlib import Path
from typing import Any

from gpupool.errors import InputError
from policies.sources.reading import problem, read_json

PLAN_TIMEOUT_S = 600


def _first_line(stderr: str) -> str:
    """The line that says what went wrong (for a traceback, its last line: the exception)."""
    lines = [line.strip() for line in stderr.splitlines() if line.strip()]
    if not lines:
        return ""
    return lines[-1] if lines[0].startswith("Traceback") else lines[0]


def _problem_lines(stderr: str, code: int) -> list[str]:
    """What a failed ``gpupool plan`` said: on bad input (exit 2) every problem it listed, one
    line each (a stack with three config errors shows three, as ``gpupool validate`` does);
    otherwise the line that says what went wrong."""
    if code == 2:
        listed = [line.strip() for line in stderr.splitlines()
                  if line.startswith("gpupool plan: ")]
        if listed:
            return listed
    return [_first_line(stderr) or f"exit {code}"]


def git(repo: Path, *args: str) -> str:
    """Run git in ``repo``; its first stderr line becomes the InputError on failure."""
    try:
        done = subprocess.run(
            ["git", "-C", str(repo), *args], capture_output=True, text=True, timeout=120
        )
    except FileNotFoundError:
        raise problem("git: expected the git command on PATH, found none") from None
    except subprocess.TimeoutExpired:
        raise problem(f"git {args[0]}: timed out after 120 s") from None
    if done.returncode != 0:
        raise problem(f"git {args[0]}: {_first_line(done.stderr) or f'exit {done.returncode}'}")
    return done.stdout.strip()


def repo_root(cwd: Path, base: str) -> Path:
    try:
        return Path(git(cwd, "rev-parse", "--show-toplevel"))
    except InputError as e:
        raise problem(f"--base {base}: expected {cwd} in a git repository ({e})") from None


def resolve_commit(repo: Path, ref: str) -> str:
    if not ref or ref.startswith("-"):
        raise problem(f"--base {ref!r}: expected a git ref (branch, tag or commit)")
    try:
        return git(repo, "rev-parse", "--verify", f"{ref}^{{commit}}")
    except InputError as e:
        raise problem(f"--base {ref}: expected a commit of {repo} ({e})") from None


@contextmanager
def worktree(repo: Path, commit: str) -> Iterator[Path]:
    """A detached checkout of ``commit`` in a temporary directory, removed on the way out."""
    holder: Path | None = None
    try:
        holder = Path(tempfile.mkdtemp(prefix="gpupool-base-"))
        tree = holder / "tree"
        git(repo, "worktree", "add", "--detach", "--quiet", str(tree), commit)
        yield tree
    finally:
        if holder is not None:
            with suppress(InputError):  # a half-made worktree: remove the files, git forgets it
                git(repo, "worktree", "remove", "--force", str(holder / "tree"))
            shutil.rmtree(holder, ignore_errors=True)
            with suppress(InputError):
                git(repo, "worktree", "prune")


class PlanRun:
    """One ``gpupool plan STACK --format json`` started in the background.

    Whoever starts one must end it: :meth:`result` waits for it, :meth:`abandon` kills it (both
    remove its temporary directory, and both may be called again). Use it as a context manager
    so that an exception or a signal (see ``gpupool.interrupt``) never leaves it running.
    """

    def __init__(self, stack: str, cwd: Path, pythonpath: Path, label: str) -> None:
        self.label = label
        self._proc: subprocess.Popen[str] | None = None
        self._dir = Path(tempfile.mkdtemp(prefix="gpupool-plan-"))
        try:
            self._out = self._dir / "plan.json"
            env = dict(os.environ)
            env["PYTHONPATH"] = os.pathsep.join(
                p for p in (str(pythonpath), env.get("PYTHONPATH", "")) if p
            )
            env["PYTHONDONTWRITEBYTECODE"] = "1"
            cmd = [sys.executable, "-m", "gpupool", "plan", stack, "--format", "json",
                   "--output", str(self._out)]
            try:
                self._proc = subprocess.Popen(
                    cmd, cwd=cwd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                    text=True,
                )
            except OSError as e:
                raise problem(f"{label}: cannot start gpupool plan ({e.strerror or e})") from None
        except BaseException:
            self._cleanup()
            raise

    def __enter__(self) -> PlanRun:
        return self

    def __exit__(self, *exc: object) -> None:
        self.abandon()

    @property
    def pid(self) -> int | None:
        return None if self._proc is None else self._proc.pid

    def result(self) -> Any:
        """The plan document, or an InputError with the command's first stderr line."""
        assert self._proc is not None
        try:
            _, stderr = self._proc.communicate(timeout=PLAN_TIMEOUT_S)
        except subprocess.TimeoutExpired:
            self.abandon()
            raise problem(
                f"{self.label}: gpupool plan timed out after {PLAN_TIMEOUT_S} s"
            ) from None
        try:
            if self._proc.returncode != 0:
                whys = _problem_lines(stderr, self._proc.returncode)
                raise InputError([problem(f"{self.label}: gpupool plan failed: {why}").problems[0]
                                  for why in whys])
            return read_json(self._out, f"{self.label}: gpupool plan output")
        finally:
            self._cleanup()

    def abandon(self) -> None:
        """Stop the run if it still runs (another part failed, or a signal came) and wait for
        it, so no child outlives the check; remove its files."""
        proc = self._proc
        if proc is not None and proc.returncode is None:
            if proc.poll() is None:
                proc.kill()
            proc.wait()
            if proc.stderr is not None:
                proc.stderr.close()
        self._cleanup()

    def _cleanup(self) -> None:
        shutil.rmtree(self._dir, ignore_errors=True)

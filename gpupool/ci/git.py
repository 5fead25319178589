"""The few git questions the action asks of the checkout."""

from __future__ import annotations

import subprocess
from functools import cached_property
from pathlib import Path

from gpupool.errors import InputError


class Git:
    def __init__(self, cwd: Path) -> None:
        self.cwd = cwd

    def run(self, *args: str, check: bool = True) -> subprocess.CompletedProcess[str]:
        done = subprocess.run(["git", "-C", str(self.cwd), *args], capture_output=True,
                              text=True, timeout=120)
        if check and done.returncode != 0:
            raise InputError(f"git {' '.join(args)}: {done.stderr.strip()}")
        return done

    @cached_property
    def root(self) -> Path:
        return Path(self.run("rev-parse", "--show-toplevel").stdout.strip())

    def has_commit(self, ref: str) -> bool:
        return self.run("rev-parse", "--verify", "--quiet", f"{ref}^{{commit}}",
                        check=False).returncode == 0

    def show(self, ref: str, path: str) -> str | None:
        done = self.run("show", f"{ref}:{path}", check=False)
        return done.stdout if done.returncode == 0 else None

    def changed(self, base: str) -> list[str]:
        """Files this branch changes since it left ``base`` (three-dot: the merge base), as
        they are named: ``-z`` keeps git from quoting a name with a newline or a quote in it
        (quoted, such a name matched no pattern, and a stack file the pull request added went
        unchecked)."""
        out = self.run("diff", "-z", "--name-only", f"{base}...HEAD").stdout
        return [name for name in out.split("\0") if name]

    def repo_path(self, path: str) -> str:
        """``path`` (relative to the working directory) relative to the repository root."""
        full = (self.cwd / path).resolve()
        try:
            return str(full.relative_to(self.root.resolve()))
        except ValueError:
            return path

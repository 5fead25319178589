"""A throwaway git repository shaped like a gpupool project (imported by the action tests)."""

from __future__ import annotations

import subprocess
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
FAKE = Path(__file__).resolve().parent / "fake_gpupool.py"

TEAMS = {"teams": {"ml-platform": {
    "owners": ["@acme/platform"], "costCenter": "cc-ml-1042", "allowedGpus": ["T4", "T4g"],
    "gpuQuota": {"dev": 2, "staging": 16}, "monthlyBudgetUsd": 100000}}}
CONFIG = {"team-gpu-quota": "mandatory", "gpu-chargeback-tags": "advisory"}


def git(repo: Path, *args: str) -> str:
    return subprocess.run(["git", "-C", str(repo), *args], check=True, capture_output=True,
                          text=True).stdout.strip()


class Repo:
    def __init__(self, path: Path) -> None:
        self.path = path
        self.base = ""

    def write(self, rel: str, text: str) -> None:
        target = self.path / rel
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(text)

    def commit(self, message: str) -> str:
        git(self.path, "add", "-A")
        git(self.path, "commit", "-q", "-m", message)
        return git(self.path, "rev-parse", "HEAD")




RunAction = Callable[..., tuple[int, str]]

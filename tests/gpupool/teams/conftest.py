"""A throwaway Pulumi project (Pulumi.yaml + stacks/teams.yaml) for new-stack to write into."""

from __future__ import annotations

import shutil
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[3]
GOLDEN = ROOT / "tests" / "fixtures" / "golden"
sys.path.insert(0, str(ROOT / "tests" / "cli"))


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    shutil.copy(ROOT / "Pulumi.yaml", tmp_path / "Pulumi.yaml")
    (tmp_path / "stacks").mkdir()
    shutil.copy(GOLDEN / "teams.yaml", tmp_path / "stacks" / "teams.yaml")
    # the remote-GPU tier's budget profile, where the golden stack (and the kit's) names it
    shutil.copytree(ROOT / "stacks" / "profiles", tmp_path / "stacks" / "profiles")
    monkeypatch.chdir(tmp_path)
    return tmp_path

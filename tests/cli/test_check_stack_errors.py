"""``gpupool check --stack``: a stack's config errors, every one of them, as ``validate`` lists
them (issue 16, item 26): the check plans the stack in a ``gpupool plan`` child, and only the
child's first line reached the user."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from cli_support import ROOT, run_in_process

BROKEN = {  # three independent mistakes in the dev stack
    "gpupool:costCenter": "gpupool:costCentre",
    "maxSize: 4": "maxSize: 0",
    "gpu: T4g": "gpu: T5",
}


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    shutil.copy(ROOT / "Pulumi.yaml", tmp_path / "Pulumi.yaml")
    shutil.copytree(ROOT / "stacks", tmp_path / "stacks")
    monkeypatch.chdir(tmp_path)
    return tmp_path


def breaks(project: Path, stack: str, edits: dict[str, str]) -> None:
    path = project / "stacks" / f"Pulumi.{stack}.yaml"
    text = path.read_text()
    for old, new in edits.items():
        assert old in text, old
        text = text.replace(old, new, 1)
    path.write_text(text)


def test_every_config_error_of_a_stack_is_shown(project: Path) -> None:
    breaks(project, "dev", BROKEN)
    validate = run_in_process(["validate", "dev"])
    assert validate.code == 2 and len(validate.err_lines) == 4  # costCenter missing, too
    r = run_in_process(["check", "--stack", "dev"])
    assert r.code == 2
    prefix = "gpupool check: stack dev (working tree): gpupool plan failed: gpupool plan: "
    assert r.err_lines == [line.replace("gpupool validate: ", prefix)
                           for line in validate.err_lines]


def test_every_broken_stack_is_shown(project: Path) -> None:
    breaks(project, "dev", {"maxSize: 4": "maxSize: 0"})
    breaks(project, "staging", {"gpupool:costCenter": "gpupool:costCentre"})
    r = run_in_process(["check", "--stack", "dev", "--stack", "staging"])
    assert r.code == 2
    assert [line.split(": gpupool plan failed")[0] for line in r.err_lines] == [
        "gpupool check: stack dev (working tree)",
        "gpupool check: stack staging (working tree)",
        "gpupool check: stack staging (working tree)"]

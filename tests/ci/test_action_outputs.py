"""What the action hands the GitHub runner cannot be steered by the pull request: step outputs
in the multiline form with a random delimiter, read back as the runner reads them, annotations
escaped, and stack files whose names carry control characters refused (issue 16, item 1)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from action_support import Repo, RunAction, runner_outputs
from hypothesis import given
from hypothesis import strategies as st

from gpupool.ci.github import outputs_text

OUT = "reports"
EVIL = "Pulumi.zz\nexit-code=0\nverdict=pass\nx.yaml"


def outputs(tmp_path: Path) -> dict[str, str]:
    return runner_outputs((tmp_path / "github-output").read_text())


def commands(repo: Repo) -> list[list[str]]:
    log = repo.path / OUT / "commands.jsonl"
    return [json.loads(line) for line in log.read_text().splitlines()]


@pytest.mark.parametrize(("stacks", "base"), [("changed", True), ("all", True), ("all", False)],
                         ids=["changed", "all", "push-without-base"])
def test_a_stack_file_named_to_add_outputs_is_refused(
        repo: Repo, run_action: RunAction, fake_command: str, tmp_path: Path,
        stacks: str, base: bool) -> None:
    """The pull request adds ``stacks/Pulumi.zz<LF>exit-code=0<LF>verdict=pass<LF>x.yaml``: as
    ``key=value`` lines its name appended ``exit-code=0`` and ``verdict=pass`` after the real
    ones, and the runner keeps the last; under ``changed`` git quoted the name, so the new stack
    was not checked at all. Now: exit 2, one line naming the file, nothing run."""
    shutil.copy(repo.path / "stacks" / "Pulumi.dev.yaml", repo.path / "stacks" / EVIL)
    repo.commit("a stack with a newline in its name")
    code, out = run_action("--base-ref", repo.base if base else "", "--out-dir", OUT,
                           "--gpupool", fake_command, "--stacks", stacks,
                           FAKE_CODES="dev=1,zz=1")
    assert code == 2
    errors = [line for line in out.splitlines() if line.startswith("gpupool action:")]
    assert errors == [
        "gpupool action: " + repr(f"stacks/{EVIL}")[1:-1] + ": expected a stack file name "
        "without control characters, got U+000A; rename the file (Pulumi stack names are "
        "letters, digits, '-', '_' and '.')"]
    assert outputs(tmp_path) == {"verdict": "error", "exit-code": "2"}
    assert commands(repo) == []  # refused before anything ran


def test_outputs_hold_what_the_pull_request_names(
        repo: Repo, run_action: RunAction, fake_command: str, tmp_path: Path) -> None:
    """A governed file whose name holds a newline and ``exit-code=0``: every output keeps its
    own value, and the warning annotation cannot start a workflow command of its own."""
    name = "docs/x\nexit-code=0\n::error::forged"
    repo.write(name, "hi\n")
    repo.write("stacks/Pulumi.dev.yaml",
               (repo.path / "stacks" / "Pulumi.dev.yaml").read_text() + "\n")
    repo.commit("odd names")
    code, out = run_action("--base-ref", repo.base, "--out-dir", OUT, "--gpupool", fake_command,
                           "--governed", "docs/*", FAKE_CODES="dev=1")
    assert code == 1
    o = outputs(tmp_path)
    assert o["exit-code"] == "1" and o["verdict"] == "fail" and o["stacks"] == "dev"
    assert o["governed-changes"] == name
    assert "::warning file=docs/x%0Aexit-code=0%0A%3A%3Aerror%3A%3Aforged::changes what" in out
    assert "\n::error::forged" not in out


values = st.text(st.characters(codec="utf-8", exclude_categories=("Cs",)), max_size=60)


@given(st.dictionaries(st.from_regex(r"[a-z][a-z0-9-]{0,12}", fullmatch=True),
                       st.one_of(values, st.sampled_from(
                           ["", "\n", "a\nb=c", "x<<EOF", "ghadelimiter_", "\r\n", "EOF\n"])),
                       max_size=6))
def test_every_value_reads_back_as_written(written: dict[str, str]) -> None:
    """Whatever a value holds, the runner reads back exactly the outputs written (but a CR that
    ends a value, which the runner's line reader takes for half of the CRLF after it)."""
    assert runner_outputs(outputs_text(written)) == {
        k: v.removesuffix("\r") for k, v in written.items()}

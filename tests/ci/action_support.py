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




def _read_line(text: str, index: int) -> tuple[str | None, str | None, int]:
    """(line, its line break or None at the end, index after it), as the runner's ReadLine."""
    if index >= len(text):
        return None, None, index
    at = text.find("\n", index)
    if at < 0:
        return text[index:], None, len(text)
    if at > index and text[at - 1] == "\r":
        return text[index:at - 1], "\r\n", at + 1
    return text[index:at], "\n", at + 1


def runner_outputs(text: str) -> dict[str, str]:
    """``$GITHUB_OUTPUT`` read as the GitHub runner reads it (actions/runner,
    src/Runner.Worker/FileCommandManager.cs, ``EnvFileKeyValuePairs``): line by line,
    ``NAME=VALUE`` when ``=`` comes before any ``<<``, else ``NAME<<DELIMITER`` and the text up
    to the line break before a line equal to the delimiter; a later line for a name replaces an
    earlier one; an unmatched delimiter fails the step."""
    out: dict[str, str] = {}
    line, _, index = _read_line(text, 0)
    while line is not None:
        if line:
            eq, heredoc = line.find("="), line.find("<<")
            if eq >= 0 and (heredoc < 0 or eq < heredoc):
                name, value = line.split("=", 1)
                assert name, f"Invalid format {line!r}. Name must not be empty"
                out[name] = value
            elif heredoc >= 0:
                name, delimiter = line.split("<<", 1)
                assert name and delimiter, f"Invalid format {line!r}"
                start = end = index
                temp, newline, index = _read_line(text, index)
                while temp != delimiter:
                    assert temp is not None, f"Matching delimiter not found {delimiter!r}"
                    assert newline is not None, "Invalid value. EOF marker missing new line."
                    end = index - len(newline)
                    temp, newline, index = _read_line(text, index)
                out[name] = text[start:end] if end > start else ""
            else:
                raise AssertionError(f"Invalid format {line!r}")
        line, _, index = _read_line(text, index)
    return out


RunAction = Callable[..., tuple[int, str]]

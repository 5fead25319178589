"""What the action tells the GitHub runner: step outputs, annotations, the run's address.

Everything here is written so that text from the pull request (file names, stack names,
messages) can never become a command or an output of its own:

- outputs use GitHub's multiline form, ``name<<DELIMITER`` / value / ``DELIMITER``, with a
  random delimiter the value does not contain, for every output: in the ``name=value`` form a
  newline in a value (a stack file named ``Pulumi.zz<newline>exit-code=0<newline>x.yaml``) starts
  a line the runner reads as another output, and the last one wins;
- annotations (``::warning file=…::message``) escape the message and the ``file`` property as
  GitHub's toolkit does (``%``, CR and LF in both; ``:`` and ``,`` in properties), so a newline
  in a file name cannot start a workflow command of its own.
"""

from __future__ import annotations

import os
import re
import secrets
import sys
from collections.abc import Mapping

_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_-]*$")


def delimiter_for(value: str) -> str:
    """A delimiter line that occurs nowhere in ``value`` (the runner ends the value at the first
    line equal to it). ``ghadelimiter_`` is the prefix GitHub's own toolkit uses."""
    while True:
        candidate = f"ghadelimiter_{secrets.token_hex(16)}"
        if candidate not in value:
            return candidate


def outputs_text(outputs: Mapping[str, str]) -> str:
    """The lines that set ``outputs`` in ``$GITHUB_OUTPUT``, each in the multiline form."""
    chunks = []
    for name, value in outputs.items():
        if not _NAME.match(name):  # the action's own names: a bad one is a bug here
            raise ValueError(f"output name {name!r}: expected letters, digits, '-' and '_'")
        mark = delimiter_for(value)
        chunks.append(f"{name}<<{mark}\n{value}\n{mark}\n")
    return "".join(chunks)


def write_outputs(outputs: Mapping[str, str]) -> None:
    """Append ``outputs`` to ``$GITHUB_OUTPUT`` (nothing when not run by GitHub)."""
    target = os.environ.get("GITHUB_OUTPUT")
    if not target:
        return
    with open(target, "a", encoding="utf-8") as f:
        f.write(outputs_text(outputs))


def escape_data(text: str) -> str:
    return text.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def escape_property(text: str) -> str:
    return escape_data(text).replace(":", "%3A").replace(",", "%2C")


def annotate(level: str, file: str | None, message: str) -> None:
    """One ``::warning``/``::error`` workflow command on standard output."""
    where = f" file={escape_property(file)}" if file else ""
    sys.stdout.write(f"::{level}{where}::{escape_data(message)}\n")


def run_url() -> str:
    server, repo, run = (os.environ.get(k) for k in
                         ("GITHUB_SERVER_URL", "GITHUB_REPOSITORY", "GITHUB_RUN_ID"))
    return f"{server}/{repo}/actions/runs/{run}" if server and repo and run else ""


def append_summary(markdown: str) -> None:
    """The comment, once more, in the job's summary (forks get no comment)."""
    summary = os.environ.get("GITHUB_STEP_SUMMARY")
    if summary:
        with open(summary, "a", encoding="utf-8") as f:
            f.write(markdown)

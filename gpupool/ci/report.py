"""The pull-request comment: the verdict, what the pull request changes of what judges it,
and each check's report (cut fairly to GitHub's size limit by :mod:`gpupool.ci.comment`)."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from gpupool.ci.comment import Part, assemble
from gpupool.ci.github import run_url
from gpupool.ci.trusted import Trusted

REPORT_NOTE = ("the whole report is in the workflow run's `gpupool-reports` artifact, and "
               "every finding in code scanning")


@dataclass
class Run:
    """One ``gpupool check`` and what it wrote."""

    label: str
    code: int
    markdown: str
    sarif: Path | None
    stderr: str


def comment(runs: list[Run], stacks: list[str], governed: list[str], trusted: Trusted,
            comparison: list[str], verdict: str) -> str:
    icon = {"pass": "✅", "fail": "❌", "error": "⛔"}[verdict]
    head = [f"## {icon} gpupool: {verdict}", ""]
    if not runs:
        head.append("No stack changed and no plan was given: nothing to check.")
    if governed:
        head += ["### ⚠️ This pull request changes what judges it", "",
                 "These files decide policy, quotas or the checks themselves. The checks "
                 "below used the base branch's versions; the owners named in CODEOWNERS must "
                 "review the change:", ""]
        head += [f"- `{f}`" for f in governed]
        head += [f"- {n}" for n in trusted.notes]
        if comparison:
            head += ["", "With the pull request's own policy config, waivers and teams:", "",
                     *comparison]
        head.append("")
    parts = [Part(title(r), without_headline(r.markdown) if r.code != 2 else
                  f"⛔ the check could not run (bad input, exit 2):\n\n```\n{r.stderr}\n```")
             for r in runs]
    url = run_url()
    footer = ("<sub>gpupool "
              + (f"· [workflow run]({url}) " if url else "")
              + f"· stacks checked: {', '.join(stacks) or 'none'}</sub>")
    return assemble("\n".join(head), parts, footer, REPORT_NOTE)


def without_headline(markdown: str) -> str:
    """A report without its own ``## verdict`` line: the section title says it."""
    lines = markdown.splitlines()
    for i, line in enumerate(lines[:3]):
        if line.startswith("## "):
            return "\n".join(lines[:i] + lines[i + 1:]).lstrip("\n")
    return markdown


def title(r: Run) -> str:
    name = r.label.removeprefix("stack ")
    what = (f"Stack `{name}`" if r.label.startswith("stack ") else
            "Team quotas across every stack" if r.label == "team quotas" else "Plan files")
    return f"### {what}: {verdict_word(r.code)}"


def verdict_word(code: int) -> str:
    return {0: "✅ pass", 1: "❌ fail"}.get(code, "⛔ could not run")

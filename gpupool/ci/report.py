"""The pull-request comment: one screen for a one-stack pull request.

The verdict and what the pull request adds to GPU cost come first; then what the pull request
changes of what judges it (policy files, rules, a team new in the teams file); then each check
that has something to say, its findings and cost change; stacks with nothing to say share one
line; the team quotas say what the pull request adds, never the fleet's total; and the policy
table, the same for every report, comes once, folded, at the end. Every part is cut fairly to
GitHub's comment size limit by :mod:`gpupool.ci.comment`.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from gpupool.ci.comment import Part, assemble
from gpupool.ci.github import run_url
from gpupool.ci.sections import Sections, split
from gpupool.ci.trusted import Trusted

REPORT_NOTE = ("the whole report is in the workflow run's `gpupool-reports` artifact, and "
               "every finding in code scanning")
HOURS_PER_MONTH = 730  # AWS's convention, as the reports' own cost sections


@dataclass
class Run:
    """One ``gpupool check`` and what it wrote."""

    label: str
    code: int
    markdown: str
    sarif: Path | None
    stderr: str
    # each GPU resource's cost change in $/h (None: not priced), from the JSON report; None when
    # the check wrote none (it could not run)
    cost: tuple[float | None, ...] | None = None

    @property
    def sections(self) -> Sections:
        return split(self.markdown)

    @property
    def is_quota(self) -> bool:
        return self.label == "team quotas"


@dataclass(frozen=True)
class Context:
    """What the comment says besides the reports."""

    stacks: list[str]
    governed: list[str]
    trusted: Trusted
    comparison: list[str]
    verdict: str
    new_teams: list[str]  # teams in the PR's teams file that the base branch's lacks
    teams_file: str = "stacks/teams.yaml"


def comment(runs: list[Run], ctx: Context) -> str:
    icon = {"pass": "✅", "fail": "❌", "error": "⛔"}[ctx.verdict]
    checks = [r for r in runs if not r.is_quota]
    head = [f"## {icon} gpupool: {ctx.verdict}", ""]
    if runs:
        head += [f"{_checked(checks)} · this pull request {adds(checks)}", ""]
    else:
        head += ["No stack changed and no plan was given: nothing to check.", ""]
    head += _governed(ctx) + _new_teams(ctx)
    parts, quiet = [], []
    for r in sorted(checks, key=lambda r: r.code == 0):  # what does not pass comes first
        if r.code == 0 and r.sections.quiet:
            quiet.append(r)
        else:
            parts.append(Part(title(r), _body(r)))
    if quiet:
        names = ", ".join(f"`{_name(r)}`" for r in quiet)
        word = "Stack" if len(quiet) == 1 else "Stacks"
        parts.append(Part(f"### {word} {names}: ✅ pass", "No findings, and no change to GPU "
                                                         "cost."))
    for r in runs:
        if r.is_quota:
            parts.append(Part(title(r), _quota_body(r, checks)))
    policies = next((r.sections.parts["policies"] for r in checks
                     if "policies" in r.sections.parts), None)
    if policies is not None:
        parts.append(Part("### Policies", policies))
    url = run_url()
    footer = ("<sub>gpupool "
              + (f"· [workflow run]({url}) " if url else "")
              + f"· stacks checked: {', '.join(ctx.stacks) or 'none'}</sub>")
    return assemble("\n".join(head), parts, footer, REPORT_NOTE)


def adds(checks: Sequence[Run]) -> str:
    """What the checked changes add to GPU cost at max size, on-demand, in words."""
    if any(r.cost is None for r in checks):
        return "adds a GPU cost not known: a check could not run"
    deltas = [d for r in checks for d in (r.cost or ())]
    known = [d for d in deltas if d is not None]
    unpriced = len(deltas) - len(known)
    if not deltas:
        return "changes no GPU cost"
    total = math.fsum(known)
    figure = (f"**{_money(total * HOURS_PER_MONTH)}/month** ({_money(total, 4)}/h) at max size, "
              "on-demand")
    verb = "adds" if total >= 0 else "saves"
    if unpriced:
        return (f"{verb} at least {figure}, and {unpriced} GPU resource"
                f"{'s' if unpriced != 1 else ''} not priced")
    return f"{verb} {figure}"


def _money(value: float, places: int = 2) -> str:
    sign = "+" if value >= 0 else "-"
    return f"{sign}\\${abs(value):,.{places}f}"


def _checked(checks: Sequence[Run]) -> str:
    stacks = sum(1 for r in checks if r.label.startswith("stack "))
    failing = sum(1 for r in checks if r.code != 0)
    what = [f"{stacks} stack{'s' if stacks != 1 else ''}"] * bool(stacks)
    what += ["plan files"] * any(r.label == "plans" for r in checks)
    out = f"{' and '.join(what) or 'nothing'} checked"
    return out + (f" ({failing} not passing)" if failing else "")


def _governed(ctx: Context) -> list[str]:
    if not ctx.governed:
        return []
    out = ["### ⚠️ This pull request changes what judges it", "",
           "These files decide policy, quotas or the checks themselves. The checks below used "
           "the base branch's versions; the owners named in CODEOWNERS must review the change:",
           ""]
    out += [f"- `{f}`" for f in ctx.governed]
    out += [f"- {n}" for n in ctx.trusted.notes]
    if ctx.comparison:
        out += ["", "With the pull request's own policy config, waivers and teams:", "",
                *ctx.comparison]
    return [*out, ""]


def _new_teams(ctx: Context) -> list[str]:
    """Why a team's first stack fails when it comes with the team in one pull request."""
    if not ctx.new_teams:
        return []
    names = ", ".join(f"`{t}`" for t in ctx.new_teams)
    one = len(ctx.new_teams) == 1
    return [
        f"### 🆕 {'Team' if one else 'Teams'} {names} {'is' if one else 'are'} new in this pull "
        "request", "",
        f"The checks read `{ctx.teams_file}` from the base branch, so that a pull request can "
        f"never grant itself a quota; there {'this team has' if one else 'these teams have'} "
        "no quota yet, and a team's first stack in the same pull request as the team fails "
        "`team-gpu-quota` (\"not in the teams file\"). Merge the teams change first (its "
        "owners in CODEOWNERS review it), then the stack; or keep both here and re-run this "
        "check once the teams change is on the base branch. The verdicts with the pull "
        "request's own teams file are listed above.", ""]


def _body(r: Run) -> str:
    """A check's report without the policy table; a passing stack whose GPU cost this pull
    request leaves alone keeps its findings (advisories it already had) folded."""
    if r.code == 2:
        return f"⛔ the check could not run (bad input, exit 2):\n\n```\n{r.stderr}\n```"
    s = r.sections
    if r.code != 0 or "cost" in s.parts:
        return s.body(without={"policies"})
    summary = s.head.splitlines()[0] if s.head else "findings"
    return "\n".join(["<details><summary>Findings it already had; this pull request leaves its "
                      "GPU cost alone</summary>", "", summary, "",
                      s.body(without={"policies"}, head=False), "", "</details>"])


def _quota_body(r: Run, checks: Sequence[Run]) -> str:
    """The quota run judges every stack's plan joined at the head, so its own cost section is
    the whole fleet as if new: say what the pull request adds instead."""
    if r.code == 2:
        return _body(r)
    s = r.sections
    intro = ("Every stack planned at the head and joined (a quota spans a team's stacks), "
             "judged by `team-gpu-quota` alone with the base branch's teams file. This pull "
             f"request {adds(checks)}.")
    found = s.body(without={"cost", "policies"}, head=False)
    return "\n\n".join([intro, found or "Every team within its quota and budget."])


def title(r: Run) -> str:
    what = (f"Stack `{_name(r)}`" if r.label.startswith("stack ") else
            "Team quotas across every stack" if r.is_quota else "Plan files")
    return f"### {what}: {verdict_word(r.code)}"


def _name(r: Run) -> str:
    return r.label.removeprefix("stack ")


def verdict_word(code: int) -> str:
    return {0: "✅ pass", 1: "❌ fail"}.get(code, "⛔ could not run")

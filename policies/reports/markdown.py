"""``--format markdown``: a pull-request comment.

A headline verdict, a table of unwaived findings (blocking first), the cost change of the plan's
GPU resources, and folded details: waived findings, rule errors, each policy's rationale.

Everything that comes from a plan (addresses, messages) is escaped: a pipe must not split a table
cell, a newline must not end a row, ``<``/``&`` must not open HTML, and ``$`` must not start
GitHub's inline maths (every cost figure has two). The comment stays under GitHub's 65,536
character limit: sections are filled in order of importance and a table that does not fit is cut
with a note that says how many rows are missing and where to find them.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Final

from gpupool.terminal import safe
from policies.reports._common import (
    HOURS_PER_MONTH,
    counts,
    money_or_dash,
    plural,
    policy_index,
    resource_names,
    severity_key,
    short_address,
    signed_per_hour,
    signed_per_month,
    some,
    stacks,
    status,
    total_delta,
    waiver_justification,
)
from policies.result import Result

GITHUB_COMMENT_LIMIT: Final = 65_536
MARKER: Final = "<!-- gpupool-check -->"  # lets a workflow find and update its own comment
# Opens each section (findings, cost, errors, waived, policies): invisible on GitHub, it lets the
# gpupool action put several reports in one comment with one policy table and its own cost line
# (gpupool.ci.report reads it; user text is escaped, so no plan can forge one).
SECTION: Final = "<!-- gpupool-section: {name} -->"

_ICON = {"blocking": "❌", "advisory": "⚠️", "cannot verify": "❔", "waived": "⏸️"}
_PUNCT = re.compile(r"([\\`*_\[\]<>|~$&#!])")
_NEWLINES = re.compile(r"\r\n|\r|\n")
NL: Final = "\n"  # between the resources of one finding: text() turns it into <br>


def text(value: str) -> str:
    """Plain text safe inside a table cell: markdown, HTML and maths neutralised, controls and
    BIDI overrides shown as escapes (:func:`gpupool.terminal.safe`)."""
    escaped = _PUNCT.sub(r"\\\1", safe(value, multiline=True))
    return _NEWLINES.sub("<br>", escaped)


def code(value: str) -> str:
    """An inline code span safe inside a table cell, whatever backticks the value holds."""
    flat = _NEWLINES.sub(" ", safe(value, multiline=True)).replace("|", "\\|")
    runs = [len(m) for m in re.findall(r"`+", flat)]
    fence = "`" * (max(runs, default=0) + 1)
    pad = " " if flat.startswith("`") or flat.endswith("`") or not flat.strip() else ""
    return f"{fence}{pad}{flat}{pad}{fence}"


@dataclass
class _Section:
    """Lines around a table whose rows may be cut to fit; ``priority`` 0 is filled first."""

    priority: int
    name: str  # its SECTION marker
    before: list[str]
    rows: list[str] = field(default_factory=list)
    after: list[str] = field(default_factory=list)
    noun: str = "rows"
    keep: int = 0  # rows that fit, set by _fit

    def note(self, dropped: int) -> str:
        return (
            f"\n_… {plural(dropped, self.noun[:-1], self.noun)} not shown to stay within "
            "GitHub's comment size limit; the JSON or SARIF report has every one._"
        )

    def lines(self) -> list[str]:
        out = self.before + self.rows[: self.keep]
        if self.keep < len(self.rows):
            out.append(self.note(len(self.rows) - self.keep))
        return out + self.after


def render(result: Result, *, limit: int = GITHUB_COMMENT_LIMIT) -> str:
    head = [MARKER, _headline(result), "", _subline(result), ""]
    if not result.violations and not result.errors:
        head += ["No findings.", ""]
    candidates = (_findings, _cost, _errors, _waived, _policies)
    sections = [s for s in (make(result) for make in candidates) if s is not None]
    for s in sections:
        s.before.insert(0, SECTION.format(name=s.name))
    _fit(head, sections, limit)
    body = list(head)
    for s in sections:  # display order is the list order; priority only decides what is cut
        body += s.lines()
    return "\n".join(body).rstrip("\n") + "\n"


def _fit(head: list[str], sections: Sequence[_Section], limit: int) -> None:
    """Give each section as many rows as fit, most important section first."""
    def size(lines: list[str]) -> int:
        return sum(len(line) + 1 for line in lines)

    fixed = size(head) + sum(
        size(s.before + s.after) + (len(s.note(len(s.rows))) + 1 if s.rows else 0)
        for s in sections
    )
    budget = limit - fixed - 2  # the trailing newline, and one character of slack
    for s in sorted(sections, key=lambda s: s.priority):
        s.keep = 0
        for row in s.rows:
            cost = len(row) + 1
            if cost > budget:
                break
            budget -= cost
            s.keep += 1


def _headline(result: Result) -> str:
    """The verdict, for which stack, and what decided it, readable in a notification preview
    (a workflow that checks several stacks posts one comment each: the heading tells them
    apart)."""
    c = counts(result)
    names = stacks(result)
    subject = ""
    if names:
        subject = f" for stack{'s' if len(names) > 1 else ''} " + ", ".join(
            text(n) for n in some(names))
    if result.verdict == "pass":
        extra = [f"{c.advisory} advisory"] * bool(c.advisory) + [f"{c.waived} waived"] * bool(
            c.waived
        )
        return f"## ✅ gpupool check passed{subject}" + (f": {', '.join(extra)}" if extra else "")
    why = [plural(c.mandatory, "mandatory violation")] * bool(c.mandatory) + [
        plural(c.errors, "rule error")
    ] * bool(c.errors)
    return f"## ❌ gpupool check failed{subject}: {', '.join(why)}"


def _subline(result: Result) -> str:
    c = counts(result)
    parts = [
        f"**{plural(c.mandatory, 'mandatory violation')}**",
        f"**{plural(c.errors, 'rule error')}**",
        f"{c.advisory} advisory",
        f"{c.waived} waived",
    ]
    scope = plural(result.resources_evaluated, "resource") + " evaluated"
    if result.sources:
        listed = [code(s) for s in result.sources[:5]]
        if len(result.sources) > 5:
            listed.append(f"{len(result.sources) - 5} more")
        scope += " in " + ", ".join(listed)
    if result.gpu_objects.seen:
        scope += f" · Kubernetes: {text(result.gpu_objects.sentence())}"
    return " · ".join(parts) + f" — {scope}"


def _findings(result: Result) -> _Section | None:
    live = sorted(
        (v for v in result.violations if v.waived_by is None),
        key=lambda v: (severity_key(v)[0], v.resource, v.policy),
    )
    if not live:
        return None
    return _Section(
        priority=0,
        name="findings",
        before=[
            "| | Policy | Enforcement | Resource | Message |",
            "| --- | --- | --- | --- | --- |",
        ],
        rows=[
            f"| {_ICON[status(v)]} | {code(v.policy)} | {text(str(v.enforcement))}"
            f"{' (cannot verify)' if v.unknown else ''} | {text(resource_names(v, NL))} "
            f"| {text(v.message)} |"
            for v in live
        ],
        after=[""],
        noun="findings",
    )


def _cost(result: Result) -> _Section | None:
    if not result.cost:
        return None
    delta = total_delta(result.cost)
    unpriced = sum(1 for c in result.cost if c.delta_per_hour is None)
    if delta is None:
        total = "**unknown**"
    else:
        total = (
            f"**{text(signed_per_hour(delta))}/h** "
            f"({text(signed_per_month(delta))}/month at {HOURS_PER_MONTH} h)"
        )
    if unpriced:
        total += f" · {plural(unpriced, 'resource')} not priced (see notes)"
    rows = []
    for c in result.cost:
        d = c.delta_per_hour
        rows.append(
            f"| {text(short_address(c.resource))} | {text(money_or_dash(c.before_per_hour))} "
            f"| {text(money_or_dash(c.after_per_hour))} "
            f"| {'—' if d is None else text(signed_per_hour(d))} "
            f"| {'—' if d is None else text(signed_per_month(d))} | {text(c.note)} |"
        )
    return _Section(
        priority=1,
        name="cost",
        before=[
            "### GPU cost change (on-demand)",
            "",
            total,
            "",
            f"| Resource | Before \\$/h | After \\$/h | Change \\$/h "
            f"| Change \\$/month ({HOURS_PER_MONTH} h) | Note |",
            "| --- | ---: | ---: | ---: | ---: | --- |",
        ],
        rows=rows,
        after=[""],
        noun="cost lines",
    )


def _errors(result: Result) -> _Section | None:
    if not result.errors:
        return None
    return _Section(
        priority=2,
        name="errors",
        before=[
            f"<details><summary>Rule errors ({len(result.errors)}) — "
            "a rule that cannot run fails the check</summary>",
            "",
            "| Policy | Resource | Error |",
            "| --- | --- | --- |",
        ],
        rows=[
            f"| {code(e.policy)} | {text(short_address(e.resource)) if e.resource else '—'} "
            f"| {text(e.message)} |"
            for e in result.errors
        ],
        after=["", "</details>", ""],
        noun="errors",
    )


def _waived(result: Result) -> _Section | None:
    waived = [v for v in result.violations if v.waived_by is not None]
    if not waived:
        return None
    return _Section(
        priority=3,
        name="waived",
        before=[
            f"<details><summary>Waived ({len(waived)})</summary>",
            "",
            "| Policy | Resource | Waiver | Message |",
            "| --- | --- | --- | --- |",
        ],
        rows=[
            f"| {code(v.policy)} | {text(resource_names(v, NL))} | {text(waiver_justification(v))} "
            f"| {text(v.message)} |"
            for v in waived
        ],
        after=["", "</details>", ""],
        noun="waived findings",
    )


def _policies(result: Result) -> _Section | None:
    policies = policy_index(result)
    if not policies:
        return None
    return _Section(
        priority=4,
        name="policies",
        before=[
            f"<details><summary>Policies ({len(policies)})</summary>",
            "",
            "| Policy | Enforcement | Why |",
            "| --- | --- | --- |",
        ],
        rows=[
            f"| {code(pid)} | {text(str(p.get('enforcement') or '—'))} "
            f"| **{text(str(p.get('title') or pid))}** {text(str(p.get('rationale') or ''))} |"
            for pid, p in policies.items()
        ],
        after=["", "</details>", ""],
        noun="policies",
    )

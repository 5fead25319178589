"""A ``gpupool check --format markdown`` report taken apart by its section markers.

The report (``policies/reports/markdown.py``) opens each section with
``<!-- gpupool-section: NAME -->``: findings, cost, errors, waived, policies. The action puts
several reports in one comment with one policy table (the reports' tables are the same) and
the quota run's cost as what the pull request adds, so it needs the sections apart. gpupool
core never imports ``policies``: the marker is repeated here, and a test holds both equal.
"""

from __future__ import annotations

import re
from collections.abc import Collection
from dataclasses import dataclass

from gpupool.ci.comment import INNER_MARKER

MARKER = re.compile(r"^<!-- gpupool-section: ([a-z]+) -->$")
NAMES = ("findings", "cost", "errors", "waived", "policies")
SAYS_SOMETHING = ("findings", "cost", "errors", "waived")  # what makes a passing stack worth a look


@dataclass(frozen=True)
class Sections:
    head: str  # the summary under the report's headline (its own ``## verdict`` line dropped)
    parts: dict[str, str]  # section name → its markdown, in the report's order

    def body(self, *, without: Collection[str] = (), head: bool = True) -> str:
        chunks = ([self.head] if head else []) + [
            text for name, text in self.parts.items() if name not in without]
        return "\n\n".join(c.strip("\n") for c in chunks if c.strip())

    @property
    def quiet(self) -> bool:
        """Nothing to read but "no findings": no finding, cost change, rule error or waiver."""
        return not any(name in self.parts for name in SAYS_SOMETHING)


def split(markdown: str) -> Sections:
    head: list[str] = []
    parts: dict[str, list[str]] = {}
    current: list[str] = head
    for line in markdown.splitlines():
        if line.strip() == INNER_MARKER:
            continue
        found = MARKER.match(line.strip())
        if found:
            current = parts.setdefault(found.group(1), [])
            continue
        current.append(line)
    headline = next((i for i, line in enumerate(head[:3]) if line.startswith("## ")), None)
    if headline is not None:
        del head[headline]
    return Sections("\n".join(head).strip("\n"),
                    {name: "\n".join(lines).strip("\n") for name, lines in parts.items()})

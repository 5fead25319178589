"""One pull-request comment from several reports, within GitHub's comment size limit.

GitHub refuses a comment over 65,536 characters. Each report gets a fair share of what the
header leaves: reports that fit keep everything, the others share the rest equally and are cut
at a line boundary (never inside a table row, with open ``<details>`` and code fences closed)
with a note that says how much is missing and where the whole report is.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

COMMENT_LIMIT = 65_536
INNER_MARKER = "<!-- gpupool-check -->"  # each report's own marker; the comment has one header


@dataclass(frozen=True)
class Part:
    title: str  # a heading line, e.g. "### Stack `dev`: ❌ fail"
    body: str  # the report's markdown (or the error that stopped it)


def fit(text: str, limit: int, note: str) -> str:
    """``text`` whole if it fits in ``limit`` characters, else cut to fit with ``note``."""
    if len(text) <= limit:
        return text
    lines = text.splitlines()
    kept: list[str] = []
    size = 0
    for line in lines:
        tail = _closers(kept) + _cut_note(note, len(lines) - len(kept))
        if size + len(line) + 1 + len(tail) > limit:
            break
        kept.append(line)
        size += len(line) + 1
    while kept and size + len(_closers(kept) + _cut_note(note, len(lines) - len(kept))) > limit:
        size -= len(kept.pop()) + 1
    out = "\n".join(kept) + ("\n" if kept else "")
    out += _closers(kept) + _cut_note(note, len(lines) - len(kept))
    return out[:limit]  # a limit smaller than the note itself still holds


def _cut_note(note: str, dropped: int) -> str:
    lines = f"{dropped} more line{'s' if dropped != 1 else ''}"
    return f"\n_… {lines} cut to fit the comment; {note}_\n"


def _closers(kept: Sequence[str]) -> str:
    """What the kept lines leave open: a code fence, ``<details>`` blocks."""
    out = ""
    fence = False
    opened = 0
    for line in kept:
        stripped = line.strip()
        if stripped.startswith("```"):
            fence = not fence
        elif not fence:
            opened += stripped.count("<details") - stripped.count("</details>")
    if fence:
        out += "```\n"
    out += "</details>\n" * max(opened, 0)
    return out


def assemble(header: str, parts: Sequence[Part], footer: str, note: str,
             limit: int = COMMENT_LIMIT) -> str:
    """The comment: header, every part (fairly cut), footer; at most ``limit`` characters."""
    bodies = [_strip_marker(p.body) for p in parts]
    fixed = len(header) + len(footer) + sum(len(p.title) + 2 for p in parts) + 8
    budget = max(limit - fixed, 0)
    shares = fair_shares([len(b) for b in bodies], budget)
    out = [header.rstrip("\n"), ""]
    for part, body, share in zip(parts, bodies, shares, strict=True):
        out += [part.title, "", fit(body, share, note).rstrip("\n"), ""]
    out.append(footer.rstrip("\n"))
    text = "\n".join(out) + "\n"
    if len(text) > limit:  # only when the header alone is too big
        text = fit(text, limit, note)
    return text


def fair_shares(sizes: Sequence[int], budget: int) -> list[int]:
    """Characters per part: small parts keep all they have, the rest split what is left."""
    shares = [0] * len(sizes)
    left = budget
    order = sorted(range(len(sizes)), key=lambda i: sizes[i])
    for n, i in enumerate(order):
        share = left // (len(sizes) - n)
        shares[i] = min(sizes[i], share)
        left -= shares[i]
    return shares


def _strip_marker(body: str) -> str:
    return "\n".join(line for line in body.splitlines() if line.strip() != INNER_MARKER)

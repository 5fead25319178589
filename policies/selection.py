"""``gpupool check --check ID,… --skip-check ID,…``: which policies run, as Checkov users expect.

Each option takes comma-separated policy IDs and may be repeated; an item with ``*`` or ``?``
is a pattern over the IDs (``k8s-*``). ``--check`` runs only the policies it names, and
``--skip-check`` then leaves out the ones it names (both may be given). A policy left out runs
as ``disabled`` would, and its waivers are set aside with it: an exception for a check that did
not run is neither used nor stale. An ID that names no policy is bad input, with the closest ID
suggested; a selection that leaves no policy to run is bad input too (it could only pass).
"""

from __future__ import annotations

from collections.abc import Sequence
from fnmatch import fnmatchcase

from gpupool.errors import InputError
from gpupool.record import replace
from gpupool.suggest import did_you_mean
from policies.rules import rule_ids
from policies.rules.params import Enforcement
from policies.settings import Settings


def items(given: Sequence[str] | str | None) -> list[str]:
    """The IDs of every occurrence of an option: ``a,b`` ``--check c`` → a, b, c."""
    values = [given] if isinstance(given, str) else list(given or [])
    return [part.strip() for value in values for part in value.split(",")]


def select(settings: Settings, only: Sequence[str] | str | None,
           skip: Sequence[str] | str | None) -> Settings:
    """``settings`` with the policies outside the selection disabled (one InputError listing
    every unknown ID)."""
    wanted, skipped = items(only), items(skip)
    if not wanted and not skipped:
        return settings
    problems: list[str] = []
    known = rule_ids()
    chosen = _match(wanted, "--check", known, problems) if wanted else set(known)
    left_out = _match(skipped, "--skip-check", known, problems)
    running = chosen - left_out
    if not problems and not running:
        problems.append("--check/--skip-check: no policy is left to run (a check of nothing "
                        "could only pass); name at least one policy to run")
    if problems:
        raise InputError(problems)
    notes = list(settings.notes)
    policies = dict(settings.policies)
    for pid in known:
        current = policies[pid]
        if pid not in running:
            policies[pid] = replace(current, enforcement=Enforcement.DISABLED)
        elif pid in wanted and current.enforcement is Enforcement.DISABLED:
            notes.append(f"--check {pid}: the configuration disables it, so it does not run")
    not_run = frozenset(known) - running
    return replace(settings, policies=policies, notes=tuple(notes),
                   waivers=tuple(w for w in settings.waivers if w.policy not in not_run))


def _match(given: list[str], flag: str, known: tuple[str, ...], problems: list[str]
           ) -> set[str]:
    out: set[str] = set()
    for item in given:
        if not item:
            problems.append(f"{flag}: expected comma-separated policy IDs, got an empty one")
        elif "*" in item or "?" in item:
            found = {pid for pid in known if fnmatchcase(pid, item)}
            if not found:
                problems.append(f"{flag}: {item!r} matches no policy ID (known: "
                                f"{', '.join(known)})")
            out |= found
        elif item in known:
            out.add(item)
        else:
            hint = did_you_mean(item, known) or f" (known: {', '.join(known)})"
            problems.append(f"{flag}: unknown policy ID {item!r}{hint}")
    return out

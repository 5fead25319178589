"""Waivers in an evaluation: which findings they waive, and what is wrong with the waivers.

A waiver that cannot be trusted never waives silently, and one that is about to stop mattering
says so before it does:

- expired, or without an owner, a reason or an expiry: a **mandatory** violation of
  ``gpupool-waiver`` that waives nothing (the check fails until the waiver is fixed);
- expiring within ``expiryWarningDays`` (default 14; the expiry day itself still counts), matching
  no finding at all, or waiving every resource (``allowWildcard``): an **advisory** finding of
  ``gpupool-waiver`` (reported in every format, never blocking).

Each of these findings names the waiver id as its resource, so SARIF points at the waiver's line
in the waivers file.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING

from gpupool.record import replace
from policies.result import Violation
from policies.rules.params import Enforcement
from policies.settings import WAIVER_POLICY, Settings

if TYPE_CHECKING:
    from datetime import date

    from policies.waiver_file import Waiver


def _finding(settings: Settings, w: Waiver, enforcement: Enforcement, message: str) -> Violation:
    return Violation(
        policy=WAIVER_POLICY,
        enforcement=enforcement,
        resource=w.id,
        message=message,
        resource_type="waiver",
        source=settings.waivers_path or "",
    )


def _what(w: Waiver) -> str:
    return f"waiver {w.id} ({w.policy} on {w.resource})"


def waiver_violations(settings: Settings, today: date) -> list[Violation]:
    """Findings about the waivers themselves, before any is applied: broken ones (mandatory),
    ones about to expire and ones waiving every resource (advisory)."""
    out = []
    for w in settings.waivers:
        problems = w.problems(today)
        if problems:
            out.append(_finding(settings, w, Enforcement.MANDATORY, (
                f"{_what(w)} waives nothing: {', '.join(problems)}; a waiver needs an owner, a "
                "reason and an expiry date that has not passed")))
            continue
        assert w.expires is not None  # an active waiver has one
        left = (w.expires - today).days
        if left <= settings.expiry_warning_days:
            when = "today is its last day" if left == 0 else (
                f"its last day is {w.expires.isoformat()}, in {left} day{'s' if left > 1 else ''}")
            out.append(_finding(settings, w, Enforcement.ADVISORY, (
                f"{_what(w)} expires soon: {when}; renew it (owner {w.owner}) or fix what it "
                f"waives (warned {settings.expiry_warning_days} days ahead)")))
        if w.wildcard:
            out.append(_finding(settings, w, Enforcement.ADVISORY, (
                f"{_what(w)} waives {w.policy} on every resource (allowWildcard: true), "
                f"owner {w.owner}, until {w.expires.isoformat()}")))
    return out


def active(waivers: Sequence[Waiver], today: date) -> list[Waiver]:
    return [w for w in waivers if not w.problems(today)]


def apply_waivers(violations: Iterable[Violation], waivers: Sequence[Waiver],
                  today: date) -> list[Violation]:
    """Mark violations covered by an active waiver; they stay in the report, not blocking."""
    by_policy: dict[str, list[Waiver]] = {}
    for w in active(waivers, today):
        by_policy.setdefault(w.policy, []).append(w)
    out = []
    for v in violations:
        # A finding naming several resources (one cause) is waived only by a waiver that
        # covers every one of them: a waiver for the template alone does not waive the group.
        match = next((w for w in by_policy.get(v.policy, ())
                      if all(w.matches(v.policy, r.address) for r in v.resources)), None)
        if match is None:
            out.append(v)
            continue
        info = {"id": match.id, "owner": match.owner, "reason": match.reason,
                "expires": match.expires.isoformat() if match.expires else None}
        out.append(replace(v, waived_by=match.id, detail={**v.detail, "waiver": info}))
    return out


def unmatched_waivers(violations: Iterable[Violation], settings: Settings,
                      today: date) -> list[Violation]:
    """An advisory finding for each active waiver that waived nothing in this run: a stale
    exception, or a resource pattern that does not say what its author meant."""
    used = {v.waived_by for v in violations if v.waived_by is not None}
    enabled = {pid for pid, p in settings.policies.items()
               if p.enforcement is not Enforcement.DISABLED}
    out = []
    for w in active(settings.waivers, today):
        if w.id in used:
            continue
        why = "" if w.policy in enabled else f" ({w.policy} is disabled)"
        out.append(_finding(settings, w, Enforcement.ADVISORY, (
            f"{_what(w)} matched no finding{why}: remove it, or fix its resource pattern")))
    return out


def judge(violations: list[Violation], settings: Settings, today: date) -> list[Violation]:
    """The rules' violations with waivers applied, followed by the findings about waivers."""
    out = apply_waivers(violations, settings.waivers, today)
    out.extend(waiver_violations(settings, today))
    out.extend(unmatched_waivers(out, settings, today))
    return out

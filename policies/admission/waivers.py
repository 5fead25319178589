"""Waivers at admission: each active waiver of a policy becomes a ``matchCondition``.

A waiver names a resource by a glob on the PR check's address (``Deployment/ml/llm``,
``Pod/research/*``; :func:`policies.sources.kubernetes.address`), so every waiver can be said
in CEL: the same address built from the request, matched with the glob as an RE2 pattern
(``*`` any text, ``?`` one character, brackets literal, as the check reads them). What CEL
cannot say is *time*: the API server has no clock in CEL, so a waiver's expiry is honoured
when the policies are rendered (an expired waiver, or one without owner, reason or expiry,
is left out and listed in the policy's ``gpupool.io/waivers-left-out`` annotation), and the
policy lists the waivers it carries with their last day in ``gpupool.io/waivers``: render
again (daily, in CI) and re-apply to drop a waiver that has lapsed.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from datetime import date
from typing import Final

from gpupool.errors import InputError
from policies.settings import Waiver

MAX_CONDITIONS: Final = 64  # the API server's limit on matchConditions per policy
ADDRESS: Final = ("object.kind + '/' + (request.namespace != '' ? request.namespace + '/' : '') "
                  "+ (has(object.metadata.name) ? object.metadata.name : '')")
_NAME: Final = re.compile(r"[^A-Za-z0-9_.-]+")


def pattern(glob: str) -> str:
    """The waiver's glob as an anchored RE2 pattern (fnmatch's * and ?, brackets literal)."""
    out = []
    for ch in glob:
        out.append(".*" if ch == "*" else "." if ch == "?" else re.escape(ch))
    return "^" + "".join(out) + "$"


def conditions(policy: str, waivers: Sequence[Waiver], today: date
               ) -> tuple[list[dict[str, str]], list[str], list[str]]:
    """(matchConditions, carried, left out) for ``policy``'s waivers as of ``today``."""
    found: list[dict[str, str]] = []
    carried: list[str] = []
    left: list[str] = []
    for w in waivers:
        if w.policy != policy:
            continue
        why = w.problems(today)
        if why:
            left.append(f"{w.id} ({'; '.join(why)})")
            continue
        name = _NAME.sub("-", f"waiver-{w.id}")[:63].rstrip("-._") or "waiver"
        regex = pattern(w.resource).replace("\\", "\\\\").replace("'", "\\'")
        found.append({"name": name, "expression": f"!(({ADDRESS}).matches('{regex}'))"})
        expires = w.expires.isoformat() if w.expires else "?"
        carried.append(f"{w.id} {w.resource} until {expires} ({w.owner}: {w.reason})")
    if len(found) > MAX_CONDITIONS:
        raise InputError(f"waivers: policy {policy}: {len(found)} active waivers; a "
                         f"ValidatingAdmissionPolicy holds at most {MAX_CONDITIONS}: merge them "
                         "into fewer patterns")
    return found, carried, left


"""The waivers file, validated (pydantic): imported only when a check is given ``--waivers``.

See :mod:`policies.settings` for the file's shape and how waivers are judged.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from datetime import date
from fnmatch import fnmatchcase
from typing import Any, Final

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    StrictBool,
    StrictInt,
    StrictStr,
    ValidationError,
    field_validator,
)

from gpupool.errors import InputError
from gpupool.suggest import did_you_mean
from gpupool.yamlio import quote
from policies.rules import rule_ids


class Waiver(BaseModel):
    """One exception: a policy, a resource pattern, and who answers for it until when."""

    model_config = ConfigDict(extra="forbid", frozen=True, populate_by_name=True)

    id: str = Field(min_length=1)
    policy: StrictStr = Field(min_length=1)
    resource: StrictStr = Field(min_length=1)
    owner: StrictStr | None = None
    reason: StrictStr | None = None
    expires: date | None = None  # the last day the waiver applies (inclusive)
    allow_wildcard: StrictBool = Field(default=False, alias="allowWildcard")

    @field_validator("id", mode="before")
    @classmethod
    def _id_text(cls, value: Any) -> Any:
        """``id: 7`` is as good an id as ``id: "7"``; booleans and floats are not ids."""
        return str(value) if type(value) is int else value

    @field_validator("expires", mode="before")
    @classmethod
    def _a_date(cls, value: Any) -> Any:
        """A calendar date, never a number (pydantic would read 0 as 1970-01-01) nor a time."""
        if value is None or type(value) is date:
            return value
        if isinstance(value, str) and _ISO_DATE.fullmatch(value.strip()):
            return value.strip()
        raise ValueError(_DATE_EXPECTED)

    @property
    def wildcard(self) -> bool:
        """Does the pattern match every resource (``*``, ``**``)?"""
        return set(self.resource) == {"*"}

    def problems(self, today: date) -> list[str]:
        """Why this waiver waives nothing (empty when it is active)."""
        out = [f"no {k}" for k in ("owner", "reason", "expires")
               if not str(getattr(self, k) or "").strip()]
        if self.expires is not None and self.expires < today:
            out.append(f"expired: its last day was {self.expires.isoformat()} "
                       "(the expiry day is included)")
        return out

    def matches(self, policy: str, address: str) -> bool:
        """fnmatch glob (``*``, ``?``) on the address, with brackets taken literally: in
        Terraform addresses they are instance keys (``aws_instance.gpu[*]`` matches every
        instance), never character classes."""
        if policy != self.policy:
            return False
        return address == self.resource or fnmatchcase(address, _literal_brackets(self.resource))


EXPIRY_WARNING_KEY: Final = "expiryWarningDays"
DEFAULT_EXPIRY_WARNING_DAYS: Final = 14  # policies.settings says the same (it may not import this)
_ISO_DATE: Final = re.compile(r"\d{4}-\d{2}-\d{2}")
_DATE_EXPECTED: Final = "expected a date YYYY-MM-DD (the last day the waiver applies)"


def _literal_brackets(pattern: str) -> str:
    return "".join("[[]" if ch == "[" else "[]]" if ch == "]" else ch for ch in pattern)


class _WaiverFile(BaseModel):
    model_config = ConfigDict(extra="forbid", populate_by_name=True)
    waivers: list[Waiver]
    expiry_warning_days: StrictInt = Field(default=DEFAULT_EXPIRY_WARNING_DAYS, ge=0, le=3650,
                                           alias="expiryWarningDays")


def parse_waiver_file(doc: Any, path: str) -> tuple[tuple[Waiver, ...], int]:
    """The waivers of a document and its ``expiryWarningDays``; InputError on bad input."""
    if doc is None:
        return (), DEFAULT_EXPIRY_WARNING_DAYS
    if not isinstance(doc, Mapping) or "waivers" not in doc:
        raise InputError(f"{path}: expected a mapping with a 'waivers' list")
    try:
        parsed = _WaiverFile.model_validate(doc)
    except ValidationError as e:
        raise InputError([_waiver_problem(path, err) for err in e.errors(include_url=False)]
                         ) from None
    problems: list[str] = []
    seen: set[str] = set()
    known = rule_ids()
    for i, w in enumerate(parsed.waivers):
        if w.id in seen:
            problems.append(f"{path}: waivers[{i}].id: duplicate waiver id {w.id!r}")
        seen.add(w.id)
        if w.wildcard and not w.allow_wildcard:
            problems.append(f"{path}: waivers[{i}].resource: {w.resource!r} waives {w.policy} "
                            "on every resource; expected a narrower pattern, or "
                            "allowWildcard: true to mean it")
        if w.policy not in known:
            problems.append(f"{path}: waivers[{i}].policy: unknown policy ID {w.policy!r}"
                            f"{did_you_mean(w.policy, known)} (known: {', '.join(known)})")
    if problems:
        raise InputError(problems)
    return tuple(parsed.waivers), parsed.expiry_warning_days


def _waiver_problem(path: str, e: Mapping[str, Any]) -> str:
    loc = e["loc"]
    key = "".join(f"[{p}]" if isinstance(p, int) else f".{p}" for p in loc).lstrip(".")
    kind = e["type"]
    if kind == "missing":
        return f"{path}: {key}: required key is missing"
    got = quote(e.get("input"))
    if kind == "extra_forbidden":
        if len(loc) == 1:
            return f"{path}: {key}: unknown key (expected waivers, {EXPIRY_WARNING_KEY})"
        return (f"{path}: {key}: unknown key (expected id, policy, resource, owner, reason, "
                "expires, allowWildcard)")
    if kind.startswith("date") or loc[-1] == "expires":
        return f"{path}: {key}: {_DATE_EXPECTED}, got {got}"
    if kind in ("string_type", "string_too_short"):
        return f"{path}: {key}: expected a non-empty string, got {got}"
    if kind == "bool_type":
        return f"{path}: {key}: expected true or false, got {got}"
    msg = str(e["msg"]).removeprefix("Value error, ")
    return f"{path}: {key}: {msg}, got {got}"

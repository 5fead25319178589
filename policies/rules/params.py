"""Rule parameters as plain frozen dataclasses; pydantic validates them only when asked.

A check with no ``--config`` needs every rule's defaults and nothing else, and building 20
pydantic models costs a check of a small plan most of its start-up (issue 16 item 25). So a rule
writes its parameters as a frozen dataclass, each field made by :func:`param` with the same
keywords pydantic's ``Field`` takes (``description``, ``ge``, ``le``, ``gt``, ``min_length``):
the defaults are the dataclass itself, built without pydantic. Validating a configuration
and its JSON schema (:func:`policies.rules.param_schema.validate`, ``json_schema``) go
through a pydantic model generated once per class by :mod:`policies.rules.param_schema`, with
the configuration's spelling (camelCase aliases, snake_case accepted, unknown keys refused), so
error messages and schemas are what a hand-written pydantic model gives.

A check across fields (``minTarget`` ≤ ``maxTarget``) is the dataclass's ``__post_init__``
raising ValueError: it runs for the defaults and, inside validation, becomes a pydantic error
without a location, as a model validator's does.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Mapping
from dataclasses import MISSING, dataclass, field
from enum import StrEnum
from typing import Any, Literal, TypeVar

P = TypeVar("P", bound="RuleParams")


class Enforcement(StrEnum):
    MANDATORY = "mandatory"
    ADVISORY = "advisory"
    DISABLED = "disabled"


def param(default: Any = MISSING, *, default_factory: Callable[[], Any] | None = None,
          **constraints: Any) -> Any:
    """A parameter field, written as pydantic's ``Field``: a default (or ``default_factory``)
    and constraint keywords (``description``, ``ge``, ``le``, ``gt``, ``min_length``)."""
    if default_factory is not None:
        return field(default_factory=default_factory, metadata=constraints)
    return field(default=default, metadata=constraints)


@dataclass(frozen=True)
class RuleParams:
    """Parameters every rule takes; rule modules subclass this with their own.

    Field names are snake_case in Python and camelCase in configuration (the aliases), exactly
    as Pulumi's ``--policy-pack-config`` spells them, so one config file serves both tools.
    """

    unknown_enforcement: Literal[Enforcement.MANDATORY, Enforcement.ADVISORY] = param(
        Enforcement.ADVISORY,
        description=(
            "Level at which 'cannot verify' findings (values unknown until apply) are reported; "
            "never stricter than the policy's own enforcement. They are never a silent pass."
        ),
    )


def to_camel(name: str) -> str:
    """``max_target`` → ``maxTarget`` (pydantic's ``to_camel``, for snake_case names)."""
    head, *rest = name.split("_")
    return head + "".join(part[:1].upper() + part[1:] for part in rest)


def defaults(cls: type[P]) -> P:
    """The parameters a rule runs with when nothing is configured (no pydantic involved)."""
    return cls()


def aliases(cls: type[RuleParams]) -> list[str]:
    """Every parameter's configuration name, in declaration order."""
    return [to_camel(f.name) for f in dataclasses.fields(cls)]


def dump(params: RuleParams, *, by_alias: bool = True, exclude_defaults: bool = False,
         mode: Literal["python", "json"] = "python") -> dict[str, Any]:
    """The values as a mapping (configuration names with ``by_alias``): what ``validate`` takes
    back. ``mode="json"`` turns tuples into lists and enums into their values."""
    out: dict[str, Any] = {}
    for f in dataclasses.fields(params):
        value = getattr(params, f.name)
        if exclude_defaults and value == _default(f):
            continue
        out[to_camel(f.name) if by_alias else f.name] = _json(value) if mode == "json" else value
    return out


def _default(f: dataclasses.Field[Any]) -> Any:
    if f.default is not MISSING:
        return f.default
    if f.default_factory is not MISSING:
        return f.default_factory()
    return MISSING


def _json(value: Any) -> Any:
    if isinstance(value, StrEnum):
        return value.value
    if isinstance(value, list | tuple):
        return [_json(v) for v in value]
    if isinstance(value, Mapping):
        return {str(k): _json(v) for k, v in value.items()}
    return value

"""A rule's CrossGuard config: its JSON schema, and the validation of what Pulumi delivers.

The schema is derived from the rule's pydantic params model (camelCase aliases, defaults,
descriptions), so ``--policy-pack-config`` and ``gpupool check --config`` accept the same keys
and nothing is written twice. Rules that need old inputs take one more key, ``baseline``: the
path of a ``pulumi stack export`` file (see :mod:`policies.crossguard.baseline`), and
``requireBaseline``: without a baseline such a rule treats every resource as new (it cannot see
a change) unless this is set, in which case GPU resources get its "cannot verify" finding.
"""

from __future__ import annotations

import copy
import json
import threading
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Final

from pydantic import ValidationError

from policies.rules.base import Rule
from policies.rules.param_schema import json_schema, validate
from policies.rules.params import RuleParams, dump
from policies.settings import BASELINE_KEY, REQUIRE_BASELINE_KEY

BASELINE_SCHEMA: Final[dict[str, Any]] = {
    "type": "string",
    "description": (
        "Path of a `pulumi stack export` file holding the deployed inputs, so the pack can "
        "compare old and new values (CrossGuard alone passes only new inputs). Relative paths "
        "are resolved against the policy pack's directory; ~ and $VARS are expanded."
    ),
}
REQUIRE_BASELINE_SCHEMA: Final[dict[str, Any]] = {
    "type": "boolean",
    "default": False,
    "description": (
        "Without a baseline, report GPU resources as 'cannot verify' (at unknownEnforcement) "
        "instead of treating them as new. With unknownEnforcement mandatory, `pulumi up` "
        "without a baseline is blocked: fail closed."
    ),
}


class RuleConfigError(ValueError):
    """Config for one policy that cannot be used; ``problems`` are ready to show."""

    def __init__(self, policy: str, problems: list[str]) -> None:
        self.policy = policy
        self.problems = problems
        super().__init__("; ".join(problems))


@dataclass(frozen=True)
class RuleConfig:
    params: RuleParams
    baseline: str | None = None
    require_baseline: bool = False


def config_properties(rule: Rule) -> dict[str, dict[str, Any]]:
    """JSON-schema properties of the rule's config: one per param (camelCase), ``$ref`` inlined."""
    schema = json_schema(rule.meta.params, mode="validation")
    defs = schema.get("$defs", {})
    defaults = _defaults(rule.meta.params)
    props: dict[str, dict[str, Any]] = {}
    for name, prop in schema.get("properties", {}).items():
        inlined = _inline(prop, defs)
        inlined.pop("title", None)
        if "default" not in inlined and name in defaults:  # default_factory fields
            inlined["default"] = defaults[name]
        props[name] = inlined
    if rule.meta.needs_old_inputs:
        props[BASELINE_KEY] = dict(BASELINE_SCHEMA)
        props[REQUIRE_BASELINE_KEY] = dict(REQUIRE_BASELINE_SCHEMA)
    return props


def _defaults(model: type[RuleParams]) -> dict[str, Any]:
    """Every default, factories included, as JSON: what the CLI shows and fills in."""
    try:
        return dump(model(), mode="json")
    except (TypeError, ValueError):  # a model with required params has no complete default
        return {}


def _inline(node: Any, defs: Mapping[str, Any]) -> Any:
    if isinstance(node, dict):
        ref = node.get("$ref")
        if isinstance(ref, str) and ref.startswith("#/$defs/"):
            target = copy.deepcopy(defs[ref.removeprefix("#/$defs/")])
            rest = {k: v for k, v in node.items() if k != "$ref"}
            return _inline({**target, **rest}, defs)
        return {k: _inline(v, defs) for k, v in node.items()}
    if isinstance(node, list):
        return [_inline(v, defs) for v in node]
    return node


def _format(policy: str, err: ValidationError) -> list[str]:
    out = []
    for e in err.errors(include_url=False):
        where = ".".join(str(p) for p in e["loc"]) or "(config)"
        given = e.get("input")
        shown = "" if e["type"] == "missing" or isinstance(given, Mapping) else f" (got {given!r})"
        out.append(f"{policy}: {where}: {e['msg']}{shown}")
    return out


class ConfigParser:
    """Parses (and caches) each policy's config; the same dict always gives the same answer."""

    def __init__(self, rule: Rule) -> None:
        self.rule = rule
        self._lock = threading.Lock()
        self._cache: dict[str, RuleConfig | RuleConfigError] = {}

    def parse(self, raw: Mapping[str, Any] | None) -> RuleConfig:
        """Validated params (and baseline path); raises :class:`RuleConfigError`."""
        key = json.dumps(raw or {}, sort_keys=True, default=str)
        with self._lock:
            hit = self._cache.get(key)
        if hit is None:
            hit = self._parse(dict(raw or {}))
            with self._lock:
                self._cache[key] = hit
        if isinstance(hit, RuleConfigError):
            raise hit
        return hit

    def _parse(self, raw: dict[str, Any]) -> RuleConfig | RuleConfigError:
        policy = self.rule.meta.id
        problems: list[str] = []
        baseline = None
        if self.rule.meta.needs_old_inputs and BASELINE_KEY in raw:
            value = raw.pop(BASELINE_KEY)
            if isinstance(value, str) and value.strip():
                baseline = value
            elif value not in (None, ""):
                problems.append(f"{policy}: baseline: expected a file path (got {value!r})")
        require = False
        if self.rule.meta.needs_old_inputs and REQUIRE_BASELINE_KEY in raw:
            value = raw.pop(REQUIRE_BASELINE_KEY)
            if isinstance(value, bool):
                require = value
            elif value is not None:
                problems.append(
                    f"{policy}: {REQUIRE_BASELINE_KEY}: expected true or false (got {value!r})"
                )
        try:
            params = validate(self.rule.meta.params, raw)
        except ValidationError as e:
            problems.extend(_format(policy, e))
        if problems:
            return RuleConfigError(policy, problems)
        return RuleConfig(params=params, baseline=baseline, require_baseline=require)

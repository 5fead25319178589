"""Complete and check ``--policy-pack-config`` the way the Pulumi CLI does before Configure.

Mirrors ``ReconcilePolicyPackConfig`` in pulumi/pkg/resource/analyzer/config.go: every policy
starts from its default enforcement level and its schema's ``default`` values, the pack's
initial config and then the user's config are laid on top (``all`` sets every level), and each
policy's properties are validated against ``{"type": "object", "properties", "required"}``.
Like the CLI, names that match no policy are passed through: the pack decides about them.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from policies.testing.messages import AnalyzerInfo

VALID_LEVELS = frozenset({"advisory", "mandatory", "remediate", "disabled"})


class PolicyConfigError(ValueError):
    """The config would have been refused by the CLI; one line per problem."""

    def __init__(self, problems: list[str]) -> None:
        self.problems = problems
        super().__init__("invalid policy pack config:\n" + "\n".join(problems))


def _entries(config: Mapping[str, Any]) -> dict[str, tuple[str | None, dict[str, Any]]]:
    out: dict[str, tuple[str | None, dict[str, Any]]] = {}
    problems: list[str] = []
    for name, value in config.items():
        if isinstance(value, str):
            level, props = value, {}
        elif isinstance(value, Mapping):
            props = {k: v for k, v in value.items() if k != "enforcementLevel"}
            level = value.get("enforcementLevel")
            if level is not None and not isinstance(level, str):
                problems.append(f"{name}: {level!r} is not a valid enforcement level")
                continue
        else:
            problems.append(f"{name}: {value!r} is not a valid value; must be a string or object")
            continue
        if level is not None and level not in VALID_LEVELS:
            problems.append(f"{name}: {level!r} is not a valid enforcement level")
            continue
        out[name] = (level, props)
    if problems:
        raise PolicyConfigError(problems)
    return out


def cli_policy_config(
    info: AnalyzerInfo, config: Mapping[str, Any], *, validate: bool = True
) -> dict[str, dict[str, Any]]:
    """The per-policy config the CLI would send: ``{name: {"enforcementLevel", **props}}``."""
    result: dict[str, tuple[str, dict[str, Any]]] = {}
    for p in info.policies:
        defaults = {
            k: s["default"]
            for k, s in p.config_properties.items()
            if isinstance(s, Mapping) and "default" in s
        }
        result[p.name] = (p.enforcement_level, defaults)

    for layer in (info.initial_config, config):
        entries = _entries(layer)
        all_level = entries.get("all", (None, {}))[0]
        if all_level:
            result = {k: (all_level, props) for k, (_, props) in result.items()}
        for name, (level, props) in entries.items():
            cur_level, cur_props = result.get(name, ("", {}))
            result[name] = (level or cur_level, {**cur_props, **props})

    if validate:
        _validate(info, result)
    return {
        name: ({"enforcementLevel": level} if level else {}) | props
        for name, (level, props) in result.items()
    }


def _validate(info: AnalyzerInfo, result: Mapping[str, tuple[str, dict[str, Any]]]) -> None:
    try:
        import jsonschema  # a test-time dependency, needed only to validate as the CLI does
    except ImportError:
        raise RuntimeError(
            "validating policy config as the CLI does needs the jsonschema package: "
            "pip install jsonschema, or pass validate=False"
        ) from None

    problems: list[str] = []
    for p in info.policies:
        if not p.config_schema:
            continue
        schema: dict[str, Any] = {"type": "object"}
        if p.config_properties:
            schema["properties"] = dict(p.config_properties)
        if p.config_schema.get("required"):
            schema["required"] = list(p.config_schema["required"])
        props = result.get(p.name, ("", {}))[1]
        validator = jsonschema.Draft7Validator(schema)
        for err in sorted(validator.iter_errors(props), key=lambda e: list(e.path)):
            where = ".".join(str(x) for x in err.path)
            problems.append(f"{p.name}: {where + ': ' if where else ''}{err.message}")
    if problems:
        raise PolicyConfigError(problems)

"""The policy rules, one module per policy ID (see base.py for what a rule is).

``ALL_RULES`` is the order reports and docs list them in; rule objects are stateless and shared
by the engine, the CrossGuard pack, the docs and the tests. It imports every rule module, so it
is made on first use: a check imports only the rules that read its plan's kinds of resource
(:mod:`policies.rules.registry`, the generated index of every rule's metadata).
"""

from __future__ import annotations

from policies.rules.registry import BY_ID, load

TYPE_CHECKING = False  # typing's, without importing typing (not on a check's path)
if TYPE_CHECKING:
    from typing import Any

    from policies.rules.base import Rule

    ALL_RULES: tuple[Rule, ...]


def get_rule(rule_id: str) -> Rule:
    """The rule with this policy ID; KeyError names the known IDs."""
    if rule_id not in BY_ID:
        from gpupool.suggest import did_you_mean

        raise KeyError(f"unknown policy {rule_id!r}{did_you_mean(rule_id, BY_ID)} "
                       f"(known: {', '.join(BY_ID)})")
    return load(rule_id)


def rule_ids() -> tuple[str, ...]:
    return tuple(BY_ID)


def __getattr__(name: str) -> Any:  # ``ALL_RULES`` and ``Rule``, imported on first use
    if name == "ALL_RULES":
        from policies.rules.registry import all_rules

        rules = all_rules()
        globals()["ALL_RULES"] = rules
        return rules
    if name == "Rule":
        from policies.rules.base import Rule

        return Rule
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


__all__ = ["ALL_RULES", "Rule", "get_rule", "rule_ids"]

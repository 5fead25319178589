"""Every rule's metadata without importing it: ``python -m policies.rules.registry [--check]``.

A check of a Terraform plan needs the rules that read its kinds of resource, and of every other
rule only what a report lists (title, rationale, scope, default enforcement). Importing all 20
rule modules, and through them the Kubernetes readers, cost a check of 1,000 resources most of
its start-up (issue 16 item 25). So the metadata of every rule is written once more, *generated*
from the rule objects into :mod:`policies.rules._index` (as docs/policies.md is generated), and
tests/policies/rules/test_registry.py holds the file equal to what the rules say: it cannot
drift. :func:`load` imports one rule module when a rule has to run.

:data:`MODULES` is the one hand-written list: every rule module, in the order reports and docs
list the rules (the test refuses a rule module missing from it).
"""

from __future__ import annotations

import sys
from functools import cache

from gpupool.record import Frozen
from policies.rules._index import RULES as _ROWS
from policies.rules.params import Enforcement

TYPE_CHECKING = False  # typing's, without importing typing (not on a check's path)
if TYPE_CHECKING:
    from pathlib import Path
    from typing import Any, Final

    from policies.rules.base import Rule, RuleParams

MODULES: Final = (
    "gpu_no_vertical_upsize",
    "gpu_smallest_instance",
    "gpu_pool_scales_on_utilisation",
    "gpu_capacity_vs_utilisation",
    "gpu_chargeback_tags",
    "imdsv2_required",
    "ebs_encrypted",
    "gpu_proxy_placement",
    "gpu_proxy_private",
    "gpu_proxy_network_budget",
    "team_gpu_quota",
    "k8s_gpu_per_container",
    "k8s_gpu_limits",
    "k8s_gpu_namespace_quota",
    "k8s_gpu_workload_autoscaled",
    "karpenter_gpu_smallest",
    "gpu_nodes_tainted",
    "k8s_cpu_pods_off_gpu_nodes",
    "k8s_gpu_job_deadline",
    "karpenter_gpu_consolidation",
)
_FIELDS: Final = ("id", "module", "title", "default_enforcement", "scope", "rationale", "kinds",
                  "needs_old_inputs", "proxy_tier")


class RuleInfo(Frozen):
    """What is known of a rule without importing it (a copy of its :class:`RuleMeta`)."""

    __slots__ = (
        "id", "module", "title", "default_enforcement", "scope", "rationale", "kinds",
        "needs_old_inputs", "proxy_tier"
    )

    id: str
    module: str  # policies.rules.<module> defines RULE
    title: str
    default_enforcement: Enforcement
    scope: str  # "resource" or "stack"
    rationale: str
    kinds: frozenset[str]  # ResourceKind values: a rule reads nothing else (test_registry.py)
    needs_old_inputs: bool
    proxy_tier: bool  # found nothing on a plan without a GPU proxy tier (test_registry.py)

    def __init__(
        self,
        id: str,
        module: str,
        title: str,
        default_enforcement: Enforcement,
        scope: str,
        rationale: str,
        kinds: frozenset[str],
        needs_old_inputs: bool,
        proxy_tier: bool,
    ) -> None:
        object.__setattr__(self, "id", id)
        object.__setattr__(self, "module", module)
        object.__setattr__(self, "title", title)
        object.__setattr__(self, "default_enforcement", default_enforcement)
        object.__setattr__(self, "scope", scope)
        object.__setattr__(self, "rationale", rationale)
        object.__setattr__(self, "kinds", kinds)
        object.__setattr__(self, "needs_old_inputs", needs_old_inputs)
        object.__setattr__(self, "proxy_tier", proxy_tier)


INFOS: Final = tuple(
    RuleInfo(row["id"], row["module"], row["title"], Enforcement(row["default_enforcement"]),
             row["scope"], row["rationale"], frozenset(row["kinds"]), row["needs_old_inputs"],
             row["proxy_tier"])
    for row in _ROWS)
BY_ID: Final = {i.id: i for i in INFOS}


@cache
def load(rule_id: str) -> Rule:
    """The rule object of ``rule_id`` (its module imported now); KeyError if unknown. (By
    ``__import__``: importlib, and warnings behind it, are not on a check's path.)"""
    name = f"policies.rules.{BY_ID[rule_id].module}"
    rule: Rule = __import__(name, fromlist=["RULE"]).RULE
    return rule


def all_rules() -> tuple[Rule, ...]:
    """Every rule object, in report order (imports every rule module)."""
    return tuple(load(i.id) for i in INFOS)


def default_params(rule_id: str) -> RuleParams:
    """The parameters ``rule_id`` runs with when nothing is configured."""
    return load(rule_id).parse_params()


# --------------------------------------------------------------------------- generating


def _row(rule: Rule) -> dict[str, Any]:
    m = rule.meta
    return {"id": m.id, "module": type(rule).__module__.rsplit(".", 1)[-1], "title": m.title,
            "default_enforcement": m.default_enforcement.value, "scope": m.scope,
            "rationale": m.rationale, "kinds": sorted(str(k) for k in m.kinds),
            "needs_old_inputs": m.needs_old_inputs, "proxy_tier": m.proxy_tier}


def render_index() -> str:
    """The text of policies/rules/_index.py, from the rule modules of :data:`MODULES`."""
    lines = ['"""Generated by `python -m policies.rules.registry` from the rule modules; do not',
             "edit by hand (tests/policies/rules/test_registry.py holds it equal to the rules).",
             '"""', "", "# ruff: noqa: E501, RUF001  (the rules' own text, copied)", "RULES = ("]
    import importlib

    for name in MODULES:
        rule = importlib.import_module(f"policies.rules.{name}").RULE
        row = _row(rule)
        lines.append("    {")
        lines += [f"        {key!r}: {row[key]!r}," for key in _FIELDS]
        lines.append("    },")
    lines.append(")")
    return "\n".join(lines) + "\n"


def index_path() -> Path:
    """policies/rules/_index.py (a function: pathlib is not on a check's start-up)."""
    from pathlib import Path

    return Path(__file__).resolve().parent / "_index.py"


def main(argv: list[str] | None = None) -> int:
    import argparse
    from pathlib import Path

    parser = argparse.ArgumentParser(prog="python -m policies.rules.registry",
                                     description="Write policies/rules/_index.py from the rules.")
    parser.add_argument("--check", action="store_true", help="exit 1 if the file is stale")
    parser.add_argument("--output", type=Path, default=index_path())
    args = parser.parse_args(argv)
    text = render_index()
    current = args.output.read_text() if args.output.exists() else ""
    if args.check:
        if current != text:
            print(f"{args.output}: stale; run: python -m policies.rules.registry",
                  file=sys.stderr)
            return 1
        return 0
    if current != text:
        args.output.write_text(text)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

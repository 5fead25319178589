"""The ``gpupool`` CrossGuard policy pack: every engine rule, as Pulumi runs policies.

``pulumi preview --policy-pack policies`` and ``pulumi up --policy-pack policies`` start
``policies/__main__.py``, which calls :func:`serve`. Policies are built from ``ALL_RULES``, so
a rule added to the engine is enforced at deploy time without a line written here.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path

import pulumi_policy.policy as sdk
from pulumi_policy import EnforcementLevel, Policy, PolicyPack

from policies.crossguard.levels import leveled_servicer
from policies.crossguard.policies import PackRuntime, RulePolicy
from policies.rules.base import Rule

PACK_NAME = "gpupool"
MANIFEST = Path(__file__).resolve().parent / "PulumiPolicy.yaml"
DESCRIPTION = (
    "GPU fleets that scale out on utilisation, never up: the gpupool policy engine's rules "
    "(same ids, messages and defaults as `gpupool check`)."
)


def rule_policies(rules: Sequence[Rule] | None = None,
                  runtime: PackRuntime | None = None) -> list[RulePolicy]:
    if rules is None:
        from policies.rules import ALL_RULES

        rules = list(ALL_RULES)
    runtime = runtime or PackRuntime()
    return [RulePolicy(rule, runtime) for rule in rules]


def build_policies(rules: Sequence[Rule] | None = None,
                   runtime: PackRuntime | None = None) -> list[Policy]:
    """The pulumi-policy policies of the pack, one per rule, in ``ALL_RULES`` order."""
    return [rp.build() for rp in rule_policies(rules, runtime)]


@contextmanager
def _servicer(cls: type | None) -> Iterator[None]:
    """Let PolicyPack serve with gpupool's servicer (see :mod:`policies.crossguard.levels`)."""
    if cls is None:
        yield
        return
    original = sdk._PolicyAnalyzerServicer
    sdk._PolicyAnalyzerServicer = cls  # type: ignore[misc]
    try:
        yield
    finally:
        sdk._PolicyAnalyzerServicer = original  # type: ignore[misc]


def pack_version() -> str:
    """The pack's version as ``PulumiPolicy.yaml`` declares it (what the Pulumi CLI publishes);
    the pack reports the same one over gRPC."""
    from gpupool.yamlio import read_yaml

    doc = read_yaml(MANIFEST)
    version = doc.get("version") if isinstance(doc, dict) else None
    if not isinstance(version, str) or not version.strip():
        from gpupool.errors import InputError

        raise InputError(f"{MANIFEST}: version: expected the pack's version, got {version!r}")
    return version


def serve(rules: Sequence[Rule] | None = None) -> None:
    """Start the pack's gRPC server and print its port (blocks until interrupted)."""
    glue = rule_policies(rules)
    checks = {rp.id: rp.config_problems for rp in glue}
    with _servicer(leveled_servicer(checks, PACK_NAME, pack_version())):
        PolicyPack(
            name=PACK_NAME,
            description=DESCRIPTION,
            enforcement_level=EnforcementLevel.ADVISORY,  # every policy sets its own
            policies=[rp.build() for rp in glue],
        )

"""Per-diagnostic enforcement levels inside a pulumi-policy pack.

pulumi-policy reports every violation of a policy at the policy's level. gpupool's rules also
say two other things: "cannot verify" (reported at the rule's ``unknownEnforcement``, advisory by
default, never stricter than the rule) and pure information (a change to another GPU model,
always advisory). The CLI honours the level of each diagnostic, so the pack's servicer hands
policies a reporter that can report at a chosen level. The hook is one protected method of
pulumi-policy's servicer; if a future SDK changes it, :func:`leveled_servicer` returns None and
every finding is reported at the policy's level, which is stricter, never laxer.
"""

from __future__ import annotations

import inspect
import logging
from collections.abc import Callable, Mapping
from typing import Any

import grpc
import pulumi_policy.policy as sdk
from pulumi_policy import EnforcementLevel, ReportViolation

from gpupool.suggest import did_you_mean
from policies.crossguard import depth
from policies.crossguard.props import request_scope
from policies.engine import level as engine_level
from policies.rules.base import Enforcement, Finding
from policies.settings import PolicySettings

log = logging.getLogger(__name__)

TO_SDK = {
    Enforcement.MANDATORY: EnforcementLevel.MANDATORY,
    Enforcement.ADVISORY: EnforcementLevel.ADVISORY,
    Enforcement.DISABLED: EnforcementLevel.DISABLED,
}
FROM_SDK = {
    EnforcementLevel.MANDATORY: Enforcement.MANDATORY,
    EnforcementLevel.REMEDIATE: Enforcement.MANDATORY,  # pulumi-policy reports it as mandatory
    EnforcementLevel.ADVISORY: Enforcement.ADVISORY,
    EnforcementLevel.DISABLED: Enforcement.DISABLED,
}


def finding_level(finding: Finding, in_force: EnforcementLevel, params: Any) -> EnforcementLevel:
    """The level a finding is reported at: the engine's own decision (:func:`engine.level`)."""
    return TO_SDK[engine_level(finding, PolicySettings(FROM_SDK[in_force], params))]


class LeveledReport:
    """A ``report_violation`` that can also report at another level: ``report.at(level)``."""

    def __init__(self, make: Callable[[EnforcementLevel], ReportViolation],
                 level: EnforcementLevel) -> None:
        self._make = make
        self.level = level
        self._by_level: dict[EnforcementLevel, ReportViolation] = {}

    def at(self, level: EnforcementLevel) -> ReportViolation:
        if level not in self._by_level:
            self._by_level[level] = self._make(level)
        return self._by_level[level]

    def __call__(self, message: str, urn: str | None = None) -> None:
        self.at(self.level)(message, urn)


ConfigCheck = Callable[[str, Mapping[str, Any]], list[str]]


def leveled_servicer(config_checks: Mapping[str, ConfigCheck], pack_name: str,
                     version: str | None = None) -> type | None:
    """pulumi-policy's servicer with per-level reporting, config validation at Configure, and
    each Analyze request's properties converted once for all policies.

    ``config_checks`` maps a policy name to a function of (enforcement, properties) returning
    problems; a Configure carrying any problem (or naming a policy the pack lacks) is refused
    with INVALID_ARGUMENT, so ``pulumi preview`` stops with the message before analysing.
    ``version`` replaces the "0.0.1" pulumi-policy's Python SDK always reports (it expects the
    CLI to read PulumiPolicy.yaml), so diagnostics and GetAnalyzerInfo name the real version.
    """
    base = getattr(sdk, "_PolicyAnalyzerServicer", None)
    if base is None or not callable(getattr(base, "_create_report_violation", None)):
        log.warning("pulumi-policy internals changed: findings keep their policy's level")
        return None

    takes_severity = "severity" in inspect.signature(base._create_report_violation).parameters

    class LeveledServicer(base):  # type: ignore[misc,valid-type]
        def __init__(self, name, sdk_version, *args, **kwargs):  # type: ignore[no-untyped-def]
            super().__init__(name, version or sdk_version, *args, **kwargs)
            self._gpupool_version = version or sdk_version

        def _create_report_violation(  # type: ignore[no-untyped-def]
            self, response, policy_name, policy_description, enforcement_level, severity=None
        ) -> LeveledReport:
            parent = super()._create_report_violation
            extra = (severity,) if takes_severity else ()  # pulumi-policy < 1.14 has none

            def make(level: EnforcementLevel) -> ReportViolation:
                return parent(response, policy_name, policy_description, level, *extra)

            return LeveledReport(make, enforcement_level)

        def Analyze(self, request, context):  # type: ignore[no-untyped-def]
            cuts = depth.cut_deep(request.properties)  # before the SDK recurses into them
            with request_scope():
                response = super().Analyze(request, context)
            if cuts:
                response.diagnostics.append(depth.diagnostic(
                    sdk.proto, request.urn, cuts, pack_name, self._gpupool_version))
            return response

        def AnalyzeStack(self, request, context):  # type: ignore[no-untyped-def]
            deep = [(r.urn, cuts) for r in request.resources
                    if (cuts := depth.cut_deep(r.properties))]
            response = super().AnalyzeStack(request, context)
            for urn, cuts in deep:
                response.diagnostics.append(depth.diagnostic(
                    sdk.proto, urn, cuts, pack_name, self._gpupool_version))
            return response

        def Configure(self, request, context):  # type: ignore[no-untyped-def]
            result = super().Configure(request, context)
            problems = configure_problems(request, config_checks, pack_name)
            if problems:
                context.abort(
                    grpc.StatusCode.INVALID_ARGUMENT,
                    f"invalid policy pack config for {pack_name}:\n" + "\n".join(problems),
                )
            return result

    return LeveledServicer


def configure_problems(request: Any, checks: Mapping[str, ConfigCheck], pack_name: str
                       ) -> list[str]:
    from google.protobuf import json_format
    from pulumi.runtime.proto import analyzer_pb2

    names = {analyzer_pb2.MANDATORY: "mandatory", analyzer_pb2.ADVISORY: "advisory",
             analyzer_pb2.DISABLED: "disabled", analyzer_pb2.REMEDIATE: "remediate"}
    problems: list[str] = []
    for name, entry in sorted(request.policyConfig.items()):
        if name == "all":
            continue
        check = checks.get(name)
        if check is None:
            problems.append(
                f"{name}: pack {pack_name} has no such policy{did_you_mean(name, checks)} "
                f"(known: {', '.join(sorted(checks))})"
            )
            continue
        level = names.get(entry.enforcementLevel, "advisory")
        problems.extend(check(level, json_format.MessageToDict(entry.properties)))
    return problems

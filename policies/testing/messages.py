"""Plain dataclasses for what a policy pack answers, so tests never touch protobuf.

Enforcement levels and policy types are the lower-case strings users write in
``--policy-pack-config`` (``"mandatory"``, ``"advisory"``, …), not protobuf enum numbers.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from google.protobuf import json_format
from pulumi.runtime.proto import analyzer_pb2

_LEVELS: dict[int, str] = {
    analyzer_pb2.ADVISORY: "advisory",
    analyzer_pb2.MANDATORY: "mandatory",
    analyzer_pb2.DISABLED: "disabled",
    analyzer_pb2.REMEDIATE: "remediate",
}
LEVEL_NUMBERS: dict[str, int] = {v: k for k, v in _LEVELS.items()}
_POLICY_TYPES: dict[int, str] = {
    analyzer_pb2.POLICY_TYPE_UNKNOWN: "unknown",
    analyzer_pb2.POLICY_TYPE_RESOURCE: "resource",
    analyzer_pb2.POLICY_TYPE_STACK: "stack",
}
_SEVERITIES: dict[int, str] = {
    analyzer_pb2.POLICY_SEVERITY_UNSPECIFIED: "",
    analyzer_pb2.POLICY_SEVERITY_LOW: "low",
    analyzer_pb2.POLICY_SEVERITY_MEDIUM: "medium",
    analyzer_pb2.POLICY_SEVERITY_HIGH: "high",
    analyzer_pb2.POLICY_SEVERITY_CRITICAL: "critical",
}


def level_name(number: int) -> str:
    return _LEVELS.get(number, f"unknown({number})")


@dataclass(frozen=True)
class PolicyInfo:
    name: str
    description: str
    enforcement_level: str
    policy_type: str  # resource | stack
    config_schema: Mapping[str, Any]  # {"properties": {...}, "required": [...]}
    display_name: str = ""

    @property
    def config_properties(self) -> Mapping[str, Any]:
        return self.config_schema.get("properties", {})


@dataclass(frozen=True)
class AnalyzerInfo:
    name: str
    version: str
    supports_config: bool
    description: str
    policies: Sequence[PolicyInfo]
    initial_config: Mapping[str, Any] = field(default_factory=dict)

    def policy(self, name: str) -> PolicyInfo:
        for p in self.policies:
            if p.name == name:
                return p
        raise KeyError(f"policy pack {self.name} has no policy {name!r}")

    @property
    def policy_names(self) -> list[str]:
        return [p.name for p in self.policies]


@dataclass(frozen=True)
class Diagnostic:
    """One reported violation, as the CLI would print it."""

    policy_name: str
    enforcement_level: str
    urn: str
    message: str  # as sent: pulumi-policy prefixes the policy description and a newline
    description: str = ""
    policy_pack_name: str = ""
    policy_pack_version: str = ""
    severity: str = ""

    @property
    def detail(self) -> str:
        """The message without pulumi-policy's ``description + "\\n"`` prefix."""
        prefix = self.description + "\n"
        if self.description and self.message.startswith(prefix):
            return self.message[len(prefix):]
        return self.message

    @property
    def mandatory(self) -> bool:
        return self.enforcement_level == "mandatory"


@dataclass(frozen=True)
class AnalyzeResult:
    diagnostics: Sequence[Diagnostic]
    not_applicable: Mapping[str, str] = field(default_factory=dict)  # policy name → reason

    def __iter__(self) -> Iterator[Diagnostic]:
        return iter(self.diagnostics)

    def __len__(self) -> int:
        return len(self.diagnostics)

    def for_policy(self, name: str) -> list[Diagnostic]:
        return [d for d in self.diagnostics if d.policy_name == name]

    def for_urn(self, urn: str) -> list[Diagnostic]:
        return [d for d in self.diagnostics if d.urn == urn]

    @property
    def mandatory(self) -> list[Diagnostic]:
        return [d for d in self.diagnostics if d.mandatory]

    @property
    def policies(self) -> set[str]:
        return {d.policy_name for d in self.diagnostics}


def analyzer_info(msg: analyzer_pb2.AnalyzerInfo) -> AnalyzerInfo:
    return AnalyzerInfo(
        name=msg.name,
        version=msg.version,
        supports_config=msg.supportsConfig,
        description=msg.description,
        policies=[
            PolicyInfo(
                name=p.name,
                description=p.description,
                enforcement_level=level_name(p.enforcementLevel),
                policy_type=_POLICY_TYPES.get(p.policy_type, "unknown"),
                config_schema={
                    "properties": json_format.MessageToDict(p.configSchema.properties),
                    "required": list(p.configSchema.required),
                }
                if p.HasField("configSchema")
                else {},
                display_name=p.displayName,
            )
            for p in msg.policies
        ],
        initial_config={
            k: {
                "enforcementLevel": level_name(v.enforcementLevel),
                **json_format.MessageToDict(v.properties),
            }
            for k, v in msg.initialConfig.items()
        },
    )


def analyze_result(msg: analyzer_pb2.AnalyzeResponse) -> AnalyzeResult:
    return AnalyzeResult(
        diagnostics=[
            Diagnostic(
                policy_name=d.policyName,
                enforcement_level=level_name(d.enforcementLevel),
                urn=d.urn,
                message=d.message,
                description=d.description,
                policy_pack_name=d.policyPackName,
                policy_pack_version=d.policyPackVersion,
                severity=_SEVERITIES.get(d.severity, ""),
            )
            for d in msg.diagnostics
        ],
        not_applicable={n.policy_name: n.reason for n in msg.not_applicable},
    )

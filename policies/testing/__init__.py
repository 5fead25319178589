"""A reusable gRPC test harness for CrossGuard policy packs (see :mod:`.harness`)."""

from policies.testing.config import PolicyConfigError, cli_policy_config
from policies.testing.harness import PackRpcError, PolicyPackHarness, Resource, make_urn
from policies.testing.messages import AnalyzeResult, AnalyzerInfo, Diagnostic, PolicyInfo
from policies.testing.process import PackStartError
from policies.testing.values import UNKNOWN, UNKNOWN_SENTINEL, Secret

__all__ = [
    "UNKNOWN",
    "UNKNOWN_SENTINEL",
    "AnalyzeResult",
    "AnalyzerInfo",
    "Diagnostic",
    "PackRpcError",
    "PackStartError",
    "PolicyConfigError",
    "PolicyInfo",
    "PolicyPackHarness",
    "Resource",
    "Secret",
    "cli_policy_config",
    "make_urn",
]

"""Drive a CrossGuard policy pack over its real gRPC Analyzer protocol, as the Pulumi CLI does.

There is no official test harness for policy packs (pulumi-policy#445); unit-testing the
validation functions skips the parts that break in production: the pack's start-up, config
delivery, the wire encoding of unknowns and secrets, and what the CLI is finally shown. This
harness starts the pack's program as a subprocess (``python -u -m pulumi.policy <addr> .`` in the
pack's directory), reads the port it prints, and speaks ``pulumirpc.Analyzer`` with the protobuf
messages shipped in the ``pulumi`` package::

    from policies.testing import PolicyPackHarness, UNKNOWN

    with PolicyPackHarness("policies") as pack:
        pack.configure({"gpu-smallest-instance": "mandatory"})
        result = pack.analyze("aws:ec2/instance:Instance", "gpu", {"instanceType": "g4dn.2xlarge"})
        assert [d.policy_name for d in result.mandatory] == ["gpu-smallest-instance"]

It works for any Python policy pack, not only gpupool's.
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from types import TracebackType
from typing import Any

import grpc
from google.protobuf import empty_pb2
from pulumi.runtime.proto import analyzer_pb2, analyzer_pb2_grpc, plugin_pb2

from policies.testing.config import cli_policy_config
from policies.testing.messages import (
    LEVEL_NUMBERS,
    AnalyzeResult,
    AnalyzerInfo,
    analyze_result,
    analyzer_info,
)
from policies.testing.process import PackProcess, cli_command, pack_dir_of
from policies.testing.values import to_struct

_MAX_MESSAGE = 400 * 1024 * 1024  # what pulumi-policy's server accepts
_CHANNEL_OPTIONS = [
    ("grpc.max_receive_message_length", _MAX_MESSAGE),
    ("grpc.max_send_message_length", _MAX_MESSAGE),
]


class PackRpcError(RuntimeError):
    """An RPC failed; carries the gRPC status and the pack's stderr tail."""

    def __init__(self, method: str, code: grpc.StatusCode, details: str, stderr: str) -> None:
        self.method, self.code, self.details = method, code, details
        tail = stderr.strip()[-3000:]
        super().__init__(
            f"{method} failed: {code.name}: {details}" + (f"\npack stderr:\n{tail}" if tail else "")
        )


def make_urn(
    type_: str,
    name: str,
    *,
    stack: str = "test",
    project: str = "project",
    parent_type: str = "",
) -> str:
    """A URN as the engine builds it (``parent_type`` is the ``$``-joined type chain above)."""
    qualified = f"{parent_type}${type_}" if parent_type else type_
    return f"urn:pulumi:{stack}::{project}::{qualified}::{name}"


@dataclass(frozen=True)
class Resource:
    """One resource for AnalyzeStack (and, via :meth:`PolicyPackHarness.analyze_resource`,
    Analyze). ``properties`` may hold :data:`UNKNOWN` and :class:`Secret` values."""

    type: str
    name: str
    properties: Mapping[str, Any] = field(default_factory=dict)
    urn: str = ""
    parent: str = ""
    dependencies: Sequence[str] = ()
    property_dependencies: Mapping[str, Sequence[str]] = field(default_factory=dict)
    protect: bool = False


class PolicyPackHarness:
    """A policy pack running in a subprocess, with typed calls for every Analyzer RPC.

    ``pack_dir`` holds ``PulumiPolicy.yaml`` and the program. ``command`` overrides how it is
    started (default: as the CLI does, with this interpreter). ``env`` adds to the environment,
    e.g. ``PULUMI_STACK``/``PULUMI_PROJECT``/``PULUMI_DRY_RUN`` as the CLI sets them.
    """

    def __init__(
        self,
        pack_dir: str | os.PathLike[str],
        *,
        command: Sequence[str] | None = None,
        python: str | None = None,
        env: Mapping[str, str] | None = None,
        stack: str = "test",
        project: str = "project",
        startup_timeout: float = 30.0,
        rpc_timeout: float = 60.0,
    ) -> None:
        self.pack_dir = pack_dir_of(pack_dir)
        self.stack, self.project = stack, project
        self.rpc_timeout = rpc_timeout
        self._command = list(command) if command else cli_command(python)
        self._env = dict(env or {})
        self._startup_timeout = startup_timeout
        self._process: PackProcess | None = None
        self._channel: grpc.Channel | None = None
        self._stub: analyzer_pb2_grpc.AnalyzerStub | None = None
        self._info: AnalyzerInfo | None = None

    # -- lifecycle -------------------------------------------------------------------------

    def start(self) -> PolicyPackHarness:
        if self._process is not None:
            return self
        env = {"PULUMI_STACK": self.stack, "PULUMI_PROJECT": self.project, **self._env}
        self._process = PackProcess(
            self._command, cwd=self.pack_dir, env=env, startup_timeout=self._startup_timeout
        )
        self._channel = grpc.insecure_channel(self._process.address, options=_CHANNEL_OPTIONS)
        try:
            grpc.channel_ready_future(self._channel).result(timeout=self._startup_timeout)
        except grpc.FutureTimeoutError:
            stderr = self._process.stderr_text()
            self.close()
            raise PackRpcError(
                "connect", grpc.StatusCode.UNAVAILABLE, "not ready", stderr
            ) from None
        self._stub = analyzer_pb2_grpc.AnalyzerStub(self._channel)
        return self

    def close(self) -> int | None:
        """Close the channel and stop the pack; returns its exit code."""
        if self._channel is not None:
            self._channel.close()
            self._channel = None
        self._stub = None
        code = None
        if self._process is not None:
            code = self._process.stop()
            self._process = None
        return code

    def __enter__(self) -> PolicyPackHarness:
        return self.start()

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()

    @property
    def process(self) -> PackProcess:
        if self._process is None:
            raise RuntimeError("the policy pack is not running: call start() or use `with`")
        return self._process

    def stderr(self) -> str:
        """What the pack wrote to stderr so far (its logs and tracebacks)."""
        return self.process.stderr_text()

    # -- RPCs ------------------------------------------------------------------------------

    def _call(self, method: str, request: Any) -> Any:
        if self._stub is None:
            raise RuntimeError("the policy pack is not running: call start() or use `with`")
        try:
            return getattr(self._stub, method)(request, timeout=self.rpc_timeout)
        except grpc.RpcError as e:
            code = e.code() if hasattr(e, "code") else grpc.StatusCode.UNKNOWN
            details = e.details() if hasattr(e, "details") else str(e)
            raise PackRpcError(method, code, details or "", self.process.stderr_text()) from None

    def get_analyzer_info(self) -> AnalyzerInfo:
        self._info = analyzer_info(self._call("GetAnalyzerInfo", empty_pb2.Empty()))
        return self._info

    def get_plugin_info(self) -> str:
        """The pulumi-policy SDK version the pack reports."""
        info: plugin_pb2.PluginInfo = self._call("GetPluginInfo", empty_pb2.Empty())
        return info.version

    def configure(
        self,
        config: Mapping[str, str | Mapping[str, Any]],
        *,
        as_cli: bool = True,
        validate: bool = True,
    ) -> dict[str, dict[str, Any]]:
        """Send ``--policy-pack-config`` JSON (policy → level or ``{enforcementLevel, ...}``).

        With ``as_cli`` (default) the config is completed and checked as the CLI does before it
        calls Configure: every policy gets an entry (its default level, its schema's defaults),
        an ``all`` key sets every level, properties are validated against each policy's schema
        (``validate``; needs jsonschema) and names that match no policy are sent on as the CLI
        does, for the pack to judge. Returns what was sent.
        """
        if as_cli:
            info = self._info or self.get_analyzer_info()
            effective = cli_policy_config(info, config, validate=validate)
        else:
            effective = {
                k: ({"enforcementLevel": v} if isinstance(v, str) else dict(v))
                for k, v in config.items()
            }
        request = analyzer_pb2.ConfigureAnalyzerRequest()
        for name, entry in effective.items():
            props = {k: v for k, v in entry.items() if k != "enforcementLevel"}
            pc = analyzer_pb2.PolicyConfig(properties=to_struct(props))
            if "enforcementLevel" in entry:
                pc.enforcementLevel = LEVEL_NUMBERS[str(entry["enforcementLevel"])]
            request.policyConfig[name].CopyFrom(pc)
        self._call("Configure", request)
        return effective

    def analyze(
        self,
        type_: str,
        name: str,
        properties: Mapping[str, Any],
        *,
        urn: str = "",
        parent: str = "",
        parent_type: str = "",
    ) -> AnalyzeResult:
        """Analyze one resource (what the CLI sends for every resource it registers)."""
        return self.analyze_resource(
            Resource(type_, name, properties, urn=urn, parent=parent), parent_type=parent_type
        )

    def analyze_resource(self, resource: Resource, *, parent_type: str = "") -> AnalyzeResult:
        urn = resource.urn or self.urn(resource.type, resource.name, parent_type=parent_type)
        request = analyzer_pb2.AnalyzeRequest(
            type=resource.type,
            name=resource.name,
            urn=urn,
            properties=to_struct(resource.properties),
            options=self._options(resource),
        )
        return analyze_result(self._call("Analyze", request))

    def analyze_stack(self, resources: Sequence[Resource]) -> AnalyzeResult:
        """Analyze the whole stack at once (what the CLI sends after the last resource)."""
        request = analyzer_pb2.AnalyzeStackRequest()
        for r in resources:
            request.resources.append(self._analyzer_resource(r))
        return analyze_result(self._call("AnalyzeStack", request))

    # -- helpers ---------------------------------------------------------------------------

    def urn(self, type_: str, name: str, *, parent_type: str = "") -> str:
        return make_urn(type_, name, stack=self.stack, project=self.project,
                        parent_type=parent_type)

    @staticmethod
    def _options(r: Resource) -> analyzer_pb2.AnalyzerResourceOptions:
        return analyzer_pb2.AnalyzerResourceOptions(protect=r.protect, parent=r.parent)

    def _analyzer_resource(self, r: Resource) -> analyzer_pb2.AnalyzerResource:
        msg = analyzer_pb2.AnalyzerResource(
            type=r.type,
            name=r.name,
            urn=r.urn or self.urn(r.type, r.name),
            properties=to_struct(r.properties),
            options=self._options(r),
            parent=r.parent,
            dependencies=list(r.dependencies),
        )
        for key, urns in r.property_dependencies.items():
            msg.propertyDependencies[key].CopyFrom(
                analyzer_pb2.AnalyzerPropertyDependencies(urns=list(urns))
            )
        return msg

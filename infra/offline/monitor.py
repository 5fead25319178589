"""A resource monitor that records what the program registers, as the Pulumi engine would see it.

Pulumi's ``MockMonitor`` forgets parents and custom/component flags and puts the root stack's
type into every URN. This subclass keeps the real engine's URN scheme
(``urn:pulumi:<stack>::<project>::<parent-type-chain$>type::name``, the root stack omitted from
the chain), records each registration's parent, inputs (camelCase, as sent on the wire) and
property dependencies, answers data-source calls from the offline fixture, and returns
deterministic outputs for the values a provider would compute (ids, ARNs, autonames), so two
plans of the same stack are identical and diff cleanly by URN.
"""

from __future__ import annotations

import hashlib
import threading
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Final

from google.protobuf import empty_pb2, json_format, struct_pb2
from pulumi.runtime.mocks import MockCallArgs, MockMonitor, MockResourceArgs, Mocks
from pulumi.runtime.proto import engine_pb2, resource_pb2
from pulumi.runtime.rpc import UNKNOWN

from infra.offline.answers import answer, placeholder_notes
from infra.offline.fixtures import Fixture, UnansweredCall

STACK_TYPE: Final = "pulumi:pulumi:Stack"
_SIG: Final = "4dabf18193072939515e22adb298388d"  # Pulumi's special-signature key
_SECRET_SIG: Final = "1b47061264138c4ac30d75fd1eb44270"
_RESOURCE_SIG: Final = "5cf8f73096256a8f31e491e813e4eb8e"

# Types whose `name` the provider generates (Pulumi autonaming: "<logical name>-<7 hex>").
AUTONAMED: Final = frozenset(
    {
        "aws:autoscaling/group:Group",
        "aws:autoscaling/policy:Policy",
        "aws:ec2/launchTemplate:LaunchTemplate",
        "aws:ec2/securityGroup:SecurityGroup",
        "aws:iam/instanceProfile:InstanceProfile",
        "aws:iam/role:Role",
        "aws:iam/rolePolicy:RolePolicy",
        "aws:ec2/placementGroup:PlacementGroup",
    }
)
# AWS id prefixes; types not listed use their name as id (as AWS does for IAM and autoscaling).
ID_PREFIXES: Final = {
    "aws:ec2/vpc:Vpc": "vpc",
    "aws:ec2/subnet:Subnet": "subnet",
    "aws:ec2/routeTable:RouteTable": "rtb",
    "aws:ec2/routeTableAssociation:RouteTableAssociation": "rtbassoc",
    "aws:ec2/securityGroup:SecurityGroup": "sg",
    "aws:ec2/defaultSecurityGroup:DefaultSecurityGroup": "sg",
    "aws:ec2/vpcEndpoint:VpcEndpoint": "vpce",
    "aws:ec2/launchTemplate:LaunchTemplate": "lt",
    "aws:vpc/securityGroupEgressRule:SecurityGroupEgressRule": "sgr",
    "aws:vpc/securityGroupIngressRule:SecurityGroupIngressRule": "sgr",
    "aws:servicediscovery/privateDnsNamespace:PrivateDnsNamespace": "ns",
    "aws:servicediscovery/service:Service": "srv",
}


@dataclass(frozen=True, slots=True)
class Registration:
    """One ``RegisterResource`` request, as the engine received it."""

    urn: str
    type: str
    name: str
    parent: str | None
    custom: bool
    inputs: dict[str, Any]
    dependencies: tuple[str, ...]
    property_dependencies: dict[str, tuple[str, ...]]
    ignore_changes: tuple[str, ...] = ()  # properties a later `pulumi up` leaves as deployed
    custom_timeouts: dict[str, str] = field(default_factory=dict)  # create/update/delete


@dataclass
class Recording:
    """Everything one program run sent to the monitor and engine."""

    registrations: list[Registration] = field(default_factory=list)
    outputs: dict[str, Any] = field(default_factory=dict)
    diagnostics: list[str] = field(default_factory=list)
    failures: list[str] = field(default_factory=list)
    placeholders: list[str] = field(default_factory=list)  # answers pulumi up resolves for real


class FixtureMocks(Mocks):
    """Data-source calls answered from a fixture; an unanswered call is recorded and raised."""

    def __init__(self, fixture: Fixture, recording: Recording) -> None:
        self.fixture = fixture
        self.recording = recording

    def call(self, args: MockCallArgs) -> tuple[dict[str, Any], list[tuple[str, str]] | None]:
        try:
            result = answer(self.fixture, args.token, args.args)
        except UnansweredCall as e:
            self.recording.failures.append(str(e))
            raise
        for note in placeholder_notes(self.fixture, args.token, args.args, result):
            if note not in self.recording.placeholders:
                self.recording.placeholders.append(note)
        return result, None

    def new_resource(self, args: MockResourceArgs) -> tuple[str | None, dict[str, Any]]:
        message = f"reading existing resources is not supported offline ({args.typ} {args.name})"
        self.recording.failures.append(message)
        raise UnansweredCall(message)


class RecordingMonitor(MockMonitor):
    """The mock monitor with real-engine URNs and a full record of every registration."""

    def __init__(self, mocks: FixtureMocks, *, project: str, stack: str) -> None:
        super().__init__(mocks)
        self.project, self.stack = project, stack
        self.fixture, self.recording = mocks.fixture, mocks.recording
        self.stack_urn = self.make_urn("", STACK_TYPE, f"{project}-{stack}")
        self._lock = threading.Lock()

    def make_urn(self, parent: str, type_: str, name: str) -> str:
        chain = type_
        if parent:
            qualified = parent.split("::")[2]
            if qualified != STACK_TYPE:  # the engine leaves the root stack out of the chain
                chain = f"{qualified}${type_}"
        return f"urn:pulumi:{self.stack}::{self.project}::{chain}::{name}"

    def RegisterResource(self, request: Any) -> Any:
        urn = self.make_urn(request.parent, request.type, request.name)
        if request.type == STACK_TYPE:
            self._record(urn, request, custom=False, inputs={})
            return resource_pb2.RegisterResourceResponse(urn=urn)
        inputs = plain(json_format.MessageToDict(request.object))
        self._record(urn, request, custom=bool(request.custom), inputs=inputs)
        if not request.custom:
            return resource_pb2.RegisterResourceResponse(urn=urn, id="", object=struct_pb2.Struct())
        id_, computed = computed_outputs(request.type, request.name, urn, inputs, self.fixture)
        state = struct_pb2.Struct()
        state.CopyFrom(request.object)
        state.update(computed)
        self.resources[urn] = MockMonitor.ResourceRegistration(urn, id_, {})
        return resource_pb2.RegisterResourceResponse(urn=urn, id=id_, object=state)

    def _record(self, urn: str, request: Any, *, custom: bool, inputs: dict[str, Any]) -> None:
        reg = Registration(
            urn=urn,
            type=request.type,
            name=request.name,
            parent=request.parent or None,
            custom=custom,
            inputs=inputs,
            dependencies=tuple(sorted(request.dependencies)),
            property_dependencies={
                k: tuple(sorted(v.urns))
                for k, v in sorted(request.propertyDependencies.items())
                if v.urns
            },
            ignore_changes=tuple(request.ignoreChanges),
            custom_timeouts={k: v for k in ("create", "update", "delete")
                             if (v := getattr(request.customTimeouts, k))},
        )
        with self._lock:
            if any(r.urn == urn for r in self.recording.registrations):
                message = f"duplicate resource URN {urn}"
                self.recording.failures.append(message)
                raise ValueError(message)
            self.recording.registrations.append(reg)

    def RegisterResourceOutputs(self, request: Any) -> Any:
        if request.urn == self.stack_urn:
            self.recording.outputs = plain(json_format.MessageToDict(request.outputs))
        return empty_pb2.Empty()

    def Invoke(self, request: Any) -> Any:
        if request.tok == "pulumi:pulumi:getResource":
            return super().Invoke(request)
        args = plain(json_format.MessageToDict(request.args))
        result, _ = self.mocks.call(MockCallArgs(request.tok, args, request.provider))
        ret = struct_pb2.Struct()
        ret.update(result)
        return resource_pb2.ResourceInvokeResponse(**{"return": ret})


class RecordingEngine:
    """The engine's Log endpoint: warnings and errors become plan diagnostics."""

    def __init__(self, recording: Recording) -> None:
        self.recording = recording

    def Log(self, request: Any) -> Any:
        if request.severity in (engine_pb2.WARNING, engine_pb2.ERROR):
            level = "warning" if request.severity == engine_pb2.WARNING else "error"
            where = f" ({request.urn})" if request.urn else ""
            self.recording.diagnostics.append(f"{level}: {request.message}{where}")
        return empty_pb2.Empty()


def plain(value: Any) -> Any:
    """Wire values as JSON: whole numbers as ints, secrets masked, resource references by id."""
    if isinstance(value, float) and value.is_integer():
        return int(value)
    if isinstance(value, list):
        return [plain(v) for v in value]
    if isinstance(value, dict):
        sig = value.get(_SIG)
        if sig == _SECRET_SIG:
            return "[secret]"
        if sig == _RESOURCE_SIG:
            return value.get("id") or value.get("urn")
        return {k: plain(v) for k, v in value.items()}
    return value


def computed_outputs(
    type_: str, name: str, urn: str, inputs: Mapping[str, Any], fixture: Fixture
) -> tuple[str, dict[str, Any]]:
    """The id and provider-computed outputs, derived from the URN so they are stable."""
    digest = hashlib.sha256(urn.encode()).hexdigest()
    out: dict[str, Any] = {}
    if type_ in AUTONAMED and "name" not in inputs and "namePrefix" not in inputs:
        out["name"] = f"{name}-{digest[:7]}"
    physical = str(out.get("name", inputs.get("name", name)))
    prefix = ID_PREFIXES.get(type_)
    id_ = f"{prefix}-{digest[:17]}" if prefix else physical
    partition = fixture.record("partition")["partition"]
    account = fixture.record("callerIdentity")["accountId"]
    region = fixture.region
    arn = _ARNS.get(type_)
    if arn is not None:
        out["arn"] = arn.format(
            p=partition, r=region, a=account, id=id_, name=physical, uuid=_uuid(digest),
            group=inputs.get("autoscalingGroupName", UNKNOWN),
        )
    if type_ == "aws:ec2/launchTemplate:LaunchTemplate":
        out.update(latestVersion=1, defaultVersion=1)
    elif type_ == "aws:ec2/vpcEndpoint:VpcEndpoint" and inputs.get("vpcEndpointType") == "Gateway":
        service = str(inputs.get("serviceName", ""))
        record = fixture.table("prefixLists").get(service)
        out["prefixListId"] = record["id"] if record else UNKNOWN
    elif type_ == "aws:iam/role:Role":
        out["uniqueId"] = "AROA" + digest[:17].upper()
    elif type_ in ("aws:ec2/securityGroup:SecurityGroup", "aws:ec2/vpc:Vpc"):
        out["ownerId"] = account
    elif type_ == "aws:ec2/placementGroup:PlacementGroup":
        out["placementGroupId"] = f"pg-{digest[:17]}"
    elif type_ == "aws:servicediscovery/privateDnsNamespace:PrivateDnsNamespace":
        out["hostedZone"] = "Z" + digest[:20].upper()
    elif type_ == "aws:kms/key:Key":  # a key's id is a UUID, its ARN ends in it
        id_ = _uuid(digest)
        out.update(keyId=id_, arn=f"arn:{partition}:kms:{region}:{account}:key/{id_}")
    return id_, out


def _uuid(digest: str) -> str:
    return f"{digest[:8]}-{digest[8:12]}-{digest[12:16]}-{digest[16:20]}-{digest[20:32]}"


_ARNS: Final = {
    "aws:ec2/vpc:Vpc": "arn:{p}:ec2:{r}:{a}:vpc/{id}",
    "aws:ec2/subnet:Subnet": "arn:{p}:ec2:{r}:{a}:subnet/{id}",
    "aws:ec2/routeTable:RouteTable": "arn:{p}:ec2:{r}:{a}:route-table/{id}",
    "aws:ec2/securityGroup:SecurityGroup": "arn:{p}:ec2:{r}:{a}:security-group/{id}",
    "aws:ec2/defaultSecurityGroup:DefaultSecurityGroup": "arn:{p}:ec2:{r}:{a}:security-group/{id}",
    "aws:ec2/vpcEndpoint:VpcEndpoint": "arn:{p}:ec2:{r}:{a}:vpc-endpoint/{id}",
    "aws:ec2/launchTemplate:LaunchTemplate": "arn:{p}:ec2:{r}:{a}:launch-template/{id}",
    "aws:vpc/securityGroupEgressRule:SecurityGroupEgressRule":
        "arn:{p}:ec2:{r}:{a}:security-group-rule/{id}",
    "aws:vpc/securityGroupIngressRule:SecurityGroupIngressRule":
        "arn:{p}:ec2:{r}:{a}:security-group-rule/{id}",
    "aws:iam/role:Role": "arn:{p}:iam::{a}:role/{name}",
    "aws:ec2/placementGroup:PlacementGroup": "arn:{p}:ec2:{r}:{a}:placement-group/{name}",
    "aws:servicediscovery/privateDnsNamespace:PrivateDnsNamespace":
        "arn:{p}:servicediscovery:{r}:{a}:namespace/{id}",
    "aws:servicediscovery/service:Service": "arn:{p}:servicediscovery:{r}:{a}:service/{id}",
    "aws:iam/instanceProfile:InstanceProfile": "arn:{p}:iam::{a}:instance-profile/{name}",
    "aws:autoscaling/group:Group":
        "arn:{p}:autoscaling:{r}:{a}:autoScalingGroup:{uuid}:autoScalingGroupName/{name}",
    "aws:autoscaling/policy:Policy":
        "arn:{p}:autoscaling:{r}:{a}:scalingPolicy:{uuid}:autoScalingGroupName/{group}"
        ":policyName/{name}",
}

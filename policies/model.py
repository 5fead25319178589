"""The normalised plan every source produces and every rule reads.

One shape for Terraform plans, Pulumi previews, gpupool offline plans and the CrossGuard pack:
a list of :class:`ResourceChange` with old and new inputs. Input keys are snake_case whatever the
source (Pulumi's ``instanceType`` and Terraform's ``instance_type`` both become
``instance_type``); values that are unknown until apply are the :data:`UNKNOWN` sentinel, never
``None``, so a rule cannot mistake "not known yet" for "not set".
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from functools import cache, lru_cache

from gpupool.record import EnumBody, Frozen, str_enum

TYPE_CHECKING = False  # typing's, without importing typing (not on a check's path)
if TYPE_CHECKING:
    from typing import Any, ClassVar, Final


class _Unknown:
    """A value the plan does not know yet (computed at apply)."""

    _instance: _Unknown | None = None

    def __new__(cls) -> _Unknown:
        if cls._instance is None:
            cls._instance = super().__new__(cls)
        return cls._instance

    def __repr__(self) -> str:
        return "UNKNOWN"

    def __bool__(self) -> bool:  # an unknown is never truthy evidence of anything
        return False


UNKNOWN: Final = _Unknown()


def is_unknown(value: object) -> bool:
    return value is UNKNOWN


@str_enum  # a StrEnum, made at a third of the class statement's cost (gpupool.record)
class ChangeKind(EnumBody):
    CREATE = "create"
    UPDATE = "update"
    REPLACE = "replace"
    DELETE = "delete"
    NOOP = "no-op"
    READ = "read"


@str_enum
class ResourceKind(EnumBody):
    INSTANCE = "instance"
    LAUNCH_TEMPLATE = "launch-template"
    LAUNCH_CONFIGURATION = "launch-configuration"
    AUTOSCALING_GROUP = "autoscaling-group"
    SCALING_POLICY = "scaling-policy"
    EKS_NODE_GROUP = "eks-node-group"
    SECURITY_GROUP = "security-group"
    SECURITY_GROUP_RULE = "security-group-rule"
    PLACEMENT_GROUP = "placement-group"
    IAM_ROLE = "iam-role"
    EBS_VOLUME = "ebs-volume"
    EBS_ENCRYPTION_DEFAULT = "ebs-encryption-default"  # the account's default, per region
    K8S_WORKLOAD = "k8s-workload"
    SUBNET = "subnet"
    NETWORK_INTERFACE = "network-interface"
    ELASTIC_IP = "elastic-ip"  # an EIP, or its association with an instance or interface
    LOAD_BALANCER = "load-balancer"
    TARGET_GROUP = "target-group"
    # What puts targets behind a load balancer: target group attachments (instance → target
    # group), autoscaling (traffic source) attachments and classic ELB attachments.
    LB_ATTACHMENT = "lb-attachment"
    K8S_NAMESPACE = "k8s-namespace"
    K8S_RESOURCE_QUOTA = "k8s-resource-quota"
    K8S_AUTOSCALER = "k8s-autoscaler"  # HorizontalPodAutoscaler, KEDA ScaledObject
    KARPENTER_NODE_POOL = "karpenter-node-pool"  # NodePool (v1, v1beta1), Provisioner (v1alpha5)
    K8S_MANIFEST = "k8s-manifest"  # Terraform kubernetes_manifest: the kind is in its content
    # Any other Kubernetes object (custom resources: PyTorchJob, RayCluster, …): the readers of
    # policies.facts.k8s decide what it runs, and one that asks for a GPU is never skipped.
    K8S_OBJECT = "k8s-object"
    OTHER = "other"


# Provider type → kind. Terraform types and Pulumi type tokens side by side.
RESOURCE_KINDS: Final[dict[str, ResourceKind]] = {
    "aws_instance": ResourceKind.INSTANCE,
    "aws:ec2/instance:Instance": ResourceKind.INSTANCE,
    "aws_launch_template": ResourceKind.LAUNCH_TEMPLATE,
    "aws:ec2/launchTemplate:LaunchTemplate": ResourceKind.LAUNCH_TEMPLATE,
    "aws_launch_configuration": ResourceKind.LAUNCH_CONFIGURATION,
    "aws:ec2/launchConfiguration:LaunchConfiguration": ResourceKind.LAUNCH_CONFIGURATION,
    "aws_autoscaling_group": ResourceKind.AUTOSCALING_GROUP,
    "aws:autoscaling/group:Group": ResourceKind.AUTOSCALING_GROUP,
    "aws_autoscaling_policy": ResourceKind.SCALING_POLICY,
    "aws:autoscaling/policy:Policy": ResourceKind.SCALING_POLICY,
    "aws_eks_node_group": ResourceKind.EKS_NODE_GROUP,
    "aws:eks/nodeGroup:NodeGroup": ResourceKind.EKS_NODE_GROUP,
    "aws_security_group": ResourceKind.SECURITY_GROUP,
    "aws:ec2/securityGroup:SecurityGroup": ResourceKind.SECURITY_GROUP,
    "aws_security_group_rule": ResourceKind.SECURITY_GROUP_RULE,
    "aws:ec2/securityGroupRule:SecurityGroupRule": ResourceKind.SECURITY_GROUP_RULE,
    "aws_vpc_security_group_ingress_rule": ResourceKind.SECURITY_GROUP_RULE,
    "aws:vpc/securityGroupIngressRule:SecurityGroupIngressRule": ResourceKind.SECURITY_GROUP_RULE,
    "aws_placement_group": ResourceKind.PLACEMENT_GROUP,
    "aws:ec2/placementGroup:PlacementGroup": ResourceKind.PLACEMENT_GROUP,
    "aws_iam_role": ResourceKind.IAM_ROLE,
    "aws:iam/role:Role": ResourceKind.IAM_ROLE,
    "aws_ebs_volume": ResourceKind.EBS_VOLUME,
    "aws:ebs/volume:Volume": ResourceKind.EBS_VOLUME,
    "aws_ebs_encryption_by_default": ResourceKind.EBS_ENCRYPTION_DEFAULT,
    "aws:ebs/encryptionByDefault:EncryptionByDefault": ResourceKind.EBS_ENCRYPTION_DEFAULT,
    # network (remote-GPU proxy tiers)
    "aws_subnet": ResourceKind.SUBNET,
    "aws:ec2/subnet:Subnet": ResourceKind.SUBNET,
    "aws_network_interface": ResourceKind.NETWORK_INTERFACE,
    "aws:ec2/networkInterface:NetworkInterface": ResourceKind.NETWORK_INTERFACE,
    "aws_eip": ResourceKind.ELASTIC_IP,
    "aws:ec2/eip:Eip": ResourceKind.ELASTIC_IP,
    "aws_eip_association": ResourceKind.ELASTIC_IP,
    "aws:ec2/eipAssociation:EipAssociation": ResourceKind.ELASTIC_IP,
    "aws_lb": ResourceKind.LOAD_BALANCER,
    "aws_alb": ResourceKind.LOAD_BALANCER,
    "aws_elb": ResourceKind.LOAD_BALANCER,
    "aws:lb/loadBalancer:LoadBalancer": ResourceKind.LOAD_BALANCER,
    "aws:alb/loadBalancer:LoadBalancer": ResourceKind.LOAD_BALANCER,
    "aws:elb/loadBalancer:LoadBalancer": ResourceKind.LOAD_BALANCER,
    "aws_lb_target_group": ResourceKind.TARGET_GROUP,
    "aws_alb_target_group": ResourceKind.TARGET_GROUP,
    "aws:lb/targetGroup:TargetGroup": ResourceKind.TARGET_GROUP,
    "aws:alb/targetGroup:TargetGroup": ResourceKind.TARGET_GROUP,
    "aws_lb_target_group_attachment": ResourceKind.LB_ATTACHMENT,
    "aws_alb_target_group_attachment": ResourceKind.LB_ATTACHMENT,
    "aws:lb/targetGroupAttachment:TargetGroupAttachment": ResourceKind.LB_ATTACHMENT,
    "aws:alb/targetGroupAttachment:TargetGroupAttachment": ResourceKind.LB_ATTACHMENT,
    "aws_autoscaling_attachment": ResourceKind.LB_ATTACHMENT,
    "aws:autoscaling/attachment:Attachment": ResourceKind.LB_ATTACHMENT,
    "aws_autoscaling_traffic_source_attachment": ResourceKind.LB_ATTACHMENT,
    "aws:autoscaling/trafficSourceAttachment:TrafficSourceAttachment":
        ResourceKind.LB_ATTACHMENT,
    "aws_elb_attachment": ResourceKind.LB_ATTACHMENT,
    "aws:elb/attachment:Attachment": ResourceKind.LB_ATTACHMENT,
    # Kubernetes through Terraform's provider (Pulumi tokens: see _kubernetes_kind)
    **{f"kubernetes_{t}{v}": ResourceKind.K8S_WORKLOAD for v in ("", "_v1") for t in (
        "deployment", "stateful_set", "daemonset", "daemon_set", "job", "cron_job", "pod",
        "replication_controller")},
    **{f"kubernetes_namespace{v}": ResourceKind.K8S_NAMESPACE for v in ("", "_v1")},
    **{f"kubernetes_resource_quota{v}": ResourceKind.K8S_RESOURCE_QUOTA for v in ("", "_v1")},
    **{f"kubernetes_horizontal_pod_autoscaler{v}": ResourceKind.K8S_AUTOSCALER
       for v in ("", "_v1", "_v2", "_v2beta2")},
    "kubernetes_manifest": ResourceKind.K8S_MANIFEST,
}

# Kubernetes kinds (any API version) → resource kind, for ``kubernetes:<group>/<v>:<Kind>``.
K8S_KINDS: Final[dict[tuple[str, str], ResourceKind]] = {
    **{(g, k): ResourceKind.K8S_WORKLOAD for g, k in (
        ("apps", "Deployment"), ("apps", "StatefulSet"), ("apps", "DaemonSet"),
        ("apps", "ReplicaSet"), ("batch", "Job"), ("batch", "CronJob"), ("core", "Pod"),
        ("core", "ReplicationController"), ("extensions", "Deployment"),
        ("extensions", "DaemonSet"), ("extensions", "ReplicaSet"))},
    ("core", "Namespace"): ResourceKind.K8S_NAMESPACE,
    ("core", "ResourceQuota"): ResourceKind.K8S_RESOURCE_QUOTA,
    ("autoscaling", "HorizontalPodAutoscaler"): ResourceKind.K8S_AUTOSCALER,
    ("keda.sh", "ScaledObject"): ResourceKind.K8S_AUTOSCALER,
    ("karpenter.sh", "NodePool"): ResourceKind.KARPENTER_NODE_POOL,
    ("karpenter.sh", "Provisioner"): ResourceKind.KARPENTER_NODE_POOL,
}
_OTHER: Final = ResourceKind.OTHER  # a global: read through its class, a Python-level call on 3.11


def resource_kind(type_token: str) -> ResourceKind:
    found = RESOURCE_KINDS.get(type_token)
    if found is not None:
        return found
    if type_token.startswith("kubernetes:"):
        return _kubernetes_kind(type_token)
    return _OTHER


@lru_cache(maxsize=1024)
def _kubernetes_kind(type_token: str) -> ResourceKind:
    """``kubernetes:apps/v1:Deployment``, ``kubernetes:keda.sh/v1alpha1:ScaledObject``: by group
    and kind, whatever the version (Pulumi's typed resources and CustomResource alike); any
    other object is a :attr:`ResourceKind.K8S_OBJECT`."""
    _, group_version, kind = [*type_token.split(":", 2), "", ""][:3]
    return K8S_KINDS.get((group_version.split("/", 1)[0], kind), ResourceKind.K8S_OBJECT)


@cache
def _camel() -> re.Pattern[str]:  # compiled on first use: a Terraform plan's keys are snake_case
    return re.compile(r"(?<=[a-z0-9])([A-Z])")


@lru_cache(maxsize=4096)
def snake(key: str) -> str:
    """``instanceType`` → ``instance_type``; snake_case keys pass through unchanged.

    Cached: plans repeat the same few hundred keys across thousands of resources.
    """
    return _camel().sub(r"_\1", key).lower() if key[:1].islower() else key


_new_fields: Final = object.__new__

_SCALARS: Final = frozenset({str, int, float, bool, type(None)})


def normalise_inputs(value: Any, *, tags_key: bool = False) -> Any:
    """Recursively snake_case mapping keys (not the keys of tag maps, which are user data)."""
    if type(value) in _SCALARS:  # most values: no ABC check (a third of a manifest's reading)
        return value
    if isinstance(value, Mapping):
        if tags_key:
            return {str(k): normalise_inputs(v) for k, v in value.items()}
        return {
            snake(str(k)): normalise_inputs(v, tags_key=snake(str(k)) in _USER_MAPS)
            for k, v in value.items()
        }
    if isinstance(value, list):
        return [normalise_inputs(v) for v in value]
    return value


# Mappings whose keys are user data, not schema: their keys are kept verbatim.
_USER_MAPS: Final = frozenset({
    "tags", "tags_all", "labels", "annotations", "node_selector",
    # Kubernetes maps keyed by label keys and resource names (nvidia.com/gpu)
    "match_labels", "limits", "requests", "hard",
})


class _ChangeFields:
    """ResourceChange's fields, assignable: what its constructor fills before the instance
    becomes a (frozen) ResourceChange.

    A frozen record sets each field with ``object.__setattr__``, a slot wrapper call about ten
    times the cost of a plain slot store; a plan makes one ResourceChange per resource, so
    that was ~25k instructions each, a tenth of reading a Pulumi preview. Filled here by plain
    stores and then given its class (the same slots, so the layouts agree), one costs ~6k.
    """

    __slots__ = (
        "address", "type", "name", "change", "new", "old", "source", "kind", "references", "parent",
        "origin", "_pending"
    )
    # Record.__init_subclass__ reads the fields of ResourceChange from here (its own are none).
    # ``_pending`` is no field: what policies.deferred converts on first read, else unset.
    _fields: ClassVar[tuple[str, ...]] = __slots__[:-1]


class ResourceChange(_ChangeFields, Frozen):
    """One resource's planned change, as every rule sees it."""

    __slots__ = ()

    address: str  # Terraform address or Pulumi URN: what reports name
    type: str  # provider type token (aws_instance, aws:ec2/instance:Instance)
    name: str
    change: ChangeKind
    new: Mapping[str, Any] | None  # None for delete
    old: Mapping[str, Any] | None  # None for create, or when the source does not know it
    source: str  # terraform | pulumi-preview | gpupool-plan | crossguard
    kind: ResourceKind
    # Links a plan can prove although the value is unknown: input key → address of the resource
    # it refers to (e.g. a scaling policy's autoscaling_group_name → the group's address).
    references: Mapping[str, str]
    parent: str | None
    # Where the resource is declared when a plan spans several files (Kubernetes manifests:
    # "path/to/file.yaml:12"); reports name it instead of the plan's origin.
    origin: str | None

    def __new__(
        cls,
        address: str,
        type: str,
        name: str,
        change: ChangeKind,
        new: Mapping[str, Any] | None,
        old: Mapping[str, Any] | None,
        source: str,
        kind: ResourceKind = ResourceKind.OTHER,
        references: Mapping[str, str] | None = None,
        parent: str | None = None,
        origin: str | None = None,
    ) -> ResourceChange:
        self = _new_fields(_ChangeFields)
        self.address = address
        self.type = type
        self.name = name
        self.change = change
        self.new = new
        self.old = old
        self.source = source
        self.kind = kind
        self.references = {} if references is None else references
        self.parent = parent
        self.origin = origin
        self.__class__ = cls  # type: ignore[assignment]  (same slots: see _ChangeFields)
        return self  # type: ignore[return-value]

    def __reduce__(self) -> tuple[Any, ...]:  # copy and pickle: through the constructor
        return (self.__class__, self._key(self))

    @property
    def is_removal(self) -> bool:
        return self.change is ChangeKind.DELETE

    @property
    def after(self) -> Mapping[str, Any]:
        return self.new or {}

    @property
    def before(self) -> Mapping[str, Any]:
        return self.old or {}


class Plan(Frozen):
    """A normalised plan: where it came from and its resource changes."""

    __slots__ = ("source", "origin", "changes", "meta")

    source: str
    origin: str  # file path, or "stack dev @ HEAD~1..worktree", or "crossguard"
    changes: tuple[ResourceChange, ...]
    meta: Mapping[str, Any]

    def __init__(
        self,
        source: str,
        origin: str,
        changes: tuple[ResourceChange, ...],
        meta: Mapping[str, Any] | None = None,
    ) -> None:
        object.__setattr__(self, "source", source)
        object.__setattr__(self, "origin", origin)
        object.__setattr__(self, "changes", changes)
        object.__setattr__(self, "meta", {} if meta is None else meta)

    def by_address(self) -> dict[str, ResourceChange]:
        return {c.address: c for c in self.changes}


def get_path(inputs: Mapping[str, Any] | None, path: str, default: Any = None) -> Any:
    """Read ``a.b.c`` from normalised inputs.

    A one-element list on the way is stepped through, because Terraform writes nested blocks as
    lists (``metadata_options: [{...}]``) where Pulumi writes objects. An unknown value anywhere on
    the path yields :data:`UNKNOWN`.
    """
    cur: Any = inputs
    for part in path.split("."):
        if cur is UNKNOWN:
            return UNKNOWN
        if isinstance(cur, list):
            if len(cur) != 1:
                return default
            cur = cur[0]
            if cur is UNKNOWN:
                return UNKNOWN
        if not isinstance(cur, Mapping) or part not in cur:
            return default
        cur = cur[part]
    if isinstance(cur, list) and len(cur) == 1 and isinstance(cur[0], Mapping):
        return cur[0]
    return cur

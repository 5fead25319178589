"""Find the GPU pools of a region: autoscaling groups whose instance types carry GPUs.

A group's instance types come from its mixed-instances overrides, else from its launch template
(the version the group names: ``$Default``, ``$Latest`` or a number), else from its launch
configuration. The catalog says which types carry GPUs and how many. Calls are batched so that
discovery stays a handful of calls however many groups there are:

- DescribeAutoScalingGroups, 100 groups a page;
- DescribeLaunchTemplateVersions without a template id and ``Versions=[$Latest, $Default]``
  returns those versions of *every* template (200 a page); only groups pinned to a numbered
  version cost one call per template;
- DescribeLaunchConfigurations, 50 names a call;
- DescribePolicies for the whole region (target-tracking targets, for the recommendations).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from gpupool.catalog import Catalog, InstanceType
from gpupool.debt.aws import Clients, aws_errors, chunks, paginate
from gpupool.tags import PROXY_ROLE, ROLE_TAG

TEAM_KEYS = ("team",)
# Remote-GPU proxy tiers (DESIGN.md idea 2) are GPU groups too: their GPUs are allocated whether
# or not a client sends work, so they carry debt like any pool. The tag says which they are.
POOL_ROLE = "pool"
# A Kubernetes node group (EKS managed or self-managed with the cluster tags): its GPUs' use is
# in Prometheus (the DCGM exporter), not CloudWatch, and its allocation here is nodes in
# service, not GPUs requested by pods.
KUBERNETES_ROLE = "kubernetes-nodes"
KUBERNETES_TAGS = ("eks:cluster-name", "eks:nodegroup-name", "k8s.io/cluster-autoscaler/enabled")
KUBERNETES_TAG_PREFIX = "kubernetes.io/cluster/"


ROLE_LABELS = {PROXY_ROLE: " (remote-GPU proxies)", KUBERNETES_ROLE: " (Kubernetes nodes)"}


def role_of(tags: Mapping[str, str]) -> str:
    """``gpu-proxy``, ``kubernetes-nodes`` or ``pool``, from the group's tags."""
    if tags.get(ROLE_TAG) == PROXY_ROLE:
        return PROXY_ROLE
    if any(k in KUBERNETES_TAGS or k.startswith(KUBERNETES_TAG_PREFIX) for k in tags):
        return KUBERNETES_ROLE
    return POOL_ROLE
COST_CENTER_KEYS = ("cost-center", "costcenter", "cost_center")
UTILISATION_METRIC = "nvidia_smi_utilization_gpu"


@dataclass(frozen=True, slots=True)
class Pool:
    """One GPU autoscaling group and what the report needs to know about it."""

    name: str
    arn: str
    instance_type: InstanceType  # the type its GPU figures are counted in (first GPU type)
    instance_types: tuple[str, ...]  # every type the group may launch
    min_size: int
    max_size: int
    desired_capacity: int
    team: str | None
    cost_center: str | None
    tags: Mapping[str, str]
    spot_share: float  # share of capacity above the on-demand base that may run on spot
    on_demand_base: int
    target_utilisation: float | None  # target tracking on GPU utilisation, if any
    created: datetime | None
    notes: tuple[str, ...] = ()
    role: str = POOL_ROLE  # gpu-proxy (a remote-GPU tier's proxies), kubernetes-nodes, pool
    account: str | None = None  # the account id, when the report reads several
    region: str | None = None
    zones: tuple[str, ...] = ()  # its availability zones (which reservations it could use)

    @property
    def gpus_per_instance(self) -> float:
        return self.instance_type.gpu_count

    @property
    def platform(self) -> str:
        return "aws"

    @property
    def instance_type_name(self) -> str:
        return self.instance_type.instance_type

    @property
    def gpu_model(self) -> str:
        return self.instance_type.gpu_model


@dataclass
class Discovery:
    pools: list[Pool] = field(default_factory=list)
    groups_seen: int = 0
    findings: list[dict[str, str]] = field(default_factory=list)


def _tag(tags: Mapping[str, str], keys: Iterable[str]) -> str | None:
    lowered = {k.casefold(): v for k, v in tags.items()}
    for key in keys:
        value = lowered.get(key)
        if value:
            return value
    return None


def _template_key(spec: Mapping[str, Any]) -> tuple[str | None, str | None, str]:
    return (spec.get("LaunchTemplateId"), spec.get("LaunchTemplateName"),
            str(spec.get("Version") or "$Default"))


def _template_spec(group: Mapping[str, Any]) -> Mapping[str, Any] | None:
    mip = group.get("MixedInstancesPolicy") or {}
    spec = (mip.get("LaunchTemplate") or {}).get("LaunchTemplateSpecification")
    return spec or group.get("LaunchTemplate")


def _overrides(group: Mapping[str, Any]) -> list[str]:
    mip = group.get("MixedInstancesPolicy") or {}
    out = []
    for o in (mip.get("LaunchTemplate") or {}).get("Overrides") or []:
        if o.get("InstanceType"):
            out.append(str(o["InstanceType"]))
    return out


class _Templates:
    """Launch template versions, looked up by (id or name, version)."""

    def __init__(self) -> None:
        self._by: dict[tuple[str, str], str | None] = {}

    def add(self, v: Mapping[str, Any]) -> None:
        itype = (v.get("LaunchTemplateData") or {}).get("InstanceType")
        number = str(v.get("VersionNumber"))
        labels = [number]
        if v.get("DefaultVersion"):
            labels.append("$Default")
        for ident in (v.get("LaunchTemplateId"), v.get("LaunchTemplateName")):
            if ident:
                for label in labels:
                    self._by[(ident, label)] = itype

    def add_latest(self, v: Mapping[str, Any]) -> None:
        for ident in (v.get("LaunchTemplateId"), v.get("LaunchTemplateName")):
            if ident:
                self._by.setdefault((ident, "$Latest"), (v.get("LaunchTemplateData") or {})
                                    .get("InstanceType"))

    def get(self, key: tuple[str | None, str | None, str]) -> tuple[bool, str | None]:
        ident, name, version = key
        for i in (ident, name):
            if i and (i, version) in self._by:
                return True, self._by[(i, version)]
        return False, None


def _load_templates(clients: Clients, keys: set[tuple[str | None, str | None, str]]
                    ) -> _Templates:
    templates = _Templates()
    if not keys:
        return templates
    ec2 = clients.ec2
    # $Latest and $Default of every template in one paginated call.
    latest: dict[str, tuple[int, Mapping[str, Any]]] = {}
    for v in paginate(ec2, "describe_launch_template_versions", "LaunchTemplateVersions",
                      Versions=["$Latest", "$Default"], PaginationConfig={"PageSize": 200}):
        templates.add(v)
        tid = str(v.get("LaunchTemplateId"))
        number = int(v.get("VersionNumber") or 0)
        if tid not in latest or number > latest[tid][0]:
            latest[tid] = (number, v)
    for _, v in latest.values():
        templates.add_latest(v)
    pinned: dict[str, set[str]] = {}
    for key in keys:
        found, _ = templates.get(key)
        if not found:
            ident = key[0] or key[1]
            if ident:
                pinned.setdefault(ident, set()).add(key[2])
    for ident, versions in sorted(pinned.items()):
        by = {"LaunchTemplateId": ident} if ident.startswith("lt-") else {
            "LaunchTemplateName": ident}
        for v in paginate(ec2, "describe_launch_template_versions", "LaunchTemplateVersions",
                          Versions=sorted(versions), **by):
            templates.add(v)
    return templates


def _load_configurations(clients: Clients, names: set[str]) -> dict[str, str]:
    out: dict[str, str] = {}
    for batch in chunks(sorted(names), 50):
        for lc in paginate(clients.autoscaling, "describe_launch_configurations",
                           "LaunchConfigurations", LaunchConfigurationNames=batch):
            out[str(lc["LaunchConfigurationName"])] = str(lc.get("InstanceType") or "")
    return out


def _targets(clients: Clients) -> dict[str, float]:
    """Group name → target of its target-tracking policy on GPU utilisation."""
    out: dict[str, float] = {}
    for p in paginate(clients.autoscaling, "describe_policies", "ScalingPolicies",
                      PolicyTypes=["TargetTrackingScaling"]):
        cfg = p.get("TargetTrackingConfiguration") or {}
        metric = (cfg.get("CustomizedMetricSpecification") or {}).get("MetricName")
        if metric == UTILISATION_METRIC and p.get("Enabled", True) is not False:
            out[str(p["AutoScalingGroupName"])] = float(cfg.get("TargetValue") or 0)
    return out


def _spot(group: Mapping[str, Any]) -> tuple[float, int]:
    dist = (group.get("MixedInstancesPolicy") or {}).get("InstancesDistribution") or {}
    if not dist:
        return 0.0, 0
    above = float(dist.get("OnDemandPercentageAboveBaseCapacity", 100))
    return round(1 - above / 100, 4), int(dist.get("OnDemandBaseCapacity", 0))


def discover_pools(clients: Clients, catalog: Catalog) -> Discovery:
    """Every GPU autoscaling group of the region (see the module docstring for the calls)."""
    out = Discovery()
    endpoint = clients.endpoint
    with aws_errors("DescribeAutoScalingGroups", endpoint):
        groups = list(paginate(clients.autoscaling, "describe_auto_scaling_groups",
                               "AutoScalingGroups", PaginationConfig={"PageSize": 100}))
    out.groups_seen = len(groups)
    template_keys = {_template_key(s) for g in groups if not _overrides(g)
                     for s in [_template_spec(g)] if s}
    lc_names = {str(g["LaunchConfigurationName"]) for g in groups
                if g.get("LaunchConfigurationName") and not _template_spec(g)}
    with aws_errors("DescribeLaunchTemplateVersions", endpoint):
        templates = _load_templates(clients, template_keys)
    with aws_errors("DescribeLaunchConfigurations", endpoint):
        configurations = _load_configurations(clients, lc_names)
    targets: dict[str, float] = {}
    if groups:
        with aws_errors("DescribePolicies", endpoint):
            targets = _targets(clients)

    for g in groups:
        name = str(g["AutoScalingGroupName"])
        notes: list[str] = []
        types = _overrides(g)
        if not types:
            spec = _template_spec(g)
            if spec:
                found, itype = templates.get(_template_key(spec))
                if itype:
                    types = [itype]
                elif not found:
                    notes.append("its launch template version could not be read")
                elif (g.get("MixedInstancesPolicy") or {}):
                    notes.append("its instance types come from attribute-based selection, "
                                 "which the report cannot count GPUs for")
            elif g.get("LaunchConfigurationName"):
                itype = configurations.get(str(g["LaunchConfigurationName"]))
                types = [itype] if itype else []
        rows = [r for r in (catalog.get(t) for t in types) if r is not None]
        if not rows:
            if notes:
                out.findings.append({"pool": name, "finding": "unresolved-instance-type",
                                     "message": f"group {name}: {notes[0]}; skipped"})
            continue
        primary = rows[0]
        if any(r.gpu_count != primary.gpu_count for r in rows[1:]):
            notes.append(
                f"its types carry different GPU counts ({', '.join(r.instance_type for r in rows)}"
                f"); GPU-hours are counted as {primary.gpu_count:g} GPU(s) per instance "
                f"({primary.instance_type})")
        tags = {str(t["Key"]): str(t.get("Value", "")) for t in g.get("Tags") or []}
        spot, base = _spot(g)
        out.pools.append(Pool(
            name=name,
            arn=str(g.get("AutoScalingGroupARN", "")),
            instance_type=primary,
            instance_types=tuple(types),
            min_size=int(g.get("MinSize", 0)),
            max_size=int(g.get("MaxSize", 0)),
            desired_capacity=int(g.get("DesiredCapacity", 0)),
            team=_tag(tags, TEAM_KEYS),
            cost_center=_tag(tags, COST_CENTER_KEYS),
            tags=tags,
            spot_share=spot,
            on_demand_base=base,
            target_utilisation=targets.get(name),
            created=g.get("CreatedTime"),
            notes=tuple(notes),
            role=role_of(tags),
            account=clients.account,
            region=clients.region,
            zones=tuple(sorted(str(z) for z in g.get("AvailabilityZones") or ())),
        ))
    out.pools.sort(key=lambda p: p.name)
    return out

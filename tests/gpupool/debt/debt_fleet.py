"""Build a GPU fleet on a moto server: launch templates, groups with team tags, and metrics.

moto emits no ``AWS/AutoScaling`` group metrics (and no CloudWatch agent metrics, of course),
so the series a real account would have are written with PutMetricData, one datapoint per
bucket (or several, to check averaging) at known values. Real CloudWatch refuses PutMetricData
into ``AWS/`` namespaces; moto accepts it, which is what lets the report's reads be tested.
Shared by the tests and ``bench/debt_bench.py``.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import timedelta
from typing import Any, Literal

from gpupool.debt.window import Window

Via = Literal["overrides", "template", "pinned", "configuration"]
SUBNET_CIDR = "10.0.0.0/24"


@dataclass
class PoolSpec:
    name: str
    instance_type: str = "g4dn.xlarge"
    team: str | None = "research"
    cost_center: str | None = "cc-1"
    min_size: int = 0
    max_size: int = 4
    desired: int = 0
    # one value per bucket (None: no datapoint); a tuple: several datapoints in the bucket
    in_service: Sequence[float | tuple[float, ...] | None] = ()
    max_series: Sequence[float | None] | None = None  # default: max_size in every bucket
    utilisation: Sequence[float | tuple[float, ...] | None] = ()
    memory: Sequence[float | None] = ()
    via: Via = "overrides"
    target: float | None = 70.0
    extra_tags: dict[str, str] = field(default_factory=dict)
    template: str | None = None  # overrides only: share this launch template (made once)


def _subnet(ec2: Any) -> str:
    return str(ec2.describe_subnets()["Subnets"][0]["SubnetId"])


def create_groups(ec2: Any, autoscaling: Any, specs: Sequence[PoolSpec]) -> None:
    subnet = _subnet(ec2)
    made: set[str] = set()
    for s in specs:
        lt_name = s.template if s.template and s.via == "overrides" else f"{s.name}-lt"
        if lt_name in made:
            pass  # a shared template, already made
        elif s.via == "configuration":
            autoscaling.create_launch_configuration(
                LaunchConfigurationName=lt_name, ImageId="ami-12c6146b",
                InstanceType=s.instance_type)
        else:
            ec2.create_launch_template(
                LaunchTemplateName=lt_name,
                LaunchTemplateData={"ImageId": "ami-12c6146b",
                                    "InstanceType": "m5.large" if s.via == "pinned"
                                    else s.instance_type})
            if s.via == "pinned":  # version 2 carries the GPU type; the group pins it
                ec2.create_launch_template_version(
                    LaunchTemplateName=lt_name,
                    LaunchTemplateData={"ImageId": "ami-12c6146b",
                                        "InstanceType": s.instance_type})
        made.add(lt_name)
        tags = dict(s.extra_tags)
        if s.team:
            tags["team"] = s.team
        if s.cost_center:
            tags["cost-center"] = s.cost_center
        kwargs: dict[str, Any] = {
            "AutoScalingGroupName": s.name, "MinSize": s.min_size, "MaxSize": s.max_size,
            "DesiredCapacity": s.desired, "VPCZoneIdentifier": subnet,
            "Tags": [{"Key": k, "Value": v, "PropagateAtLaunch": True, "ResourceId": s.name,
                      "ResourceType": "auto-scaling-group"} for k, v in tags.items()],
        }
        if s.via == "overrides":
            kwargs["MixedInstancesPolicy"] = {
                "LaunchTemplate": {
                    "LaunchTemplateSpecification": {"LaunchTemplateName": lt_name,
                                                    "Version": "$Latest"},
                    "Overrides": [{"InstanceType": s.instance_type}]},
                "InstancesDistribution": {"OnDemandBaseCapacity": 0,
                                          "OnDemandPercentageAboveBaseCapacity": 70}}
        elif s.via == "template":
            kwargs["LaunchTemplate"] = {"LaunchTemplateName": lt_name, "Version": "$Default"}
        elif s.via == "pinned":
            kwargs["LaunchTemplate"] = {"LaunchTemplateName": lt_name, "Version": "2"}
        else:
            kwargs["LaunchConfigurationName"] = lt_name
        autoscaling.create_auto_scaling_group(**kwargs)
        if s.target is not None:
            autoscaling.put_scaling_policy(
                AutoScalingGroupName=s.name, PolicyName=f"{s.name}-gpu",
                PolicyType="TargetTrackingScaling",
                TargetTrackingConfiguration={
                    "TargetValue": s.target,
                    "CustomizedMetricSpecification": {
                        "MetricName": "nvidia_smi_utilization_gpu", "Namespace": "CWAgent",
                        "Statistic": "Average",
                        "Dimensions": [{"Name": "AutoScalingGroupName", "Value": s.name}]}})


def metric_data(specs: Sequence[PoolSpec], window: Window) -> dict[str, list[dict[str, Any]]]:
    """Namespace → datums: one per bucket value, a minute into the bucket (several spread)."""
    out: dict[str, list[dict[str, Any]]] = {"AWS/AutoScaling": [], "CWAgent": []}

    def put(ns: str, metric: str, pool: str, values: Sequence[Any]) -> None:
        for i, v in enumerate(values):
            if v is None:
                continue
            points = v if isinstance(v, tuple) else (v,)
            for k, p in enumerate(points):
                out[ns].append({
                    "MetricName": metric,
                    "Dimensions": [{"Name": "AutoScalingGroupName", "Value": pool}],
                    "Timestamp": window.bucket_start(i) + timedelta(seconds=60 + k * 60),
                    "Value": float(p),
                })

    for s in specs:
        put("AWS/AutoScaling", "GroupInServiceInstances", s.name, s.in_service)
        maxes = s.max_series if s.max_series is not None else (
            [s.max_size] * len(s.in_service))
        put("AWS/AutoScaling", "GroupMaxSize", s.name, maxes)
        put("CWAgent", "nvidia_smi_utilization_gpu", s.name, s.utilisation)
        put("CWAgent", "nvidia_smi_utilization_memory", s.name, s.memory)
    return out


def put_metrics(cloudwatch: Any, specs: Sequence[PoolSpec], window: Window) -> int:
    """PutMetricData in batches of 1,000 datums (AWS's limit); returns the datums written."""
    written = 0
    for namespace, datums in metric_data(specs, window).items():
        for i in range(0, len(datums), 1000):
            cloudwatch.put_metric_data(Namespace=namespace, MetricData=datums[i:i + 1000])
        written += len(datums)
    return written


def build_fleet(session: Any, specs: Sequence[PoolSpec], window: Window,
                region: str = "us-east-1") -> int:
    ec2 = session.client("ec2", region_name=region)
    autoscaling = session.client("autoscaling", region_name=region)
    cloudwatch = session.client("cloudwatch", region_name=region)
    create_groups(ec2, autoscaling, specs)
    return put_metrics(cloudwatch, specs, window)

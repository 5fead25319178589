# ruff: noqa: RUF001, RUF002, RUF003  (× is the multiplication sign users read)
"""``GpuMonitoring``: compute debt, live: a low-utilisation alarm per pool and one dashboard.

Remote-GPU tiers' proxy groups are watched like pools: their GPUs are allocated whether or not
clients send work.

The alarm watches what the pool scales on, ``CWAgent/nvidia_smi_utilization_gpu`` per
AutoScalingGroupName, hourly: below the threshold for the configured hours in a row means GPUs
allocated and not used. A pool with no instance publishes no datapoint; that is no allocation
and no debt, so missing data is not breaching. The dashboard draws, per pool, capacity
(GroupMaxSize × GPUs), allocated GPUs (GroupInServiceInstances × GPUs), used GPUs (allocated ×
utilisation) and utilisation against the alarm threshold, and capacity and allocation summed
over the stack: the picture ``gpupool debt --chart`` draws from history. An hour without a
utilisation datapoint draws no "used" point (unmeasured is not zero), which is also why use is
not summed over pools here.

The topic ``createAlarmTopic`` makes is encrypted with a customer-managed KMS key of its own,
never ``alias/aws/sns``: CloudWatch publishes an alarm to an encrypted topic with its own service
principal, which must be allowed ``kms:GenerateDataKey*`` and ``kms:Decrypt`` on the key, and
the AWS managed key's policy (which nobody can change) allows neither, so every notification
would be dropped without an error. The key's policy lets the account administer it (IAM
decides who) and CloudWatch use it for this stack's alarms only (``aws:SourceAccount``,
``aws:SourceArn``); it rotates yearly.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Final

import pulumi
import pulumi_aws as aws

from gpupool.config.monitoring import MonitoringConfig
from infra.aws import user_data

PERIOD_S: Final = 3600
CLOUDWATCH_PRINCIPAL: Final = "cloudwatch.amazonaws.com"
GROUP_NAMESPACE: Final = "AWS/AutoScaling"
COLOURS: Final = {"capacity": "#b0b0b0", "allocated": "#f2c12e", "used": "#3a9a48"}
_UNSAFE = re.compile(r"[^A-Za-z0-9_-]")


@dataclass(frozen=True, slots=True)
class PoolWatch:
    """What the monitoring needs to know about one pool."""

    pool: str  # the pool's name in the stack config
    group_name: pulumi.Input[str]
    gpus_per_instance: float
    instance_type: str
    gpu_model: str
    tags: Mapping[str, str] = field(default_factory=dict)
    role: str | None = None  # "remote-GPU proxies" for a tier's proxy group (said in titles)


@dataclass(frozen=True, slots=True)
class GpuMonitoringArgs:
    stack: str
    region: str
    config: MonitoringConfig
    pools: Sequence[PoolWatch]
    tags: Mapping[str, str] = field(default_factory=dict)


def dashboard_name(stack: str) -> str:
    """CloudWatch dashboard names allow letters, digits, '-' and '_' only."""
    return _UNSAFE.sub("-", f"gpupool-{stack}")[:255]


def _metric(namespace: str, name: str, group: str, ident: str) -> list[Any]:
    return [namespace, name, "AutoScalingGroupName", group, {"id": ident, "visible": False}]


def dashboard_body(region: str, pools: Sequence[tuple[PoolWatch, str]], threshold: float
                   ) -> dict[str, Any]:
    """The dashboard JSON for resolved group names (see the module docstring)."""
    widgets: list[dict[str, Any]] = [{
        "type": "text", "x": 0, "y": 0, "width": 24, "height": 2,
        "properties": {"markdown": (
            "## GPU capacity, allocation and use\n"
            "Grey: capacity (max size × GPUs). Yellow: allocated GPUs (in service). Green: used "
            "GPUs (allocated × GPU utilisation). The gap between yellow and green is compute "
            "debt; `gpupool debt` reports it in GPU-hours and dollars.")}}]
    total: list[list[Any]] = []
    y = 2
    for i, (watch, group) in enumerate(pools):
        g = watch.gpus_per_instance
        mx, ins, util = f"mx{i}", f"ins{i}", f"u{i}"
        gpu_metrics: list[list[Any]] = [
            _metric(GROUP_NAMESPACE, "GroupMaxSize", group, mx),
            _metric(GROUP_NAMESPACE, "GroupInServiceInstances", group, ins),
            _metric(user_data.NAMESPACE, user_data.UTILISATION_METRIC, group, util),
            [{"expression": f"{mx}*{g:g}", "label": "capacity (GPUs)", "id": f"cap{i}",
              "color": COLOURS["capacity"]}],
            [{"expression": f"{ins}*{g:g}", "label": "allocated (GPUs)", "id": f"alloc{i}",
              "color": COLOURS["allocated"]}],
            # no FILL: an hour without a utilisation datapoint is unmeasured, not zero use
            [{"expression": f"{ins}*{g:g}*{util}/100", "label": "used (GPUs)",
              "id": f"used{i}", "color": COLOURS["used"]}],
        ]
        total += gpu_metrics[:2]
        who = f"{watch.pool} ({watch.role})" if watch.role else watch.pool
        title = f"{who}: {watch.instance_type} ({g:g}× {watch.gpu_model})"
        widgets.append({
            "type": "metric", "x": 0, "y": y, "width": 16, "height": 6,
            "properties": {"title": f"{title}, GPUs", "region": region, "view": "timeSeries",
                           "stacked": False, "stat": "Average", "period": 300,
                           "metrics": gpu_metrics, "yAxis": {"left": {"min": 0}}}})
        widgets.append({
            "type": "metric", "x": 16, "y": y, "width": 8, "height": 6,
            "properties": {"title": f"{who}: GPU utilisation %", "region": region,
                           "view": "timeSeries", "stat": "Average", "period": 300,
                           "metrics": [[user_data.NAMESPACE, user_data.UTILISATION_METRIC,
                                        "AutoScalingGroupName", group,
                                        {"color": COLOURS["used"]}]],
                           "yAxis": {"left": {"min": 0, "max": 100}},
                           "annotations": {"horizontal": [{
                               "label": "low-utilisation alarm", "value": threshold,
                               "color": "#d62728"}]}}})
        y += 6
    if len(pools) > 1:
        caps = ", ".join(f"mx{i}*{w.gpus_per_instance:g}" for i, (w, _) in enumerate(pools))
        allocs = ", ".join(f"ins{i}*{w.gpus_per_instance:g}" for i, (w, _) in enumerate(pools))
        widgets.insert(1, {
            "type": "metric", "x": 0, "y": 2, "width": 24, "height": 6,
            "properties": {"title": "All pools, GPUs", "region": region, "view": "timeSeries",
                           "stacked": False, "stat": "Average", "period": 300,
                           "metrics": [*total,
                                       [{"expression": f"SUM([{caps}])", "id": "cap",
                                         "label": "capacity (GPUs)",
                                         "color": COLOURS["capacity"]}],
                                       [{"expression": f"SUM([{allocs}])", "id": "alloc",
                                         "label": "allocated (GPUs)",
                                         "color": COLOURS["allocated"]}]],
                           "yAxis": {"left": {"min": 0}}}})
        for w in widgets[2:]:
            w["y"] += 6
    return {"start": "-P7D", "periodOverride": "inherit", "widgets": widgets}


def alarm_key_policy(partition: str, region: str, account: str, alarm_prefix: str) -> str:
    """The alarm topic key's policy: the account administers it (AWS's default statement, so
    that IAM policies decide who may), CloudWatch may use it to publish the alarms whose names
    start with ``alarm_prefix`` in this account and region, and nothing else may."""
    doc = {
        "Version": "2012-10-17",
        "Statement": [
            {
                "Sid": "TheAccountAdministersTheKey",
                "Effect": "Allow",
                "Principal": {"AWS": f"arn:{partition}:iam::{account}:root"},
                "Action": "kms:*",
                "Resource": "*",
            },
            {
                "Sid": "CloudWatchPublishesThisStacksAlarms",
                "Effect": "Allow",
                "Principal": {"Service": CLOUDWATCH_PRINCIPAL},
                "Action": ["kms:GenerateDataKey*", "kms:Decrypt"],
                "Resource": "*",
                "Condition": {
                    "StringEquals": {"aws:SourceAccount": account},
                    "ArnLike": {"aws:SourceArn":
                                f"arn:{partition}:cloudwatch:{region}:{account}:alarm:"
                                f"{alarm_prefix}*"},
                },
            },
        ],
    }
    return json.dumps(doc, sort_keys=True)


class GpuMonitoring(pulumi.ComponentResource):
    """Low-utilisation alarms (one per pool), an optional SNS topic, the stack's dashboard."""

    alarm_names: dict[str, pulumi.Output[str]]
    topic_arn: pulumi.Output[str] | None
    dashboard_name: pulumi.Output[str] | None

    def __init__(self, name: str, args: GpuMonitoringArgs,
                 opts: pulumi.ResourceOptions | None = None) -> None:
        super().__init__("gpupool:aws:GpuMonitoring", name, None, opts)
        child = pulumi.ResourceOptions(parent=self)
        cfg = args.config
        topic_arn: pulumi.Input[str] | None = cfg.alarm_topic_arn
        self.topic_arn = None
        if cfg.create_alarm_topic:
            key = self._alarm_key(name, args)
            topic = aws.sns.Topic(
                f"{name}-alarms",
                aws.sns.TopicArgs(kms_master_key_id=key.arn, tags=dict(args.tags)),
                opts=child)
            self.topic_arn = topic.arn
            topic_arn = topic.arn
        elif topic_arn is not None:
            self.topic_arn = pulumi.Output.from_input(topic_arn)
        actions = [topic_arn] if topic_arn is not None else []

        alarm = cfg.low_utilisation_alarm
        self.alarm_names = {}
        if alarm.enabled:
            for watch in args.pools:
                a = aws.cloudwatch.MetricAlarm(
                    f"{name}-{watch.pool}-low-gpu-utilisation",
                    aws.cloudwatch.MetricAlarmArgs(
                        alarm_description=(
                            f"gpupool {args.stack}/{watch.pool}: mean GPU utilisation below "
                            f"{alarm.threshold:g} % for {alarm.hours} h: GPUs allocated and not "
                            "used (compute debt). See gpupool debt."),
                        namespace=user_data.NAMESPACE,
                        metric_name=user_data.UTILISATION_METRIC,
                        dimensions={user_data.GROUP_DIMENSION: watch.group_name},
                        statistic="Average",
                        period=PERIOD_S,
                        evaluation_periods=alarm.hours,
                        datapoints_to_alarm=alarm.hours,
                        threshold=alarm.threshold,
                        comparison_operator="LessThanThreshold",
                        treat_missing_data="notBreaching",
                        alarm_actions=actions,
                        ok_actions=actions,
                        tags={**args.tags, **watch.tags},
                    ),
                    opts=child)
                self.alarm_names[watch.pool] = a.name
        self.dashboard_name = None
        if cfg.dashboard and args.pools:
            groups = [w.group_name for w in args.pools]
            body = pulumi.Output.all(*groups).apply(
                lambda names: json.dumps(dashboard_body(
                    args.region, list(zip(args.pools, names, strict=True)), alarm.threshold),
                    sort_keys=True))
            board = aws.cloudwatch.Dashboard(
                f"{name}-dashboard",
                aws.cloudwatch.DashboardArgs(dashboard_name=dashboard_name(args.stack),
                                             dashboard_body=body),
                opts=child)
            self.dashboard_name = board.dashboard_name
        self.register_outputs({"alarmNames": self.alarm_names, "topicArn": self.topic_arn,
                               "dashboardName": self.dashboard_name})

    def _alarm_key(self, name: str, args: GpuMonitoringArgs) -> aws.kms.Key:
        """The topic's own key (see the module docstring): rotated, for this stack's alarms."""
        invoke = pulumi.InvokeOptions(parent=self)
        account = aws.get_caller_identity(opts=invoke).account_id
        partition = aws.get_partition(opts=invoke).partition
        return aws.kms.Key(
            f"{name}-alarms-key",
            aws.kms.KeyArgs(
                description=f"gpupool {args.stack}: encrypts the alarm topic; CloudWatch may "
                            "use it for the stack's alarms only",
                enable_key_rotation=True,
                deletion_window_in_days=30,
                policy=alarm_key_policy(partition, args.region, account, f"{name}-"),
                tags=dict(args.tags)),
            opts=pulumi.ResourceOptions(parent=self))

"""Compute debt, live: the low-utilisation alarm per pool, the SNS topic, the stack's dashboard.

Through the offline runner (the program under Pulumi's mock runtime), on the kit's own stacks
and on stack files written by the tests.
"""

from __future__ import annotations

import fnmatch
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from gpupool.config import load_stack
from gpupool.errors import InputError
from infra.aws.monitoring import dashboard_name
from infra.offline import OfflinePlan, run_offline

from .conftest import EXISTING_VPC_STACK

ALARM = "aws:cloudwatch/metricAlarm:MetricAlarm"
DASHBOARD = "aws:cloudwatch/dashboard:Dashboard"
TOPIC = "aws:sns/topic:Topic"
KEY = "aws:kms/key:Key"


def plan_of(path: Path) -> OfflinePlan:
    return run_offline(load_stack(str(path)))


def group_names(plan: OfflinePlan) -> dict[str, str]:
    """Pool or remote-GPU tier name → its (proxy) group's name (autonamed at create: the
    stack's groupNames and remoteGpu outputs). Proxies own GPUs: they are watched like pools."""
    tiers = {name: t["groupName"] for name, t in (plan.outputs.get("remoteGpu") or {}).items()}
    return {**plan.outputs["groupNames"], **tiers}


@pytest.mark.parametrize("stack", ["dev", "staging", "prod"])
def test_every_pool_of_the_kits_stacks_has_a_low_utilisation_alarm(
        stack: str, stack_plans: dict[str, Any]) -> None:
    loaded, plan = stack_plans[stack]
    groups = group_names(plan)
    alarms = plan.of_type(ALARM)
    assert len(alarms) == len(loaded.config.pools) + len(loaded.config.remote_gpu) == len(groups)
    by_group = {a.inputs["dimensions"]["AutoScalingGroupName"]: a.inputs for a in alarms}
    assert set(by_group) == set(groups.values())
    cfg = loaded.config.monitoring.low_utilisation_alarm
    for pool, group in groups.items():
        a = by_group[group]
        assert (a["namespace"], a["metricName"], a["statistic"]) == (
            "CWAgent", "nvidia_smi_utilization_gpu", "Average")
        assert (a["period"], a["evaluationPeriods"], a["datapointsToAlarm"]) == (
            3600, cfg.hours, cfg.hours)
        assert (a["threshold"], a["comparisonOperator"], a["treatMissingData"]) == (
            cfg.threshold, "LessThanThreshold", "notBreaching")
        assert a["tags"]["gpupool:pool"] == pool and a["tags"]["team"]
        assert f"below {cfg.threshold:g} % for {cfg.hours} h" in a["alarmDescription"]


@pytest.mark.parametrize("stack", ["dev", "staging", "prod"])
def test_one_dashboard_per_stack_draws_every_pool(stack: str,
                                                 stack_plans: dict[str, Any]) -> None:
    loaded, plan = stack_plans[stack]
    (board,) = plan.of_type(DASHBOARD)
    assert board.inputs["dashboardName"] == f"gpupool-{stack}"
    body = json.loads(board.inputs["dashboardBody"])
    text = json.dumps(body)
    for group in group_names(plan).values():
        assert text.count(f'"{group}"') >= 4  # max size, in service, utilisation twice
    widgets = [w for w in body["widgets"] if w["type"] == "metric"]
    per_pool = [w for w in widgets if w["properties"]["title"].endswith(", GPUs")
                and not w["properties"]["title"].startswith("All pools")]
    assert len(per_pool) == len(loaded.config.pools) + len(loaded.config.remote_gpu)
    for tier in loaded.config.remote_gpu:
        assert any(w["properties"]["title"].startswith(f"{tier.name} (remote-GPU proxies): ")
                   for w in per_pool)
    for w in per_pool:
        exprs = {m[0]["label"]: m[0]["expression"] for m in w["properties"]["metrics"]
                 if isinstance(m[0], dict)}
        assert set(exprs) == {"capacity (GPUs)", "allocated (GPUs)", "used (GPUs)"}
        assert "FILL" not in exprs["used (GPUs)"]  # unmeasured hours are gaps, not zero use
    ids = [m[-1]["id"] for w in widgets for m in w["properties"]["metrics"]
           if isinstance(m[-1], dict) and "id" in m[-1]]
    assert all(i[0].islower() and i.isalnum() for i in ids)  # CloudWatch's id rule


def test_gpus_per_instance_scale_the_dashboard() -> None:
    from gpupool.catalog import load_catalog
    from infra.aws.monitoring import PoolWatch, dashboard_body

    row = load_catalog().get("g4dn.12xlarge")
    assert row is not None
    body = dashboard_body("us-east-1", [(PoolWatch("big", "big-asg", row.gpu_count,
                                                   row.instance_type, row.gpu_model),
                                         "big-asg")], 20)
    (widget,) = [w for w in body["widgets"] if w["properties"].get("title", "").startswith(
        "big: g4dn")]
    exprs = [m[0]["expression"] for m in widget["properties"]["metrics"]
             if isinstance(m[0], dict)]
    assert exprs == ["mx0*4", "ins0*4", "ins0*4*u0/100"]


MONITORED = EXISTING_VPC_STACK + """\
      gpupool:monitoring:
        lowUtilisationAlarm: {threshold: 15, hours: 12}
        createAlarmTopic: true
"""


def test_created_topic_is_encrypted_and_notified(write_stack: Callable[[str, str], Path]
                                                 ) -> None:
    plan = plan_of(write_stack("mon", MONITORED))
    (topic,) = plan.of_type(TOPIC)
    (alarm,) = plan.of_type(ALARM)
    assert alarm.inputs["threshold"] == 15 and alarm.inputs["evaluationPeriods"] == 12
    assert alarm.inputs["alarmActions"] == alarm.inputs["okActions"]
    assert len(alarm.inputs["alarmActions"]) == 1  # the topic's ARN, known at apply
    assert alarm.property_dependencies["alarmActions"] == (topic.urn,)


def test_the_alarm_topic_key_admits_cloudwatch_for_the_stacks_alarms_only(
        write_stack: Callable[[str, str], Path]) -> None:
    """Issue 16 item 17: CloudWatch publishes to an encrypted topic as its own service principal,
    which the AWS managed key (alias/aws/sns) never admits: alarms would never notify. The topic
    gets a key of its own, rotated, whose policy lets CloudWatch generate and decrypt data keys
    for this stack's alarms (this account, alarm names of this stack) and no one else but the
    account's own administration."""
    plan = plan_of(write_stack("mon", MONITORED))
    (topic,) = plan.of_type(TOPIC)
    (key,) = plan.of_type(KEY)
    assert topic.property_dependencies["kmsMasterKeyId"] == (key.urn,)
    assert topic.inputs["kmsMasterKeyId"].startswith("arn:aws:kms:us-east-1:")
    assert key.inputs["enableKeyRotation"] is True
    assert key.inputs.get("customerMasterKeySpec", "SYMMETRIC_DEFAULT") == "SYMMETRIC_DEFAULT"
    policy = json.loads(key.inputs["policy"])
    (alarm,) = plan.of_type(ALARM)
    account = "123456789012"  # the offline fixture's caller identity
    alarm_arn = f"arn:aws:cloudwatch:us-east-1:{account}:alarm:{alarm.name}-0a1b2c3"

    def allowed(principal: dict[str, str], action: str, context: dict[str, str]) -> bool:
        for st in policy["Statement"]:
            actions = st["Action"] if isinstance(st["Action"], list) else [st["Action"]]
            if st["Effect"] != "Allow" or st["Principal"] != principal:
                continue
            if not any(fnmatch.fnmatchcase(action, a) for a in actions):
                continue
            cond = st.get("Condition", {})
            if all(context.get(k) == v for k, v in cond.get("StringEquals", {}).items()) and all(
                    fnmatch.fnmatchcase(context.get(k, ""), v)
                    for k, v in cond.get("ArnLike", {}).items()):
                return True
        return False

    cloudwatch = {"Service": "cloudwatch.amazonaws.com"}
    ours = {"aws:SourceAccount": account, "aws:SourceArn": alarm_arn}
    for action in ("kms:GenerateDataKey", "kms:Decrypt"):
        assert allowed(cloudwatch, action, ours), action
    # not another account's alarms, nor another stack's, nor more than data keys
    assert not allowed(cloudwatch, "kms:Decrypt", {**ours, "aws:SourceAccount": "210987654321"})
    assert not allowed(cloudwatch, "kms:Decrypt", {
        **ours, "aws:SourceArn": f"arn:aws:cloudwatch:us-east-1:{account}:alarm:other-stack"})
    assert not allowed(cloudwatch, "kms:ScheduleKeyDeletion", ours)
    # the account administers it (without it the key could never be changed again)
    assert allowed({"AWS": f"arn:aws:iam::{account}:root"}, "kms:PutKeyPolicy", {})
    principals = {json.dumps(st["Principal"], sort_keys=True) for st in policy["Statement"]}
    assert principals == {json.dumps(cloudwatch), json.dumps(
        {"AWS": f"arn:aws:iam::{account}:root"})}


def test_existing_topic_and_switches(write_stack: Callable[[str, str], Path]) -> None:
    arn = "arn:aws:sns:us-east-1:123456789012:gpu-alerts"
    plan = plan_of(write_stack("mon", EXISTING_VPC_STACK + f"""\
      gpupool:monitoring:
        alarmTopicArn: {arn}
        dashboard: false
"""))
    assert plan.of_type(TOPIC) == [] and plan.of_type(DASHBOARD) == []
    (alarm,) = plan.of_type(ALARM)
    assert alarm.inputs["alarmActions"] == [arn]
    plan = plan_of(write_stack("off", EXISTING_VPC_STACK + """\
      gpupool:monitoring:
        lowUtilisationAlarm: {enabled: false}
"""))
    assert plan.of_type(ALARM) == [] and len(plan.of_type(DASHBOARD)) == 1


@pytest.mark.parametrize(("monitoring", "expected"), [
    ("{alarmTopicArn: arn:aws:sqs:us-east-1:123456789012:q}",
     "gpupool:monitoring.alarmTopicArn: expected an SNS topic ARN such as "
     "arn:aws:sns:us-east-1:123456789012:gpu-alerts"),
    ("{alarmTopicArn: 'arn:aws:sns:us-east-1:123456789012:t', createAlarmTopic: true}",
     "gpupool:monitoring.createAlarmTopic: expected createAlarmTopic: false when alarmTopicArn "
     "names an existing topic"),
    ("{lowUtilisationAlarm: {hours: 169}}",
     "gpupool:monitoring.lowUtilisationAlarm.hours: expected at most 168"),
    ("{lowUtilisationAlarm: {threshold: 0}}",
     "gpupool:monitoring.lowUtilisationAlarm.threshold: expected"),
    ("{lowUtilisationAlarms: {}}",
     "gpupool:monitoring.lowUtilisationAlarms: expected a known key, not this one (did you "
     "mean lowUtilisationAlarm?)"),
])
def test_bad_monitoring_config_is_one_line_per_problem(
        write_stack: Callable[[str, str], Path], monitoring: str, expected: str) -> None:
    path = write_stack("bad", EXISTING_VPC_STACK + f"      gpupool:monitoring: {monitoring}\n")
    with pytest.raises(InputError) as e:
        load_stack(str(path))
    assert len(e.value.problems) == 1, e.value.problems
    assert expected in e.value.problems[0]


def test_dashboard_names_are_what_cloudwatch_allows() -> None:
    assert dashboard_name("team-a.prod") == "gpupool-team-a-prod"

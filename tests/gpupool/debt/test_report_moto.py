# ruff: noqa: RUF003  (× is the multiplication sign users read)
"""``gpupool debt``'s reads and figures against a moto server over HTTP.

moto emits no AWS/AutoScaling group metrics (it has no metric provider for autoscaling) and,
of course, no CloudWatch agent metrics: the fleet helper writes both with PutMetricData at known
values, and the figures are asserted to the GPU-hour. moto does not evaluate metric math; the
report uses plain MetricStat queries only.
"""

from __future__ import annotations

import math
import threading
import time
from collections import Counter
from typing import Any

import boto3
import pytest
from botocore.awsrequest import AWSResponse
from debt_fleet import PoolSpec, build_fleet

from gpupool.catalog import load_catalog
from gpupool.debt.aws import make_clients
from gpupool.debt.metrics import MAX_QUERIES, SERIES
from gpupool.debt.report import Report, build_report
from gpupool.debt.window import Window

T4_PER_GPU = 0.526  # g4dn.xlarge, us-east-1 on-demand (catalog)
T4X4_PER_GPU = 3.912 / 4  # g4dn.12xlarge


def fleet() -> list[PoolSpec]:
    return [
        # 2 × 1 T4 in service all six hours, max 4; 10, 10, 20, 20, 30, 30 % busy
        PoolSpec("inference-a", "g4dn.xlarge", "research", min_size=2, desired=2, max_size=4,
                 in_service=[2] * 6, utilisation=[10, 10, 20, 20, 30, 30], memory=[5] * 6),
        # 1 × 4 T4 for four hours (launch template, $Default), one hour unmeasured; bucket 0
        # holds two datapoints (85, 95): CloudWatch's Average is 90
        PoolSpec("training-b", "g4dn.12xlarge", "ml", max_size=2, in_service=[1, 1, 1, 1, 0, 0],
                 utilisation=[(85, 95), 80, None, 70, None, None], via="template", target=50),
        # an A10G group pinned to launch template version 2, no team tag, no agent
        PoolSpec("agentless-c", "g5.xlarge", None, max_size=3, in_service=[1] * 6,
                 via="pinned"),
        # not a GPU group: left out
        PoolSpec("web", "m5.large", "web", in_service=[3] * 6, utilisation=[50] * 6),
        # a launch-configuration group without group metrics
        PoolSpec("nometrics-e", "g6.xlarge", "research", via="configuration"),
    ]


def report_for(specs: list[PoolSpec], window: Window, session: Any = None) -> Report:
    session = session or boto3.session.Session()
    build_fleet(session, specs, window)
    return build_report(make_clients("us-east-1", session), window, load_catalog())


def by_pool(report: Report) -> dict[str, dict[str, Any]]:
    return {r["pool"]: r for r in report.to_dict()["pools"]}


def test_figures_to_the_gpu_hour(moto: str, window: Window) -> None:
    report = report_for(fleet(), window)
    pools = by_pool(report)
    assert set(pools) == {"inference-a", "training-b", "agentless-c", "nometrics-e"}

    a = pools["inference-a"]
    assert (a["capacity_gpu_hours"], a["allocated_gpu_hours"], a["used_gpu_hours"],
            a["debt_gpu_hours"], a["idle_gpu_hours"]) == (24.0, 12.0, 2.4, 9.6, 12.0)
    assert a["utilisation"] == 0.2 and a["memory_utilisation"] == 0.05
    assert a["debt_usd"] == round(9.6 * T4_PER_GPU, 2)
    assert (a["team"], a["cost_center"], a["status"], a["spot_share"]) == (
        "research", "cc-1", "measured", 0.3)

    b = pools["training-b"]  # found through its launch template, 4 GPUs per instance
    assert (b["instance_type"], b["gpus_per_instance"]) == ("g4dn.12xlarge", 4)
    assert (b["capacity_gpu_hours"], b["allocated_gpu_hours"], b["used_gpu_hours"],
            b["debt_gpu_hours"], b["unmeasured_gpu_hours"]) == (48.0, 16.0, 9.6, 2.4, 4.0)
    assert (b["status"], b["utilisation"], b["target_utilisation"]) == ("partial", 0.8, 50.0)
    assert b["debt_usd"] == round(2.4 * T4X4_PER_GPU, 2)

    c = pools["agentless-c"]  # allocation known, use never measured: not zero, missing
    assert (c["instance_type"], c["status"], c["allocated_gpu_hours"]) == (
        "g5.xlarge", "not measured", 6.0)
    assert c["used_gpu_hours"] is None and c["debt_gpu_hours"] is None
    assert c["utilisation"] is None and c["debt_usd"] is None and c["team"] is None

    e = pools["nometrics-e"]
    assert e["status"] == "no group metrics" and e["allocated_gpu_hours"] is None

    t = report.to_dict()["totals"]
    assert (t["capacity_gpu_hours"], t["allocated_gpu_hours"], t["used_gpu_hours"],
            t["debt_gpu_hours"], t["idle_gpu_hours"], t["unmeasured_gpu_hours"]) == (
        90.0, 34.0, 12.0, 12.0, 56.0, 10.0)
    assert t["utilisation"] == 0.5 and t["not_measured_pools"] == 1
    assert t["debt_usd"] == round(9.6 * T4_PER_GPU + 2.4 * T4X4_PER_GPU, 2)


def test_teams_and_findings(moto: str, window: Window) -> None:
    d = report_for(fleet(), window).to_dict()
    teams = {t["team"]: t for t in d["teams"]}
    assert set(teams) == {"research", "ml", "(untagged)"}
    assert teams["research"]["pool_names"] == ["inference-a", "nometrics-e"]
    assert (teams["research"]["allocated_gpu_hours"], teams["research"]["debt_gpu_hours"]) == (
        12.0, 9.6)
    assert teams["(untagged)"]["used_gpu_hours"] is None
    assert teams["(untagged)"]["not_measured_pools"] == 1
    kinds = Counter((f["pool"], f["finding"]) for f in d["findings"])
    assert kinds[("agentless-c", "not-measured")] == 1
    assert kinds[("agentless-c", "untagged")] == 1
    assert kinds[("nometrics-e", "no-group-metrics")] == 1
    assert kinds[("training-b", "partly-measured")] == 1
    assert kinds[("inference-a", "low-utilisation")] == 1
    assert [o["pool"] for o in d["offenders"]] == ["inference-a", "training-b"]
    actions = {(r["pool"], r["action"]) for r in d["recommendations"]}
    assert {("agentless-c", "install-agent"), ("nometrics-e", "enable-group-metrics"),
            ("inference-a", "lower-min")} <= actions


def test_compute_optimizer_off_never_fails_the_report(moto: str, window: Window) -> None:
    """moto has no Compute Optimizer backend (its server answers 500): the report says 'off'."""
    d = report_for(fleet()[:1], window).to_dict()
    assert d["compute_optimizer"]["status"] == "off"
    assert "unavailable" in d["compute_optimizer"]["reason"]
    assert d["pools"][0]["debt_gpu_hours"] == 9.6


class CallCounter:
    """An independent count of API calls, through botocore's event system."""

    def __init__(self, session: Any) -> None:
        self.calls: Counter[str] = Counter()
        self.sends: Counter[str] = Counter()
        session.events.register("before-call", self._call)
        session.events.register("before-send", self._send)

    def _call(self, model: Any, **_: Any) -> None:
        self.calls[model.name] += 1

    def _send(self, event_name: str, **_: Any) -> None:
        self.sends[event_name.rsplit(".", 1)[-1]] += 1


def test_metrics_are_batched_500_queries_a_call(moto: str, window: Window) -> None:
    pools = 130  # 520 series → ⌈520 / 500⌉ = 2 GetMetricData calls
    # one shared launch template and data in the first hour only, to keep the test fast (moto
    # scans every stored datapoint per query); the calls counted depend on neither
    specs = [PoolSpec(f"pool-{i:03d}", in_service=[1], utilisation=[i % 100], target=None,
                      template="shared-lt") for i in range(pools)]
    session = boto3.session.Session()
    counter = CallCounter(session)
    report = report_for(specs, window, session)
    series = pools * len(SERIES)
    assert counter.calls["GetMetricData"] == math.ceil(series / MAX_QUERIES) == 2
    assert report.metric_calls == 2
    assert counter.calls["DescribeAutoScalingGroups"] == 2  # 100 groups a page
    assert counter.calls["GetMetricStatistics"] == 0
    assert report.api_calls == sum(
        n for op, n in counter.calls.items() if op not in ("CreateAutoScalingGroup",
                                                          "CreateLaunchTemplate",
                                                          "PutScalingPolicy", "PutMetricData",
                                                          "DescribeSubnets"))
    rows = by_pool(report)
    assert rows["pool-042"]["used_gpu_hours"] == 0.42
    assert rows["pool-129"]["utilisation"] == 0.29


def _throttle_response(client: Any, request: Any) -> AWSResponse:
    """A Throttling error in the wire format the client speaks (CBOR, JSON or query XML)."""
    sent = str(request.headers.get("Content-Type", ""))
    protocol = ("smithy-rpc-v2-cbor" if "cbor" in sent else "json" if "json" in sent
                else "query")
    headers = {"x-amzn-RequestId": "throttled", "x-amzn-query-error": "Throttling;Sender"}
    if protocol == "smithy-rpc-v2-cbor":
        def text(s: str) -> bytes:
            assert len(s) < 24
            return bytes([0x60 + len(s)]) + s.encode()
        body = b"\xa2" + text("__type") + text("Throttling") + text("message") + text(
            "Rate exceeded")
        headers.update({"smithy-protocol": "rpc-v2-cbor", "Content-Type": "application/cbor"})
    elif protocol == "json":
        body = b'{"__type": "Throttling", "message": "Rate exceeded"}'
        headers["Content-Type"] = "application/x-amz-json-1.0"
    else:
        body = (b"<ErrorResponse><Error><Type>Sender</Type><Code>Throttling</Code>"
                b"<Message>Rate exceeded</Message></Error><RequestId>x</RequestId>"
                b"</ErrorResponse>")
        headers["Content-Type"] = "text/xml"

    class Raw:
        def stream(self, **_: Any) -> Any:
            yield body

    return AWSResponse(request.url, 400, headers, Raw())


def test_throttling_is_retried_with_backoff(moto: str, window: Window,
                                            monkeypatch: pytest.MonkeyPatch) -> None:
    specs = fleet()[:2]
    session = boto3.session.Session()
    build_fleet(session, specs, window)
    clients = make_clients("us-east-1", session)
    throttled = {"left": 3}

    def throttle(request: Any, **_: Any) -> AWSResponse | None:
        if throttled["left"] > 0:
            throttled["left"] -= 1
            return _throttle_response(clients.cloudwatch, request)
        return None

    clients.cloudwatch.meta.events.register_first("before-send.*.GetMetricData", throttle)
    sleeps: list[float] = []
    me = threading.get_ident()
    real_sleep = time.sleep

    def record(seconds: float) -> None:  # botocore's backoff, recorded instead of waited
        if threading.get_ident() == me:
            sleeps.append(seconds)
        else:
            real_sleep(seconds)

    monkeypatch.setattr(time, "sleep", record)
    report = build_report(clients, window, load_catalog(), compute_optimizer=False)
    assert throttled["left"] == 0
    assert clients.calls.calls["GetMetricData"] == 1  # one call ...
    assert clients.calls.requests["GetMetricData"] == 4  # ... sent four times
    assert report.to_dict()["api_calls_detail"]["retries"] == 3
    assert len(sleeps) == 3 and all(s > 0 for s in sleeps)  # botocore backed off each time
    assert by_pool(report)["inference-a"]["debt_gpu_hours"] == 9.6  # nothing lost


def test_throttling_beyond_the_retries_is_one_line(moto: str, window: Window) -> None:
    from gpupool.errors import InputError

    session = boto3.session.Session()
    build_fleet(session, fleet()[:1], window)
    clients = make_clients("us-east-1", session)
    clients.cloudwatch.meta.events.register_first(
        "before-send.*.GetMetricData",
        lambda request, **_: _throttle_response(clients.cloudwatch, request))
    import botocore.retries.standard as standard

    real = standard.ExponentialBackoff.delay_amount
    standard.ExponentialBackoff.delay_amount = lambda self, ctx: 0.0  # type: ignore[method-assign]
    try:
        with pytest.raises(InputError) as e:
            build_report(clients, window, load_catalog(), compute_optimizer=False)
    finally:
        standard.ExponentialBackoff.delay_amount = real  # type: ignore[method-assign]
    assert e.value.problems == [f"{moto}: GetMetricData refused: Throttling: Rate exceeded"]
    assert clients.calls.requests["GetMetricData"] == 8


def test_pools_with_different_gpu_counts_in_one_group_are_noted(moto: str,
                                                                window: Window) -> None:
    session = boto3.session.Session()
    build_fleet(session, [PoolSpec("mixed", "g4dn.xlarge", in_service=[1] * 6,
                                   utilisation=[50] * 6)], window)
    asg = session.client("autoscaling", region_name="us-east-1")
    asg.update_auto_scaling_group(AutoScalingGroupName="mixed", MixedInstancesPolicy={
        "LaunchTemplate": {"LaunchTemplateSpecification": {"LaunchTemplateName": "mixed-lt",
                                                           "Version": "$Latest"},
                           "Overrides": [{"InstanceType": "g4dn.xlarge"},
                                         {"InstanceType": "g4dn.12xlarge"}]}})
    report = build_report(make_clients("us-east-1", session), window, load_catalog(),
                          compute_optimizer=False)
    notes = [f["message"] for f in report.findings if f["finding"] == "note"]
    assert notes and "different GPU counts" in notes[0]
    assert by_pool(report)["mixed"]["gpus_per_instance"] == 1


def test_prices_are_the_regions(moto: str, window: Window) -> None:
    """A report for eu-west-1 prices its debt at eu-west-1's on-demand price."""
    session = boto3.session.Session()
    build_fleet(session, fleet()[:1], window, region="eu-west-1")
    catalog = load_catalog(region="eu-west-1")
    row = catalog.get("g4dn.xlarge")
    assert row is not None and row.price_per_gpu_hour not in (None, T4_PER_GPU)
    report = build_report(make_clients("eu-west-1", session), window, catalog,
                          compute_optimizer=False)
    d = report.to_dict()
    assert (d["region"], d["price_region"]) == ("eu-west-1", "eu-west-1")
    assert d["pools"][0]["debt_usd"] == round(9.6 * row.price_per_gpu_hour, 2)


def test_remote_gpu_proxy_tiers_and_kubernetes_node_groups(moto: str, window: Window) -> None:
    """A remote-GPU tier's proxies own GPUs whether or not clients send work: counted like a
    pool (role gpu-proxy), never consolidated with pools; its CPU clients are left out. An EKS
    node group's GPUs are counted, and its use is said to be in Prometheus, not missing agent."""
    from gpupool.debt.render import render_csv, render_text
    from gpupool.tags import CLIENT_ROLE, PROXY_ROLE, ROLE_TAG, TIER_TAG

    tier = {ROLE_TAG: PROXY_ROLE, TIER_TAG: "remote", "gpupool:remoting-min-gbps": "10"}
    specs = [
        PoolSpec("staging-remote-proxies", "g5.xlarge", "research", min_size=2, desired=2,
                 max_size=4, in_service=[2] * 6, utilisation=[10] * 6, extra_tags=tier),
        PoolSpec("staging-remote-clients", "m5.large", "research", in_service=[2] * 6,
                 extra_tags={ROLE_TAG: CLIENT_ROLE, TIER_TAG: "remote"}),
        # two idle pools of the proxies' GPU: they consolidate with each other, not with it
        PoolSpec("inference-g5", "g5.xlarge", "research", min_size=1, desired=1, max_size=2,
                 in_service=[1] * 6, utilisation=[10] * 6),
        PoolSpec("batch-g5", "g5.xlarge", "ml", min_size=1, desired=1, max_size=2,
                 in_service=[1] * 6, utilisation=[10] * 6),
        # an EKS managed node group (the tags EKS puts on its group): no CloudWatch agent
        PoolSpec("eks-gpu-nodes", "g6.xlarge", "ml", max_size=3, in_service=[1] * 6,
                 target=None, extra_tags={"eks:cluster-name": "prod", "eks:nodegroup-name": "gpu",
                                          "kubernetes.io/cluster/prod": "owned"}),
    ]
    report = report_for(specs, window)
    pools = by_pool(report)
    assert set(pools) == {"staging-remote-proxies", "inference-g5", "batch-g5", "eks-gpu-nodes"}
    k = pools["eks-gpu-nodes"]
    assert (k["role"], k["status"], k["allocated_gpu_hours"], k["used_gpu_hours"]) == (
        "kubernetes-nodes", "not measured", 6.0, None)
    (note,) = [f["message"] for f in report.findings
               if (f["pool"], f["finding"]) == ("eks-gpu-nodes", "not-measured")]
    assert "Prometheus" in note and "DCGM_FI_DEV_GPU_UTIL" in note
    k_advice = {r["action"] for r in report.to_dict()["recommendations"]
                if r["pool"] == "eks-gpu-nodes"}
    assert k_advice == {"read-dcgm"}
    p = pools["staging-remote-proxies"]
    assert (p["role"], p["team"], p["instance_type"], p["status"]) == (
        "gpu-proxy", "research", "g5.xlarge", "measured")
    assert (p["capacity_gpu_hours"], p["allocated_gpu_hours"], p["used_gpu_hours"],
            p["debt_gpu_hours"], p["utilisation"]) == (24.0, 12.0, 1.2, 10.8, 0.1)
    assert pools["inference-g5"]["role"] == pools["batch-g5"]["role"] == "pool"
    d = report.to_dict()
    assert d["totals"]["allocated_gpu_hours"] == 30.0  # 12 + 6 + 6 + 6: the proxies count
    assert d["offenders"][0]["pool"] == "staging-remote-proxies"
    merges = [r for r in d["recommendations"] if r["action"] == "consolidate"]
    assert len(merges) == 1 and "staging-remote-proxies" not in merges[0]["change"]
    assert {"inference-g5", "batch-g5"} <= set(merges[0]["change"].replace(",", " ").split())
    assert ("staging-remote-proxies", "lower-min") in {(r["pool"], r["action"])
                                                       for r in d["recommendations"]}
    text = render_text(report, width=200)  # wide enough for the names on one line
    assert "staging-remote-proxies (remote-GPU proxies)" in text
    assert "eks-gpu-nodes (Kubernetes nodes)" in text
    header, *rows = render_csv(report).splitlines()
    assert header.split(",")[:2] == ["pool", "role"]
    assert any(r.startswith("staging-remote-proxies,gpu-proxy,") for r in rows)


def test_role_tag_is_the_one_the_kit_writes() -> None:
    from gpupool.debt import discover
    from infra.aws import remote_gpu

    assert (discover.ROLE_TAG, discover.PROXY_ROLE) == (remote_gpu.ROLE_TAG, remote_gpu.PROXY_ROLE)

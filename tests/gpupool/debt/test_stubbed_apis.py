"""What moto cannot show, on real botocore clients with botocore's Stubber.

- GetMetricData pagination: moto answers every request in one page (it never returns a
  NextToken), so the NextToken loop is driven with stubbed pages whose results for one query id
  continue across pages, as CloudWatch's do.
- Compute Optimizer "on": moto has no Compute Optimizer backend (the "off" path is tested
  against moto in test_report_moto.py), so its answer is stubbed in the service's own shape.

The Stubber validates every request and response against the service model, so the parameters
the report sends and the shapes it reads are the real API's.
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

import boto3
import pytest
from botocore.stub import Stubber

from gpupool.catalog import load_catalog
from gpupool.debt.aws import ApiCalls, Clients
from gpupool.debt.discover import Pool
from gpupool.debt.metrics import MAX_QUERIES, SERIES, plan_queries, query, read_series
from gpupool.debt.optimizer import read_recommendations
from gpupool.debt.window import Window

START = datetime(2026, 11, 30, tzinfo=UTC)
WINDOW = Window(START, START + timedelta(hours=4), 3600)


def _client(service: str) -> Any:
    return boto3.session.Session().client(
        service, region_name="us-east-1", aws_access_key_id="x", aws_secret_access_key="y")


def _clients(**kw: Any) -> Clients:
    base = {s: None for s in ("autoscaling", "ec2", "cloudwatch", "compute_optimizer")}
    return Clients(**{**base, **kw}, calls=ApiCalls(), region="us-east-1")  # type: ignore[arg-type]


def _pool(name: str, itype: str = "g4dn.xlarge") -> Pool:
    row = load_catalog().get(itype)
    assert row is not None
    return Pool(name=name, arn=f"arn:aws:autoscaling:us-east-1:123456789012:autoScalingGroup:"
                f"uuid:autoScalingGroupName/{name}", instance_type=row,
                instance_types=(itype,), min_size=0, max_size=4, desired_capacity=1,
                team="t", cost_center=None, tags={}, spot_share=0.0, on_demand_base=0,
                target_utilisation=70.0, created=None)


def test_get_metric_data_follows_next_token_and_joins_pages() -> None:
    cw = _client("cloudwatch")
    pools = [_pool("a"), _pool("b")]
    planned = plan_queries(pools, WINDOW)
    queries = [query(qid, pool, spec, 3600) for qid, pool, spec in planned]
    hours = [START + timedelta(hours=i) for i in range(4)]
    common = {"MetricDataQueries": queries, "StartTime": WINDOW.start,
              "EndTime": WINDOW.end, "ScanBy": "TimestampAscending", "MaxDatapoints": 100800}

    def result(qid: str, times: list[datetime], values: list[float]) -> dict[str, Any]:
        return {"Id": qid, "Label": qid, "Timestamps": times, "Values": values,
                "StatusCode": "PartialData" if len(times) < 4 else "Complete"}

    with Stubber(cw) as stub:
        # page 1: first two hours of a's in-service series (q0) and all of b's (q4)
        stub.add_response("get_metric_data", {
            "MetricDataResults": [result("q0", hours[:2], [2.0, 2.0]),
                                  result("q4", hours, [1.0] * 4)],
            "NextToken": "page-2"}, common)
        # page 2: the rest of q0, and a's utilisation (q2)
        stub.add_response("get_metric_data", {
            "MetricDataResults": [result("q0", hours[2:], [3.0, 1.0]),
                                  result("q2", hours, [50.0, 25.0, 0.0, 100.0])]},
            {**common, "NextToken": "page-2"})
        readings = read_series(_clients(cloudwatch=cw), pools, WINDOW)
        stub.assert_no_pending_responses()
    assert readings.calls == 2 and readings.pages_per_batch == [2]
    assert readings.of("a", "in_service") == {0: 2.0, 1: 2.0, 2: 3.0, 3: 1.0}
    assert readings.of("a", "utilisation") == {0: 50.0, 1: 25.0, 2: 0.0, 3: 100.0}
    assert readings.of("b", "in_service") == {0: 1.0, 1: 1.0, 2: 1.0, 3: 1.0}
    assert readings.of("b", "utilisation") == {}  # no datapoint: missing, not zero


def test_more_than_500_series_are_split_into_batches() -> None:
    cw = _client("cloudwatch")
    pools = [_pool(f"p{i}") for i in range(126)]  # 504 series → 2 calls of 500 and 4
    with Stubber(cw) as stub:
        for size in (MAX_QUERIES, 126 * len(SERIES) - MAX_QUERIES):
            stub.add_response("get_metric_data", {"MetricDataResults": []},
                              {"MetricDataQueries": stub_any(size),
                               "StartTime": WINDOW.start, "EndTime": WINDOW.end,
                               "ScanBy": "TimestampAscending", "MaxDatapoints": 100800})
        readings = read_series(_clients(cloudwatch=cw), pools, WINDOW)
        stub.assert_no_pending_responses()
    assert readings.calls == 2


class _Len:
    """Matches any list of ``n`` items (Stubber compares expected params with ==)."""

    def __init__(self, n: int) -> None:
        self.n = n

    def __eq__(self, other: object) -> bool:
        return isinstance(other, list) and len(other) == self.n

    def __hash__(self) -> int:
        return self.n


def stub_any(n: int) -> Any:
    return _Len(n)


GPU_REC = {
    "accountId": "123456789012",
    "autoScalingGroupArn": _pool("inference").arn,
    "autoScalingGroupName": "inference",
    "finding": "Overprovisioned",
    "utilizationMetrics": [{"name": "GPU_PERCENTAGE", "statistic": "Average", "value": 12.5},
                           {"name": "GPU_PERCENTAGE", "statistic": "Maximum", "value": 60.0},
                           {"name": "GPU_MEMORY_PERCENTAGE", "statistic": "Average",
                            "value": 30.0}],
    "lookBackPeriodInDays": 14.0,
    "currentConfiguration": {"desiredCapacity": 4, "minSize": 2, "maxSize": 8,
                             "instanceType": "g4dn.xlarge"},
    "currentInstanceGpuInfo": {"gpus": [{"gpuCount": 1, "gpuMemorySizeInMiB": 16384}]},
    "recommendationOptions": [
        {"configuration": {"desiredCapacity": 2, "minSize": 1, "maxSize": 8,
                           "instanceType": "g4dn.2xlarge"},
         "instanceGpuInfo": {"gpus": [{"gpuCount": 1, "gpuMemorySizeInMiB": 16384}]},
         "projectedUtilizationMetrics": [{"name": "GPU_PERCENTAGE", "statistic": "Average",
                                          "value": 25.0}],
         "performanceRisk": 1.0, "rank": 1,
         "savingsOpportunity": {"savingsOpportunityPercentage": 28.5,
                                "estimatedMonthlySavings": {"currency": "USD", "value": 438.0}}},
    ],
}


def test_compute_optimizer_on_shows_gpu_figures_and_marks_vertical_advice() -> None:
    co = _client("compute-optimizer")
    pools = [_pool("inference"), _pool("training", "g5.xlarge")]
    with Stubber(co) as stub:
        stub.add_response("get_auto_scaling_group_recommendations", {
            "autoScalingGroupRecommendations": [GPU_REC], "nextToken": "more"},
            {"autoScalingGroupArns": sorted(p.arn for p in pools)})
        stub.add_response("get_auto_scaling_group_recommendations", {
            "autoScalingGroupRecommendations": [], "errors": []},
            {"autoScalingGroupArns": sorted(p.arn for p in pools), "nextToken": "more"})
        view = read_recommendations(_clients(compute_optimizer=co), pools, load_catalog())
        stub.assert_no_pending_responses()
    assert view.status == "on"
    assert view.reason == "1 of 2 GPU groups have a recommendation"
    rec = view.by_pool["inference"]
    assert (rec["gpu_utilisation"], rec["gpu_memory_utilisation"]) == (0.125, 0.3)
    best = rec["options"][0]
    assert best["instance_type"] == "g4dn.2xlarge"
    assert best["vertical"] is True  # same T4, bigger size: the kit's first idea says no
    assert best["estimated_monthly_savings_usd"] == 438.0
    assert best["projected_gpu_utilisation"] == 0.25


@pytest.mark.parametrize(("code", "reason"), [
    ("OptInRequiredException", "the account has not opted in to Compute Optimizer"),
    ("AccessDeniedException", "not allowed to read Compute Optimizer"),
    ("ServiceUnavailableException", "Compute Optimizer unavailable (ServiceUnavailable"),
])
def test_compute_optimizer_errors_turn_it_off(code: str, reason: str) -> None:
    co = _client("compute-optimizer")
    with Stubber(co) as stub:
        stub.add_client_error("get_auto_scaling_group_recommendations", code, "nope")
        view = read_recommendations(_clients(compute_optimizer=co), [_pool("x")],
                                    load_catalog())
    assert view.status == "off" and reason in view.reason and not view.by_pool

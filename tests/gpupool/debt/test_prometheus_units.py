"""The Prometheus reader's parts without a Prometheus: the arithmetic of one node's bucket, the
shares of time slices and MIG instances, the query count, and where pools come from."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from gpupool.debt.prometheus.attribution import node_bucket, usable_devices
from gpupool.debt.prometheus.queries import (
    MAX_POINTS,
    expected_queries,
    instant_queries,
    range_queries,
    spans,
)
from gpupool.debt.prometheus.series import DeviceReading
from gpupool.debt.prometheus.slots import profile_share, share
from gpupool.debt.prometheus.sources import PoolHints, make_sources, parse_flag
from gpupool.debt.window import Window
from gpupool.errors import InputError

A, B, C = ("ns", "a"), ("ns", "b"), ("ns", "c")


def dev(uuid: str, value: float | None, *holders: tuple[str, str], instance: str = "",
        profile: str = "", model: str = "NVIDIA L40S", engine: bool = False) -> DeviceReading:
    d = DeviceReading("n1", uuid, "0", instance, profile, model)
    if value is not None:
        (d.engine if engine else d.util)[0] = value
        if holders:
            d.holders[0] = set(holders)
    return d


def uses(nb):  # type: ignore[no-untyped-def]
    return {p.pod: (p.allocated, p.used, p.state) for p in nb.pods}


def test_a_shared_gpu_is_split_by_request_and_never_over_100_percent() -> None:
    # three quarter-slices of one GPU at 90 %: 0.3 each by request, capped at 0.25
    nb = node_bucket(0, 2.0, {A: 0.25, B: 0.25, C: 0.25}, [dev("g0", 0.9, A, B, C)])
    assert uses(nb) == {A: (0.25, 0.25, "measured"), B: (0.25, 0.25, "measured"),
                        C: (0.25, 0.25, "measured")}
    assert nb.shared_devices == 1
    # split in proportion: a holds a half, b a quarter of a GPU at 60 %
    nb = node_bucket(0, 1.0, {A: 0.5, B: 0.25}, [dev("g0", 0.6, A, B)])
    assert uses(nb)[A] == pytest.approx((0.5, 0.4, "measured"))
    assert uses(nb)[B] == pytest.approx((0.25, 0.2, "measured"))


def test_pods_on_unlabelled_gpus_are_unattributed_not_given_to_anyone() -> None:
    nb = node_bucket(0, 3.0, {A: 1, B: 1, C: 1},
                     [dev("g0", 0.5, A), dev("g1", 0.3), dev("g2", 0.4)])
    assert uses(nb) == {A: (1, 0.5, "measured"), B: (1, None, "unattributed"),
                        C: (1, None, "unattributed")}
    assert nb.unattributed_used == pytest.approx(0.7)
    # an unlabelled idle GPU next to a labelled pod: no orphan, nothing unattributed
    nb = node_bucket(0, 2.0, {A: 1}, [dev("g0", 0.5, A), dev("g1", 0.0)])
    assert uses(nb) == {A: (1, 0.5, "measured")} and nb.unattributed_used == 0
    # unattributed use never exceeds the unattributed allocation
    nb = node_bucket(0, 2.0, {B: 0.25}, [dev("g0", 0.9), dev("g1", 0.8)])
    assert nb.unattributed_used == 0.25


def test_a_node_without_readings_is_unmeasured_never_idle() -> None:
    nb = node_bucket(0, 2.0, {A: 1, B: 1}, [dev("g0", None), dev("g1", None)])
    assert not nb.measured
    assert uses(nb) == {A: (1, None, "unmeasured"), B: (1, None, "unmeasured")}
    nb = node_bucket(0, 2.0, {A: 2}, [])
    assert uses(nb) == {A: (2, None, "unmeasured")}


def test_mig_instances_weigh_their_share_and_their_parent_is_not_counted_twice() -> None:
    a100 = "NVIDIA A100-SXM4-40GB"
    parent = dev("g0", 0.0, model=a100)
    i1 = dev("g0", 0.5, A, instance="1", profile="3g.20gb", model=a100, engine=True)
    i2 = dev("g0", 0.25, B, instance="2", profile="2g.10gb", model=a100, engine=True)
    devices = usable_devices([parent, i1, i2])
    assert parent not in devices and len(devices) == 2
    nb = node_bucket(0, 1.0, {A: 3 / 7, B: 2 / 7}, devices)
    assert uses(nb)[A] == pytest.approx((3 / 7, 1.5 / 7, "measured"))
    assert uses(nb)[B] == pytest.approx((2 / 7, 0.5 / 7, "measured"))


def test_the_engine_reading_wins_over_gpu_util() -> None:
    d = dev("g0", 0.3, A)
    d.engine[0] = 0.2
    assert d.value(0) == 0.2


@pytest.mark.parametrize(("resource", "labels", "model", "replicas", "expected"), [
    ("nvidia_com_gpu", {}, "NVIDIA L40S", None, 1.0),
    ("nvidia_com_gpu", {"nvidia_com_gpu_replicas": "4"}, "NVIDIA L40S", None, 0.25),
    ("nvidia_com_gpu", {}, "NVIDIA L40S", 4, 0.25),  # the stack's timeSlicingReplicas
    ("nvidia_com_gpu_shared", {"nvidia_com_gpu_replicas": "8"}, "T4", None, 0.125),
    ("nvidia_com_mig_3g_20gb", {}, "NVIDIA A100-SXM4-40GB", None, 3 / 7),
    ("nvidia_com_mig_1g_6gb", {}, "NVIDIA A30", None, 1 / 4),
    ("nvidia_com_gpu", {"nvidia_com_gpu_product": "A100-SXM4-40GB-MIG-1g.5gb"},
     "NVIDIA A100-SXM4-40GB", None, 1 / 7),  # the single strategy
])
def test_shares_of_a_gpu(resource: str, labels: dict[str, str], model: str,
                         replicas: int | None, expected: float) -> None:
    assert share(resource, labels, model, replicas) == pytest.approx(expected)


def test_profile_shares() -> None:
    assert profile_share("", "x") == 1
    assert profile_share("1g.10gb+me", "NVIDIA H100 80GB HBM3") == pytest.approx(1 / 7)
    assert profile_share("1c.3g.20gb", "NVIDIA A100") == pytest.approx(1 / 7)


def test_the_number_of_queries_does_not_grow_with_pods() -> None:
    """Four range queries per 11,000 buckets and two instant ones, whatever the cluster: a week
    at hourly buckets is 6 queries for 10 pods or 10,000 (pods are series, not queries)."""
    start = datetime(2026, 11, 23, tzinfo=UTC)
    week = Window(start, start + timedelta(days=7), 3600)
    assert expected_queries(week) == 6 == len(range_queries(3600, 60)) * len(
        spans(week, 60)) + len(instant_queries(7 * 86400, 60))
    month_by_minute = Window(start, start + timedelta(days=30), 60)  # 43,200 buckets
    assert len(spans(month_by_minute, 60)) == 4 and expected_queries(month_by_minute) == 18
    assert all(s.step_s == 60 for s in spans(month_by_minute, 60))
    assert sum(min(MAX_POINTS, 43_200 - s.first_bucket) for s in spans(month_by_minute, 60)
               ) == 43_200


def test_range_points_stand_at_their_buckets_end_minus_one_step() -> None:
    start = datetime(2026, 11, 23, tzinfo=UTC)
    (span,) = spans(Window(start, start + timedelta(hours=3), 3600), 900)
    assert (span.start, span.end) == (start + timedelta(minutes=45),
                                      start + timedelta(hours=2, minutes=45))
    capacity = range_queries(3600, 900)[0].expr
    assert "[3150000ms:900s]" in capacity and capacity.endswith("/ 4")


def test_sources_from_flags_and_the_stack() -> None:
    assert parse_flag("http://prom:9090/") == (None, "http://prom:9090")
    assert parse_flag("onprem=https://p.example.com") == ("onprem", "https://p.example.com")
    hints = [(PoolHints("onprem"), "http://prometheus-operated.monitoring.svc:9090"),
             (PoolHints("edge"), "http://prometheus-operated.monitoring.svc:9090")]
    (shared,) = make_sources([], hints)  # one URL, read once, for both pools
    assert set(shared.hints) == {"onprem", "edge"}
    assert shared.pool == "prometheus-operated.monitoring.svc:9090"
    a, b = make_sources(["onprem=http://127.0.0.1:9090"], hints)
    assert (a.url, a.pool, b.pool) == ("http://127.0.0.1:9090", "onprem", "edge")
    with pytest.raises(InputError, match="expected one of the stack's Kubernetes pools"):
        make_sources(["onprm=http://127.0.0.1:9090"], hints)
    for bad in ("prom:9090", "ftp://x", "http://x/?q=1", "=http://x"):
        with pytest.raises(InputError, match="--prometheus"):
            make_sources([bad])

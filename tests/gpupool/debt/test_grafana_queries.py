"""The Grafana dashboard's queries (gpupool render's ConfigMap) against the real Prometheus of
the week-long messy cluster (prom_history): they parse, and they give the figures its
docstring computes by hand, the ones ``gpupool debt`` reports for the same instants."""

from __future__ import annotations

import json
import urllib.parse
import urllib.request
from typing import Any

import pytest

from gpupool.k8s.grafana.dashboard import dashboard, queries

# (pool, hour of the week: a multiple of 6, when the labels are sampled) → figures in GPUs
EXPECTED = {
    ("eks-gpu", 0): {"capacity": 1, "allocated": 1, "used": 0.2},  # GR_ENGINE_ACTIVE 0.2
    ("eks-gpu", 90): {"capacity": 2, "allocated": 2, "used": 0.7},  # + notebook-0 at 50 %
    # the time-sliced node advertises 8 slices of its 2 GPUs: the dashboard counts what the
    # nodes advertise (gpupool debt counts the physical GPUs)
    ("onprem", 90): {"capacity": 16, "allocated": 11, "used": 2.5},
    ("lab", 90): {"capacity": 2, "allocated": 2, "used": 0.75},  # MIG: 0.5 + 0.25, 1.5 left out
}
TEAMS = {("onprem", 90): {"allocated": {"ml-platform": 4, "research": 7},
                          # onprem-3's pods are unlabelled by the exporter: nobody's
                          "used": {"ml-platform": 0.6, "research": 1.1}},
         ("eks-gpu", 90): {"allocated": {"research": 1}, "used": {"research": 0.2}}}


def instant(url: str, expr: str, when: int) -> list[dict[str, Any]]:
    query = urllib.parse.urlencode({"query": expr, "time": when})
    with urllib.request.urlopen(f"{url}/api/v1/query?{query}", timeout=30) as response:
        body = json.load(response)
    assert body["status"] == "success", body
    return body["data"]["result"]


@pytest.mark.parametrize(("pool", "hour"), sorted(EXPECTED))
def test_the_picture_is_the_clusters(prometheus: Any, pool: str, hour: int) -> None:
    when = int(prometheus.start.timestamp()) + hour * 3600
    q = queries({"gpupool.io/pool": pool})
    for key, want in EXPECTED[(pool, hour)].items():
        (series,) = instant(prometheus.url, q[key], when)
        assert float(series["value"][1]) == pytest.approx(want), (pool, key)


@pytest.mark.parametrize(("pool", "hour"), sorted(TEAMS))
def test_per_team(prometheus: Any, pool: str, hour: int) -> None:
    when = int(prometheus.start.timestamp()) + hour * 3600
    q = queries({"gpupool.io/pool": pool})
    for key, want in TEAMS[(pool, hour)].items():
        got = {s["metric"].get("team"): float(s["value"][1])
               for s in instant(prometheus.url, q[f"team_{key}"], when)}
        assert {t: v for t, v in got.items() if t} == pytest.approx(want), (pool, key)


def test_every_panel_query_runs(prometheus: Any) -> None:
    """Each target as Grafana sends it ($__range, $__interval filled in) parses and answers."""
    when = int(prometheus.start.timestamp()) + 162 * 3600  # a sample of the labels
    board = dashboard("onprem", {"gpupool.io/pool": "onprem"})
    for panel in board["panels"]:
        for target in panel["targets"]:
            expr = (target["expr"].replace("$__range", "1d").replace("$__interval_s", "3600")
                    .replace("$__interval", "1h"))
            result = instant(prometheus.url, expr, when)
            assert result, (panel["title"], expr)

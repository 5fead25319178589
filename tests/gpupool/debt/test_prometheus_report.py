# ruff: noqa: RUF002, RUF003  (× as users read it)
"""``gpupool debt --prometheus`` against a real Prometheus holding a week of a messy cluster.

The history is prom_history's (read its docstring for the cluster, hour by hour); every figure
below is computed by hand from it: 168 hourly buckets, GPU-hours = GPUs × hours. The report is
run once per module through the CLI (``--resolution 1800``: the history's samples are 30 min
apart) and each test reads its part.
"""

from __future__ import annotations

import csv
import io
import json
from pathlib import Path
from typing import Any

import pytest

from gpupool.cli import main
from gpupool.debt.window import iso

ROOT = Path(__file__).resolve().parents[3]
G6 = 0.8048  # g6.xlarge, us-east-1, per GPU-hour (one L4)


def _run(server: Any, tmp: Path, *args: str, fmt: str = "json") -> Any:
    out = tmp / f"report-{abs(hash(args))}.{fmt}"
    code = main(["debt", "--no-aws", "--start", iso(server.start), "--end", iso(server.end),
                 "--period", "3600", "--resolution", "1800", "--format", fmt,
                 "--output", str(out), *args])
    assert code == 0
    return json.loads(out.read_text()) if fmt == "json" else out.read_text()


@pytest.fixture(scope="module")
def report(prometheus: Any, tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    return _run(prometheus, tmp_path_factory.mktemp("report"), "--prometheus", prometheus.url)


@pytest.fixture(scope="module")
def prod(prometheus: Any, tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    """The prod stack's Kubernetes pool, its Prometheus address overridden with the fixture's."""
    return _run(prometheus, tmp_path_factory.mktemp("prod"), "--stack",
                str(ROOT / "stacks" / "Pulumi.prod.yaml"), "--prometheus",
                f"onprem={prometheus.url}")


def pools(d: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {p["pool"]: p for p in d["pools"]}


def pods(d: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {f"{p['namespace']}/{p['pod']}": p for p in d["pods"]}


def lines(d: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {f"{n['pool']}/{n['namespace']}": n for n in d["namespaces"]}


def figures(row: dict[str, Any], *keys: str) -> tuple[Any, ...]:
    return tuple(row[k] for k in keys)


ALLOC = ("allocated_gpu_hours", "used_gpu_hours", "debt_gpu_hours", "utilisation")


def test_time_sliced_gpus_are_split_and_never_over_100_percent(report: dict[str, Any]) -> None:
    """GPU 0 of onprem-2 at 90 %, held by three quarter-slices: 0.3 GPU each by request, but a
    slice is a quarter of a GPU, so each used all of its 42 GPU-hours and no more."""
    p = pods(report)
    for t in range(3):
        assert figures(p[f"gpu-research/tune-{t}"], *ALLOC) == (42.0, 42.0, 0.0, 1.0)
    assert figures(p["gpu-research/tune-3"], *ALLOC) == (42.0, 33.6, 8.4, 0.8)
    shared = [f for f in report["findings"] if f["finding"] == "shared-gpus"]
    assert shared and shared[0]["pool"] == "onprem"


def test_mig_instances_count_their_share_of_the_gpu(report: dict[str, Any]) -> None:
    """3g.20gb + 2 × 2g.10gb of one A100: 7/7 of a GPU of capacity; infer-0 holds 3/7 at 0.5,
    infer-1 2/7 at 0.25; the MIG GPU's own parent series is not counted again."""
    lab = pools(report)["lab"]
    assert figures(lab, "platform", "capacity_gpu_hours", *ALLOC, "idle_gpu_hours") == (
        "on-prem", 168.0, 120.0, 48.0, 72.0, 0.4, 48.0)
    p = pods(report)
    assert figures(p["vision/infer-0"], *ALLOC) == (72.0, 36.0, 36.0, 0.5)
    assert figures(p["vision/infer-1"], *ALLOC) == (48.0, 12.0, 36.0, 0.25)


def test_pods_the_exporter_did_not_label_are_unattributed_named_and_kept(
        report: dict[str, Any]) -> None:
    """onprem-3's GPUs (50 % and 30 %) carry no pod: their 2 × 168 GPU-hours and 134.4 used go
    to the pool's (unattributed) line, naming both pods, never to their namespaces."""
    un = lines(report)["onprem/(unattributed)"]
    assert figures(un, "team", *ALLOC) == ("(unattributed)", 336.0, 134.4, 201.6, 0.4)
    assert un["pod_names"] == ["gpu-ml-platform/batch-0", "gpu-research/train-0"]
    p = pods(report)
    for name in ("gpu-research/train-0", "gpu-ml-platform/batch-0"):
        assert figures(p[name], "status", "allocated_gpu_hours", "used_gpu_hours",
                       "unattributed_gpu_hours") == ("unattributed", 168.0, None, 168.0)
    research = lines(report)["onprem/gpu-research"]  # tune-0..3 and eval-0, not train-0
    assert research["allocated_gpu_hours"] == 168.0 + 336.0
    teams = {t["team"]: t for t in report["teams"]}
    assert teams["(unattributed)"]["allocated_gpu_hours"] == 336.0
    assert pools(report)["onprem"]["unattributed_gpu_hours"] == 336.0


def test_exporter_gaps_are_partial(report: dict[str, Any]) -> None:
    """onprem-4's exporter was down for hours 24-47: 24 GPU-hours of embeddings-2 unmeasured,
    its use (40 %) counted over the 144 measured hours."""
    e = pods(report)["gpu-ml-platform/embeddings-2"]
    assert figures(e, "status", "allocated_gpu_hours", "unmeasured_gpu_hours",
                   "used_gpu_hours", "debt_gpu_hours", "utilisation") == (
        "partial", 168.0, 24.0, 57.6, 86.4, 0.4)
    (gap,) = [f for f in report["findings"] if f["finding"] == "partly-measured"]
    assert "onprem-4: 24.0 allocated GPU-hours have no reading" in gap["message"]


def test_gpu_nodes_without_an_exporter_are_not_measured(report: dict[str, Any]) -> None:
    """onprem-5 and the whole dark pool have no exporter: allocation known, use unknown,
    never zero; the findings name the nodes."""
    assert figures(pods(report)["gpu-research/eval-0"], "status", "allocated_gpu_hours",
                   "unmeasured_gpu_hours", "used_gpu_hours") == ("not measured", 336.0, 336.0,
                                                                 None)
    dark = pools(report)["dark"]
    assert figures(dark, "platform", "instance_type", "status", "allocated_gpu_hours",
                   "used_gpu_hours", "debt_gpu_hours", "utilisation", "debt_usd") == (
        "kubernetes", "g5.xlarge", "not measured", 168.0, None, None, None, None)
    named = {f["pool"]: f["message"] for f in report["findings"] if f["finding"] == "not-measured"}
    assert "node(s) onprem-5 while 336.0 GPU-hours" in named["onprem"]
    assert "node(s) dark-1 while 168.0" in named["dark"]


def test_the_onprem_pool_to_the_gpu_hour(report: dict[str, Any]) -> None:
    """1,680 GPU-hours of capacity (5 nodes × 2 L40S, onprem-2's 8 slices being 2 GPUs);
    1,344 allocated (the finished Job's pod left out); 984 measured, 385.2 used."""
    o = pools(report)["onprem"]
    assert figures(o, "platform", "gpu_model", "gpus_per_instance", "status",
                   "capacity_gpu_hours", "allocated_gpu_hours", "used_gpu_hours",
                   "debt_gpu_hours", "idle_gpu_hours", "unmeasured_gpu_hours") == (
        "on-prem", "NVIDIA L40S", 2.0, "partial", 1680.0, 1344.0, 385.2, 598.8, 336.0, 360.0)
    assert o["utilisation"] == round(385.2 / 984, 4)
    assert "gpu-research/job-done-0" not in pods(report)  # Succeeded: requests, no allocation
    assert figures(lines(report)["onprem/gpu-ml-platform"], *ALLOC) == (
        504.0, 91.2, 388.8, 0.19)


def test_engine_activity_wins_and_nodes_count_for_the_time_they_ran(
        report: dict[str, Any]) -> None:
    """eks-gpu: infer-l4-0 at GPU_UTIL 30 % but GR_ENGINE_ACTIVE 0.2 counts 0.2; ip-10-0-1-2
    came at 83:30 (half of that hour's capacity), its pod at 84; priced as g6.xlarge."""
    e = pools(report)["eks-gpu"]
    assert figures(e, "platform", "instance_type", "capacity_gpu_hours", "allocated_gpu_hours",
                   "used_gpu_hours", "idle_gpu_hours", "gpu_limit") == (
        "kubernetes", "g6.xlarge", 252.5, 252.0, 75.6, 0.5, 4.0)
    assert e["debt_usd"] == round((252.0 - 75.6) * G6, 2)
    assert figures(pods(report)["gpu-research/infer-l4-0"], "used_gpu_hours") == (33.6,)


def test_impossible_readings_and_unknown_exporter_hosts_are_findings(
        report: dict[str, Any]) -> None:
    assert pools(report)["lab"]["impossible_readings"] == 1
    kinds = {(f["finding"], f["pool"]) for f in report["findings"]}
    assert ("impossible-reading", "lab") in kinds
    (host,) = [f["message"] for f in report["findings"]
               if f["finding"] == "unknown-exporter-host"]
    assert "dcgm-exporter-x7k2p match no Kubernetes node" in host


def test_kube_state_metrics_own_sample_is_read(report: dict[str, Any]) -> None:
    """pod0 of kube-state-metrics' server test, its lines as they are: 1 GPU on node1."""
    p = pods(report)["default/pod0"]
    assert figures(p, "pool", "node", "allocated_gpu_hours", "status") == (
        "sample", "node1", 168.0, "not measured")


def test_a_bounded_number_of_queries(report: dict[str, Any]) -> None:
    (source,) = report["prometheus"]
    assert (source["queries"], source["expected_queries"], source["retries"]) == (6, 6, 0)
    assert (source["nodes"], source["pods"]) == (10, 16)
    assert report["prometheus_queries"] == 6 and report["api_calls"] == 0


def test_the_stack_config_brings_owner_price_quota_and_autoscalers(
        prod: dict[str, Any]) -> None:
    o = pools(prod)["onprem"]
    assert figures(o, "team", "cost_center", "price_per_gpu_hour", "debt_usd") == (
        "ml-platform", "cc-ml-1042", 0.0, 0.0)  # gpuHourlyCost: 0, owned hardware
    ns = lines(prod)
    assert ns["onprem/gpu-ml-platform"]["gpu_quota"] == 8.0
    assert prod["autoscalers"] == [{"pool": "onprem", "namespace": "gpu-ml-platform",
                                    "kind": "ScaledObject", "name": "embeddings",
                                    "max_replicas": 6.0}]
    fewer = [f["message"] for f in prod["findings"] if f["finding"] == "fewer-gpus"]
    assert fewer == ["the stack config says the pool has 16 GPUs; its nodes offered at most 10 "
                     "in the window"]
    teams = {t["team"]: t for t in prod["teams"]}
    assert teams["ml-platform"]["capacity_gpu_hours"] == 1680.0  # the owner's nodes


def test_csv_text_and_chart_carry_kubernetes_pools(prometheus: Any, tmp_path: Path) -> None:
    rows = list(csv.DictReader(io.StringIO(_run(prometheus, tmp_path, "--prometheus",
                                                prometheus.url, fmt="csv"))))
    assert {r["pool"]: r["platform"] for r in rows}["onprem"] == "on-prem"
    text = _run(prometheus, tmp_path, "--prometheus", prometheus.url, "--chart",
                str(tmp_path / "debt.svg"), fmt="text")
    assert "onprem/(unattributed)" in text.replace("\n", "").replace("│", "").replace(" ", "") \
        or "(unattributed)" in text
    assert "6 Prometheus queries to " in text
    assert (tmp_path / "debt.svg").read_text().startswith("<?xml")


def test_by_team_adds_aws_pools_and_kubernetes_namespaces(
        prometheus: Any, moto: str, capsys: pytest.CaptureFixture[str]) -> None:
    """The week's last six hours, with an AWS pool of team research beside the cluster: the
    research row adds the autoscaling group (2 × g4dn.xlarge at 50 %: 12 allocated, 6 used)
    and its namespaces in two Kubernetes pools (onprem: its time slices, 6 allocated, 5.7
    used, and eval-0's 12 unmeasured; eks-gpu: 6 allocated, 1.2 used)."""
    import boto3
    from debt_fleet import PoolSpec, build_fleet

    from gpupool.debt.window import Window

    window = Window(prometheus.end - (prometheus.end - prometheus.start) / 28, prometheus.end,
                    3600)
    assert window.buckets == 6
    build_fleet(boto3.session.Session(), [PoolSpec("research-asg", "g4dn.xlarge", "research",
                                                   in_service=[2] * 6, utilisation=[50] * 6)],
                window)
    code = main(["debt", "--prometheus", prometheus.url, "--start", iso(window.start), "--end",
                 iso(window.end), "--period", "3600", "--resolution", "1800", "--by", "team",
                 "--format", "json"])
    out = "".join(line for line in capsys.readouterr().out.splitlines()
                  if not line.startswith("Unable to find"))
    assert code == 0
    d = json.loads(out)
    assert {p["pool"]: p["platform"] for p in d["pools"]}["research-asg"] == "aws"
    research = {t["team"]: t for t in d["teams"]}["research"]
    assert figures(research, "pools", "allocated_gpu_hours", "used_gpu_hours",
                   "unmeasured_gpu_hours", "debt_gpu_hours") == (3, 36.0, 12.9, 12.0, 11.1)
    assert research["pool_names"] == ["eks-gpu", "onprem", "research-asg"]
    assert research["namespaces"] == ["eks-gpu/gpu-research", "onprem/gpu-research"]
    assert d["api_calls"] >= 3 and d["prometheus_queries"] == 6


def test_the_snapshot_gives_back_every_pod_and_label_of_the_messy_cluster(
        report: dict[str, Any], prometheus: Any) -> None:
    """The JSON document (format 3) read back by rightsize --utilisation: each pod of this
    cluster (time-sliced, MIG, unattributed, gaps, a Karpenter node from hour 83) with its
    timeline, and each namespace's labels, exactly as a live read of the same Prometheus."""
    from gpupool.catalog import load_catalog
    from gpupool.debt.deadline import Deadline, parse_deadline
    from gpupool.debt.prometheus.auth import make_auth
    from gpupool.debt.prometheus.read import read_sources
    from gpupool.debt.prometheus.sources import make_sources
    from gpupool.debt.window import resolve_window
    from gpupool.rightsize.snapshot import parse_saved

    window = resolve_window(since=None, start=iso(prometheus.start), end=iso(prometheus.end),
                            period=3600, cloudwatch=False)
    live = read_sources(make_sources([prometheus.url]), window, load_catalog(), make_auth(
        environ={}), Deadline(parse_deadline("900")), 1800).pools
    back = parse_saved(report, "debt.json")
    assert report["version"] == 3 and back.left_alone == []
    assert [f.name for f in back.kubernetes] == [f.name for f in live]
    for f, g in zip(live, back.kubernetes, strict=True):
        assert g.pods == f.pods, f.name  # every figure and bucket, unrounded
        assert g.namespace_labels == f.namespace_labels, f.name
    statuses = {p.status for f in back.kubernetes for p in f.pods}
    assert {"measured", "partial", "not measured", "unattributed"} <= statuses  # not vacuous
    trimmed = [p for s in report["pool_series"] for p in s.get("pods", ())
               if p["first_bucket"] > 0]
    assert trimmed  # the notebook pod, from hour 84: only its buckets are written

# ruff: noqa: RUF001, RUF003  (× is the multiplication sign readers see in the tables)
"""``gpupool debt``: API calls and wall time, batched GetMetricData against one call per series.

One moto server on 127.0.0.1 (real HTTP, boto3 through ``AWS_ENDPOINT_URL``), and for each size
N (default 10, 100, 1,000 pools): a fresh fleet of N GPU autoscaling groups (one shared launch
template, instance overrides, team tags) and their four series (GroupInServiceInstances,
GroupMaxSize, nvidia_smi_utilization_gpu, nvidia_smi_utilization_memory) over a two-hour
window, written with PutMetricData (moto emits no group or agent metrics). Then, side by side
in the same run, rounds interleaved:

- **batched**: the report as ``gpupool debt`` reads it (discovery, GetMetricData with up to 500
  queries a call, NextToken followed);
- **naive**: the same discovery, then GetMetricStatistics once per series, the way a script
  that loops over groups and metrics reads them.

Both compute the figures from what they read, and the run checks they are equal. API calls are
counted with a botocore ``before-call`` hook on the session. Wall time includes moto's own work,
which dominates at 1,000 pools (its GetMetricData scans every datapoint per query and period);
read the call counts as the property of the code, the seconds as this machine's.

    .venv/bin/python bench/debt_bench.py                   # 10, 100, 1000 pools
    .venv/bin/python bench/debt_bench.py --sizes 10,100 --rounds 3
    .venv/bin/python bench/debt_bench.py --fleet 20x3x50   # accounts x regions x pools

``--fleet AxRxP``: every account and region (``gpupool debt --accounts all --regions LIST``).
A moto server in its own process (so that its CPU is not the reader's GIL), an Organization of
A accounts (the caller's and A - 1 members, reached by sts AssumeRole: moto keeps each
account's state apart), P pools in each of R regions of each; then the same report read with
``--concurrency 8`` and ``--concurrency 1``, rounds interleaved: calls (the budget per
account-region checked) and wall time side by side. The section it writes replaces only its own
part of bench/results/debt.md.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time
import urllib.request
from collections import Counter
from collections.abc import Callable, Sequence
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(HERE))
from run import machine  # noqa: E402  (bench/run.py: the machine line every result carries)

WINDOW_HOURS = 2
GOAL = 100  # fewer calls at 1,000 pools, at least


def reset(endpoint: str) -> None:
    req = urllib.request.Request(f"{endpoint}/moto-api/reset", method="POST")
    with urllib.request.urlopen(req, timeout=30):
        pass


def build(session: Any, pools: int, window: Any, region: str = "us-east-1") -> None:
    """N groups sharing one launch template; four series each, one datapoint per hour."""
    ec2 = session.client("ec2", region_name=region)
    asg = session.client("autoscaling", region_name=region)
    cw = session.client("cloudwatch", region_name=region)
    subnet = ec2.describe_subnets()["Subnets"][0]["SubnetId"]
    ec2.create_launch_template(LaunchTemplateName="gpu", LaunchTemplateData={
        "ImageId": "ami-12c6146b", "InstanceType": "g4dn.xlarge"})
    datums: dict[str, list[dict[str, Any]]] = {"AWS/AutoScaling": [], "CWAgent": []}
    for i in range(pools):
        name = f"pool-{i:04d}"
        asg.create_auto_scaling_group(
            AutoScalingGroupName=name, MinSize=0, MaxSize=8, DesiredCapacity=0,
            VPCZoneIdentifier=subnet,
            MixedInstancesPolicy={"LaunchTemplate": {
                "LaunchTemplateSpecification": {"LaunchTemplateName": "gpu",
                                                "Version": "$Latest"},
                "Overrides": [{"InstanceType": "g4dn.xlarge"}]}},
            Tags=[{"Key": "team", "Value": f"team-{i % 7}", "PropagateAtLaunch": True,
                   "ResourceId": name, "ResourceType": "auto-scaling-group"}])
        dims = [{"Name": "AutoScalingGroupName", "Value": name}]
        for h in range(WINDOW_HOURS):
            when = window.bucket_start(h) + timedelta(minutes=5)
            for ns, metric, value in (("AWS/AutoScaling", "GroupInServiceInstances", 1 + i % 4),
                                      ("AWS/AutoScaling", "GroupMaxSize", 8),
                                      ("CWAgent", "nvidia_smi_utilization_gpu", (i * 7) % 100),
                                      ("CWAgent", "nvidia_smi_utilization_memory", 30)):
                datums[ns].append({"MetricName": metric, "Dimensions": dims, "Timestamp": when,
                                   "Value": float(value)})
    for ns, items in datums.items():
        for j in range(0, len(items), 1000):
            cw.put_metric_data(Namespace=ns, MetricData=items[j:j + 1000])


class Calls:
    def __init__(self, session: Any) -> None:
        self.counter: Counter[str] = Counter()
        session.events.register("before-call", self.hook)

    def hook(self, model: Any, **_: Any) -> None:
        self.counter[model.name] += 1

    def snapshot(self) -> Counter[str]:
        return Counter(self.counter)


def batched(session: Any, window: Any) -> dict[str, Any]:
    from gpupool.catalog import load_catalog
    from gpupool.debt.aws import make_clients
    from gpupool.debt.report import build_report

    report = build_report(make_clients("us-east-1", session), window, load_catalog(),
                          compute_optimizer=False)
    return report.to_dict()["totals"]


def naive(session: Any, window: Any) -> dict[str, Any]:
    """Same discovery; then one GetMetricStatistics per pool and series."""
    from gpupool.catalog import load_catalog
    from gpupool.debt.aws import make_clients
    from gpupool.debt.discover import discover_pools
    from gpupool.debt.metrics import GROUP_DIMENSION, SERIES, Readings
    from gpupool.debt.optimizer import OptimizerView
    from gpupool.debt.report import assemble

    clients = make_clients("us-east-1", session)
    discovery = discover_pools(clients, load_catalog())
    readings = Readings()
    for p in discovery.pools:
        readings.series[p.name] = {}
        for spec in SERIES:
            resp = clients.cloudwatch.get_metric_statistics(
                Namespace=spec.namespace, MetricName=spec.metric,
                Dimensions=[{"Name": GROUP_DIMENSION, "Value": p.name}],
                StartTime=window.start, EndTime=window.end, Period=window.period_s,
                Statistics=[spec.stat])
            series: dict[int, float] = {}
            for dp in resp.get("Datapoints") or []:
                index = window.bucket_of(dp["Timestamp"])
                if index is not None:
                    series[index] = float(dp[spec.stat])
            readings.series[p.name][spec.key] = series
            readings.calls += 1
    report = assemble(discovery, readings, window, "us-east-1", OptimizerView())
    return report.to_dict()["totals"]


def measure(session: Any, calls: Calls, run: Callable[[Any, Any], dict[str, Any]],
            window: Any) -> tuple[float, Counter[str], dict[str, Any]]:
    before = calls.snapshot()
    t0 = time.perf_counter()
    totals = run(session, window)
    wall = time.perf_counter() - t0
    return wall, calls.snapshot() - before, totals


def main(argv: Sequence[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--sizes", default="10,100,1000")
    p.add_argument("--rounds", type=int, default=3,
                   help="rounds per size (interleaved); sizes ≥ 1000 run once")
    p.add_argument("--output", default=str(HERE / "results" / "debt.md"))
    p.add_argument("--fleet", metavar="AxRxP", help="accounts x regions x pools: the "
                   "multi-account bench instead (e.g. 20x3x50)")
    args = p.parse_args(argv)
    if args.fleet:
        from debt_fleet_bench import fleet_bench

        return fleet_bench(args.fleet, max(args.rounds, 1), Path(args.output), build)
    sizes = [int(s) for s in args.sizes.split(",") if s.strip()]

    import boto3
    from moto.server import ThreadedMotoServer

    from gpupool.debt.window import Window

    server = ThreadedMotoServer(ip_address="127.0.0.1", port=0, verbose=False)
    server.start()
    host, port = server.get_host_and_port()
    endpoint = f"http://{host}:{port}"
    os.environ.update(AWS_ENDPOINT_URL=endpoint, AWS_ACCESS_KEY_ID="bench",
                      AWS_SECRET_ACCESS_KEY="bench", AWS_DEFAULT_REGION="us-east-1")
    started = datetime.now(UTC)
    end = started.replace(minute=0, second=0, microsecond=0)
    window = Window(end - timedelta(hours=WINDOW_HOURS), end, 3600)
    rows: list[list[str]] = []
    goals: list[str] = []
    try:
        for n in sizes:
            reset(endpoint)
            session = boto3.session.Session()
            t0 = time.perf_counter()
            build(session, n, window)
            print(f"{n} pools built in {time.perf_counter() - t0:.1f} s", file=sys.stderr)
            calls = Calls(session)
            walls: dict[str, list[float]] = {"batched": [], "naive": []}
            counts: dict[str, Counter[str]] = {}
            totals: dict[str, dict[str, Any]] = {}
            for _ in range(1 if n >= 1000 else args.rounds):
                for name, fn in (("batched", batched), ("naive", naive)):
                    wall, used, tot = measure(session, calls, fn, window)
                    walls[name].append(wall)
                    counts[name], totals[name] = used, tot
            if totals["batched"] != totals["naive"]:
                raise SystemExit(f"{n} pools: the two reads disagree: {totals}")
            b, v = counts["batched"], counts["naive"]
            b_total, v_total = sum(b.values()), sum(v.values())
            b_wall, v_wall = statistics.median(walls["batched"]), statistics.median(
                walls["naive"])
            rows.append([
                f"{n:,}", f"{4 * n:,}",
                f"{b['GetMetricData']:,}", f"{v['GetMetricStatistics']:,}",
                f"{v['GetMetricStatistics'] / max(b['GetMetricData'], 1):,.0f}×",
                f"{b_total:,}", f"{v_total:,}", f"{v_total / b_total:,.0f}×",
                f"{b_wall:.2f}", f"{v_wall:.2f}", f"{v_wall / b_wall:.1f}×",
                f"{totals['batched']['allocated_gpu_hours']:,.0f} / "
                f"{totals['batched']['debt_gpu_hours']:,.1f}"])
            if n >= 1000:
                ratio = v_total / b_total
                goals.append(f"{n:,} pools: {ratio:,.0f}× fewer API calls in all "
                             f"({v['GetMetricStatistics'] / b['GetMetricData']:,.0f}× fewer "
                             f"metric reads); goal ≥ {GOAL}×: "
                             f"{'met' if ratio >= GOAL else 'NOT met'}")
    finally:
        server.stop()

    head = ["pools", "series", "GetMetricData", "GetMetricStatistics", "metric calls ratio",
            "all calls batched", "all calls naive", "all calls ratio", "batched s", "naive s",
            "wall ratio", "allocated / debt GPU-h (both)"]
    table = ["| " + " | ".join(head) + " |", "|" + "|".join("---" for _ in head) + "|",
             *("| " + " | ".join(r) + " |" for r in rows)]
    command = " ".join([Path(sys.executable).name, "bench/debt_bench.py", *sys.argv[1:]])
    text = "\n".join([
        "# gpupool debt: batched GetMetricData vs one GetMetricStatistics per series", "",
        f"- date: {started:%Y-%m-%d %H:%M} UTC", f"- machine: {machine()}",
        f"- command: `{command}`",
        f"- window: {WINDOW_HOURS} h at 3600 s periods; moto server "
        "(ThreadedMotoServer) on 127.0.0.1; rounds interleaved, medians "
        "(one round from 1,000 pools)", "",
        *table, "", *(f"- {g}" for g in goals), "",
        "All calls = discovery (DescribeAutoScalingGroups 100 a page, DescribePolicies) plus "
        "the metric reads. Both reads produced the same totals (checked by the run). Wall "
        "time is mostly moto's: its GetMetricData scans every stored datapoint per query and "
        "period, so seconds here say little about CloudWatch; the call counts are what "
        "CloudWatch bills and throttles.", ""])
    out = Path(args.output)
    out.parent.mkdir(parents=True, exist_ok=True)
    from debt_fleet_bench import MARKER

    kept = out.read_text().partition(MARKER) if out.exists() else ("", "", "")
    out.write_text(text + (kept[1] + kept[2] if kept[1] else ""))
    print(text)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

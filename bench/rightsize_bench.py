"""``gpupool rightsize`` on 1,000 pools: wall time and API calls, beside the debt read alone.

One moto server on 127.0.0.1 (real HTTP, boto3 through ``AWS_ENDPOINT_URL``); five generated
stacks (environments dev, staging, prod, sandbox, test) of 200 T4 pools each (minSize 2,
desiredCapacity 2, maxSize 8, target 60 %), every group tagged as the kit tags it
(environment, gpupool:pool, team, managed-by) with two hours of history: 2 instances in
service, utilisation 2-40 % by pool. Then, side by side in one run, rounds interleaved:

- **debt read**: the report as ``gpupool debt`` reads it (the reading rightsize starts with);
- **rightsize**: ``gpupool rightsize --write --pr-body`` in process: the same read, then the
  proposals, the round-trip edit, the validation of each edited stack and the PR text.

API calls are the report's own count (discovery plus GetMetricData). The run checks that every
pool got a proposal and that the stacks were written.

    .venv/bin/python bench/rightsize_bench.py            # 1,000 pools
    .venv/bin/python bench/rightsize_bench.py --pools 100 --rounds 3
"""

from __future__ import annotations

import argparse
import contextlib
import io
import os
import re
import shutil
import statistics
import sys
import tempfile
import time
import urllib.request
from collections.abc import Sequence
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(HERE))
from run import machine  # noqa: E402  (bench/run.py: the machine line every result carries)

ENVIRONMENTS = ("dev", "staging", "prod", "sandbox", "test")
WINDOW_HOURS = 2


def reset(endpoint: str) -> None:
    req = urllib.request.Request(f"{endpoint}/moto-api/reset", method="POST")
    with urllib.request.urlopen(req, timeout=30):
        pass


def stack_text(env: str, pools: int) -> str:
    lines = [f"# {env}: generated for the rightsize bench", "config:", "  aws:region: us-east-1",
             f"  gpupool:environment: {env}", "  gpupool:team: ml-platform",
             "  gpupool:costCenter: cc-ml-1042", "  gpupool:network:", "    createVpc: true",
             "    cidr: 10.64.0.0/16", "    azCount: 2", "  gpupool:pools:"]
    for i in range(pools):
        lines += [f"    - name: p{i:03d}   # pool {i}", "      gpu: T4", "      minSize: 2",
                  "      maxSize: 8", "      desiredCapacity: 2", "      spotShare: 0.5",
                  "      targetGpuUtilisation: 60"]
    return "\n".join(lines) + "\n"


def build(session: Any, per_stack: int, window: Any) -> None:
    ec2 = session.client("ec2", region_name="us-east-1")
    asg = session.client("autoscaling", region_name="us-east-1")
    cw = session.client("cloudwatch", region_name="us-east-1")
    subnet = ec2.describe_subnets()["Subnets"][0]["SubnetId"]
    ec2.create_launch_template(LaunchTemplateName="gpu", LaunchTemplateData={
        "ImageId": "ami-12c6146b", "InstanceType": "g4dn.xlarge"})
    datums: dict[str, list[dict[str, Any]]] = {"AWS/AutoScaling": [], "CWAgent": []}
    for e, env in enumerate(ENVIRONMENTS):
        for i in range(per_stack):
            name = f"{env}-p{i:03d}"
            tags = {"environment": env, "gpupool:pool": f"p{i:03d}", "team": "ml-platform",
                    "managed-by": "gpupool"}
            asg.create_auto_scaling_group(
                AutoScalingGroupName=name, MinSize=2, MaxSize=8, DesiredCapacity=2,
                VPCZoneIdentifier=subnet,
                MixedInstancesPolicy={"LaunchTemplate": {
                    "LaunchTemplateSpecification": {"LaunchTemplateName": "gpu",
                                                    "Version": "$Latest"},
                    "Overrides": [{"InstanceType": "g4dn.xlarge"}]}},
                Tags=[{"Key": k, "Value": v, "PropagateAtLaunch": True, "ResourceId": name,
                       "ResourceType": "auto-scaling-group"} for k, v in tags.items()])
            dims = [{"Name": "AutoScalingGroupName", "Value": name}]
            util = 2 + (e * per_stack + i) % 39
            for h in range(WINDOW_HOURS):
                when = window.bucket_start(h) + timedelta(minutes=5)
                for ns, metric, value in (("AWS/AutoScaling", "GroupInServiceInstances", 2),
                                          ("AWS/AutoScaling", "GroupMaxSize", 8),
                                          ("CWAgent", "nvidia_smi_utilization_gpu", util),
                                          ("CWAgent", "nvidia_smi_utilization_memory", 30)):
                    datums[ns].append({"MetricName": metric, "Dimensions": dims,
                                       "Timestamp": when, "Value": float(value)})
    for ns, items in datums.items():
        for j in range(0, len(items), 1000):
            cw.put_metric_data(Namespace=ns, MetricData=items[j:j + 1000])


def debt_read(window: Any) -> tuple[float, int]:
    from gpupool.catalog import load_catalog
    from gpupool.debt.aws import make_clients
    from gpupool.debt.report import build_report

    t0 = time.perf_counter()
    report = build_report(make_clients("us-east-1"), window, load_catalog(region="us-east-1"),
                          compute_optimizer=False)
    return time.perf_counter() - t0, report.api_calls


def rightsize(project: Path, window: Any) -> tuple[float, int, str]:
    from gpupool.cli import main
    from gpupool.debt.window import iso

    err = io.StringIO()
    cwd = os.getcwd()
    os.chdir(project)
    try:
        t0 = time.perf_counter()
        with contextlib.redirect_stderr(err), contextlib.redirect_stdout(io.StringIO()):
            code = main(["rightsize", "--start", iso(window.start), "--end", iso(window.end),
                         "--period", "3600", "--min-span", f"{WINDOW_HOURS}h", "--write",
                         "--pr-body", str(project / "pr.md")])
        wall = time.perf_counter() - t0
    finally:
        os.chdir(cwd)
    if code != 0:
        raise SystemExit(f"rightsize exited {code}: {err.getvalue()[-2000:]}")
    m = re.search(r"(\d+) pool\(s\) changed in (\d+) stack file\(s\); (\d+) API call",
                  err.getvalue())
    assert m, err.getvalue()[-500:]
    return wall, int(m.group(3)), m.group(0)


def main(argv: Sequence[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--pools", type=int, default=1000, help="in all (five stacks share them)")
    p.add_argument("--rounds", type=int, default=1)
    p.add_argument("--output", default=str(HERE / "results" / "rightsize.md"))
    args = p.parse_args(argv)
    per_stack = args.pools // len(ENVIRONMENTS)
    n = per_stack * len(ENVIRONMENTS)

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
    head = machine()
    tmp = Path(tempfile.mkdtemp(prefix="rightsize-bench-"))
    try:
        reset(endpoint)
        t0 = time.perf_counter()
        build(boto3.session.Session(), per_stack, window)
        print(f"{n} pools built in {time.perf_counter() - t0:.1f} s", file=sys.stderr)
        walls: dict[str, list[float]] = {"debt": [], "rightsize": []}
        calls: dict[str, int] = {}
        summary = ""
        for _ in range(args.rounds):
            wall, calls["debt"] = debt_read(window)
            walls["debt"].append(wall)
            project = tmp / f"round-{len(walls['rightsize'])}"
            (project / "stacks").mkdir(parents=True)
            shutil.copy(ROOT / "Pulumi.yaml", project / "Pulumi.yaml")  # stackConfigDir: stacks
            for env in ENVIRONMENTS:
                (project / "stacks" / f"Pulumi.{env}.yaml").write_text(stack_text(env, per_stack))
            wall, calls["rightsize"], summary = rightsize(project, window)
            walls["rightsize"].append(wall)
            if not summary.startswith(f"{n} pool(s) changed in {len(ENVIRONMENTS)} stack"):
                raise SystemExit(f"expected every pool changed: {summary}")
        d, r = statistics.median(walls["debt"]), statistics.median(walls["rightsize"])
        text = "\n".join([
            f"# gpupool rightsize: {n:,} pools, beside the debt read it starts with", "",
            f"- date: {started:%Y-%m-%d %H:%M} UTC", f"- machine: {head}",
            "- command: `python bench/rightsize_bench.py`",
            f"- {n:,} pools in {len(ENVIRONMENTS)} stacks of {per_stack}; window "
            f"{WINDOW_HOURS} h at 3600 s; moto server on 127.0.0.1; medians of "
            f"{args.rounds} round(s), interleaved", "",
            "| pools | debt read s | rightsize s | ratio | API calls (debt) | API calls "
            "(rightsize) | result |", "|---|---|---|---|---|---|---|",
            f"| {n:,} | {d:.2f} | {r:.2f} | {r / d:.2f}x | {calls['debt']} | "
            f"{calls['rightsize']} | {summary} |", "",
            "rightsize makes no API call of its own: its calls are the debt read's (discovery "
            "and batched GetMetricData). The time beyond the read is the proposals, the "
            "round-trip edit of each stack file, the validation of each edited stack and the "
            "PR text. Most of the read's wall time is moto's (see debt.md).", ""])
        Path(args.output).write_text(text)
        print(text)
    finally:
        server.stop()
        shutil.rmtree(tmp, ignore_errors=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

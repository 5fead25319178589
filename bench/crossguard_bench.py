"""Benchmark the gpupool CrossGuard pack over its real gRPC protocol.

Starts ``policies/`` as the Pulumi CLI does (through :mod:`policies.testing`), then times:

- AnalyzeStack with N resources (default 1,000): the call the CLI makes once per update;
- Analyze of the same N resources one after another: what the CLI does per resource;
- K concurrent Analyze streams (threads, default 8 x 250 requests), every answer checked
  against the sequential one: an error is a failed RPC *or* a different answer.

Each timing is the median of ``--runs`` runs after one warm-up. Usage::

    .venv/bin/python bench/crossguard_bench.py [--resources 1000] [--runs 5] [--threads 8]
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from policies.testing import UNKNOWN, PolicyPackHarness, Resource  # noqa: E402

LT = "aws:ec2/launchTemplate:LaunchTemplate"
ASG = "aws:autoscaling/group:Group"
POLICY = "aws:autoscaling/policy:Policy"
SG = "aws:ec2/securityGroup:SecurityGroup"
ROLE = "aws:iam/role:Role"
TYPES = ("g4dn.xlarge", "g5.xlarge", "g6.xlarge", "g5g.xlarge", "g4dn.2xlarge", "p4d.24xlarge")
TAGS = {"team": "ml", "cost-center": "cc-42", "environment": "bench"}


def pool(i: int, urn: Callable[[str, str], str]) -> list[Resource]:
    """Five resources of one GPU pool, as the kit declares them (some deliberately wrong)."""
    itype = TYPES[i % len(TYPES)]
    group_name = f"gpu-pool-{i}"
    lt_urn = urn(LT, f"lt-{i}")
    lt = {
        "instanceType": UNKNOWN if i % 50 == 7 else itype,
        "metadataOptions": {"httpTokens": "required" if i % 9 else "optional"},
        "blockDeviceMappings": [{"deviceName": "/dev/xvda",
                                 "ebs": {"volumeType": "gp3", "encrypted": "true"}}],
        "tagSpecifications": [{"resourceType": "instance", "tags": TAGS}],
        "tags": TAGS,
    }
    asg = {
        "name": group_name, "minSize": 0, "maxSize": 8,
        "mixedInstancesPolicy": {"launchTemplate": {
            "launchTemplateSpecification": {"launchTemplateId": UNKNOWN, "version": "$Latest"},
            "overrides": [{"instanceType": itype}]}},
        "tags": [{"key": k, "value": v, "propagateAtLaunch": True} for k, v in TAGS.items()],
    }
    policy = {
        "autoscalingGroupName": group_name, "policyType": "TargetTrackingScaling",
        "targetTrackingConfiguration": {"targetValue": 70 if i % 11 else 99,
                                        "customizedMetricSpecification": {
            "metricName": "nvidia_smi_utilization_gpu", "namespace": "CWAgent",
            "statistic": "Average",
            "metricDimensions": [{"name": "AutoScalingGroupName", "value": group_name}]}},
    }
    return [
        Resource(LT, f"lt-{i}", lt),
        Resource(ASG, f"asg-{i}", asg, dependencies=[lt_urn],
                 property_dependencies={"mixedInstancesPolicy": [lt_urn]}),
        Resource(POLICY, f"scale-{i}", policy, dependencies=[urn(ASG, f"asg-{i}")]),
        Resource(SG, f"sg-{i}", {"ingress": [], "egress": [{"protocol": "-1"}], "tags": TAGS}),
        Resource(ROLE, f"role-{i}", {"assumeRolePolicy": "{}", "tags": TAGS}),
    ]


def median_time(fn: Callable[[], Any], runs: int) -> tuple[float, Any]:
    result = fn()  # warm-up (and the answer to compare against)
    times = []
    for _ in range(runs):
        t = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t)
    return statistics.median(times), result


def key(result: Any) -> list[tuple[str, str, str, str]]:
    return sorted((d.policy_name, d.enforcement_level, d.urn, d.message) for d in result)


def concurrent(pack: PolicyPackHarness, resources: list[Resource], threads: int, per_thread: int,
               expected: dict[str, Any]) -> dict[str, Any]:
    errors = 0
    latencies: list[float] = []
    lock = threading.Lock()
    barrier = threading.Barrier(threads)

    def stream(t: int) -> None:
        nonlocal errors
        mine: list[float] = []
        bad = 0
        barrier.wait()
        for n in range(per_thread):
            r = resources[(t * per_thread + n) % len(resources)]
            start = time.perf_counter()
            try:
                ok = key(pack.analyze_resource(r)) == expected[r.name]
            except Exception:  # every failure is counted, none is fatal
                ok = False
            mine.append(time.perf_counter() - start)
            bad += not ok
        with lock:
            latencies.extend(mine)
            errors += bad

    workers = [threading.Thread(target=stream, args=(t,)) for t in range(threads)]
    start = time.perf_counter()
    for w in workers:
        w.start()
    for w in workers:
        w.join()
    wall = time.perf_counter() - start
    latencies.sort()
    total = threads * per_thread
    return {
        "requests": total, "errors": errors, "wall_s": wall, "per_s": total / wall,
        "p50_ms": 1000 * latencies[len(latencies) // 2],
        "p95_ms": 1000 * latencies[int(len(latencies) * 0.95) - 1],
    }


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--resources", type=int, default=1000)
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--threads", type=int, default=8)
    ap.add_argument("--per-thread", type=int, default=250)
    ap.add_argument("--json", action="store_true", help="print the figures as JSON")
    args = ap.parse_args(argv)

    t0 = time.perf_counter()
    with PolicyPackHarness(ROOT / "policies", stack="bench", project="gpupool") as pack:
        startup = time.perf_counter() - t0
        pack.configure({})
        resources = [r for i in range(args.resources // 5 + 1) for r in pool(i, pack.urn)]
        resources = resources[: args.resources]

        stack_s, stack_result = median_time(lambda: pack.analyze_stack(resources), args.runs)
        expected: dict[str, Any] = {}

        def sequential() -> int:
            n = 0
            for r in resources:
                result = pack.analyze_resource(r)
                expected[r.name] = key(result)
                n += len(result)
            return n

        seq_s, seq_diags = median_time(sequential, max(1, args.runs // 2))
        conc = concurrent(pack, resources, args.threads, args.per_thread, expected)

    figures = {
        "resources": len(resources),
        "pack_startup_s": round(startup, 3),
        "analyze_stack_s": round(stack_s, 4),
        "analyze_stack_diagnostics": len(stack_result),
        "analyze_sequential_s": round(seq_s, 4),
        "analyze_per_resource_ms": round(1000 * seq_s / len(resources), 3),
        "analyze_diagnostics": seq_diags,
        "concurrent": {k: round(v, 3) if isinstance(v, float) else v for k, v in conc.items()},
        "runs": args.runs,
    }
    if args.json:
        print(json.dumps(figures, indent=2))
        return 0 if conc["errors"] == 0 else 1
    rows = [
        ("pack start-up (spawn → port → channel ready)", f"{startup:.3f} s"),
        (f"AnalyzeStack, {len(resources)} resources (median of {args.runs})",
         f"{stack_s:.3f} s  ({len(stack_result)} diagnostics)"),
        (f"Analyze x {len(resources)}, one after another",
         f"{seq_s:.3f} s  ({1000 * seq_s / len(resources):.2f} ms each, {seq_diags} diagnostics)"),
        (f"Analyze, {args.threads} concurrent streams x {args.per_thread}",
         f"{conc['wall_s']:.3f} s  ({conc['per_s']:.0f}/s, p50 {conc['p50_ms']:.2f} ms, "
         f"p95 {conc['p95_ms']:.2f} ms)"),
        ("errors under concurrency (failed or different answers)", str(conc["errors"])),
    ]
    width = max(len(r[0]) for r in rows)
    for label, value in rows:
        print(f"{label:<{width}}  {value}")
    return 0 if conc["errors"] == 0 else 1


if __name__ == "__main__":
    raise SystemExit(main())

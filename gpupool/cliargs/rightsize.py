"""Arguments of ``gpupool rightsize``: measured debt → proposed stack changes."""

from __future__ import annotations

import argparse

from gpupool.argtypes import between
from gpupool.cliargs.parser import command
from gpupool.cliargs.prometheus import add_prometheus_auth, add_resolution


def add_rightsize(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    r = command(sub, "rightsize", "propose stack changes from the measured debt",
                "Read the debt report of the stacks' regions (as gpupool debt does: boto3 "
                "standard credentials, AWS_ENDPOINT_URL honoured), match each of the kit's "
                "pools and remote-GPU tiers to its stacks/Pulumi.<stack>.yaml entry by its "
                "environment and gpupool:pool tags, and propose minSize, maxSize, "
                "desiredCapacity and targetGpuUtilisation: never below the window's need "
                "at --percentile plus --headroom, never for a pool not measured over the "
                "whole window or for less than --min-span, never across teams. Prints the "
                "diff of each stack file; --write edits them in place (comments and "
                "formatting kept). Kubernetes pools (gpupool:kubernetes) are read from "
                "their Prometheus (monitoring.prometheusAddress, or --prometheus POOL=URL) "
                "as gpupool debt --stack reads them, matched by the labels the kit puts on "
                "their namespaces, and get minReplicas, maxReplicas and "
                "targetGpuUtilisation of their autoscaled workloads and proxy and their "
                "teams' gpuQuota. See docs/rightsize.md.",
                ["gpupool rightsize --since 14d",
                 "gpupool rightsize --stack prod --write --pr-body pr.md",
                 "gpupool rightsize --utilisation debt.json --stack prod"])
    r.add_argument("--stack", action="append", metavar="STACK", help="a stack name or file "
                   "(repeatable; default: every stacks/Pulumi.*.yaml of the project)")
    r.add_argument("--utilisation", metavar="SNAPSHOT", help="propose from a saved report "
                   "(gpupool debt [--stack S] --format json --output FILE) instead of reading "
                   "AWS and Prometheus: its window, regions and pools; no API call or query")
    r.add_argument("--since", metavar="DURATION", help="window ending now (default 14d)")
    r.add_argument("--start", metavar="TIME", help="window start, ISO 8601 (UTC if no offset)")
    r.add_argument("--end", metavar="TIME", help="window end, ISO 8601 (default: now)")
    r.add_argument("--period", type=int, metavar="SECONDS",
                   help="CloudWatch period (default: the smallest giving ≤ 200 points)")
    r.add_argument("--region", help="AWS region to read (default: each stack's aws:region)")
    r.add_argument("--percentile", type=between(50, 100), default=95.0, metavar="P",
                   help="the need's percentile no size goes below (default 95)")
    r.add_argument("--headroom", default="20%", metavar="PCT",
                   help="added to that need (default 20%%)")
    r.add_argument("--min-span", default="7d", metavar="DURATION",
                   help="the least measured time a pool needs to be changed (default 7d)")
    r.add_argument("--write", action="store_true",
                   help="edit the stack files in place (each validated before it is written)")
    r.add_argument("--pr-body", metavar="FILE", help="write the pull request's text (Markdown)")
    r.add_argument("--deadline", metavar="SECONDS", default="900",
                   help="give up reading after this long in all (default 900)")
    k = r.add_argument_group("Kubernetes and on-premises pools (Prometheus: DCGM exporter and "
                             "kube-state-metrics)")
    k.add_argument("--prometheus", action="append", metavar="POOL=URL",
                   help="read the stacks' Kubernetes pool POOL from this Prometheus instead of "
                   "its monitoring.prometheusAddress (repeatable)")
    k.add_argument("--no-aws", action="store_true",
                   help="read Prometheus only: the stacks' AWS pools are not read")
    k.add_argument("--no-prometheus", action="store_true",
                   help="read AWS only: the stacks' Kubernetes pools are left alone")
    add_resolution(k)
    add_prometheus_auth(k)

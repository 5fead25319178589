"""Arguments of ``gpupool debt``: compute debt per pool and team."""

from __future__ import annotations

import argparse

from gpupool.cliargs.parser import command


def add_debt(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    d = command(sub, "debt", "compute debt: GPU capacity, allocation and use per pool and team",
                "Read the region's GPU autoscaling groups and their CloudWatch metrics (boto3: "
                "standard credentials, AWS_ENDPOINT_URL honoured) and report capacity, "
                "allocation, use and debt (allocated minus used) in GPU-hours and dollars, "
                "per pool and team, with recommendations. A pool without GPU utilisation "
                "metrics is 'not measured', never zero. See docs/debt.md.",
                ["gpupool debt --since 7d", "gpupool debt --by team --chart debt.png",
                 "gpupool debt --start 2026-11-01 --end 2026-11-08 --format json "
                 "--output utilisation.json"])
    d.add_argument("--region", help="AWS region (default: AWS_REGION / the profile's)")
    d.add_argument("--since", metavar="DURATION", help="window ending now: 90m, 12h, 7d, 2w "
                   "(default 7d)")
    d.add_argument("--start", metavar="TIME", help="window start, ISO 8601 (UTC if no offset)")
    d.add_argument("--end", metavar="TIME", help="window end, ISO 8601 (default: now)")
    d.add_argument("--period", type=int, metavar="SECONDS",
                   help="CloudWatch period (default: the smallest giving ≤ 200 points)")
    d.add_argument("--by", choices=("pool", "team"), default="pool")
    d.add_argument("--format", choices=("text", "json", "csv"), default="text")
    d.add_argument("--chart", metavar="FILE", help="write a chart (.png or .svg), after the "
                   "report")
    d.add_argument("--output", metavar="FILE")
    d.add_argument("--deadline", metavar="SECONDS", default="900",
                   help="give up reading after this long in all, retries included (default "
                   "900)")

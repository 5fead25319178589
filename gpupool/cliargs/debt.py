"""Arguments of ``gpupool debt``: compute debt per pool and team, AWS and Prometheus."""

from __future__ import annotations

import argparse

from gpupool.cliargs.parser import command
from gpupool.cliargs.prometheus import add_prometheus_auth, add_resolution


def add_debt(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    d = command(sub, "debt", "compute debt: GPU capacity, allocation and use per pool and team",
                "Read the region's GPU autoscaling groups and their CloudWatch metrics (boto3: "
                "standard credentials, AWS_ENDPOINT_URL honoured), and the Kubernetes and "
                "on-premises pools of each Prometheus (DCGM exporter, kube-state-metrics), and "
                "report capacity, allocation, use and debt (allocated minus used) in GPU-hours "
                "and dollars, per pool, namespace, pod and team, with recommendations. A pool "
                "without GPU utilisation metrics is 'not measured', never zero. See "
                "docs/debt.md.",
                ["gpupool debt --since 7d", "gpupool debt --by team --chart debt.png",
                 "gpupool debt --start 2026-11-01 --end 2026-11-08 --format json "
                 "--output utilisation.json",
                 "gpupool debt --format html --output debt.html",
                 "gpupool debt --forecast 90d --by team",
                 "gpupool debt --stack prod --prometheus onprem=https://prom.dc1.example.com",
                 "gpupool debt --no-aws --prometheus http://prometheus.monitoring.svc:9090"])
    d.add_argument("--region", help="AWS region (default: AWS_REGION / the profile's)")
    f = d.add_argument_group("every account and region (exit 1 when one is not read: see "
                             "docs/debt.md)")
    f.add_argument("--regions", metavar="all|LIST", help="regions to read: all (each "
                   "account's enabled regions) or us-east-1,eu-west-1")
    f.add_argument("--accounts", metavar="all|LIST", help="accounts to read: all (AWS "
                   "Organizations ListAccounts, active ones) or 12-digit ids, comma-separated;"
                   " each through sts AssumeRole of --role-name")
    f.add_argument("--role-name", default="OrganizationAccountAccessRole", metavar="ROLE",
                   help="the role to assume in each account (default "
                   "OrganizationAccountAccessRole; docs/debt.md has a read-only one)")
    f.add_argument("--concurrency", default="8", metavar="N",
                   help="account-regions read at once (default 8, at most 64)")
    d.add_argument("--reservations", action="store_true",
                   help="read On-Demand Capacity Reservations and Capacity Blocks for ML too: "
                   "reserved GPU-hours nobody uses, per team, and the pools that could use "
                   "them (one DescribeCapacityReservations call a region)")
    d.add_argument("--since", metavar="DURATION", help="window ending now: 90m, 12h, 7d, 2w "
                   "(default 7d)")
    d.add_argument("--start", metavar="TIME", help="window start, ISO 8601 (UTC if no offset)")
    d.add_argument("--end", metavar="TIME", help="window end, ISO 8601 (default: now)")
    d.add_argument("--period", type=int, metavar="SECONDS",
                   help="CloudWatch period (default: the smallest giving ≤ 200 points)")
    d.add_argument("--by", choices=("pool", "team", "reservation"), default="pool",
                   help="rows per pool or team; reservation: CSV of --reservations (other "
                   "formats as pool)")
    d.add_argument("--format", choices=("text", "json", "csv", "html"), default="text",
                   help="html: one self-contained page (charts per pool and team, sortable "
                   "tables, offenders, proposed changes; no network)")
    d.add_argument("--forecast", metavar="DAYS", help="each pool's and team's GPU need for "
                   "the next DAYS (30d, 90d, 12w) beside today's capacity: p95 of the daily "
                   "peak allocation with its trend (docs/debt.md); without --since/--start the "
                   "history is as long as the horizon (at least 28d), hourly")
    d.add_argument("--chart", metavar="FILE", help="write a chart (.png or .svg), after the "
                   "report")
    d.add_argument("--output", metavar="FILE")
    d.add_argument("--deadline", metavar="SECONDS", default="900",
                   help="give up reading after this long in all, retries included (default "
                   "900)")
    k = d.add_argument_group("Kubernetes and on-premises pools (Prometheus: DCGM exporter and "
                             "kube-state-metrics)")
    k.add_argument("--prometheus", action="append", metavar="[POOL=]URL",
                   help="a Prometheus (Thanos, Mimir, Amazon Managed Prometheus) to read; "
                   "repeatable; POOL= names the pool of its unlabelled nodes or overrides a "
                   "--stack pool's address")
    k.add_argument("--stack", metavar="STACK", help="read the stack's Kubernetes pools from "
                   "their Prometheus (owner, gpuHourlyCost, time slicing, teams) and take its "
                   "region")
    k.add_argument("--no-aws", action="store_true", help="read Prometheus only, no AWS")
    add_resolution(k)
    add_prometheus_auth(k)

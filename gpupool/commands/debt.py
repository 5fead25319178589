"""``gpupool debt [--region R] [--since 7d | --start T --end T] [--period S] [--by pool|team]
[--format text|json|csv|html] [--forecast 90d] [--chart FILE.png|FILE.svg] [--output FILE]
[--deadline S] [--prometheus [POOL=]URL ...] [--stack STACK] [--no-aws] [--prometheus-* auth]``.

Reads the region's GPU autoscaling groups and their CloudWatch series (boto3: the standard
credential chain, ``AWS_ENDPOINT_URL`` honoured), and the Kubernetes and on-premises pools of
each Prometheus (``--prometheus``, and the Kubernetes pools of ``--stack``), and reports
capacity, allocation, use and compute debt per pool, namespace, pod and team in one document.
The window, the chart's file name and the region are checked
before any API call; AWS failures are one line and exit 2. The report is written before the
chart is drawn, so a chart that fails (one line, exit 2) never loses the report.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from gpupool.errors import InputError


def run(args: argparse.Namespace) -> int:
    from gpupool.catalog import load_catalog
    from gpupool.debt.aws import make_clients
    from gpupool.debt.chart import FORMATS
    from gpupool.debt.deadline import Deadline, parse_deadline
    from gpupool.debt.render import render_csv, render_json, render_text
    from gpupool.debt.report import build_report
    from gpupool.debt.window import resolve_window

    deadline = Deadline(parse_deadline(args.deadline))
    if args.by == "reservation" and not args.reservations:
        raise InputError("--by reservation: expected --reservations, which reads them")
    by = "pool" if args.by == "reservation" and args.format != "csv" else args.by
    stack, sources = _sources(args)
    if args.no_aws and not sources:
        raise InputError("--no-aws: expected --prometheus URL, or --stack with Kubernetes "
                         "pools, to read instead")
    since, period, horizon = args.since, args.period, None
    if args.forecast is not None:
        from gpupool.debt.forecast import MIN_HISTORY_DAYS, parse_horizon

        horizon = parse_horizon(args.forecast)
        if since is None and args.start is None:  # a history as long as the horizon
            since = f"{min(max(horizon, MIN_HISTORY_DAYS), 455)}d"
        period = period or 3600  # a day's peak is its largest hourly figure
    window = resolve_window(since=since, start=args.start, end=args.end,
                            period=period, cloudwatch=not args.no_aws)
    if args.chart:
        _check_chart(args.chart, FORMATS)
    auth = _auth(args) if sources else None
    region = args.region or (stack.region if stack is not None else None)
    fleet = _fleet(args, deadline, region)
    clients = None if args.no_aws or fleet else make_clients(region, deadline=deadline)
    catalog = load_catalog(region=clients.region if clients else (region or "us-east-1"))
    kube = None
    if sources:
        from gpupool.debt.prometheus.read import read_sources

        def kube() -> object:
            return read_sources(sources, window, catalog, auth, deadline, args.resolution)

    if fleet is not None:
        from gpupool.debt.fleet import build_fleet_report

        report = build_fleet_report(fleet[0], window, load_catalog(), *fleet[1:], kube=kube)
    else:
        with _progress() as progress:
            report = build_report(clients, window, catalog, progress=progress, kube=kube,
                                  reservations=args.reservations)
    if horizon is not None:
        report.add_forecast(horizon)

    if args.format == "json":
        text = render_json(report)
    elif args.format == "html":
        from gpupool.debt.html import render_html

        text = render_html(report)
    elif args.format == "csv":
        text = render_csv(report, args.by)
    else:
        color, width = (False, None) if args.output else _terminal()
        text = render_text(report, by, width=width, color=color)
    from gpupool.output import write_output, write_stdout

    if args.output:
        if not write_output(args.output, text):
            sys.stderr.write(f"gpupool debt: {args.format} report written to {args.output}\n")
    else:
        write_stdout(text)
    if args.chart:  # after the report: a chart that fails loses nothing
        from gpupool.debt.chart import write_chart

        write_chart(report, args.chart, by)
        sys.stderr.write(f"gpupool debt: chart written to {args.chart}\n")
    if report.unread_scopes:
        sys.stderr.write(f"gpupool debt: {report.unread_scopes} of {len(report.scopes)} "
                         "account-regions not read (the report's findings say which and why)"
                         "\n")
        return 1
    return 0


def _fleet(args: argparse.Namespace, deadline: Any, region: str | None) -> Any:
    """(Fleet, accounts, regions) when --accounts or --regions is given, else None."""
    if not args.accounts and not args.regions:
        return None
    if args.no_aws:
        raise InputError("--no-aws: expected no --accounts or --regions with it")
    if args.region and args.regions:
        raise InputError(f"--region {args.region}: expected either --region or --regions")
    from gpupool.debt.fleet import Fleet, parse_concurrency, parse_list, parse_role

    accounts = parse_list(args.accounts, "--accounts") if args.accounts else []
    regions = parse_list(args.regions, "--regions") if args.regions else None
    fleet = Fleet(role_name=parse_role(args.role_name),
                  concurrency=parse_concurrency(args.concurrency), deadline=deadline,
                  home_region=region, reservations=args.reservations)
    if regions is None and not args.regions:
        regions = [fleet.home]
    return fleet, accounts, regions


def _sources(args: argparse.Namespace) -> tuple[Any, list[Any]]:
    """The stack's config (when --stack) and the Prometheus sources to read."""
    if not args.prometheus and not args.stack:
        return None, []
    from gpupool.debt.prometheus.sources import hints_from_stack, make_sources

    config = None
    pools: list[Any] = []
    if args.stack:
        from gpupool.config.loader import load_stack

        config = load_stack(args.stack).config
        pools = hints_from_stack(config)
        if not pools and not args.prometheus:
            raise InputError(f"--stack {args.stack}: has no Kubernetes pools (gpupool:kubernetes) "
                             "to read from Prometheus")
    return config, make_sources(args.prometheus or [], pools)


def _auth(args: argparse.Namespace) -> Any:
    from gpupool.debt.prometheus.auth import make_auth

    return make_auth(bearer_file=args.prometheus_bearer_token_file,
                     basic_user=args.prometheus_basic_auth,
                     password_file=args.prometheus_password_file,
                     ca_file=args.prometheus_ca_file, headers=args.prometheus_header or [],
                     sigv4_region=args.prometheus_sigv4)


def _check_chart(path: str, formats: dict[str, str]) -> None:
    """Before any API call: a known suffix, into a directory that exists."""
    chart = Path(path)
    if chart.suffix.lower() not in formats:
        raise InputError(f"--chart {path}: expected a file name ending in .png or .svg")
    if not chart.parent.is_dir():
        raise InputError(f"--chart {path}: expected an existing directory for it, "
                         f"{chart.parent} is none")


Advance = Callable[[int], None]


@contextmanager
def _progress() -> Iterator[Callable[[str, int], Advance] | None]:
    """A rich progress bar on stderr while the series are read (only on a terminal)."""
    from rich.console import Console

    console = Console(file=sys.stderr)
    if not console.is_terminal:
        yield None
        return
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn

    with Progress(TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(),
                  TextColumn("series"), console=console, transient=True) as bar:

        def start(description: str, total: int) -> Advance:
            task = bar.add_task(description, total=total)
            return lambda n: bar.advance(task, n)

        yield start


def _terminal() -> tuple[bool, int | None]:
    from rich.console import Console

    console = Console(file=sys.stdout)
    if console.is_terminal and console.color_system is not None and not console.no_color:
        return True, console.width
    return False, None

"""Arguments reaching a Prometheus (``gpupool debt`` and ``gpupool rightsize``): how to sign in."""

from __future__ import annotations

import argparse


def add_prometheus_auth(k: argparse._ArgumentGroup) -> None:
    k.add_argument("--prometheus-bearer-token-file", metavar="FILE")
    k.add_argument("--prometheus-basic-auth", metavar="USER",
                   help="password in GPUPOOL_PROMETHEUS_PASSWORD or --prometheus-password-file")
    k.add_argument("--prometheus-password-file", metavar="FILE")
    k.add_argument("--prometheus-ca-file", metavar="FILE")
    k.add_argument("--prometheus-header", action="append", metavar="'NAME: VALUE'",
                   help="an extra header, e.g. 'X-Scope-OrgID: team' for Mimir; repeatable")
    k.add_argument("--prometheus-sigv4", metavar="REGION",
                   help="sign requests with SigV4 (Amazon Managed Service for Prometheus)")


def add_resolution(k: argparse._ArgumentGroup) -> None:
    k.add_argument("--resolution", type=int, default=60, metavar="SECONDS",
                   help="evaluation step inside each period (default 60; at least the scrape "
                   "interval, dividing --period)")

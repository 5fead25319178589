# ruff: noqa: RUF001, RUF003  (× is the multiplication sign readers see in the tables)
"""``bench/debt_bench.py --fleet AxRxP``: every account and region, concurrency 8 against 1.

See bench/debt_bench.py's docstring. Kept apart so that each file has one job: this one runs
a moto server process, builds an Organization and reads it with :mod:`gpupool.debt.fleet`.
"""

from __future__ import annotations

import os
import socket
import statistics
import subprocess
import sys
import time
import urllib.request
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
sys.path.insert(0, str(ROOT / "tests" / "gpupool" / "debt"))  # debt_org, debt_fleet
from run import machine  # noqa: E402

MARKER = "\n## Every account and every region\n"
WINDOW_HOURS = 2
REGIONS = ("us-east-1", "eu-west-1", "ap-northeast-1", "us-west-2", "eu-central-1")


def _port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _serve() -> tuple[subprocess.Popen[bytes], str]:
    port = _port()
    proc = subprocess.Popen([str(Path(sys.executable).parent / "moto_server"), "-H",
                             "127.0.0.1", "-p", str(port)], stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL)
    endpoint = f"http://127.0.0.1:{port}"
    for _ in range(200):
        try:
            with urllib.request.urlopen(f"{endpoint}/moto-api/", timeout=1):
                return proc, endpoint
        except OSError:
            time.sleep(0.1)
    proc.kill()
    raise SystemExit("moto_server did not start")


def fleet_bench(spec: str, rounds: int, output: Path,
                build: Callable[[Any, int, Any, str], None]) -> int:
    import boto3
    from debt_org import create_accounts, session_in

    from gpupool.catalog import load_catalog
    from gpupool.debt.fleet import Fleet, build_fleet_report
    from gpupool.debt.window import Window

    try:
        accounts, nregions, pools = (int(x) for x in spec.lower().split("x"))
    except ValueError:
        raise SystemExit(f"--fleet {spec}: expected ACCOUNTSxREGIONSxPOOLS, e.g. 20x3x50"
                         ) from None
    regions = list(REGIONS[:nregions])
    proc, endpoint = _serve()
    os.environ.update(AWS_ENDPOINT_URL=endpoint, AWS_ACCESS_KEY_ID="bench",
                      AWS_SECRET_ACCESS_KEY="bench", AWS_DEFAULT_REGION="us-east-1")
    started = datetime.now(UTC)
    end = started.replace(minute=0, second=0, microsecond=0)
    window = Window(end - timedelta(hours=WINDOW_HOURS), end, 3600)
    walls: dict[int, list[float]] = {8: [], 1: []}
    docs: dict[int, dict[str, Any]] = {}
    try:
        session = boto3.session.Session()
        members = create_accounts(session, [f"team-{i:02d}" for i in range(accounts - 1)])
        t0 = time.perf_counter()
        for account in [None, *members]:
            inside = session if account is None else session_in(session, account)
            for region in regions:
                build(inside, pools, window, region)
        print(f"{accounts}×{nregions}×{pools} built in {time.perf_counter() - t0:.1f} s",
              file=sys.stderr)
        catalog = load_catalog()
        # a warm-up read, not timed: imports, service models, moto's first answers
        build_fleet_report(Fleet(concurrency=8), window, catalog, None, regions)
        for _ in range(rounds):
            for n in (8, 1):
                t0 = time.perf_counter()
                report = build_fleet_report(Fleet(concurrency=n), window, catalog, None,
                                            regions)
                walls[n].append(time.perf_counter() - t0)
                docs[n] = report.to_dict()
                print(f"concurrency {n}: {walls[n][-1]:.1f} s", file=sys.stderr)
    finally:
        proc.terminate()
        proc.wait(timeout=30)

    a, b = docs[8], docs[1]
    for key in ("pools", "totals", "api_calls_detail"):
        if a[key] != b[key]:
            raise SystemExit(f"concurrency 8 and 1 disagree on {key}")
    scopes = a["scopes"]
    if len(scopes) != accounts * nregions or any(s["status"] != "read" for s in scopes):
        raise SystemExit(f"not every scope was read: {scopes}")
    over = [s for s in scopes if s["get_metric_data"] != s["expected_get_metric_data"]]
    if over:
        raise SystemExit(f"call budget broken: {over}")
    ops = a["api_calls_detail"]["by_operation"]
    w8, w1 = statistics.median(walls[8]), statistics.median(walls[1])
    series = sum(s["series"] for s in scopes)
    head = ["accounts × regions × pools", "pools", "series", "GetMetricData (⌈series/500⌉ per "
            "scope)", "all API calls", "AssumeRole", "concurrency 8 s", "concurrency 1 s",
            "wall ratio", "allocated / debt GPU-h (both)"]
    row = [f"{accounts} × {nregions} × {pools}", f"{len(a['pools']):,}", f"{series:,}",
           f"{ops['GetMetricData']:,}", f"{a['api_calls']:,}", f"{ops.get('AssumeRole', 0)}",
           f"{w8:.2f}", f"{w1:.2f}", f"{w1 / w8:.1f}×",
           f"{a['totals']['allocated_gpu_hours']:,.0f} / {a['totals']['debt_gpu_hours']:,.1f}"]
    calls = ", ".join(f"{k} {v:,}" for k, v in sorted(ops.items()))
    command = " ".join([Path(sys.executable).name, "bench/debt_bench.py", *sys.argv[1:]])
    text = "\n".join([
        MARKER.strip(), "",
        f"- date: {started:%Y-%m-%d %H:%M} UTC", f"- machine: {machine()}",
        f"- command: `{command}`",
        f"- window: {WINDOW_HOURS} h at 3600 s periods; moto_server in its own process on "
        f"127.0.0.1; an Organization of {accounts} accounts (the caller's and "
        f"{accounts - 1} reached by AssumeRole), regions {', '.join(regions)}; {rounds} "
        "round(s) after an untimed warm-up, interleaved, medians", "",
        "| " + " | ".join(head) + " |", "|" + "|".join("---" for _ in head) + "|",
        "| " + " | ".join(row) + " |", "",
        f"- calls by operation (each run, the same at both concurrencies): {calls}",
        f"- every one of the {len(scopes)} account-regions took exactly its ⌈series / 500⌉ "
        "GetMetricData calls (checked by the run); both runs gave the same pools and totals",
        "- wall time is moto's and this shared 2-core machine's as much as the reader's: "
        "concurrency overlaps the round trips and moto's work on the other core; against AWS "
        "each call is a network round trip, which is what the threads overlap", ""])
    prior = output.read_text().partition(MARKER)[0] if output.exists() else ""
    output.write_text(prior.rstrip("\n") + "\n" + "\n" + text)
    print(text)
    return 0

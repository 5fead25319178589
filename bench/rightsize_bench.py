"""``gpupool rightsize`` on 1,000 pools: wall, CPU and API calls by operation, beside debt alone.

A moto server in a child process (bench/moto_fleet.py: the fleet built in moto's backends
there, so setup takes seconds, not the 182 s of 5,000 HTTP calls; real HTTP on 127.0.0.1 after
that, boto3 through ``AWS_ENDPOINT_URL``; every request counted by operation at the server).
Five generated stacks (environments dev, staging, prod, sandbox, test) of N/5 T4 pools each
(minSize 2, desiredCapacity 2, maxSize 8, target 60 %), every group tagged as the kit tags it,
two hours of history: 2 instances in service, utilisation 2-40 % by pool. Side by side in one
run, rounds interleaved, each in this process:

- **debt read**: the report as ``gpupool debt`` reads it (what rightsize starts with);
- **rightsize live**: ``gpupool rightsize --write --pr-body``: the same read, the proposals, the
  round-trip edit and validation of each stack file and the PR text;
- **debt snapshot**: ``gpupool debt --format json --output F`` (the read and the version 3
  document with every pool's series);
- **rightsize --utilisation F**: rightsize from that file, no API call.

Wall is ``perf_counter``; CPU is this process's (``process_time``: the kit and botocore) and the
server's (its /proc stat), apart. API calls are the server's count by operation, checked equal
to the kit's own count. The run checks that every pool got a proposal, and that the snapshot
run wrote the same stacks and PR text as the live one.

    .venv/bin/python bench/rightsize_bench.py            # 1,000 pools
    .venv/bin/python bench/rightsize_bench.py --pools 100 --rounds 3
"""

from __future__ import annotations

import argparse
import contextlib
import io
import json
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.request
from collections.abc import Callable, Sequence
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(HERE))
from moto_fleet import ENVIRONMENTS  # noqa: E402
from run import machine  # noqa: E402  (bench/run.py: the machine line every result carries)

WINDOW_HOURS = 2
TICK = os.sysconf("SC_CLK_TCK")


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


class Server:
    """The child moto server: its port, its CPU seconds and its request counts."""

    def __init__(self, pools: int, end: datetime) -> None:
        self.proc = subprocess.Popen(
            [sys.executable, str(HERE / "moto_fleet.py"), "--pools", str(pools), "--hours",
             str(WINDOW_HOURS), "--end", end.strftime("%Y-%m-%dT%H:%M:%SZ")],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
        assert self.proc.stdout is not None
        line = self.proc.stdout.readline().split()
        if not line or line[0] != "READY":
            raise SystemExit(f"the moto fleet server did not start: {line}")
        self.endpoint = f"http://127.0.0.1:{line[1]}"
        self.built_s, self.checked = float(line[2]), int(line[3])

    def cpu(self) -> float:
        fields = Path(f"/proc/{self.proc.pid}/stat").read_text().rsplit(")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / TICK  # utime, stime

    def calls(self, reset: bool = False) -> dict[str, int]:
        req = urllib.request.Request(f"{self.endpoint}/bench/calls",
                                     method="POST" if reset else "GET")
        with urllib.request.urlopen(req, timeout=30) as r:
            out: dict[str, int] = json.loads(r.read())
        return out

    def stop(self) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.close()
        self.proc.wait(timeout=60)


def measure(server: Server, fn: Callable[[], Any]) -> dict[str, Any]:
    server.calls(reset=True)
    s0, c0, t0 = server.cpu(), time.process_time(), time.perf_counter()
    result = fn()
    wall, cpu, server_cpu = (time.perf_counter() - t0, time.process_time() - c0,
                             server.cpu() - s0)
    calls = {k: v for k, v in server.calls().items() if not k.endswith(".?")}
    return {"wall": wall, "cpu": cpu, "server_cpu": server_cpu, "calls": calls,
            "result": result}


def cli(project: Path, argv: list[str]) -> str:
    from gpupool.cli import main

    err = io.StringIO()
    cwd = os.getcwd()
    os.chdir(project)
    try:
        with contextlib.redirect_stderr(err), contextlib.redirect_stdout(io.StringIO()):
            code = main(argv)
    finally:
        os.chdir(cwd)
    if code != 0:
        raise SystemExit(f"gpupool {argv[0]} exited {code}: {err.getvalue()[-2000:]}")
    return err.getvalue()


def debt_read(window: Any) -> int:
    from gpupool.catalog import load_catalog
    from gpupool.debt.aws import make_clients
    from gpupool.debt.report import build_report

    report = build_report(make_clients("us-east-1"), window, load_catalog(region="us-east-1"),
                          compute_optimizer=False)
    return int(report.api_calls)


def project(tmp: Path, name: str, per_stack: int) -> Path:
    out = tmp / name
    (out / "stacks").mkdir(parents=True)
    shutil.copy(ROOT / "Pulumi.yaml", out / "Pulumi.yaml")  # stackConfigDir: stacks
    for env in ENVIRONMENTS:
        (out / "stacks" / f"Pulumi.{env}.yaml").write_text(stack_text(env, per_stack))
    return out


def summary(err: str) -> tuple[str, int]:
    m = re.search(r"(\d+) pool\(s\) changed in (\d+) stack file\(s\); (\d+) API call", err)
    assert m, err[-500:]
    return m.group(0), int(m.group(3))


def ops(calls: dict[str, int]) -> str:
    return ", ".join(f"{k.split('.', 1)[1]} {v}" for k, v in sorted(calls.items())) or "none"


def main(argv: Sequence[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--pools", type=int, default=1000, help="in all (five stacks share them)")
    p.add_argument("--rounds", type=int, default=2)
    p.add_argument("--warmup", type=int, default=1,
                   help="rounds run first and not counted (imports, first-use caches)")
    p.add_argument("--output", default=str(HERE / "results" / "rightsize.md"))
    args = p.parse_args(argv)
    per_stack = args.pools // len(ENVIRONMENTS)
    n = per_stack * len(ENVIRONMENTS)

    from gpupool.debt.window import Window, iso

    started = datetime.now(UTC)
    end = started.replace(minute=0, second=0, microsecond=0)
    window = Window(end - timedelta(hours=WINDOW_HOURS), end, 3600)
    span = ["--start", iso(window.start), "--end", iso(window.end), "--period", "3600"]
    head = machine()
    t0 = time.perf_counter()
    server = Server(n, end)
    up = time.perf_counter() - t0
    print(f"{n} pools built in moto's backends in {server.built_s:.1f} s (server up in "
          f"{up:.1f} s; {server.checked} GetMetricData answers checked against moto's own)",
          file=sys.stderr)
    os.environ.update(AWS_ENDPOINT_URL=server.endpoint, AWS_ACCESS_KEY_ID="bench",
                      AWS_SECRET_ACCESS_KEY="bench", AWS_DEFAULT_REGION="us-east-1")
    tmp = Path(tempfile.mkdtemp(prefix="rightsize-bench-"))
    names = ("debt read", "rightsize live", "debt snapshot", "rightsize --utilisation")
    runs: dict[str, list[dict[str, Any]]] = {k: [] for k in names}
    size = 0
    try:
        for r in range(args.warmup + args.rounds):
            if r == args.warmup:
                runs = {k: [] for k in names}
            live, saved = project(tmp, f"live-{r}", per_stack), project(tmp, f"saved-{r}",
                                                                        per_stack)
            snap = tmp / f"debt-{r}.json"
            runs["debt read"].append(measure(server, lambda: debt_read(window)))
            runs["rightsize live"].append(measure(server, lambda live=live: cli(
                live, ["rightsize", *span, "--min-span", f"{WINDOW_HOURS}h", "--write",
                       "--pr-body", str(live / "pr.md")])))
            runs["debt snapshot"].append(measure(server, lambda saved=saved, snap=snap: cli(
                saved, ["debt", *span, "--format", "json", "--output", str(snap)])))
            runs["rightsize --utilisation"].append(measure(server, lambda s=saved, f=snap: cli(
                s, ["rightsize", "--utilisation", str(f), "--min-span", f"{WINDOW_HOURS}h",
                    "--write", "--pr-body", str(s / "pr.md")])))
            size = snap.stat().st_size
            for name in ("rightsize live", "rightsize --utilisation"):
                text, _ = summary(runs[name][-1]["result"])
                if not text.startswith(f"{n} pool(s) changed in {len(ENVIRONMENTS)} stack"):
                    raise SystemExit(f"{name}: expected every pool changed: {text}")
            for rel in ["pr.md", *(f"stacks/Pulumi.{e}.yaml" for e in ENVIRONMENTS)]:
                if (live / rel).read_text() != (saved / rel).read_text():
                    raise SystemExit(f"{rel}: the snapshot run differs from the live run")
            kit = {"debt read": runs["debt read"][-1]["result"],
                   "rightsize live": summary(runs["rightsize live"][-1]["result"])[1],
                   "rightsize --utilisation": summary(
                       runs["rightsize --utilisation"][-1]["result"])[1]}
            for name, count in kit.items():
                seen = sum(runs[name][-1]["calls"].values())
                if seen != count:
                    raise SystemExit(f"{name}: the server saw {seen} calls, the kit says "
                                     f"{count}")
        med = {k: {m: statistics.median(x[m] for x in v) for m in ("wall", "cpu", "server_cpu")}
               for k, v in runs.items()}
        base = med["debt read"]
        rows = [f"| {k} | {med[k]['wall']:.2f} | {med[k]['wall'] / base['wall']:.2f}x | "
                f"{med[k]['cpu']:.2f} | {med[k]['cpu'] / base['cpu']:.2f}x | "
                f"{med[k]['server_cpu']:.2f} | {sum(runs[k][-1]['calls'].values())} | "
                f"{ops(runs[k][-1]['calls'])} |" for k in names]
        text = "\n".join([
            f"# gpupool rightsize: {n:,} pools, beside the debt read it starts with", "",
            f"- date: {started:%Y-%m-%d %H:%M} UTC", f"- machine: {head}",
            f"- command: `python bench/rightsize_bench.py --pools {n} --rounds {args.rounds} "
            f"--warmup {args.warmup}`",
            f"- {n:,} pools in {len(ENVIRONMENTS)} stacks of {per_stack}; window "
            f"{WINDOW_HOURS} h at 3600 s; moto server (bench/moto_fleet.py) in a child process "
            f"on 127.0.0.1, the fleet built in its backends in {server.built_s:.1f} s; medians "
            f"of {args.rounds} round(s) after {args.warmup} warm-up, interleaved; snapshot "
            f"{size / 1e6:.1f} MB", "",
            "| run | wall s | wall vs debt | kit CPU s | kit CPU vs debt | server CPU s | "
            "API calls | by operation (counted at the server) |",
            "|---|---|---|---|---|---|---|---|", *rows, "",
            "Every run changed every pool; the --utilisation run wrote the same five stack "
            "files and the same PR text as the live run, with no API call. The server's count "
            "of each run equals the kit's own. Kit CPU is the bench process's (gpupool and "
            "botocore), server CPU moto's.", ""])
        Path(args.output).write_text(text)
        print(text)
    finally:
        server.stop()
        shutil.rmtree(tmp, ignore_errors=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

"""Remoting benchmarks: the budget on a million-call trace, and the probe against known limits.

    .venv/bin/python bench/remoting_bench.py                  # both parts
    .venv/bin/python bench/remoting_bench.py --only budget    # the 1,000,000-call trace
    .venv/bin/python bench/remoting_bench.py --only probe     # needs root (namespaces, tc tbf)

**budget**: ``gpupool remoting`` on a synthetic 1,000,000-call trace (bench/gen_trace.py) in a
fresh process per run, the three ways it is asked (RTT and bandwidth; bandwidth only; RTT only),
beside ``python -c "import numpy, pandas, pydantic"`` (the floor of any run) and the
first-order profile; rounds interleaved, medians reported, CPU beside wall (a shared machine).
Then, in this process, one remote replay of the trace vectorised (:class:`Replayer`) against the
plain per-call loop (``replay_reference``): the speed-up the vectorisation buys.

**probe**: two network namespaces joined by a veth pair, ``tc tbf`` on the client's egress at
several rates; ``gpupool netcheck probe`` measures, its bandwidth is compared with the limit.
Round trips: on loopback, on the veth pair, and with the server adding known echo delays.

Results go to the terminal and to bench/results/remoting.md.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import subprocess
import sys
import time
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(ROOT / "tests" / "gpupool" / "netcheck"))

import run as benchrun  # noqa: E402  (bench/run.py: measure, Series, interleaved)

BIN = Path(sys.executable).parent
OUT = HERE / "out"
RESULTS = HERE / "results" / "remoting.md"
RATES_MBIT = (50, 100, 200, 500, 1000, 2000)
DELAYS_US = (100, 500, 2000)


def _trace(calls: int) -> Path:
    """The synthetic trace of about ``calls`` calls (cached in bench/out)."""
    stem = OUT / f"trace-{calls}"
    profile = stem.with_suffix(".yaml")
    if not profile.exists() or not stem.with_suffix(".csv").exists():
        subprocess.run([sys.executable, str(HERE / "gen_trace.py"), "--calls", str(calls),
                        "--out", str(stem)], check=True, cwd=ROOT)
    return profile


def budget(rounds: int, calls: int) -> dict[str, Any]:
    profile = _trace(calls)
    gp = str(BIN / "gpupool")
    bert = str(ROOT / "examples" / "profiles" / "bert-inference.yaml")
    series = {
        "floor": benchrun.Series('python -c "import numpy, pandas, pydantic"'),
        "rb": benchrun.Series("remoting --rtt-us 20 --bandwidth-gbps 100"),
        "b": benchrun.Series("remoting --bandwidth-gbps 100"),
        "r": benchrun.Series("remoting --rtt-us 20"),
        "first": benchrun.Series("remoting (first-order profile) --rtt-us 20 --bandwidth-gbps 100"),
    }
    cmds = {
        "floor": [str(BIN / "python"), "-c", "import numpy, pandas, pydantic"],
        "rb": [gp, "remoting", str(profile), "--rtt-us", "20", "--bandwidth-gbps", "100",
               "--format", "json"],
        "b": [gp, "remoting", str(profile), "--bandwidth-gbps", "100", "--format", "json"],
        "r": [gp, "remoting", str(profile), "--rtt-us", "20", "--format", "json"],
        "first": [gp, "remoting", bert, "--rtt-us", "20", "--bandwidth-gbps", "100",
                  "--format", "json"],
    }
    jobs = [(series[k], (lambda c=cmds[k]: benchrun.measure(c, ok_rc=(0, 1))))
            for k in series]
    print(f"budget on {profile.name}: {rounds} round(s)", file=sys.stderr)
    benchrun.interleaved(jobs, rounds)
    answer = json.loads(subprocess.run(cmds["rb"], capture_output=True, text=True,
                                       cwd=ROOT).stdout)
    # in-process: one remote replay, vectorised vs the plain loop
    from gpupool.remoting.replay import Network, Replayer, replay_reference
    from gpupool.remoting.trace import load_trace

    trace = load_trace(profile.with_suffix(".csv"))
    net = Network(20, 100)
    t0 = time.process_time()
    rp = Replayer(trace)
    prep = time.process_time() - t0
    fast = []
    for _ in range(5):
        t0 = time.process_time()
        value = rp.run_time_us(net)
        fast.append(time.process_time() - t0)
    t0 = time.process_time()
    slow_value = replay_reference(trace, net)
    slow = time.process_time() - t0
    return {
        "calls": len(trace),
        "series": {k: s for k, s in series.items()},
        "answer": {k: answer.get(k) for k in ("predicted_overhead", "rtt_max_us",
                                              "bandwidth_min_gbps", "feasible")},
        "replay": {"prepare_cpu": prep, "vectorised_cpu": statistics.median(fast),
                   "loop_cpu": slow, "agree": abs(value - slow_value) <= 1e-9 * slow_value},
    }


def probe() -> dict[str, Any]:
    if os.geteuid() != 0:
        return {"skipped": "needs root: ip netns, veth and tc tbf"}
    from netcheck_support import ServerProcess, limit_rate, make_netns_pair

    def run_probe(target: str, seconds: float, netns: str | None = None) -> dict[str, Any]:
        cmd = [str(BIN / "gpupool"), "netcheck", "probe", target, "--seconds", str(seconds),
               "--format", "json"]
        if netns:
            cmd = ["ip", "netns", "exec", netns, *cmd]
        proc = subprocess.run(cmd, capture_output=True, text=True, cwd=ROOT, timeout=120)
        return json.loads(proc.stdout)

    rates = []
    for mbit in RATES_MBIT:
        with make_netns_pair() as pair:
            limit_rate(pair, mbit)
            srv = ServerProcess(netns=pair.server, bind=pair.server_ip)
            try:
                r = run_probe(srv.target, 3.0, pair.client)
            finally:
                srv.stop()
        rates.append({"limit_mbit": mbit, "measured_gbps": r["bandwidth_gbps"],
                      "ratio": r["bandwidth_gbps"] * 1000 / mbit, "rtt_p50": r["rtt_us"]["p50"]})
        print(f"  tbf {mbit} Mbit/s: {r['bandwidth_gbps'] * 1000:.1f} Mbit/s", file=sys.stderr)
    delays = []
    loop = ServerProcess()
    try:
        loopback = run_probe(loop.target, 2.0)
    finally:
        loop.stop()
    with make_netns_pair() as pair:
        for delay in (0, *DELAYS_US):
            extra = ("--echo-delay-us", str(delay)) if delay else ()
            srv = ServerProcess(*extra, netns=pair.server, bind=pair.server_ip)
            try:
                r = run_probe(srv.target, 2.0, pair.client)
            finally:
                srv.stop()
            delays.append({"delay_us": delay, "p50": r["rtt_us"]["p50"],
                           "p99": r["rtt_us"]["p99"], "min": r["rtt_us"]["min"]})
    return {"rates": rates, "delays": delays, "loopback": loopback["rtt_us"],
            "loopback_gbps": loopback["bandwidth_gbps"]}


def _fmt(x: float | None, digits: int = 3) -> str:
    return "—" if x is None else f"{x:.{digits}g}"


def report(args: argparse.Namespace, parts: dict[str, Any]) -> str:
    load = ", ".join(f"{x:.2f}" for x in os.getloadavg())
    run_line = (f"Run {datetime.now(UTC):%Y-%m-%d %H:%M} UTC, `{' '.join(sys.argv)}`; "
                f"{platform.system()} {platform.release()}, {os.cpu_count()} CPUs, Python "
                f"{platform.python_version()}; load average at the end {load} (a shared "
                "machine: read CPU seconds and ratios more than wall seconds).")
    lines = ["# Remoting benchmarks", "",
             "Written by `bench/remoting_bench.py`; each section says when it was run.", ""]
    if "budget" in parts:
        b = parts["budget"]
        s = b["series"]
        floor = s["floor"].median("wall")
        lines += [
            f"## Budget on a {b['calls']:,}-call trace (goal: under 2 s)",
            "",
            run_line,
            "",
            "Fresh process per run, rounds interleaved, medians; CPU = user + system of the "
            "process tree (pandas reads the CSV with two threads).",
            "",
            "| command | wall s | CPU s | peak MiB | wall vs import floor |",
            "|---|---|---|---|---|",
        ]
        for key in ("floor", "rb", "b", "r", "first"):
            ser = s[key]
            w, c, m = ser.median("wall"), ser.median("cpu"), ser.median("peak_mib")
            lines.append(f"| {ser.label} | {_fmt(w)} | {_fmt(c)} | {_fmt(m, 4)} | "
                         f"{_fmt(w / floor if w and floor else None)}x |")
        rp = b["replay"]
        lines += [
            "",
            f"Answer (RTT 20 µs, 100 Gbps): {b['answer']}.",
            "",
            f"One remote replay of the trace, in process (CPU s): prepare {rp['prepare_cpu']:.3f}, "
            f"vectorised {rp['vectorised_cpu']:.3f}, plain per-call loop {rp['loop_cpu']:.2f} "
            f"({rp['loop_cpu'] / rp['vectorised_cpu']:.0f}x); results agree: {rp['agree']}.",
            "",
        ]
    if "probe" in parts:
        pr = parts["probe"]
        lines += ["## Probe accuracy (namespaces, veth, tc tbf on the client's egress)", "",
                  run_line, ""]
        if "skipped" in pr:
            lines += [f"Skipped: {pr['skipped']}.", ""]
        else:
            lines += ["| tbf limit Mbit/s | measured Mbit/s | measured / limit | RTT p50 µs |",
                      "|---|---|---|---|"]
            for r in pr["rates"]:
                lines.append(f"| {r['limit_mbit']} | {r['measured_gbps'] * 1000:.1f} | "
                             f"{r['ratio']:.3f} | {r['rtt_p50']:.1f} |")
            lines += ["", "| echo delay µs (server) | RTT p50 µs | p50 minus no-delay p50 | "
                          "min µs | p99 µs |", "|---|---|---|---|---|"]
            base = pr["delays"][0]["p50"]
            for d in pr["delays"]:
                lines.append(f"| {d['delay_us']} | {d['p50']:.1f} | {d['p50'] - base:.1f} | "
                             f"{d['min']:.1f} | {d['p99']:.1f} |")
            lo = pr["loopback"]
            lines += ["", f"Loopback (the probe's software floor): RTT p50 {lo['p50']:.1f} µs, "
                          f"p99 {lo['p99']:.1f} µs, min {lo['min']:.1f} µs; one stream "
                          f"{pr['loopback_gbps']:.2f} Gbps.", ""]
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--only", choices=("budget", "probe"))
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--calls", type=int, default=1_000_000)
    ap.add_argument("--output", type=Path, default=RESULTS)
    args = ap.parse_args(argv)
    parts: dict[str, Any] = {}
    if args.only in (None, "budget"):
        parts["budget"] = budget(args.rounds, args.calls)
    if args.only in (None, "probe"):
        parts["probe"] = probe()
    text = report(args, parts)
    print(text)
    if args.only and args.output.exists():  # keep the section of the part not run this time
        kept = _sections(args.output.read_text())
        new = _sections(text)
        text = "\n".join([new["head"]] + [new.get(k) or kept.get(k, "") for k in
                                           ("budget", "probe") if new.get(k) or kept.get(k)])
    args.output.parent.mkdir(parents=True, exist_ok=True)
    args.output.write_text(text.rstrip("\n") + "\n")
    return 0


def _sections(text: str) -> dict[str, str]:
    """The header and the "## Budget" / "## Probe" sections of a results file."""
    out: dict[str, list[str]] = {"head": []}
    key = "head"
    for line in text.splitlines():
        if line.startswith("## Budget"):
            key = "budget"
        elif line.startswith("## Probe"):
            key = "probe"
        out.setdefault(key, []).append(line)
    return {k: "\n".join(v).rstrip("\n") + "\n" for k, v in out.items()}


if __name__ == "__main__":
    raise SystemExit(main())

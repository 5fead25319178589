"""``gpupool netcheck serve|probe``: measure the network between a client and a GPU proxy.

``serve`` runs the bounded responder (:mod:`gpupool.netcheck.server`) until SIGTERM or Ctrl-C;
its first line on stdout is ``listening on ADDR:PORT`` (useful with ``--port 0``). ``probe``
measures RTT and bandwidth against it and, with ``--profile``, judges the application's budget
at the measured figures (exit 1 when it is not met). JSON keys: ``rtt_us`` (``p50``, ``p99``,
…), ``bandwidth_gbps``, ``predicted_overhead``, ``verdict``.
"""

from __future__ import annotations

import argparse
import json
import signal
import sys
from typing import Any

from gpupool.errors import InputError


def run(args: argparse.Namespace) -> int:
    if args.netcheck_command == "serve":
        return serve(args)
    return probe(args)


def serve(args: argparse.Namespace) -> int:
    from gpupool.netcheck.server import Server

    try:
        server = Server(args.bind, args.port, max_sessions=args.max_sessions,
                        idle_timeout=args.timeout, max_seconds=args.max_seconds,
                        echo_delay_us=args.echo_delay_us)
    except OSError as e:
        raise InputError(f"--bind/--port: cannot listen on {args.bind}:{args.port} "
                         f"({e.strerror or e})") from None
    host, port = server.address
    for sig in (signal.SIGTERM, signal.SIGINT):
        signal.signal(sig, lambda *_: server.stop())
    shown = f"[{host}]" if ":" in host else host
    print(f"listening on {shown}:{port}", flush=True)
    server.serve_forever()
    print("stopped", flush=True)
    return 0


def probe(args: argparse.Namespace) -> int:
    from gpupool.netcheck.probe import measure_bandwidth, measure_rtt, parse_target
    from gpupool.netcheck.protocol import MAX_ECHO_BYTES

    host, port = parse_target(args.target)
    if args.message_bytes > MAX_ECHO_BYTES:
        raise InputError(f"--message-bytes: expected at most {MAX_ECHO_BYTES}, "
                         f"got {args.message_bytes}")
    profile = None
    if args.profile:
        from gpupool.remoting.profile import load_profile

        profile = load_profile(args.profile)  # bad input fails before any traffic
    dimensions: dict[str, str] = {}
    if args.cloudwatch:
        from gpupool.netcheck.cloudwatch import parse_dimensions

        dimensions = parse_dimensions(args.dimension or [])
    rtt = measure_rtt(host, port, seconds=args.seconds * 0.4, size=args.message_bytes)
    bw = measure_bandwidth(host, port, seconds=args.seconds * 0.6, streams=args.streams)
    result: dict[str, Any] = {
        "target": f"{host}:{port}",
        "rtt_us": {"p50": rtt.p50, "p99": rtt.p99, "max": rtt.max, "min": rtt.min,
                   "mean": rtt.mean, "samples": rtt.samples},
        "bandwidth_gbps": bw.gbps,
        "bandwidth": {"bytes": bw.bytes, "seconds": bw.seconds, "streams": bw.streams,
                      "direction": "client to server"},
        "message_bytes": args.message_bytes,
        "profile": None,
        "max_overhead": args.max_overhead,
        "predicted_overhead": None,
        "verdict": None,
    }
    if profile is not None:
        result.update(judge(profile, args.profile, rtt.p50, rtt.p99, bw.gbps, args.max_overhead))
    if args.cloudwatch:
        from gpupool.netcheck.cloudwatch import put

        sent = put(result, dimensions, namespace=args.namespace, region=args.region)
        result["cloudwatch"] = {"namespace": args.namespace, "metrics": sent}
    if args.format == "json":
        sys.stdout.write(json.dumps(result, indent=1, allow_nan=False) + "\n")
    else:
        render_text(result)
    return 1 if result["verdict"] == "fail" else 0


def judge(profile: Any, path: str, p50: float, p99: float, gbps: float,
          eps: float) -> dict[str, Any]:
    """The budget at the measured figures: median RTT for the verdict, p99 as the worst case."""
    from gpupool.remoting.assess import NetworkGiven, assess, overhead_at, shown_path

    trace = None if profile.trace is None else shown_path(profile.trace)
    at = assess(profile, NetworkGiven(p50, gbps, "measured"), eps, profile_path=path,
                trace_shown=trace)
    return {
        "profile": profile.name,
        "model": at["model"],
        "predicted_overhead": at["predicted_overhead"],
        "predicted_overhead_at_p99": overhead_at(profile, p99, gbps),
        "rtt_max_us": at.get("rtt_max_us"),
        "bandwidth_min_gbps": at.get("bandwidth_min_gbps"),
        "verdict": "pass" if at["feasible"] else "fail",
        "advice": at["advice"],
    }


def render_text(r: dict[str, Any]) -> None:
    rtt = r["rtt_us"]
    out = sys.stdout
    out.write(f"netcheck {r['target']}\n")
    out.write(f"  RTT ({r['message_bytes']}-byte messages, TCP_NODELAY, {rtt['samples']:,} round "
              f"trips): p50 {rtt['p50']:,.1f} µs, p99 {rtt['p99']:,.1f} µs, "
              f"max {rtt['max']:,.1f} µs, min {rtt['min']:,.1f} µs\n")
    bw = r["bandwidth"]
    out.write(f"  bandwidth (client to server, {bw['streams']} stream(s), {bw['seconds']:.2f} s): "
              f"{r['bandwidth_gbps']:,.3g} Gbps\n")
    if r["verdict"] is not None:
        eps = r["max_overhead"]
        out.write(f"  {r['profile']} ({r['model']}): predicted overhead "
                  f"{r['predicted_overhead'] * 100:.3g} % at the median RTT, "
                  f"{r['predicted_overhead_at_p99'] * 100:.3g} % if every round trip were p99; "
                  f"budget {eps * 100:.3g} %\n")
        if r.get("rtt_max_us") is not None:
            out.write(f"  largest RTT at this bandwidth: {r['rtt_max_us']:,.3g} µs\n")
        if r.get("bandwidth_min_gbps") is not None:
            out.write(f"  least bandwidth at this RTT: {r['bandwidth_min_gbps']:,.3g} Gbps\n")
        out.write(f"verdict: {r['verdict'].upper()}\n")
    else:
        out.write("verdict: none (give --profile to judge an application's budget)\n")
    if "cloudwatch" in r:
        out.write(f"  sent {r['cloudwatch']['metrics']} metrics to CloudWatch "
                  f"({r['cloudwatch']['namespace']})\n")

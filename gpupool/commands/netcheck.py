"""``gpupool netcheck serve|probe``: measure the network between a client and a GPU proxy.

``serve`` runs the bounded responder (:mod:`gpupool.netcheck.server`) until SIGTERM or Ctrl-C;
its first line on stdout is ``listening on ADDR:PORT`` (useful with ``--port 0``). ``probe``
measures RTT and the bandwidth of both directions against it and, with ``--profile``, judges
the application's budget at the measured figures (exit 1 when it is not met). JSON keys:
``rtt_us`` (``p50``, ``p99``, …), ``bandwidth_gbps``, ``predicted_overhead``, ``verdict``.

The server runs on the GPU proxy, the probe on a client: client → server carries
``bytes_to_gpu``, server → client ``bytes_from_gpu``. The verdict charges each direction's bytes
at that direction's measured bandwidth and judges each direction against what the round trips
and the other direction leave of the budget (``directions``,
:mod:`gpupool.remoting.directions`). ``bandwidth_gbps`` is the LOWER of the two: one figure
that holds both ways, for alarms and for ``bandwidth_min_gbps`` (the least bandwidth, the same
both ways, at the median RTT).
"""

from __future__ import annotations

import argparse
import json
import signal
import sys
from typing import TYPE_CHECKING, Any

from gpupool.errors import InputError

if TYPE_CHECKING:
    from gpupool.remoting.directions import Measured


def run(args: argparse.Namespace) -> int:
    if args.netcheck_command == "serve":
        return serve(args)
    return probe(args)


def serve(args: argparse.Namespace) -> int:
    from gpupool.netcheck.server import Server

    token = None
    if args.token_file:
        from gpupool.netcheck.token import read_token

        token = read_token(args.token_file)
    try:
        server = Server(args.bind, args.port, max_sessions=args.max_sessions,
                        idle_timeout=args.timeout, max_seconds=args.max_seconds,
                        echo_delay_us=args.echo_delay_us, token=token)
    except (OSError, UnicodeError, OverflowError) as e:
        raise InputError(f"--bind/--port: cannot listen on {args.bind}:{args.port} "
                         f"({getattr(e, 'strerror', None) or e})") from None
    host, port = server.address
    for sig in (signal.SIGTERM, signal.SIGINT):
        signal.signal(sig, lambda *_: server.stop())
    shown = f"[{host}]" if ":" in host else host
    if host in ("0.0.0.0", "::"):
        sys.stderr.write(f"gpupool netcheck serve: listening on every interface ({host}); "
                         "give the proxy's private address to --bind, and --token-file\n")
    print(f"listening on {shown}:{port}", flush=True)
    server.serve_forever()
    print("stopped", flush=True)
    return 0


def probe(args: argparse.Namespace) -> int:
    from gpupool.netcheck.link import Deadline, Link, parse_target, resolve
    from gpupool.netcheck.probe import (
        measure_bandwidth,
        measure_reverse_bandwidth,
        measure_rtt,
    )
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
    token = None
    if args.token_file:
        from gpupool.netcheck.token import read_token

        token = read_token(args.token_file)
    limit = args.deadline if args.deadline is not None else default_deadline(args.seconds)
    if limit < args.seconds:
        raise InputError(f"--deadline {limit:g}: expected at least --seconds ({args.seconds:g})"
                         ", the time the probe measures for")
    link = Link(resolve(host, port), port, token=token, deadline=Deadline(limit, args.target),
                name=host)
    rtt = measure_rtt(host, port, seconds=args.seconds * 0.4, size=args.message_bytes,
                      link=link)
    up = measure_bandwidth(host, port, seconds=args.seconds * 0.3, streams=args.streams,
                           link=link)
    down = measure_reverse_bandwidth(host, port, seconds=args.seconds * 0.3,
                                     streams=args.streams, link=link)
    result: dict[str, Any] = {
        "target": f"{host}:{port}",
        "rtt_us": {"p50": rtt.p50, "p99": rtt.p99, "max": rtt.max, "min": rtt.min,
                   "mean": rtt.mean, "samples": rtt.samples},
        "bandwidth_gbps": min(up.gbps, down.gbps),
        "bandwidth": {
            "streams": args.streams,
            "bandwidth_gbps_is": "the lower of the two directions",
            "client_to_server": {"gbps": up.gbps, "bytes": up.bytes, "seconds": up.seconds,
                                 "timed_by": "client"},
            "server_to_client": {"gbps": down.gbps, "bytes": down.bytes,
                                 "seconds": down.seconds, "timed_by": "client"},
        },
        "message_bytes": args.message_bytes,
        "deadline_s": limit,
        "profile": None,
        "max_overhead": args.max_overhead,
        "predicted_overhead": None,
        "verdict": None,
    }
    if profile is not None:
        from gpupool.remoting.directions import Measured

        result.update(judge(profile, args.profile, Measured(rtt.p50, rtt.p99, up.gbps, down.gbps),
                            args.max_overhead, args.latency))
    if args.cloudwatch:
        from gpupool.netcheck.cloudwatch import put

        sent = put(result, dimensions, namespace=args.namespace, region=args.region)
        result["cloudwatch"] = {"namespace": args.namespace, "metrics": sent}
    if args.format == "json":
        sys.stdout.write(json.dumps(result, indent=1, allow_nan=False) + "\n")
    else:
        render_text(result)
    return 1 if result["verdict"] == "fail" else 0


def default_deadline(seconds: float) -> float:
    """Twice the measuring time and 30 s for connections and hellos: a healthy probe never
    comes near it, a trickling or silent server is cut off."""
    return 2 * seconds + 30


def judge(profile: Any, path: str, m: Measured, eps: float,
          latency: str = "serialised") -> dict[str, Any]:
    """The budget at the measured figures: median RTT for the verdict, p99 as the worst case,
    each direction's bytes at that direction's bandwidth. The advice and the symmetric
    ``bandwidth_min_gbps`` are ``gpupool remoting``'s at the lower of the two bandwidths."""
    from gpupool.remoting.assess import NetworkGiven, assess, shown_path
    from gpupool.remoting.directions import judge_directions
    from gpupool.remoting.latency import Latency

    trace = None if profile.trace is None else shown_path(profile.trace)
    lower = min(m.to_gpu_gbps, m.from_gpu_gbps)
    at = assess(profile, NetworkGiven(m.rtt_p50_us, lower, "measured, the lower direction"),
                eps, profile_path=path, trace_shown=trace, latency=Latency(latency))
    both = judge_directions(profile, m, eps, Latency(latency))
    return {
        "profile": profile.name,
        "model": at["model"],
        "latency": at["latency"],
        "predicted_overhead": both["predicted_overhead"],
        "predicted_overhead_at_p99": both["predicted_overhead_at_p99"],
        "rtt_max_us": both["rtt_max_us"],
        "bandwidth_min_gbps": at.get("bandwidth_min_gbps"),
        "directions": both["directions"],
        "verdict": "pass" if both["feasible"] else "fail",
        "advice": at["advice"],
    }


def render_text(r: dict[str, Any]) -> None:
    from gpupool.terminal import safe

    rtt = r["rtt_us"]
    out = sys.stdout
    out.write(f"netcheck {r['target']}\n")
    out.write(f"  RTT ({r['message_bytes']}-byte messages, TCP_NODELAY, {rtt['samples']:,} round "
              f"trips): p50 {rtt['p50']:,.1f} µs, p99 {rtt['p99']:,.1f} µs, "
              f"max {rtt['max']:,.1f} µs, min {rtt['min']:,.1f} µs\n")
    bw = r["bandwidth"]
    up, down = bw["client_to_server"], bw["server_to_client"]
    out.write(f"  bandwidth ({bw['streams']} stream(s)): client to server {up['gbps']:,.3g} Gbps "
              f"({up['seconds']:.2f} s), server to client {down['gbps']:,.3g} Gbps "
              f"({down['seconds']:.2f} s); judged at the lower, "
              f"{r['bandwidth_gbps']:,.3g} Gbps\n")
    if r["verdict"] is not None:
        eps = r["max_overhead"]
        out.write(f"  {safe(r['profile'])} ({r['model']}, {r['latency']} latency): predicted "
                  f"overhead {r['predicted_overhead'] * 100:.3g} % at the median RTT, "
                  f"{r['predicted_overhead_at_p99'] * 100:.3g} % if every round trip were p99; "
                  f"budget {eps * 100:.3g} %\n")
        for d in r["directions"].values():
            need = ("no bandwidth is enough (the round trips and the other direction use "
                    "the whole budget)" if d["min_gbps"] is None
                    else f"needs at least {d['min_gbps']:,.3g} Gbps")
            out.write(f"  {d['direction']}: {d['bytes']:,.0f} bytes at {d['measured_gbps']:,.3g} "
                      f"Gbps measured; at the median RTT {need}: "
                      f"{'ok' if d['meets'] else 'NOT MET'}\n")
        if r.get("rtt_max_us") is not None:
            out.write(f"  largest RTT at these bandwidths: {r['rtt_max_us']:,.3g} µs\n")
        if r.get("bandwidth_min_gbps") is not None:
            out.write(f"  least bandwidth (both ways) at this RTT: "
                      f"{r['bandwidth_min_gbps']:,.3g} Gbps\n")
        out.write(f"verdict: {r['verdict'].upper()}\n")
    else:
        out.write("verdict: none (give --profile to judge an application's budget)\n")
    if "cloudwatch" in r:
        out.write(f"  sent {r['cloudwatch']['metrics']} metrics to CloudWatch "
                  f"({r['cloudwatch']['namespace']})\n")

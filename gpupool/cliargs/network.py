"""Arguments of the remote-GPU commands: remoting (the budget) and netcheck (the probe)."""

from __future__ import annotations

import argparse

from gpupool.cliargs.parser import Parser, command


def add_remoting(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    from gpupool.argtypes import at_most, between, count, non_negative

    r = command(sub, "remoting", "network budget of an application on a remote GPU",
                "How much slower an application runs when its CUDA calls go to a GPU proxy "
                "over the network, from its profile (call counts and bytes, optionally a "
                "per-call trace): the predicted overhead at an RTT and a bandwidth, the largest "
                "RTT at a bandwidth, or the least bandwidth at an RTT. --instance-type budgets "
                "against what ONE flow gets on that type (its baseline, capped per flow by the "
                "network kind) and the kind's RTT floor, and lists every network kind of the "
                "type with its verdict. Latency is serialised (the authors' model) unless "
                "--latency pipelined; the other model is shown beside it, and the cheapest "
                "proxy type and network kind that meet the budget. Exit 0: the budget is met "
                "(or can be, at some network kind's RTT floor); 1: it is not; 2: bad input. "
                "See docs/remoting.md.",
                ["gpupool remoting examples/profiles/bert-inference.yaml --rtt-us 20 "
                 "--bandwidth-gbps 100",
                 "gpupool remoting examples/profiles/resnet50-inference.yaml "
                 "--instance-type g5.xlarge --format json",
                 "gpupool remoting examples/profiles/bert-inference.yaml "
                 "--instance-type p5.4xlarge --network efa",
                 "gpupool remoting examples/profiles/decode-launch-bound.yaml --rtt-us 30 "
                 "--bandwidth-gbps 100 --latency pipelined"])
    r.add_argument("profile", metavar="PROFILE", help="application profile (YAML)")
    r.add_argument("--rtt-us", type=at_most(1e7, non_negative, " µs"), metavar="R",
                   help="round-trip time, µs")
    r.add_argument("--bandwidth-gbps", type=between(1e-6, 1e5, " Gbps"), metavar="B",
                   help="bandwidth, Gbit/s")
    r.add_argument("--instance-type", metavar="T",
                   help="proxy instance type: what one flow gets on it (baseline capped per "
                        "flow) is B, unless --bandwidth-gbps is given")
    r.add_argument("--network", choices=("tcp", "ena-express", "efa"), default=None,
                   help="with --instance-type: the network kind budgeted (default tcp: TCP over "
                        "ENA in a cluster placement group)")
    r.add_argument("--max-overhead", type=at_most(1e6), default=0.05, metavar="E",
                   help="budget: largest slowdown as a fraction of the local run (default 0.05)")
    r.add_argument("--latency", choices=("serialised", "pipelined"), default="serialised",
                   help="how requests in flight together pay the RTT: serialised (default; the "
                        "authors' model: each one's RTT/2 after the previous arrival) or "
                        "pipelined (a FIFO link that overlaps them); docs/remoting-model.md")
    r.add_argument("--top", type=count, default=3, metavar="K",
                   help="with a trace: what-ifs for the K costliest synchronous calls (default 3)")
    r.add_argument("--format", choices=("text", "json"), default="text")


def add_netcheck(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    from gpupool.argtypes import at_most, count, count_at_most, listen_port, non_negative

    port = 9801  # gpupool.netcheck.protocol.DEFAULT_PORT (not imported: keep --help light)
    n = command(sub, "netcheck", "measure RTT and bandwidth between a client and a GPU proxy",
                "Run 'serve' on the proxy host and 'probe' on the client host: small-message "
                "round trips (TCP_NODELAY) and bulk throughput, and with --profile the "
                "application's predicted overhead on this network and a verdict. See "
                "docs/netcheck.md.",
                [f"gpupool netcheck serve --bind 10.0.1.7 --port {port}",
                 f"gpupool netcheck probe 10.0.1.7:{port} --profile app.yaml --seconds 10",
                 f"gpupool netcheck probe 10.0.1.7:{port} --streams 4 --format json"])
    nsub = n.add_subparsers(dest="netcheck_command", required=True, parser_class=Parser)
    s = command(nsub, "serve", "run the bounded responder the probe measures against",
                "Echo small messages, swallow or send bulk streams; nothing else (no files, no "
                "commands). Bounded: session limit, read timeout, session length; stops "
                "cleanly on SIGTERM. Prints 'listening on ADDR:PORT' first.",
                [f"gpupool netcheck serve --bind 10.0.1.7 --port {port}",
                 "gpupool netcheck serve --bind 10.0.1.7 --token-file /etc/gpupool/netcheck"
                 ".token"])
    s.add_argument("--bind", default="127.0.0.1", metavar="ADDR",
                   help="address to listen on (default 127.0.0.1: give the private IP)")
    s.add_argument("--port", type=listen_port, default=port, metavar="P",
                   help=f"default {port}; 0: any free port (printed on the first line)")
    s.add_argument("--max-sessions", type=count_at_most(256), default=8, metavar="N",
                   help="sessions at once (default 8, at most 256)")
    s.add_argument("--timeout", type=at_most(3600, unit=" s"), default=10.0, metavar="S",
                   help="seconds a read may wait (default 10, at most 3600)")
    s.add_argument("--max-seconds", type=at_most(3600, unit=" s"), default=60.0, metavar="S",
                   help="longest session, whatever the peer sends (default 60, at most 3600)")
    s.add_argument("--echo-delay-us", type=at_most(1e6, non_negative, " µs"), default=0.0,
                   metavar="D", help="add D µs before each echo (calibration; a slower network "
                   "on demand; at most 1,000,000)")
    s.add_argument("--token-file", metavar="FILE",
                   help="serve only probes that hold this shared token (at least 16 characters; "
                        "the probe gives the same file)")
    pr = command(nsub, "probe", "measure RTT and bandwidth to a netcheck server",
                 "Round trips for 40 % of --seconds, then bulk streams client to server "
                 "(30 %) and server to client (30 %); bandwidth_gbps is the lower direction. "
                 "With --profile: the predicted overhead at the median RTT, bytes_to_gpu at "
                 "the client-to-server bandwidth and bytes_from_gpu at the server-to-client "
                 "one, each direction against what is left of the budget, and a verdict "
                 "(exit 1 when the budget is not met).",
                 [f"gpupool netcheck probe 10.0.1.7:{port} --profile app.yaml",
                  f"gpupool netcheck probe 10.0.1.7:{port} --cloudwatch "
                  "--dimension AutoScalingGroupName=proxies"])
    pr.add_argument("target", metavar="HOST:PORT")
    pr.add_argument("--profile", metavar="F", help="application profile (YAML) to judge")
    pr.add_argument("--max-overhead", type=at_most(1e6), default=0.05, metavar="E",
                    help="with --profile: the budget, a fraction of the local run (default 0.05)")
    pr.add_argument("--latency", choices=("serialised", "pipelined"), default="serialised",
                    help="with --profile: the latency model, as gpupool remoting's (default "
                         "serialised)")
    pr.add_argument("--seconds", type=at_most(3600, unit=" s"), default=5.0, metavar="S",
                    help="measuring time in all (default 5, at most 3600)")
    pr.add_argument("--streams", type=count_at_most(64), default=1, metavar="N",
                    help="parallel bulk streams (default 1: what one connection gets; at most "
                         "64)")
    pr.add_argument("--message-bytes", type=count, default=64, metavar="B",
                    help="size of a round-trip message (default 64, at most 65536)")
    pr.add_argument("--deadline", type=at_most(7200, unit=" s"), metavar="S",
                    help="the whole probe ends by then, whatever the server does (default: "
                         "2 x --seconds + 30)")
    pr.add_argument("--token-file", metavar="FILE", help="the server's shared token")
    pr.add_argument("--format", choices=("text", "json"), default="text")
    pr.add_argument("--cloudwatch", action="store_true",
                    help="also put the figures into CloudWatch (boto3)")
    pr.add_argument("--namespace", default="GPUPool/Netcheck")
    pr.add_argument("--dimension", action="append", metavar="NAME=VALUE")
    pr.add_argument("--region", metavar="R")

"""Network guardrail benchmarks: what the three gpu-proxy rules cost, and the proxy tier's plan.

    .venv/bin/python bench/network_bench.py                   # all three parts
    .venv/bin/python bench/network_bench.py --only rules      # one part: overhead|rules|plan

**overhead**: ``policies.engine.evaluate`` in this process on the ``bench/gen_tfplan.py`` plan
(a platform team's plan with GPU pools and no proxy), with every rule against the same with the
three network rules disabled, rounds interleaved: what the rules cost a plan that has no proxy.

**rules**: the three network rules alone on generated Pulumi-shaped plans of N proxy tiers
(placement group, two security groups and a rule, proxy and client templates and groups, a GPU
scaling policy; one tier in ten with an open ingress rule and a load balancer attachment whose
targets are unknown until apply). Linear growth is the goal: every link is indexed once
(``policies.facts.network.links.Pointers``), never searched per proxy.

**plan**: ``gpupool plan staging`` (a remote-GPU tier with a client group) against the same stack
file without ``gpupool:remoteGpu``, each in a fresh process: what the tier adds to an offline
plan (28 resources, profile read and sizing included).

Results go to the terminal and to bench/results/network.md.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(ROOT))

import run as benchrun  # noqa: E402  (bench/run.py: measure, Series, interleaved, tables)

BIN = Path(sys.executable).parent
OUT = HERE / "out"
RESULTS = HERE / "results" / "network.md"
NETWORK = ("gpu-proxy-placement", "gpu-proxy-private", "gpu-proxy-network-budget")


def _settings(only: tuple[str, ...] | None = None, without: tuple[str, ...] = ()) -> Any:
    from policies.rules import rule_ids
    from policies.settings import parse_config

    doc = {rid: "disabled" for rid in rule_ids()
           if (only is not None and rid not in only) or rid in without}
    return parse_config(doc, "bench")


def _timed(fn: Any, rounds: int) -> list[float]:
    """CPU seconds of this process per call: on a shared machine, wall time mostly measures
    the neighbours."""
    out = []
    for _ in range(rounds):
        t0 = time.process_time()
        fn()
        out.append(time.process_time() - t0)
    return out


def overhead(size: int, rounds: int) -> dict[str, Any]:
    """All rules vs all but the network ones, on a gen_tfplan plan (no proxies in it)."""
    import subprocess

    from policies.engine import evaluate
    from policies.sources import load_plan

    OUT.mkdir(parents=True, exist_ok=True)
    path = OUT / f"network-tfplan-{size}.json"
    if not path.exists():
        with path.open("w") as f:
            subprocess.run([sys.executable, str(HERE / "gen_tfplan.py"), str(size)], stdout=f,
                           check=True, cwd=ROOT)
    plan = load_plan(str(path))
    from gpupool.catalog import load_catalog
    from policies.facts import PlanIndex
    from policies.rules import get_rule
    from policies.rules.base import RuleContext

    every, fewer, only = _settings(), _settings(without=NETWORK), _settings(only=NETWORK)
    evaluate([plan], every)  # warm-up: catalog, imports

    def warm_index() -> PlanIndex:
        """A fresh index with what the other rules and the cost lines resolve anyway (every
        group's and instance's launch templates), untimed."""
        index = PlanIndex(plan.changes)
        for c in plan.changes:
            if c.kind.value in ("autoscaling-group", "instance"):
                index.launch_templates(c)
        return index

    def checks(index: PlanIndex) -> None:
        """The three rules' own work."""
        for rid in NETWORK:
            rule = get_rule(rid)
            ctx = RuleContext(load_catalog(), rule.parse_params(), index.by_address,
                              plan_index=index)
            list(rule.check(plan.changes, ctx))

    times: dict[str, list[float]] = {"all rules": [], "without the network rules": [],
                                     "the network rules alone": [],
                                     "their checks alone (index given)": []}
    for _ in range(rounds):  # interleaved
        times["all rules"] += _timed(lambda: evaluate([plan], every), 1)
        times["without the network rules"] += _timed(lambda: evaluate([plan], fewer), 1)
        times["the network rules alone"] += _timed(lambda: evaluate([plan], only), 1)
        index = warm_index()
        times["their checks alone (index given)"] += _timed(lambda i=index: checks(i), 1)
    return {"size": len(plan.changes), "times": times}


def tiers_plan(n: int) -> Any:
    """N proxy tiers as the normalised changes a Pulumi preview gives (links by name)."""
    from policies.model import Plan
    from policies.rules.base import Example

    resources: list[dict[str, Any]] = []
    for i in range(n):
        proxy = {"gpupool:role": "gpu-proxy", "gpupool:remoting-min-gbps": "4",
                 "gpupool:remoting-max-rtt-us": "200", "team": "ml"}
        client = {"gpupool:role": "gpu-client", "team": "ml"}
        resources += [
            {"type": "aws:ec2/placementGroup:PlacementGroup", "name": f"pg-{i}",
             "new": {"name": f"pg-{i}", "strategy": "cluster"}},
            {"type": "aws:ec2/securityGroup:SecurityGroup", "name": f"sg-p-{i}",
             "new": {"name": f"sg-p-{i}", "ingress": []}},
            {"type": "aws:ec2/securityGroup:SecurityGroup", "name": f"sg-c-{i}",
             "new": {"name": f"sg-c-{i}"}},
            {"type": "aws:vpc/securityGroupIngressRule:SecurityGroupIngressRule",
             "name": f"from-clients-{i}",
             "new": {"securityGroupId": f"sg-p-{i}", "referencedSecurityGroupId": f"sg-c-{i}",
                     "ipProtocol": "tcp", "fromPort": 18515, "toPort": 18515}},
        ]
        for role, sg, itype, tags in (("p", f"sg-p-{i}", "g4dn.xlarge", proxy),
                                      ("c", f"sg-c-{i}", "c7i.large", client)):
            resources += [
                {"type": "aws:ec2/launchTemplate:LaunchTemplate", "name": f"lt-{role}-{i}",
                 "new": {"name": f"lt-{role}-{i}", "instanceType": itype,
                         "placement": {"groupName": f"pg-{i}"}, "tags": tags,
                         "networkInterfaces": [{"associatePublicIpAddress": "false",
                                                "securityGroups": [sg]}]}},
                {"type": "aws:autoscaling/group:Group", "name": f"asg-{role}-{i}",
                 "new": {"name": f"asg-{role}-{i}", "launchTemplate": {"name": f"lt-{role}-{i}"},
                         "vpcZoneIdentifiers": [f"subnet-{i % 3}"]}},
            ]
        if i % 10 == 0:
            resources += [
                {"type": "aws_vpc_security_group_ingress_rule", "name": f"open-{i}",
                 "address": f"aws_vpc_security_group_ingress_rule.open_{i}",
                 "new": {"cidr_ipv4": "0.0.0.0/0", "security_group_id": "(known after apply)"}},
                {"type": "aws_autoscaling_attachment", "name": f"front-{i}",
                 "address": f"aws_autoscaling_attachment.front_{i}",
                 "new": {"autoscaling_group_name": "(known after apply)"}},
            ]
    return Plan(source="bench", origin=f"{n} tiers",
                changes=tuple(Example("bench", True, resources).changes()))


def rules(sizes: list[int], rounds: int) -> dict[str, Any]:
    from policies.engine import evaluate

    only = _settings(only=NETWORK)
    out: dict[str, Any] = {}
    plans = {n: tiers_plan(n) for n in sizes}
    evaluate([plans[sizes[0]]], only)  # warm-up
    times: dict[int, list[float]] = {n: [] for n in sizes}
    findings: dict[int, int] = {}
    for _ in range(rounds):
        for n in sizes:
            t0 = time.process_time()
            result = evaluate([plans[n]], only)
            times[n].append(time.process_time() - t0)
            findings[n] = len(result.violations)
    out["times"] = times
    out["resources"] = {n: len(plans[n].changes) for n in sizes}
    out["findings"] = findings
    return out


def plan(rounds: int, timeout: float) -> dict[str, Any]:
    import tempfile

    from gpupool.yamlio import read_yaml

    stack = ROOT / "stacks" / "Pulumi.staging.yaml"
    doc = read_yaml(stack)
    doc["config"].pop("gpupool:remoteGpu")
    tmp = Path(tempfile.mkdtemp(prefix="gpupool-bench-"))
    bare = tmp / "Pulumi.staging.yaml"
    bare.write_text(json.dumps(doc))  # JSON is YAML
    gp = str(BIN / "gpupool")
    with_tier = benchrun.Series("gpupool plan staging (with its remote-GPU tier)")
    without = benchrun.Series("gpupool plan staging without gpupool:remoteGpu")
    jobs = [
        (with_tier, lambda: benchrun.measure([gp, "plan", str(stack), "--format", "json"],
                                             timeout=timeout)),
        (without, lambda: benchrun.measure([gp, "plan", str(bare), "--format", "json"],
                                           timeout=timeout)),
    ]
    benchrun.interleaved(jobs, rounds)
    return {"series": [with_tier, without]}


def _ms(values: list[float]) -> str:
    return f"{1000 * statistics.median(values):,.1f} ms"


def _sections(lines: list[str]) -> tuple[list[str], dict[str, list[str]]]:
    head: list[str] = []
    sections: dict[str, list[str]] = {}
    current: list[str] = head
    for line in lines:
        if line.startswith("## "):
            current = sections.setdefault(line, [])
        else:
            current.append(line)
    return head, sections


def _merged(lines: list[str]) -> str:
    """This run's sections (each under its run's date and machine), the others kept."""
    head, new = _sections(lines)
    old: dict[str, list[str]] = {}
    if RESULTS.exists():
        _, old = _sections(RESULTS.read_text().splitlines())
    out = head[:4]  # title and the line naming the script
    for heading in ("## Overhead on a plan without proxies",
                    "## The three network rules on N proxy tiers",
                    "## Offline plan with and without the tier"):
        if heading in new:
            text = new[heading]
            while text and not text[0]:
                text = text[1:]
            body: list[str] | None = ["", *head[4:], *text]
        else:
            body = old.get(heading)
        if body is not None:
            out += [heading, *body]
    return "\n".join(out).rstrip() + "\n"


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--only", choices=("overhead", "rules", "plan"), action="append")
    p.add_argument("--size", type=int, default=10000, help="gen_tfplan size (overhead part)")
    p.add_argument("--tiers", default="250,500,1000,2000", help="tier counts (rules part)")
    p.add_argument("--rounds", type=int, default=5)
    p.add_argument("--timeout", type=float, default=300)
    args = p.parse_args(argv)
    parts = set(args.only or ("overhead", "rules", "plan"))
    lines = ["# Network guardrail benchmarks", "",
             "Written by `bench/network_bench.py` (see bench/README.md).", "",
             f"- date: {datetime.now(UTC):%Y-%m-%d %H:%M} UTC",
             f"- machine: {benchrun.machine()}",
             f"- command: `python bench/network_bench.py {' '.join(sys.argv[1:])}`".rstrip(),
             ""]
    if "overhead" in parts:
        res = overhead(args.size, args.rounds)
        t = res["times"]
        a, b = (statistics.median(t["all rules"]),
                statistics.median(t["without the network rules"]))
        own = statistics.median(t["their checks alone (index given)"])
        rows = [[k, _ms(v)] for k, v in t.items()]
        goal = (f"on a plan of {res['size']:,} resources without proxies the three rules' own "
                f"checks cost {1000 * own:,.1f} ms CPU ({100 * own / b:.1f} % of the other "
                f"rules' evaluation; by difference of the first two rows "
                f"{1000 * (a - b):+,.1f} ms, within this machine's noise)")
        benchrun.print_table("overhead (CPU)", ["evaluate", "median"], rows, [goal])
        lines += ["## Overhead on a plan without proxies", "",
                  f"`bench/gen_tfplan.py {args.size}` ({res['size']:,} resources), "
                  f"`policies.engine.evaluate` in process, CPU time, {args.rounds} interleaved "
                  "rounds.", "",
                  benchrun.markdown_table(["evaluate", "median CPU"], rows), "", f"- {goal}", ""]
    if "rules" in parts:
        sizes = [int(s) for s in args.tiers.split(",")]
        res = rules(sizes, args.rounds)
        rows = []
        per: list[float] = []
        for n in sizes:
            m = statistics.median(res["times"][n])
            per.append(m / n)
            rows.append([f"{n:,}", f"{res['resources'][n]:,}", f"{res['findings'][n]:,}",
                         _ms(res["times"][n]), f"{1e6 * m / n:,.0f} µs"])
        growth = per[-1] / per[0]
        goal = (f"cost per tier at {sizes[-1]:,} tiers is {growth:.2f} times that at {sizes[0]:,} "
                f"({'linear' if growth < 1.5 else 'NOT linear'})")
        head = ["tiers", "resources", "findings", "median", "per tier"]
        benchrun.print_table("the three network rules", head, rows, [goal])
        lines += ["## The three network rules on N proxy tiers", "",
                  "Generated Pulumi-shaped plans (links by name; one tier in ten with an open "
                  "ingress rule and an attachment of unknown target), network rules only, CPU "
                  f"time, {args.rounds} rounds.", "", benchrun.markdown_table(head, rows), "",
                  f"- {goal}", ""]
    if "plan" in parts:
        res = plan(args.rounds, args.timeout)
        rows = [[s.label, f"{s.median('wall'):.2f} s", f"{s.median('cpu'):.2f} s",
                 f"{s.median('peak_mib'):.0f} MiB"] for s in res["series"]]
        a, b = (s.median("wall") for s in res["series"])
        goal = f"the tier adds {a - b:+.2f} s wall ({100 * (a / b - 1):+.0f} %) to the plan"
        head = ["command", "wall", "CPU", "peak"]
        benchrun.print_table("offline plan with and without the tier", head, rows, [goal])
        lines += ["## Offline plan with and without the tier", "",
                  f"Fresh processes, {args.rounds} interleaved rounds after a warm-up.", "",
                  benchrun.markdown_table(head, rows), "", f"- {goal}", ""]
    RESULTS.parent.mkdir(parents=True, exist_ok=True)
    RESULTS.write_text(_merged(lines))
    print(f"wrote {RESULTS}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

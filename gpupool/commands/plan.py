"""``gpupool plan STACK [--format text|json] [--output FILE]``: the offline plan of a stack.

Runs the Pulumi program in-process under the mock runtime (``infra.offline``) and shows what the
stack would create, its GPU capacity envelope and its cost envelope. JSON is the
``gpupool-plan`` document the policy engine reads. With ``--output`` the plan goes where the path
points (``gpupool.output.write_output``: files atomically, devices and FIFOs written through)
and stdout gets one summary line (stderr, when the plan itself went to stdout). Pulumi and
rich are imported only here, and only when needed.
"""

from __future__ import annotations

import argparse
import io
import json
import sys
from typing import IO, TYPE_CHECKING, Any

from gpupool.config import load_stack
from gpupool.output import console as output_console
from gpupool.output import write_output, write_stdout

if TYPE_CHECKING:
    from rich.console import Console

    from gpupool.envelope import StackEnvelope
    from infra.offline.plan import OfflinePlan, PlannedResource

UNKNOWN_PRICE = "unknown"


def run(args: argparse.Namespace) -> int:
    loaded = load_stack(args.stack)
    from infra.offline import run_offline

    plan = run_offline(loaded)
    if args.format == "json":
        text = json.dumps(plan.to_document(), indent=2, sort_keys=True) + "\n"
    elif args.output is None:
        render_text(plan, sys.stdout, color=True)  # rich decides whether stdout is a terminal
        return 0
    else:
        buf = io.StringIO()
        render_text(plan, buf, color=False)
        text = buf.getvalue()
    if args.output is None:
        write_stdout(text)
        return 0
    to_stdout = write_output(args.output, text)
    env = plan.envelope
    status = sys.stderr if to_stdout else sys.stdout  # never mixed into the plan itself
    status.write(
        f"wrote {args.output}: stack {plan.stack}, "
        f"{sum(r.custom for r in plan.resources)} resources, "
        f"GPUs {_num(env.gpus_min)}-{_num(env.gpus_max)}, "
        f"{_price(env.per_hour_min)}-{_price(env.per_hour_max)} $/h\n"
    )
    return 0


# --------------------------------------------------------------------------- text


def render_text(plan: OfflinePlan, out: IO[str], *, color: bool = True) -> None:
    console = output_console(file=out, no_color=not color, highlight=False, soft_wrap=False)
    if not console.is_terminal:
        console.width = max(console.width, 140)
    custom = sum(r.custom for r in plan.resources)
    console.print(
        f"[bold]Offline plan[/bold] of stack [bold]{plan.stack}[/bold] "
        f"(project {plan.project}, {plan.region}): {custom} resources to create"
    )
    console.print(
        f"[dim]Data sources answered from {plan.fixture}; resource ids are placeholders.[/dim]"
    )
    console.print(_tree(plan))
    for line in plan.diagnostics:
        console.print(f"[yellow]{line}[/yellow]")
    if plan.placeholders:
        from rich.markup import escape

        console.print("[bold]Placeholders[/bold] (data-source answers resolved at pulumi up):")
        for line in plan.placeholders:
            console.print(f"[dim]  {escape(line)}[/dim]")
    _capacity_table(console, plan.envelope)
    _cost_table(console, plan.envelope)
    _tiers_table(console, plan.envelope)


def _tree(plan: OfflinePlan) -> Any:
    from rich.markup import escape
    from rich.tree import Tree

    nodes: dict[str | None, Tree] = {}
    root = Tree("[dim]resources by parent[/dim]", guide_style="dim")
    for r in plan.resources:
        parent = nodes.get(r.parent, root)
        kind = escape(short_type(r.type))
        name = escape(r.name)
        label = f"{kind} [cyan]{name}[/cyan]" if r.custom else f"[bold]{kind} {name}[/bold]"
        detail = _detail(r)
        if detail:
            label += f"  [dim]{escape(detail)}[/dim]"
        nodes[r.urn] = parent.add(label)
    return root


def short_type(token: str) -> str:
    """``aws:ec2/launchTemplate:LaunchTemplate`` → ``aws.ec2.LaunchTemplate`` (the Python name)."""
    package, _, rest = token.partition(":")
    module, _, kind = rest.partition(":")
    if "/" not in module:
        return token
    return f"{package}.{module.split('/')[0]}.{kind}"


def _detail(r: PlannedResource) -> str:
    """The inputs a reviewer of a GPU pool looks at first, per resource type."""
    i = r.inputs
    if r.type == "aws:ec2/launchTemplate:LaunchTemplate":
        md = i.get("metadataOptions", {})
        ebs = (i.get("blockDeviceMappings") or [{}])[0].get("ebs", {})
        parts = [
            str(i.get("instanceType")),
            "IMDSv2" if md.get("httpTokens") == "required" else "IMDSv1 allowed",
            f"{ebs.get('volumeSize')} GiB {ebs.get('volumeType')}",
            "encrypted" if str(ebs.get("encrypted")).lower() == "true" else "NOT encrypted",
        ]
        group = (i.get("placement") or {}).get("groupName")
        if group:
            parts.append(f"placement group {group}")
        nic = (i.get("networkInterfaces") or [{}])[0]
        if (nic.get("enaSrdSpecification") or {}).get("enaSrdEnabled"):
            parts.append("ENA Express")
        return " · ".join(parts)
    if r.type == "aws:autoscaling/group:Group":
        dist = i.get("mixedInstancesPolicy", {}).get("instancesDistribution", {})
        parts = [f"size {i.get('minSize')}-{i.get('maxSize')}"]
        if i.get("desiredCapacity") is not None:
            parts.append(f"desired {i['desiredCapacity']}")
        if "mixedInstancesPolicy" in i:
            parts.append(
                f"on-demand base {dist.get('onDemandBaseCapacity', 0)}, "
                f"{dist.get('onDemandPercentageAboveBaseCapacity', 100)} % above"
            )
        if len(i.get("vpcZoneIdentifiers") or []) == 1:
            parts.append("one subnet")
        return " · ".join(parts)
    if r.type == "aws:autoscaling/policy:Policy":
        ttc = i.get("targetTrackingConfiguration", {})
        spec = ttc.get("customizedMetricSpecification", {})
        return (
            f"target {_num(ttc.get('targetValue', 0))} % of "
            f"{spec.get('namespace')}/{spec.get('metricName')} ({spec.get('statistic')})"
        )
    if r.type in ("aws:ec2/vpc:Vpc", "aws:ec2/subnet:Subnet"):
        return " ".join(str(v) for v in (i.get("cidrBlock"), i.get("availabilityZone")) if v)
    if r.type == "aws:ec2/vpcEndpoint:VpcEndpoint":
        return f"{i.get('vpcEndpointType')} {i.get('serviceName')}"
    if r.type.startswith("aws:vpc/securityGroup"):
        peer = (
            i.get("referencedSecurityGroupId") or i.get("prefixListId") or i.get("cidrIpv4")
        )
        return f"{i.get('ipProtocol')} {i.get('fromPort')}-{i.get('toPort')} ↔ {peer}"
    if r.type == "aws:iam/rolePolicyAttachment:RolePolicyAttachment":
        return str(i.get("policyArn", "")).rpartition(":")[2]
    if r.type == "aws:ec2/placementGroup:PlacementGroup":
        return f"strategy {i.get('strategy')}"
    if r.type == "aws:servicediscovery/privateDnsNamespace:PrivateDnsNamespace":
        return f"private DNS {i.get('name')}"
    if r.type == "aws:servicediscovery/service:Service":
        records = (i.get("dnsConfig") or {}).get("dnsRecords") or [{}]
        return f"{i.get('name')}: {records[0].get('type')} records, TTL {records[0].get('ttl')} s"
    return ""


def _tiers_table(console: Console, env: StackEnvelope) -> None:
    """Remote-GPU tiers: the proxy size and why, the network kind, and the budget."""
    if not env.tiers:
        return
    from rich.table import Table

    t = Table(title="Remote GPU tiers (network budget)", title_justify="left",
              header_style="bold")
    for col in ("tier", "proxy", "why this size", "network", "Gbps per flow",
                "min Gbps", "RTT floor µs", "max RTT µs", "predicted overhead"):
        t.add_column(col, justify="right" if "Gbps" in col or "µs" in col or "overhead" in col
                     else "left")
    for tier in env.tiers:
        overhead = tier.predicted_overhead
        t.add_row(
            tier.name,
            tier.proxy.instance_type,
            tier.why,
            str(tier.kind),
            _num(tier.flow_gbps),
            _num(tier.min_gbps),
            _num(tier.rtt_floor_us),
            "unbounded" if tier.rtt_unbounded else _num(tier.max_rtt_us),
            "—" if overhead is None else f"{100 * overhead:.1f} %",
        )
    console.print(t)
    for tier in env.tiers:
        console.print(f"[dim]{tier.name}: budget from {tier.budget_source}[/dim]")
        console.print(f"[dim]{tier.name}: {tier.network_text}[/dim]")
        if tier.rtt_unbounded:
            console.print(f"[dim]{tier.name}: max RTT: {tier.max_rtt_text}[/dim]")
    console.print(
        "[dim]Gbps per flow: the proxy's baseline (and the client group's), capped per flow "
        "(TCP: 10 Gbps with the clients in the tier's cluster placement group, 5 outside it; 25 "
        "with ENA Express). RTT floor: the least round trip the network "
        "kind reaches (a planning default). Clients resolve proxy.<tier>.<stack>.gpupool.internal "
        "(Cloud Map); measure the real network with gpupool netcheck probe --profile.[/dim]"
    )


def _capacity_table(console: Console, env: StackEnvelope) -> None:
    from rich.table import Table

    t = Table(title="GPU capacity envelope", title_justify="left", header_style="bold")
    for col, justify in (
        ("pool", "left"),
        ("instance type", "left"),
        ("GPU", "left"),
        ("GPUs/instance", "right"),
        ("instances min-max", "right"),
        ("GPUs at min", "right"),
        ("GPUs at max", "right"),
    ):
        t.add_column(col, justify=justify)  # type: ignore[arg-type]
    for p in env.pools:
        t.add_row(
            p.pool,
            p.instance_type,
            f"{p.gpu_model} ({p.arch})",
            _num(p.gpus_per_instance),
            f"{p.instances_min}-{p.instances_max}",
            _num(p.gpus_min),
            _num(p.gpus_max),
        )
    t.add_section()
    t.add_row("total", "", "", "", "", _num(env.gpus_min), _num(env.gpus_max), style="bold")
    console.print(t)


def _cost_table(console: Console, env: StackEnvelope) -> None:
    from rich.table import Table

    title = (
        f"Cost envelope (USD, on-demand {env.price_region} prices, "
        f"{_num(env.hours_per_month)} h/month)"
    )
    t = Table(title=title, title_justify="left", header_style="bold")
    for col in ("pool", "$/h each", "$/GPU-h", "$/h at min", "$/h at max", "$/month at min",
                "$/month at max", "spot share"):
        t.add_column(col, justify="left" if col == "pool" else "right")
    for p in env.pools:
        t.add_row(
            p.pool,
            _price(p.price_per_hour),
            _price(p.price_per_gpu_hour),
            _price(p.per_hour_min),
            _price(p.per_hour_max),
            _price(p.per_month_min, 2),
            _price(p.per_month_max, 2),
            "on-premises" if p.price_basis == "configured" else
            f"{round(100 * p.spot_share)} %" + (" (upper bound)" if p.upper_bound else ""),
        )
    t.add_section()
    t.add_row(
        "total", "", "",
        _price(env.per_hour_min), _price(env.per_hour_max),
        _price(env.per_month_min, 2), _price(env.per_month_max, 2), "",
        style="bold",
    )
    console.print(t)
    notes = []
    if env.upper_bound:
        notes.append("Pools using spot pay less than on-demand: their figures are upper bounds.")
    if env.price_source.startswith("no recorded prices"):
        notes.append(f"No on-demand prices are recorded for {env.price_region}: costs unknown.")
    else:
        notes.append(f"Prices: on-demand {env.price_region}, {env.price_source}.")
        if env.unpriced_pools:
            notes.append(f"No recorded {env.price_region} price for pool(s) "
                         f"{', '.join(env.unpriced_pools)}.")
    if env.excluded:
        notes.append("Not included: " + "; ".join(
            f"{e.item}: {e.quantity}" for e in env.excluded) + ".")
    for p in env.configured_prices:
        notes.append(
            f"Pool {p.pool} runs on-premises Kubernetes GPUs ({p.gpu_model}) at the configured "
            f"{_price(p.price_per_gpu_hour)} $/GPU-h (gpuHourlyCost; default 0: owned hardware "
            "has no marginal hourly price)."
        )
    for note in notes:
        console.print(f"[dim]{note}[/dim]")


def _price(value: float | None, digits: int = 3) -> str:
    return UNKNOWN_PRICE if value is None else f"{value:,.{digits}f}"


def _num(value: float) -> str:
    return f"{value:g}"

"""``gpupool remoting PROFILE``: the network budget of an application run on a remote GPU.

Text is the view a reviewer reads in a pull request: the application, the network it is asked
to run on, the figures against the budget, the verdict and what to do. JSON carries the keys
DESIGN.md fixes (``profile``, ``max_overhead``, ``predicted_overhead``, ``rtt_max_us``,
``bandwidth_min_gbps``, ``feasible``) and the rest of :func:`gpupool.remoting.assess.assess`.
Exit 0 when the budget is met (or can be), 1 when it cannot, 2 on bad input.
"""

from __future__ import annotations

import argparse
import difflib
import json
import sys
from typing import Any

from gpupool.errors import InputError
from gpupool.remoting.assess import NetworkGiven, assess, shown_path
from gpupool.remoting.latency import Latency
from gpupool.remoting.profile import load_profile


def _network(args: argparse.Namespace) -> NetworkGiven:
    instance, kind = None, None
    if args.network is not None and not args.instance_type:
        raise InputError("--network: expected --instance-type too: a network kind's per-flow "
                         "bandwidth and RTT floor are figures of a proxy type")
    if args.instance_type:
        from gpupool.catalog import load_catalog
        from gpupool.catalog.network import NetworkKind
        from gpupool.remoting.kinds import option

        catalog = load_catalog()
        instance = catalog.get(args.instance_type.strip())
        if instance is None:
            names = [t.instance_type for t in catalog]
            close = difflib.get_close_matches(args.instance_type, names, n=1, cutoff=0.6)
            hint = f" (did you mean {close[0]}?)" if close else ""
            raise InputError(f"--instance-type: expected a GPU instance type of the catalog "
                             f"(gpupool catalog), got {args.instance_type!r}{hint}")
        kind = option(instance, NetworkKind(args.network or NetworkKind.TCP))
        if not kind.supported:
            raise InputError(f"--network: expected a network kind {instance.instance_type} "
                             f"supports, got {args.network} ({kind.why})")
    bandwidth, source = args.bandwidth_gbps, "--bandwidth-gbps"
    if bandwidth is None and instance is not None and kind is not None:
        # what ONE flow gets, not the instance's aggregate: the remoting client's calls travel
        # on one connection (gpupool.remoting.kinds)
        bandwidth = kind.flow_gbps
        capped = (f", capped at {kind.flow_cap_gbps:g} Gbps per flow"
                  if kind.flow_cap_gbps is not None
                  and kind.flow_cap_gbps < instance.network_baseline_gbps else "")
        source = (f"{instance.instance_type}: one flow of {kind.label} "
                  f"({instance.network_baseline_gbps:g} Gbps baseline{capped})")
    return NetworkGiven(rtt_us=args.rtt_us, bandwidth_gbps=bandwidth,
                        bandwidth_source=source if bandwidth is not None else None,
                        instance=instance, kind=kind)


def run(args: argparse.Namespace) -> int:
    net = _network(args)
    if net.rtt_us is None and net.bandwidth_gbps is None:
        raise InputError("expected --rtt-us, --bandwidth-gbps or --instance-type: the budget "
                         "needs at least one figure of the network")
    profile = load_profile(args.profile)
    trace = None if profile.trace is None else shown_path(profile.trace)
    result = assess(profile, net, args.max_overhead, top=args.top,
                    profile_path=args.profile, trace_shown=trace, latency=Latency(args.latency))
    if args.format == "json":
        sys.stdout.write(json.dumps(result, indent=1, allow_nan=False) + "\n")
    else:
        render_text(result)
    return 0 if result["feasible"] else 1


# --------------------------------------------------------------------------- text view


def _pct(x: float | None) -> str:
    return "—" if x is None else f"{x * 100:.3g} %"


def _us(x: float | None) -> str:
    if x is None:
        return "—"
    return f"{x:,.3g} µs" if x < 1000 else f"{x / 1000:,.3g} ms"


def _gbps(x: float | None) -> str:
    return "—" if x is None else f"{x:,.3g} Gbps"


def _bytes(x: float) -> str:
    for unit, scale in (("GB", 1e9), ("MB", 1e6), ("kB", 1e3)):
        if x >= scale:
            return f"{x / scale:,.3g} {unit}"
    return f"{x:,.0f} B"


def _seconds(s: float) -> str:
    return f"{s * 1e3:,.3g} ms" if s < 1 else f"{s:,.3g} s"


def _shown(value: object) -> str:
    """A name from the profile or its trace inside rich markup: shown, never obeyed (no markup
    in it is read, no control character reaches the terminal)."""
    from rich.markup import escape

    from gpupool.terminal import safe

    return escape(safe(value))


def render_text(r: dict[str, Any]) -> None:
    from rich.console import Console
    from rich.table import Table

    console = Console(highlight=False)
    if not console.is_terminal:
        console.width = max(console.width, 110)
    p, net, eps = r["profile"], r["network"], r["max_overhead"]
    model = "per-call replay of the trace" if r["model"] == "trace-replay" else "first-order model"
    console.print(f"[bold]{_shown(p['name'])}[/bold]: remoting budget ({model}, "
                  f"{r['latency']} latency)")
    console.print(
        f"  local run {_seconds(p['local_time_s'])}; {p['sync_calls']:,} synchronous, "
        f"{p['async_calls']:,} asynchronous, {p['local_calls']:,} shadowed calls; "
        f"{_bytes(p['bytes_to_gpu'])} to the GPU, {_bytes(p['bytes_from_gpu'])} back",
        soft_wrap=True)
    if "trace" in r:
        t = r["trace"]
        console.print(
            f"  trace {_shown(p['trace'])}: {t['calls']:,} calls ({t['sync_calls']:,} sync, "
            f"{t['async_calls']:,} async, {t['local_calls']:,} local), replayed locally in "
            f"{_seconds(t['local_time_s'])}", soft_wrap=True)
        if abs(t["local_time_s"] - p["local_time_s"]) > 0.1 * p["local_time_s"]:
            console.print(f"  [yellow]note: the profile says {_seconds(p['local_time_s'])}; "
                          "the budget uses the trace's own local run[/yellow]")
    local_s = r["trace"]["local_time_s"] if "trace" in r else p["local_time_s"]
    console.print(f"  budget: at most {_pct(eps)} slower than on a local GPU "
                  f"(= {_seconds(eps * local_s)})")
    rtt = "not given" if net["rtt_us"] is None else f"{_us(net['rtt_us'])} RTT"
    if net["rtt_us"] is None and "rtt_floor_us" in net:
        rtt = (f"RTT not given ({net['kind_label']} reaches ~{_us(net['rtt_floor_us'])} at "
               "best)")
    bw = "not given" if net["bandwidth_gbps"] is None else (
        f"{_gbps(net['bandwidth_gbps'])} ({net['bandwidth_source']})")
    console.print(f"  network: {rtt}; bandwidth {bw}")
    if "instance_type" in r:
        it = r["instance_type"]
        console.print(
            f"  tier: {it['instance_type']} ({it['gpu_model']}), network "
            f"{it['network_baseline_gbps']:g} Gbps baseline / {it['network_burst_gbps']:g} "
            f"Gbps burst{', EFA' if it['efa_supported'] else ''}")
    console.print()
    table = Table(header_style="bold", show_edge=False)
    table.add_column("figure")
    table.add_column("value", justify="right")
    table.add_column("against the budget")
    first = r.get("first_order", {})
    if "predicted_overhead" in r:
        ok = r["predicted_overhead"] <= eps * (1 + 1e-9)
        table.add_row("predicted overhead", _pct(r["predicted_overhead"]),
                      f"[green]within {_pct(eps)}[/green]" if ok
                      else f"[red]over {_pct(eps)}[/red]")
    if "latency_s" in first:
        table.add_row("  round trips (first order)", _seconds(first["latency_s"]),
                      f"{p['sync_calls']:,} x {_us(net['rtt_us'])}")
    if first.get("link_excess_s"):
        table.add_row("  link-bound (first order)", _seconds(first["link_excess_s"]),
                      f"{p['async_calls']:,} x {_us(net['rtt_us'] / 2)} one after another, "
                      "past the local run (serialised)")
    if "transfer_s" in first:
        table.add_row("  bytes (first order)", _seconds(first["transfer_s"]),
                      f"{_bytes(p['bytes_to_gpu'] + p['bytes_from_gpu'])} at "
                      f"{_gbps(net['bandwidth_gbps'])}")
    if "rtt_max_us" in r:
        if r["rtt_max_us"] is not None:
            value, note = _us(r["rtt_max_us"]), f"at {_gbps(net['bandwidth_gbps'])}"
            if net["rtt_us"] is None and "rtt_floor_us" in net:
                reach = ("[green]reachable[/green]" if r["feasible"]
                         else "[red]below what it reaches[/red]")
                note += f"; {net['kind']} floor ~{_us(net['rtt_floor_us'])}: {reach}"
            elif r.get("lowest_rtt_floor", {}).get("below"):
                low = r["lowest_rtt_floor"]
                note += (f"; [red]below every network kind's floor[/red] (the least, "
                         f"{low['kind']}, ~{_us(low['rtt_floor_us'])})")
        elif r.get("rtt_unbounded"):
            value, note = "any", "no synchronous call waits on the network"
        else:
            value, note = "[red]none[/red]", "infeasible: the bytes alone exceed the budget"
        table.add_row("largest RTT", value, note)
    if "bandwidth_min_gbps" in r:
        if r["bandwidth_min_gbps"] is not None:
            value = "any" if r.get("bandwidth_unbounded") else _gbps(r["bandwidth_min_gbps"])
            note = f"at {_us(net['rtt_us'])}"
        else:
            value, note = ("[red]none[/red]",
                           "infeasible: the round trips alone exceed the budget")
        table.add_row("least bandwidth", value, note)
    if r["model"] == "trace-replay":
        note = ("sync calls x RTT + bytes / BW" + (
            " (+ async x RTT/2 past the local run)" if r["latency"] == "serialised" else "")
            + ": no overlap, no (de)serialising")
        for key, label in (("predicted_overhead", "overhead"), ("rtt_max_us", "largest RTT"),
                           ("bandwidth_min_gbps", "least bandwidth")):
            if key in first:
                v = first[key]
                shown = _pct(v) if key == "predicted_overhead" else (
                    _us(v) if key == "rtt_max_us" else _gbps(v))
                table.add_row(f"  first-order {label}", shown if v is not None else "none",
                              note)
                note = ""
    console.print(table)
    console.print(_other_latency_line(r), soft_wrap=True)
    if "network_kinds" in r:
        _kinds_table(console, r)
    if "what_if" in r and r["what_if"]["rows"]:
        wi = r["what_if"]
        console.print()
        console.print(f"What the costliest synchronous calls would leave, replayed at "
                      f"{_us(wi['rtt_us'])} and {_gbps(wi['bandwidth_gbps'])} "
                      f"(now {_pct(wi['overhead'])}):")
        t = Table(header_style="bold", show_edge=False)
        t.add_column("synchronous calls")
        t.add_column("count", justify="right")
        t.add_column("sent without waiting", justify="right")
        t.add_column("answered from a shadow", justify="right")
        for row in wi["rows"]:
            t.add_row(_shown(row["calls"]), f"{row['count']:,}", _pct(row["as_async"]),
                      _pct(row["as_local"]) if row["as_local"] is not None
                      else "— (queues GPU work)")
        console.print(t)
    if r["model"] == "first-order":
        console.print()
        curve = ", ".join(
            f"{c['bandwidth_gbps']:g} Gbps: " + (
                "any RTT" if c["unbounded"] else
                "none" if c["rtt_max_us"] is None else _us(c["rtt_max_us"]))
            for c in r["budget_curve"])
        console.print(f"Largest RTT by bandwidth: {curve}", soft_wrap=True)
    console.print()
    verdict = "[bold green]PASS[/bold green]" if r["feasible"] else "[bold red]FAIL[/bold red]"
    console.print(f"verdict: {verdict} — {_verdict_text(r)}", soft_wrap=True)
    if r["advice"]:
        console.print("advice:")
        for line in r["advice"]:
            console.print(f"  - {_shown(line)}", soft_wrap=True)


def _other_latency_line(r: dict[str, Any]) -> str:
    """The other latency model's headline figures, beside the ones budgeted."""
    o = r["other_latency"]
    parts = []
    if "predicted_overhead" in o:
        parts.append(f"overhead {_pct(o['predicted_overhead'])}")
    if "rtt_max_us" in o:
        parts.append("largest RTT " + ("any" if o["rtt_unbounded"] else
                                       _us(o["rtt_max_us"]) if o["rtt_max_us"] is not None
                                       else "none"))
    if "bandwidth_min_gbps" in o:
        parts.append("least bandwidth " + (_gbps(o["bandwidth_min_gbps"])
                                           if o["bandwidth_min_gbps"] is not None else "none"))
    how = ("requests in flight overlap their RTT/2" if o["latency"] == "pipelined"
           else "each request's RTT/2 after the previous arrival, the authors' model")
    return f"  with {o['latency']} latency ({how}): {', '.join(parts)}"


def _kinds_table(console: Any, r: dict[str, Any]) -> None:
    """Every network kind of the proxy type: what one flow gets, the RTT floor, the verdict."""
    from rich.table import Table

    it = r["instance_type"]["instance_type"]
    console.print()
    console.print(f"Network kinds of {it}: what one flow gets in a cluster placement group, at "
                  "the kind's RTT floor (planning defaults; measure with gpupool netcheck "
                  "probe); tcp = TCP over ENA, --network picks the one budgeted above:",
                  soft_wrap=True)
    t = Table(header_style="bold", show_edge=False)
    t.add_column("kind")
    t.add_column(f"on {it}")
    t.add_column("per flow", justify="right")
    t.add_column("RTT floor", justify="right")
    t.add_column("overhead", justify="right")
    t.add_column("largest RTT", justify="right")
    t.add_column("least bandwidth", justify="right")
    t.add_column("verdict")
    for k in r["network_kinds"]:
        cap = "" if k["flow_cap_gbps"] is None or k["flow_gbps"] < k["flow_cap_gbps"] else " (cap)"
        r_max = "any" if k["rtt_unbounded"] else (
            "none" if k["rtt_max_us"] is None else _us(k["rtt_max_us"]))
        if k["feasible"]:
            verdict = "[green]PASS[/green]"
        elif k["supported"]:
            verdict = "[red]FAIL[/red]"
        else:
            verdict = ("[yellow]would pass[/yellow]" if k["meets_budget"]
                       else "[red]would fail[/red]")
        t.add_row(k["kind"], "yes" if k["supported"] else "no",
                  _gbps(k["flow_gbps"]) + cap, _us(k["rtt_floor_us"]),
                  _pct(k["predicted_overhead"]), r_max, _gbps(k["bandwidth_min_gbps"]), verdict)
    console.print(t)


def _verdict_text(r: dict[str, Any]) -> str:
    eps, net = r["max_overhead"], r["network"]
    if "predicted_overhead" in r:
        word = "within" if r["feasible"] else "over"
        return (f"{_pct(r['predicted_overhead'])} predicted at {_us(net['rtt_us'])} and "
                f"{_gbps(net['bandwidth_gbps'])}, {word} the {_pct(eps)} budget")
    if "rtt_max_us" in r:
        if r.get("rtt_unbounded"):
            return (f"any RTT keeps the overhead within {_pct(eps)} at "
                    f"{_gbps(net['bandwidth_gbps'])}")
        if r["rtt_max_us"] is None:
            return (f"no RTT keeps the overhead within {_pct(eps)} at "
                    f"{_gbps(net['bandwidth_gbps'])}")
        text = (f"the RTT must stay under {_us(r['rtt_max_us'])} at "
                f"{_gbps(net['bandwidth_gbps'])}")
        low = r.get("lowest_rtt_floor")
        if low is not None and low["below"]:
            return (text + f", below every network kind's floor (the least, {low['kind']}, "
                    f"~{_us(low['rtt_floor_us'])}): infeasible on any network kind")
        if "rtt_floor_us" in net:
            text += (f"; {net['kind_label']} reaches ~{_us(net['rtt_floor_us'])}"
                     + ("" if r["feasible"] else ", too slow for this budget"))
        return text
    if r.get("bandwidth_min_gbps") is None:
        return f"no bandwidth keeps the overhead within {_pct(eps)} at {_us(net['rtt_us'])}"
    return (f"the bandwidth must be at least {_gbps(r['bandwidth_min_gbps'])} at "
            f"{_us(net['rtt_us'])}")

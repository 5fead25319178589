"""The pull request's text: per pool the change, its evidence and dollars a month, the total."""

from __future__ import annotations

from collections.abc import Sequence

from gpupool.debt.window import Window, iso
from gpupool.rightsize.propose import Outcome, Proposal


def _usd(v: float | None) -> str:
    return "unpriced" if v is None else f"${v:,.2f}"


def _row(p: Proposal) -> str:
    ev = p.evidence
    change = ", ".join(f"`{c.key}` {c.old:g} → {c.new:g}" for c in p.changes)
    util = "not measured" if ev.utilisation is None else f"{ev.utilisation:.1%}"
    return (f"| `{p.pool}` | {p.stack} | {p.team} | {change} | {util} | "
            f"p{ev.pct:g} need {ev.need_at_pct:.2f} {ev.basis or f'at {ev.target:g} %'} → "
            f"floor {ev.floor} | "
            f"{ev.samples} ({ev.span_hours:g} h) | {p.gpu_hours_per_month:,.1f} | "
            f"{_usd(p.usd_per_month)} |")


def pr_body(outcome: Outcome, window: Window, pct: float, headroom: float) -> str:
    props: Sequence[Proposal] = outcome.proposals
    priced = [p.usd_per_month for p in props if p.usd_per_month is not None]
    total = sum(priced)
    lines = [
        "## gpupool rightsize",
        "",
        f"Window {iso(window.start)} to {iso(window.end)} ({window.hours:g} h, "
        f"{window.period_s} s buckets). No size goes below the window's p{pct:g} need "
        f"(instances its measured use required at the pool's target) plus {headroom:.0%} "
        "headroom; only pools measured over the whole window are changed.",
        "",
        f"**{len(props)} pool(s) changed, saving {_usd(total)}/month** "
        "(on-demand catalog prices; the window's saving projected to 730 h)."
        + ("" if len(priced) == len(props) else
           f" {len(props) - len(priced)} pool(s) unpriced, not in the total.")
        + (" Kubernetes and on-premises pools at their nodes' catalog price per GPU-hour, or "
           "the pool's `gpuHourlyCost` (owned hardware: often 0), as `gpupool debt` prices "
           "them; a lower quota or maximum saves nothing now."
           if any(p.section == "gpupool:kubernetes" for p in props) else ""),
        "",
    ]
    if props:
        lines += ["| pool | stack | team | change | utilisation | need | samples | "
                  "GPU-h/month saved | $/month saved |",
                  "|---|---|---|---|---|---|---|---|---|",
                  *(_row(p) for p in props),
                  f"| **total** | | | | | | | {sum(p.gpu_hours_per_month for p in props):,.1f}"
                  f" | **{_usd(total)}** |", ""]
    if outcome.skipped:
        lines += ["<details><summary>Pools left alone</summary>", ""]
        lines += [f"- `{name}`: {why}" for name, why in outcome.skipped]
        lines += ["", "</details>", ""]
    return "\n".join(lines)

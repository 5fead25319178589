# ruff: noqa: RUF001, RUF003  (× is the multiplication sign users read)
"""The report as text (rich tables), CSV (the JSON rows' columns) or JSON."""

from __future__ import annotations

import csv
import io
import json
from typing import Any, Literal

from gpupool.debt.discover import ROLE_LABELS
from gpupool.debt.report import POOL_COLUMNS, TEAM_COLUMNS, Report

By = Literal["pool", "team"]
NOT_MEASURED = "not measured"


def render_json(report: Report) -> str:
    return json.dumps(report.to_dict(), indent=2) + "\n"


def render_csv(report: Report, by: By = "pool") -> str:
    """One row per pool (the JSON ``pools`` columns) or per team (the ``teams`` columns)."""
    buf = io.StringIO()
    columns = POOL_COLUMNS if by == "pool" else TEAM_COLUMNS
    writer = csv.DictWriter(buf, fieldnames=list(columns), lineterminator="\n")
    writer.writeheader()
    rows = ([report.pool_row(f) for f in report.pools] if by == "pool"
            else [report.group_row(g) for g in report.teams])
    for row in rows:
        writer.writerow({k: _csv_value(row[k]) for k in columns})
    return buf.getvalue()


def _csv_value(value: Any) -> Any:
    if value is None:
        return ""  # missing, never 0
    if isinstance(value, list):
        return ";".join(str(v) for v in value)
    return value


def _gh(value: float | None, missing: str = NOT_MEASURED) -> str:
    return missing if value is None else f"{value:,.1f}"


def _pct(value: float | None, missing: str = NOT_MEASURED) -> str:
    return missing if value is None else f"{value:.1%}"


def _usd(value: float | None) -> str:
    return "—" if value is None else f"${value:,.2f}"


def _missing(row: dict[str, Any]) -> str:
    return "no metrics" if row.get("status") == "no group metrics" else NOT_MEASURED


def render_text(report: Report, by: By = "pool", *, width: int | None = None,
                color: bool = False) -> str:
    from rich.console import Console
    from rich.table import Table

    buf = io.StringIO()
    console = Console(file=buf, width=width or 150, color_system="standard" if color else None,
                      force_terminal=color, highlight=False)
    d = report.to_dict()
    w, t = d["window"], d["totals"]
    console.print(f"[bold]Compute debt[/bold], {report.region}, {w['start']} .. {w['end']} "
                  f"({w['hours']:,.0f} h, {w['period_s']} s periods): {len(report.pools)} GPU "
                  f"pools of {report.groups_seen} autoscaling groups; figures in GPU-hours")
    table = Table(pad_edge=False)
    first = "pool" if by == "pool" else "team"
    lead_cols = ["team", "type"] if by == "pool" else ["pools"]
    for col in (first, *lead_cols, "capacity", "allocated", "used", "debt", "idle",
                "utilisation", "debt $", "debt $/month"):
        table.add_column(col, justify="left" if col in (first, "team", "type") else "right",
                         no_wrap=col in (first, "type"))
    rows: list[dict[str, Any]] = d["pools"] if by == "pool" else d["teams"]
    for r in rows:
        if by == "pool":
            name = r["pool"] + ROLE_LABELS.get(r["role"], "")
            lead = [name, r["team"] or "(untagged)",
                    f"{r['instance_type']} {r['gpus_per_instance']:g}×{r['gpu_model']}"]
        else:
            lead = [r["team"], f"{r['pools']}" + (f" ({r['not_measured_pools']} not measured)"
                                                  if r["not_measured_pools"] else "")]
        util = r["utilisation"]
        missing = _missing(r)
        style = "red" if util is not None and util < report.threshold else ""
        table.add_row(*lead, _gh(r["capacity_gpu_hours"], missing),
                      _gh(r["allocated_gpu_hours"], missing), _gh(r["used_gpu_hours"], missing),
                      _gh(r["debt_gpu_hours"], missing), _gh(r["idle_gpu_hours"], missing),
                      _pct(util, missing), _usd(r["debt_usd"]), _usd(r["debt_usd_per_month"]),
                      style=style)
    console.print(table)
    console.print(
        f"[bold]Total[/bold]: capacity {_gh(t['capacity_gpu_hours'])} GPU-h, allocated "
        f"{_gh(t['allocated_gpu_hours'])}, used {_gh(t['used_gpu_hours'])} "
        f"({_pct(t['utilisation'])} of the measured allocation), debt "
        f"{_gh(t['debt_gpu_hours'])} GPU-h = {_usd(t['debt_usd'])} "
        f"({_usd(t['debt_usd_per_month'])}/month at on-demand prices); idle capacity "
        f"{_gh(t['idle_gpu_hours'])} GPU-h")
    if t["unmeasured_gpu_hours"]:
        console.print(f"  {t['unmeasured_gpu_hours']:,.1f} allocated GPU-hours have no "
                      "utilisation measurement and are in no use or debt figure")
    offenders = d["offenders"]
    if offenders:
        console.print("[bold]Top offenders[/bold]: " + "; ".join(
            f"{o['pool']} ({o['team'] or 'untagged'}): {_pct(o['utilisation'])}, "
            f"{o['debt_gpu_hours']:,.1f} GPU-h, {_usd(o['debt_usd'])}" for o in offenders))
    if report.advice:
        console.print("[bold]Recommendations[/bold] (alternatives per pool; savings overlap):")
        for a in report.advice:
            save = "" if a.usd_per_month is None and not a.gpus else (
                f" — {a.gpus:,.1f} GPUs" + ("" if a.usd_per_month is None else
                                           f", ${a.usd_per_month:,.0f}/month"))
            console.print(f"  {a.pool}: {a.change}{save}: {a.message}")
    co = report.optimizer
    if co.status == "on" and co.by_pool:
        console.print("[bold]AWS Compute Optimizer[/bold]:")
        for name in sorted(co.by_pool):
            rec = co.by_pool[name]
            opts = rec["options"]
            best = opts[0] if opts else {}
            vertical = " (a bigger size of the same GPU: the kit advises scaling out " \
                       "instead)" if best.get("vertical") else ""
            console.print(f"  {name}: {rec['finding']}, GPU {_pct(rec['gpu_utilisation'])}"
                          + (f"; suggests {best.get('instance_type')}{vertical}" if best else ""))
    else:
        console.print(f"AWS Compute Optimizer: {co.status} ({co.reason})")
    findings = [f for f in report.findings if f["finding"] != "low-utilisation"]
    if findings:
        console.print("[bold]Findings[/bold]:")
        for f in findings:
            console.print(f"  {f['pool'] or '-'}: {f['message']}")
    detail = d["api_calls_detail"]
    console.print(f"{report.api_calls} API calls ({report.metric_calls} GetMetricData, "
                  f"{detail.get('retries', 0)} retries)")
    return buf.getvalue()

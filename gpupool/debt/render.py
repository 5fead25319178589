# ruff: noqa: RUF001, RUF003  (× is the multiplication sign users read)
"""The report as text (rich tables, :mod:`gpupool.debt.text`), CSV (the JSON rows' columns,
and with ``--forecast`` the forecast's beside them) or JSON.

CSV cells that a spreadsheet would run as a formula (text starting with ``=``, ``+``, ``-``,
``@``, a tab or a carriage return: pool, team and cost-centre names are user data) are written
with a leading apostrophe, as OWASP advises; numbers are written as numbers.
"""

from __future__ import annotations

import csv
import io
from typing import Any, Literal

from gpupool.debt.report import POOL_COLUMNS, TEAM_COLUMNS, Report
from gpupool.debt.text import (
    gh,
    namespace_rows,
    new_console,
    pct,
    plain,
    pool_rows,
    table,
    usd,
    width_for,
)

By = Literal["pool", "team", "reservation"]
FORMULA_START = ("=", "+", "-", "@", "\t", "\r")


def render_json(report: Report) -> str:
    """The JSON document: the report's dict and each pool's series (:mod:`.series`)."""
    from gpupool.debt.series import render_document

    return render_document(report.to_dict(), report.pools)


def render_csv(report: Report, by: By = "pool") -> str:
    """One row per pool (the JSON ``pools`` columns) or per team (the ``teams`` columns)."""
    from gpupool.debt.forecast_rows import CSV_COLUMNS, csv_cells

    buf = io.StringIO()
    if by == "reservation":
        from gpupool.debt.reservations import COLUMNS

        writer = csv.DictWriter(buf, fieldnames=list(COLUMNS), lineterminator="\n")
        writer.writeheader()
        for row in report.reservations or []:
            writer.writerow({k: _csv_value(row[k]) for k in COLUMNS})
        return buf.getvalue()
    columns = POOL_COLUMNS if by == "pool" else TEAM_COLUMNS
    forecast = report.forecast.to_dict() if report.forecast is not None else None
    if forecast is not None:
        columns = (*columns, *CSV_COLUMNS)
    writer = csv.DictWriter(buf, fieldnames=list(columns), lineterminator="\n")
    writer.writeheader()
    rows = ([report.pool_row(f) for f in report.pools] if by == "pool"
            else [report.group_row(g) for g in report.teams])
    for row in rows:
        if forecast is not None:
            row.update(csv_cells(forecast, by, row[by]))
        writer.writerow({k: _csv_value(row[k]) for k in columns})
    return buf.getvalue()


def _csv_value(value: Any) -> Any:
    if value is None:
        return ""  # missing, never 0
    if isinstance(value, list):
        value = ";".join(str(v) for v in value)
    if isinstance(value, str) and value.startswith(FORMULA_START):
        return "'" + value  # a name, not a formula
    return value


def _reservations(report: Report, say: Any, console: Any) -> None:
    """Reserved GPU capacity nobody used over the window, per reservation and per team."""
    from rich.text import Text

    d = report.reservation_dict()
    t = d["reservation_totals"]
    say("Reserved capacity nobody uses", f": {t['reservations']} GPU reservation(s) in force, "
        f"{gh(t['reserved_gpu_hours'])} GPU-h reserved, {gh(t['unused_gpu_hours'])} unused = "
        f"{usd(t['unused_usd'])} (on-demand prices; the count the API gives now, over the "
        "window)")
    for r in d["reservations"]:
        where = f"{r['account']}/{r['region']} " if r.get("account") else ""
        unused = "use not known" if r["unused_gpu_hours"] is None else (
            f"{gh(r['unused_gpu_hours'])} GPU-h unused = {usd(r['unused_usd'])}")
        console.print(Text(plain(
            f"  {r['reservation']} ({r['kind']}, {r['state']}, {r['match']}) {where}"
            f"{r['zone']} {r['total_instances']}×{r['instance_type']}, "
            f"{r['team'] or '(untagged)'}: {unused}"
            + (f"; {r['advice']}" if r["advice"] else ""))))
    for team in d["reservation_teams"]:
        console.print(Text(plain(
            f"  team {team['team']}: {gh(team['unused_gpu_hours'])} GPU-h reserved and unused "
            f"= {usd(team['unused_usd'])} in {team['reservations']} reservation(s)")))


def at(row: dict[str, Any]) -> str:
    """A pool's name as printed, with its account and region when the report reads several."""
    where = f" ({row['account']}/{row['region']})" if row.get("account") else ""
    return plain(row["pool"] + where)


def render_text(report: Report, by: By = "pool", *, width: int | None = None,
                color: bool = False) -> str:
    """The text report at ``width`` (default: ``COLUMNS``, else 100); see gpupool.debt.text."""
    from rich.text import Text

    width = width_for(width)
    console, buf = new_console(width, color)

    def say(head: str, rest: str = "") -> None:
        console.print(Text.assemble((head, "bold"), rest))

    d = report.to_dict()
    w, t = d["window"], d["totals"]
    kube = sum(f.platform != "aws" for f in report.pools)
    where = [f"{len(report.pools) - kube} of {report.groups_seen} autoscaling groups in "
             f"{plain(report.region)}"] if report.aws else []
    if report.scopes:
        unread = f", {report.unread_scopes} not read: see Findings" if report.unread_scopes \
            else ""
        where = [f"{len(report.pools) - kube} of {report.groups_seen} autoscaling groups in "
                 f"{len(d['accounts'])} account(s) × {len(d['regions'])} region(s) "
                 f"({len(report.scopes)} account-regions{unread})"]
    if report.prometheus:
        where.append(f"{kube} from {len(report.prometheus)} Prometheus")
    say("Compute debt", f", {w['start']} .. {w['end']} ({w['hours']:,.0f} h, {w['period_s']} s "
        f"periods): {len(report.pools)} GPU pools ({'; '.join(where)}); figures in GPU-hours")
    table(console, *pool_rows(d, by), width=width)
    if d["namespaces"] and by == "pool":
        say("Kubernetes namespaces", " (their teams' allocation and use; the exporter's "
            "unattributed use apart):")
        table(console, *namespace_rows(d), width=width)
    say("Total", f": capacity {gh(t['capacity_gpu_hours'])} GPU-h, allocated "
        f"{gh(t['allocated_gpu_hours'])}, used {gh(t['used_gpu_hours'])} "
        f"({pct(t['utilisation'])} of the measured allocation), debt "
        f"{gh(t['debt_gpu_hours'])} GPU-h = {usd(t['debt_usd'])} "
        f"({usd(t['debt_usd_per_month'])}/month at on-demand prices); idle capacity "
        f"{gh(t['idle_gpu_hours'])} GPU-h")
    if t["unmeasured_gpu_hours"]:
        console.print(Text(f"  {t['unmeasured_gpu_hours']:,.1f} allocated GPU-hours have no "
                           "utilisation measurement and are in no use or debt figure"))
    if "forecast" in d:
        from gpupool.debt.forecast_rows import text_rows

        fc = d["forecast"]
        say(f"Forecast, next {fc['horizon_days']} days", f" (GPUs; from {fc['history_days']:,.0f} "
            f"days of history: {fc['method']}):")
        table(console, *text_rows(fc, by), width=width)
    offenders = d["offenders"]
    if offenders:
        say("Top offenders", ": " + "; ".join(
            f"{at(o)} ({plain(o['team'] or 'untagged')}): {pct(o['utilisation'])}, "
            f"{o['debt_gpu_hours']:,.1f} GPU-h, {usd(o['debt_usd'])}" for o in offenders))
    if report.advice:
        say("Recommendations", " (alternatives per pool; savings overlap):")
        for a in report.advice:
            save = "" if a.usd_per_month is None and not a.gpus else (
                f" — {a.gpus:,.1f} GPUs" + ("" if a.usd_per_month is None else
                                           f", ${a.usd_per_month:,.0f}/month"))
            console.print(Text(f"  {at(a.to_dict())}: {plain(a.change)}{save}: "
                               f"{plain(a.message)}"))
    if report.reservations is not None:
        _reservations(report, say, console)
    co = report.optimizer
    if co.status == "on" and co.by_pool:
        say("AWS Compute Optimizer", ":")
        for name in sorted(co.by_pool):
            rec = co.by_pool[name]
            opts = rec["options"]
            best = opts[0] if opts else {}
            vertical = " (a bigger size of the same GPU: the kit advises scaling out " \
                       "instead)" if best.get("vertical") else ""
            console.print(Text(
                f"  {plain(name)}: {plain(rec['finding'])}, GPU {pct(rec['gpu_utilisation'])}"
                + (f"; suggests {plain(best.get('instance_type'))}{vertical}" if best else "")))
    else:
        console.print(Text(f"AWS Compute Optimizer: {co.status} ({plain(co.reason)})"))
    findings = [f for f in report.findings if f["finding"] != "low-utilisation"]
    if findings:
        say("Findings", ":")
        for f in findings:
            console.print(Text(f"  {at(f) if f['pool'] else '-'}: {plain(f['message'])}"))
    detail = d["api_calls_detail"]
    calls = [f"{report.api_calls} API calls ({report.metric_calls} GetMetricData, "
             f"{detail.get('retries', 0)} retries)"] if report.aws else []
    calls += [f"{s['queries']} Prometheus queries to {plain(s['url'])} ({s['retries']} retries)"
              for s in report.prometheus]
    console.print(Text("; ".join(calls)))
    return buf.getvalue()

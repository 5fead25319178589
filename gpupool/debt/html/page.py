"""``gpupool debt --format html``: the report as one self-contained page.

Everything is inline (the stylesheet, the sorting script, the charts as SVG, the report's JSON
document in a ``<script type="application/json" id="gpupool-debt">`` block) and the page's
Content-Security-Policy allows only that stylesheet and that script (by hash): opened from a
file, a mail attachment or an artifact store, it makes no request at all.

Sections: the window, unit and totals; the chart per pool and per team (capacity grey,
allocation yellow, use green; :mod:`gpupool.debt.html.svg`); the sortable tables of pools,
teams and Kubernetes namespaces; the top offenders; the proposed changes (the report's
recommendations); the findings.
"""

from __future__ import annotations

import json
from html import escape
from typing import Any

import gpupool.debt.html.tables as t
from gpupool.debt.chart import chart_data
from gpupool.debt.html.assets import CSP, SCRIPT, STYLE
from gpupool.debt.html.svg import DEFS, legend, panel_svg
from gpupool.debt.report import Report


def _json_block(document: dict[str, Any]) -> str:
    """The JSON document, safe inside ``<script>``: no ``<``, ``>`` or ``&`` as such."""
    text = json.dumps(document, separators=(",", ":"))
    text = text.replace("<", "\\u003c").replace(">", "\\u003e").replace("&", "\\u0026")
    return f'<script type="application/json" id="gpupool-debt">{text}</script>'


def _totals(d: dict[str, Any]) -> str:
    tot = d["totals"]

    def card(label: str, value: Any, fmt: t.Fmt, missing: str = "not measured") -> str:
        shown = missing if value is None else fmt(value)
        return f"<div><dt>{escape(label)}</dt><dd>{escape(shown)}</dd></div>"

    return ('<dl class="totals">'
            + card("capacity", tot["capacity_gpu_hours"], lambda v: f"{v:,.0f} GPU-h", "—")
            + card("allocated", tot["allocated_gpu_hours"], lambda v: f"{v:,.0f} GPU-h", "—")
            + card("used", tot["used_gpu_hours"], lambda v: f"{v:,.0f} GPU-h")
            + card("utilisation", tot["utilisation"], t.pct)
            + card("debt", tot["debt_gpu_hours"], lambda v: f"{v:,.0f} GPU-h")
            + card("debt in dollars", tot["debt_usd"], t.usd0, "unpriced")
            + card("debt per month", tot["debt_usd_per_month"], t.usd0, "unpriced")
            + card("idle capacity", tot["idle_gpu_hours"], lambda v: f"{v:,.0f} GPU-h", "—")
            + "</dl>")


def _charts(report: Report, by: str, unit: str) -> str:
    panels = chart_data(report, by)  # type: ignore[arg-type]
    return (f'<section class="chart" id="chart-{by}" data-by="{by}">'
            + "".join(panel_svg(p, i, unit) for i, p in enumerate(panels)) + "</section>")


def _section(title: str, body: str, section_id: str, note: str = "") -> str:
    n = f'<p class="note">{escape(note)}</p>' if note else ""
    return f'<section id="{section_id}"><h2>{escape(title)}</h2>{n}{body}</section>'


def _forecast(fc: dict[str, Any]) -> str:
    h = fc["horizon_days"]
    total = fc["total"]
    need = "no data" if total["need_gpus"] is None else f"{total['need_gpus']:,.1f} GPUs"
    cap = "unknown" if total["capacity_gpus"] is None else f"{total['capacity_gpus']:,.1f}"
    note = (f"From {fc['history_days']:,.0f} days of history: {fc['method']}. All pools "
            f"together need {need} in the next {h} days, against {cap} of capacity today; a "
            "negative headroom is capacity to add.")
    return _section(f"Forecast: the next {h} days",
                    t.table(t.forecast_cols("pool", h), fc["pools"], "forecast-pools")
                    + t.table(t.forecast_cols("team", h), fc["teams"], "forecast-teams"),
                    "forecast", note)


def render_html(report: Report, *, title: str = "Compute debt") -> str:
    d = report.to_dict()
    w = d["window"]
    start, end = w["start"].replace("T", " ")[:16], w["end"].replace("T", " ")[:16]
    period = f"{w['period_s'] // 3600} h" if w["period_s"] % 3600 == 0 else (
        f"{w['period_s'] // 60} min")
    unit = (f"GPUs per {period} bucket, {start} .. {end} UTC "
            f"({w['hours']:,.0f} h)")
    where = ", ".join(x for x in (
        f"AWS {d['region']}" if report.aws else "",
        f"{len(report.prometheus)} Prometheus" if report.prometheus else "") if x)
    meta = (f"Window {start} .. {end} UTC ({w['hours']:,.0f} hours, {w['period_s']} s "
            f"buckets); {len(report.pools)} GPU pools ({where or 'no source'}). Figures in "
            "GPU-hours over the window, charts in GPUs per bucket; dollars at on-demand "
            f"catalog prices ({d['price_region']}). Debt = allocated - used; a pool or bucket "
            "without measurement is 'not measured' (a gap in the charts), never zero.")
    chart_note = ("Capacity grey, allocated yellow (hatched where its use is not measured), "
                  f"used green: the yellow above the green is the debt. Unit: {unit}.")
    body = [
        f"<header><h1>{escape(title)}</h1><p class=\"meta\">{escape(meta)}</p></header>",
        _totals(d),
        DEFS,
        _section("Per pool", legend() + _charts(report, "pool", unit), "per-pool", chart_note),
        _section("Per team", _charts(report, "team", unit), "per-team", chart_note),
        _section("Pools", t.table(t.POOLS, d["pools"], "pools"), "pools-table",
                 "Click a column to sort; missing figures sort last."),
        _section("Teams", t.table(t.TEAMS, d["teams"], "teams"), "teams-table"),
    ]
    if d["namespaces"]:
        body.append(_section("Kubernetes namespaces",
                             t.table(t.NAMESPACES, d["namespaces"], "namespaces"),
                             "namespaces-table"))
    body.append(_section("Top offenders", t.table(t.OFFENDERS, d["offenders"], "offenders")
                         if d["offenders"] else "<p>No pool owes GPU-hours.</p>", "offenders-"
                         "table", "The pools with the most debt in dollars (GPU-hours when "
                         "unpriced)."))
    body.append(_section("Proposed changes", t.table(t.ADVICE, d["recommendations"], "advice")
                         if d["recommendations"] else "<p>No change proposed.</p>",
                         "advice-table", "Alternatives per pool: their savings overlap, "
                         "do not add them up."))
    if "forecast" in d:
        body.append(_forecast(d["forecast"]))
    findings = [f for f in d["findings"] if f["finding"] != "low-utilisation"]
    if findings:
        body.append(_section("Findings", t.table(t.FINDINGS, findings, "findings"),
                             "findings-table"))
    calls = f"{d['api_calls']} AWS API calls" if report.aws else "AWS not read"
    body.append(f"<footer>Generated {escape(d['generated_at'])} by gpupool debt; "
                f"{escape(calls)}; {d['prometheus_queries']} Prometheus queries. The report's "
                "JSON document is inside this page (#gpupool-debt).</footer>")
    return ("<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
            f'<meta http-equiv="Content-Security-Policy" content="{escape(CSP)}">'
            '<meta name="viewport" content="width=device-width, initial-scale=1">'
            f"<title>{escape(title)}: {escape(start)} .. {escape(end)} UTC</title>"
            f"<style>{STYLE}</style></head><body>" + "".join(body) + _json_block(d)
            + f"<script>{SCRIPT}</script></body></html>\n")

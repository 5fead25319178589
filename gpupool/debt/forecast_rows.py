"""The forecast in the report's formats: its text table, its CSV columns (beside each pool's
or team's row), and the cells the HTML page shows. The figures are :mod:`gpupool.debt.forecast`'s
``forecast`` block of the JSON document."""

from __future__ import annotations

from typing import Any

from gpupool.debt.text import Col, plain

CSV_COLUMNS = ("forecast_horizon_days", "capacity_gpus", "forecast_peak_gpus",
               "forecast_trend_gpus_per_day", "forecast_need_gpus", "forecast_headroom_gpus")


def gpus(v: float | None, missing: str = "no data") -> str:
    return missing if v is None else f"{v:,.1f}"


def trend(v: float | None) -> str:
    return "flat (under 14 days)" if v is None else f"{v * 30:+,.2f}/month"


def csv_cells(forecast: dict[str, Any], key: str, name: str) -> dict[str, Any]:
    """The forecast columns of one pool's (``key`` pool) or team's CSV row."""
    rows = forecast["pools" if key == "pool" else "teams"]
    row = next((r for r in rows if r[key] == name), {})
    return {"forecast_horizon_days": forecast["horizon_days"],
            "capacity_gpus": row.get("capacity_gpus"),
            "forecast_peak_gpus": row.get("peak_gpus"),
            "forecast_trend_gpus_per_day": row.get("trend_gpus_per_day"),
            "forecast_need_gpus": row.get("need_gpus"),
            "forecast_headroom_gpus": row.get("headroom_gpus")}


def text_rows(forecast: dict[str, Any], by: str) -> tuple[list[Col], list[list[str]], list[str]]:
    """The forecast table: each pool (or team) and the total, need beside today's capacity;
    red where the need exceeds it."""
    key = "pool" if by == "pool" else "team"
    cols = [Col(key, right=False, wraps=True), Col("capacity now"), Col("peak", drop=2),
            Col("trend", drop=1), Col(f"need in {forecast['horizon_days']}d"),
            Col("headroom")]
    rows: list[list[str]] = []
    styles: list[str] = []
    for r, name in [(r, r[key]) for r in forecast["pools" if by == "pool" else "teams"]] + [
            (forecast["total"], "total")]:
        rows.append([plain(name), gpus(r["capacity_gpus"], "—"), gpus(r["peak_gpus"]),
                     trend(r["trend_gpus_per_day"]) if r["need_gpus"] is not None else "—",
                     gpus(r["need_gpus"]), gpus(r["headroom_gpus"], "—")])
        h = r["headroom_gpus"]
        styles.append("red" if h is not None and h < 0 else "")
    return cols, rows, styles

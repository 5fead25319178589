"""The page's tables: rows of the report's JSON document as sortable HTML tables.

A cell holding a number carries it in ``data-v`` (what the sort uses); a missing figure is an
empty ``data-v`` shown as "not measured" (or "—"), never as 0.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from html import escape
from typing import Any

Fmt = Callable[[Any], str]


def gh(v: Any) -> str:
    return f"{v:,.1f}"


def pct(v: Any) -> str:
    return f"{v:.1%}"


def usd(v: Any) -> str:
    return f"${v:,.2f}"


def usd0(v: Any) -> str:
    return f"${v:,.0f}"


def num(v: Any) -> str:
    return f"{v:,g}"


@dataclass(frozen=True)
class Col:
    key: str
    header: str
    fmt: Fmt | None = None  # None: text
    missing: str = "—"


def cell(col: Col, value: Any) -> str:
    if col.fmt is None:
        text = "" if value is None else (
            "; ".join(map(str, value)) if isinstance(value, list) else str(value))
        return f"<td>{escape(text)}</td>" if text else '<td class="missing">—</td>'
    if value is None:
        return f'<td class="num missing" data-v="">{escape(col.missing)}</td>'
    return f'<td class="num" data-v="{value!r}">{escape(col.fmt(value))}</td>'


def table(cols: Sequence[Col], rows: Sequence[dict[str, Any]], table_id: str,
          caption: str = "") -> str:
    head = "".join(
        f'<th scope="col"{" class=" + chr(34) + "num" + chr(34) if c.fmt else ""}>'
        f'<button type="button">{escape(c.header)}</button></th>' for c in cols)
    body = "".join("<tr>" + "".join(cell(c, row.get(c.key)) for c in cols) + "</tr>"
                   for row in rows)
    cap = f"<caption>{escape(caption)}</caption>" if caption else ""
    return (f'<div class="scroll"><table class="sortable" id="{table_id}">{cap}<thead><tr>'
            f"{head}</tr></thead><tbody>{body}</tbody></table></div>")


NM = "not measured"
FIGURES = (
    Col("capacity_gpu_hours", "capacity GPU-h", gh),
    Col("allocated_gpu_hours", "allocated GPU-h", gh),
    Col("used_gpu_hours", "used GPU-h", gh, NM),
    Col("debt_gpu_hours", "debt GPU-h", gh, NM),
    Col("idle_gpu_hours", "idle GPU-h", gh),
    Col("unmeasured_gpu_hours", "unmeasured GPU-h", gh),
    Col("utilisation", "utilisation", pct, NM),
    Col("debt_usd", "debt $", usd),
    Col("debt_usd_per_month", "debt $/month", usd0),
)
POOLS = (Col("pool", "pool"), Col("platform", "platform"), Col("account", "account"),
         Col("region", "region"), Col("team", "team"),
         Col("instance_type", "instance type"), Col("gpus_per_instance", "GPUs each", num),
         Col("status", "status"), *FIGURES)
TEAMS = (Col("team", "team"), Col("pools", "pools", num), *FIGURES, Col("pool_names", "pools"))
NAMESPACES = (Col("pool", "pool"), Col("namespace", "namespace"), Col("team", "team"),
              Col("status", "status"), Col("pods", "pods", num),
              *(c for c in FIGURES if c.key not in ("capacity_gpu_hours", "idle_gpu_hours")),
              Col("gpu_quota", "GPU quota", num))
OFFENDERS = (Col("pool", "pool"), Col("platform", "platform"), Col("team", "team"),
             Col("utilisation", "utilisation", pct, NM),
             Col("debt_gpu_hours", "debt GPU-h", gh, NM), Col("debt_usd", "debt $", usd))
ADVICE = (Col("pool", "pool"), Col("action", "action"), Col("change", "proposed change"),
          Col("gpus", "GPUs fewer", num), Col("usd_per_month", "saves $/month", usd0),
          Col("message", "why"))
FINDINGS = (Col("pool", "pool"), Col("finding", "finding"), Col("message", "message"))


def per_month(v: Any) -> str:
    return f"{v * 30:+,.2f}/month"


def forecast_cols(key: str, horizon: int) -> tuple[Col, ...]:
    return (Col(key, key), Col("capacity_gpus", "capacity now (GPUs)", gh),
            Col("peak_gpus", "peak (GPUs)", gh, "no data"),
            Col("trend_gpus_per_day", "trend", per_month, "flat (under 14 days of data)"),
            Col("need_gpus", f"need in {horizon} d (GPUs)", gh, "no data"),
            Col("headroom_gpus", "headroom (GPUs)", gh))

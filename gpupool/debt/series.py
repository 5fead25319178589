"""The debt report's JSON document, with each pool's per-bucket series (format version 2).

The ``pools`` rows hold rounded figures for people and spreadsheets; what a later reading needs
to reach the same conclusions as the live read (``gpupool rightsize --utilisation FILE``: the
high percentile of each bucket's need, the peak in service, the tags that match a pool to its
stack entry) is kept beside them, unrounded, under ``pool_series``: one entry per row of
``pools``, in the same order, naming its pool. Each entry carries the pool's tags, the figures
its evidence is made of (sums, price, peak), its timeline (``capacity``, ``allocated``,
``used``, ``measured``: GPUs per bucket of the window, ``null`` where unknown, never zero) and,
for Kubernetes pools, each charge line's timeline, the namespace quotas and the autoscalers.

Version 1 documents (before the series) still serve ``gpupool check --utilisation``; rightsize
refuses them in one line (:mod:`gpupool.rightsize.snapshot`). The entries are written one a
line (compact), so 1,000 pools of 200 buckets stay a few megabytes and a diff stays readable.
"""

from __future__ import annotations

import json
from typing import Any

from gpupool.debt.model import Charge, PoolFigures, Sums, Timeline

SERIES_KEY = "pool_series"
SERIES_VERSION = 2  # the first format version whose JSON document carries SERIES_KEY
TIMELINE_KEYS = ("capacity", "allocated", "used", "measured")
SUM_KEYS = ("capacity_gpu_hours", "allocated_gpu_hours", "used_gpu_hours",
            "measured_gpu_hours", "unmeasured_gpu_hours", "unattributed_gpu_hours",
            "idle_gpu_hours", "allocated_usd", "debt_usd")


def timeline_dict(t: Timeline) -> dict[str, list[float | None]]:
    return {k: list(getattr(t, k)) for k in TIMELINE_KEYS}


def sums_dict(s: Sums) -> dict[str, float | None]:
    return {k: getattr(s, k) for k in SUM_KEYS}


def _line(c: Charge) -> dict[str, Any]:
    return {"team": c.team, "kind": c.kind, "namespace": c.namespace, "status": c.status,
            "cost_center": c.cost_center, "pods": list(c.pods), "sums": sums_dict(c.sums),
            "timeline": timeline_dict(c.timeline)}


def pool_series(f: PoolFigures) -> dict[str, Any]:
    """One pool's entry: what its row rounds or leaves out, exactly as the report had it."""
    p: Any = f.pool
    tags = getattr(p, "tags", None) or {}
    return {
        "pool": f.name,
        "account": getattr(p, "account", None),
        "region": getattr(p, "region", None),
        "tags": {str(k): str(v) for k, v in sorted(tags.items())},
        "on_demand_base": getattr(p, "on_demand_base", None),
        "price_per_gpu_hour": f.price_per_gpu_hour,
        "peak_in_service": f.peak_in_service,
        "memory_utilisation": f.memory_utilisation,
        "group_metric_hours": f.group_metric_hours,
        "expected_hours": f.expected_hours,
        "sums": sums_dict(f.sums),
        "timeline": timeline_dict(f.timeline),
        "lines": [_line(c) for c in f.lines],
        "namespace_quota": dict(f.namespace_quota),
        "autoscalers": list(f.autoscalers),
    }


def render_document(doc: dict[str, Any], figures: list[PoolFigures]) -> str:
    """``doc`` (the report's dict, its rows in the order of ``figures``) with ``pool_series``.

    The document is indented as before; each series entry is one compact line. The text is
    JSON (``json.loads`` of it is ``{**doc, "pool_series": [...]}``), with no NaN or infinity.
    """
    if len(doc.get("pools", ())) != len(figures):
        raise ValueError("expected one pools row per pool's figures")
    head = json.dumps({**doc, "version": SERIES_VERSION}, indent=2, allow_nan=False)
    entries = [json.dumps(pool_series(f), separators=(",", ":"), allow_nan=False)
               for f in figures]
    body = ",\n    ".join(entries)
    series = f'"{SERIES_KEY}": [\n    {body}\n  ]' if entries else f'"{SERIES_KEY}": []'
    return head[:-2] + ",\n  " + series + "\n}\n"  # head ends "\n}": the document's close

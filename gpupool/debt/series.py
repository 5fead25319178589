"""The debt report's JSON document, with each pool's per-bucket series (format version 3).

The ``pools`` rows hold rounded figures for people and spreadsheets; what a later reading needs
to reach the same conclusions as the live read (``gpupool rightsize --utilisation FILE``: the
high percentile of each bucket's need, the peak in service, the tags that match a pool to its
stack entry) is kept beside them, unrounded, under ``pool_series``: one entry per row of
``pools``, in the same order, naming its pool. Each entry carries the pool's tags, the figures
its evidence is made of (sums, price, peak), its timeline (``capacity``, ``allocated``,
``used``, ``measured``: GPUs per bucket of the window, ``null`` where unknown, never zero) and,
for Kubernetes pools, each charge line's timeline, the namespace quotas and the autoscalers
and (since version 3) the labels of the pool's namespaces and each pod's figures and timeline,
what ``rightsize`` matches a pool to its stack and sizes its workloads by. A pod's timeline is
kept only over the buckets it ran in (``first_bucket`` and the values from there; ``capacity``
only when known): outside them it is ``null`` in every series, so nothing is lost.

Version 1 documents (before the series) still serve ``gpupool check --utilisation``; rightsize
refuses them in one line (:mod:`gpupool.rightsize.snapshot`) and reads version 2 documents'
AWS pools, leaving their Kubernetes pools alone (said per pool). The entries are written one a
line (compact), so 1,000 pools of 200 buckets stay a few megabytes and a diff stays readable.
AWS entries are the same in versions 2 and 3.
"""

from __future__ import annotations

import json
from typing import Any

from gpupool.debt.model import Charge, PodFigures, PoolFigures, Sums, Timeline

SERIES_KEY = "pool_series"
SERIES_VERSION = 2  # the first format version whose JSON document carries SERIES_KEY
PODS_VERSION = 3  # the first whose Kubernetes entries carry their pods and namespace labels
DOCUMENT_VERSION = PODS_VERSION  # what render_document writes
POD_SUM_KEYS = ("allocated_gpu_hours", "used_gpu_hours", "measured_gpu_hours",
                "unmeasured_gpu_hours", "unattributed_gpu_hours", "debt_usd")
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


def pod_timeline(t: Timeline) -> dict[str, Any]:
    """A pod's timeline over the buckets where any series is known (``first_bucket`` on)."""
    known = [i for i in range(len(t.allocated))
             if any(getattr(t, k)[i] is not None for k in TIMELINE_KEYS)]
    first, last = (known[0], known[-1] + 1) if known else (0, 0)
    keys = TIMELINE_KEYS if any(v is not None for v in t.capacity) else TIMELINE_KEYS[1:]
    return {"first_bucket": first,
            "timeline": {k: list(getattr(t, k)[first:last]) for k in keys}}


def _pod(p: PodFigures) -> dict[str, Any]:
    out: dict[str, Any] = {"namespace": p.namespace, "pod": p.pod, "node": p.node,
                           "team": p.team, "status": p.status,
                           **{k: getattr(p, k) for k in POD_SUM_KEYS}}
    return {**out, **(pod_timeline(p.timeline) if p.timeline is not None
                      else {"timeline": None})}


def pool_series(f: PoolFigures) -> dict[str, Any]:
    """One pool's entry: what its row rounds or leaves out, exactly as the report had it."""
    p: Any = f.pool
    tags = getattr(p, "tags", None) or {}
    kube = {} if f.platform == "aws" else {
        "namespace_labels": {ns: dict(sorted(lb.items()))
                             for ns, lb in sorted(f.namespace_labels.items())},
        "pods": [_pod(pod) for pod in f.pods]}
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
        **kube,
    }


def render_document(doc: dict[str, Any], figures: list[PoolFigures]) -> str:
    """``doc`` (the report's dict, its rows in the order of ``figures``) with ``pool_series``.

    The document is indented as before; each series entry is one compact line. The text is
    JSON (``json.loads`` of it is ``{**doc, "pool_series": [...]}``), with no NaN or infinity.
    """
    if len(doc.get("pools", ())) != len(figures):
        raise ValueError("expected one pools row per pool's figures")
    head = json.dumps({**doc, "version": DOCUMENT_VERSION}, indent=2, allow_nan=False)
    entries = [json.dumps(pool_series(f), separators=(",", ":"), allow_nan=False)
               for f in figures]
    body = ",\n    ".join(entries)
    series = f'"{SERIES_KEY}": [\n    {body}\n  ]' if entries else f'"{SERIES_KEY}": []'
    return head[:-2] + ",\n  " + series + "\n}\n"  # head ends "\n}": the document's close

"""AWS Compute Optimizer's recommendations for the same groups, shown beside the kit's own.

Compute Optimizer reports GPU utilisation (``GPU_PERCENTAGE``, ``GPU_MEMORY_PERCENTAGE``) and
an instance type per group for accounts that opted in. It is optional: when the account has not
opted in, the caller may not read it, the region lacks it, or the endpoint does not implement
it, the report says so in one line and goes on. Never a failure.

Compute Optimizer may recommend a bigger size of the same GPU; the kit's first idea says that
buys CPU and memory, not GPU power, so such a recommendation is marked ``vertical``.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from gpupool.catalog import Catalog
from gpupool.debt.aws import Clients, NotTheDocument, chunks
from gpupool.debt.discover import Pool

BATCH = 100


@dataclass
class OptimizerView:
    status: str = "off"  # on | off (not opted in / unavailable / denied / no groups)
    reason: str = ""
    by_pool: dict[str, dict[str, Any]] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        return {"status": self.status, "reason": self.reason,
                "recommendations": [self.by_pool[k] for k in sorted(self.by_pool)]}


def _metric(metrics: Sequence[dict[str, Any]], name: str) -> float | None:
    for m in metrics or ():
        if m.get("name") == name and m.get("statistic", "Average") == "Average":
            return float(m["value"])
    for m in metrics or ():
        if m.get("name") == name:
            return float(m["value"])
    return None


def _option(opt: dict[str, Any], current: str | None, catalog: Catalog) -> dict[str, Any]:
    cfg = opt.get("configuration") or {}
    itype = cfg.get("instanceType")
    savings = (opt.get("savingsOpportunity") or {}).get("estimatedMonthlySavings") or {}
    out: dict[str, Any] = {
        "rank": opt.get("rank"),
        "instance_type": itype,
        "min_size": cfg.get("minSize"),
        "max_size": cfg.get("maxSize"),
        "desired_capacity": cfg.get("desiredCapacity"),
        "projected_gpu_utilisation": _pct(_metric(opt.get("projectedUtilizationMetrics") or [],
                                                  "GPU_PERCENTAGE")),
        "estimated_monthly_savings_usd": savings.get("value"),
        "performance_risk": opt.get("performanceRisk"),
        "vertical": False,
    }
    if current and itype:
        change = catalog.gpu_delta(current, itype)
        out["vertical"] = bool(change and (change.is_vertical_upsize or change.packs_more_gpus))
    return out


def _pct(value: float | None) -> float | None:
    return None if value is None else round(value / 100, 4)


def read_recommendations(clients: Clients, pools: Sequence[Pool],
                         catalog: Catalog) -> OptimizerView:
    """GetAutoScalingGroupRecommendations for the pools' ARNs, or why there are none."""
    from botocore.exceptions import BotoCoreError, ClientError

    view = OptimizerView()
    arns = {p.arn: p.name for p in pools if p.arn}
    if not arns:
        view.reason = "no GPU groups to ask about"
        return view
    co = clients.compute_optimizer
    try:
        for batch in chunks(sorted(arns), BATCH):
            token: str | None = None
            seen: set[str] = set()
            while True:
                kwargs: dict[str, Any] = {"autoScalingGroupArns": batch}
                if token:
                    kwargs["nextToken"] = token
                page = co.get_auto_scaling_group_recommendations(**kwargs)
                if "autoScalingGroupRecommendations" not in page:
                    raise NotTheDocument("no autoScalingGroupRecommendations")
                for rec in page["autoScalingGroupRecommendations"] or []:
                    name = arns.get(rec.get("autoScalingGroupArn", "")) or rec.get(
                        "autoScalingGroupName", "?")
                    view.by_pool[name] = _recommendation(name, rec, catalog)
                token = page.get("nextToken")
                if not token:
                    break
                if token in seen:
                    raise NotTheDocument("the same nextToken came back twice")
                seen.add(token)
    except ClientError as e:
        err = e.response.get("Error", {})
        code = str(err.get("Code", "?"))
        view.reason = {
            "OptInRequiredException": "the account has not opted in to Compute Optimizer",
            "AccessDeniedException": "not allowed to read Compute Optimizer "
                                     "(compute-optimizer:GetAutoScalingGroupRecommendations)",
        }.get(code, f"Compute Optimizer unavailable ({code})")
        view.by_pool.clear()
        return view
    except NotTheDocument as e:
        view.reason = f"Compute Optimizer's answer is not its API's document ({e})"
        view.by_pool.clear()
        return view
    except BotoCoreError as e:
        view.reason = f"Compute Optimizer unavailable ({type(e).__name__})"
        view.by_pool.clear()
        return view
    view.status = "on"
    view.reason = (f"{len(view.by_pool)} of {len(arns)} GPU groups have a recommendation"
                   if view.by_pool else "no recommendation for these groups yet")
    return view


def _recommendation(name: str, rec: dict[str, Any], catalog: Catalog) -> dict[str, Any]:
    current = rec.get("currentConfiguration") or {}
    options = sorted(rec.get("recommendationOptions") or [],
                     key=lambda o: o.get("rank") or 99)
    itype = current.get("instanceType")
    return {
        "pool": name,
        "finding": rec.get("finding"),
        "current_instance_type": itype,
        "gpu_utilisation": _pct(_metric(rec.get("utilizationMetrics") or [], "GPU_PERCENTAGE")),
        "gpu_memory_utilisation": _pct(_metric(rec.get("utilizationMetrics") or [],
                                               "GPU_MEMORY_PERCENTAGE")),
        "look_back_days": rec.get("lookBackPeriodInDays"),
        "options": [_option(o, itype, catalog) for o in options[:3]],
    }

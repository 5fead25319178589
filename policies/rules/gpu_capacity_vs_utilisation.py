# ruff: noqa: RUF001, RUF003  (× and → are the signs users read in messages)
"""gpu-capacity-vs-utilisation: no more capacity for a GPU pool that does not use what it has.

Allocation is not utilisation. A pull request that raises a GPU pool's capacity while the pool
ran below a utilisation threshold adds compute debt: an AWS pool's min, desired or max size (or
GPU types added to it), a Kubernetes pool's KEDA ScaledObject maxReplicaCount, Karpenter
NodePool GPU limit or namespace GPU quota. The measurements come from a snapshot written by
``gpupool debt --format json`` (AWS pools from CloudWatch, Kubernetes and on-premises pools
with ``--prometheus``), read by ``gpupool check --utilisation FILE`` or the pack's
``utilisationSnapshot``, matched to the plan by pool name. Stack scope: one snapshot per plan.

Reading the snapshot imports no AWS SDK (:mod:`gpupool.debt.snapshot`).
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Mapping, Sequence

from gpupool.catalog import Catalog
from gpupool.errors import InputError
from policies.facts import PlanIndex, text
from policies.model import ChangeKind, ResourceChange, ResourceKind
from policies.rules._asg_raise import describe, gpu_types, match, raised
from policies.rules._common import cannot_verify
from policies.rules._utilisation_verdict import clock, verdict
from policies.rules.base import Enforcement, Example, Finding, Rule, RuleContext, RuleMeta
from policies.rules.params import RuleParams, param

TYPE_CHECKING = False  # typing's, without importing typing (not on a check's path)
if TYPE_CHECKING:  # pydantic models, imported by load() only when a snapshot is given
    from datetime import datetime
    from typing import Any

    from gpupool.debt.snapshot import Snapshot, SnapshotPool

_SKIPPED = (ChangeKind.DELETE, ChangeKind.READ, ChangeKind.NOOP)
# What _k8s_raise reads (its KINDS, written here so a plan without them never imports it).
KUBE_KINDS = frozenset({ResourceKind.K8S_AUTOSCALER, ResourceKind.KARPENTER_NODE_POOL,
                        ResourceKind.K8S_RESOURCE_QUOTA, ResourceKind.K8S_MANIFEST})


class Params(RuleParams):
    threshold: float = param(
        default=40, ge=0, le=100,
        description="Utilisation (%) below which raising a pool's capacity is denied.")
    thresholds: dict[str, float] = param(
        default_factory=dict,
        description=(
            "Per-pool thresholds: glob pattern on the pool's name → %, first match wins "
            "(e.g. {\"prod-training-*\": 60, \"*-batch-*\": 20})."))
    utilisation_snapshot: str | dict[str, Any] | None = param(
        default=None,
        description=(
            "The measurements: a path to `gpupool debt --format json` output (relative paths "
            "from the working directory; for the pack, the policy pack's directory), or the "
            "document itself. `gpupool check --utilisation FILE` sets it."))
    max_snapshot_age_hours: float = param(
        default=48, ge=0,
        description=(
            "A snapshot older than this cannot vouch for a pool ('cannot verify'); 0 checks no "
            "age."))

    def __post_init__(self) -> None:
        """An unreadable snapshot is bad config (check exits 2, the pack's Configure refuses)."""
        try:
            load(self)
        except InputError as e:
            raise ValueError("; ".join(e.problems)) from None


def load(params: Params) -> Snapshot | None:
    """The configured snapshot (cached by path and mtime); :class:`InputError` if unusable."""
    given = params.utilisation_snapshot
    if given is None or given == "":
        return None
    from gpupool.debt.snapshot import CACHE, parse_snapshot  # pydantic: only with a snapshot
    if isinstance(given, dict):
        return parse_snapshot(given, "utilisationSnapshot (inline)")
    return CACHE.load(os.path.expandvars(os.path.expanduser(given)))


def _kube_pools(snapshot: Snapshot | None) -> dict[str, SnapshotPool]:
    """The snapshot's Kubernetes and on-premises pools by name (an AWS group of the same name
    is another pool)."""
    if snapshot is None:
        return {}
    return {p.pool: p for p in snapshot.pools if p.platform not in (None, "aws")}


class GpuCapacityVsUtilisation(Rule):
    meta = RuleMeta(
        id="gpu-capacity-vs-utilisation",
        title="No more capacity for a GPU pool that does not use what it has",
        default_enforcement=Enforcement.MANDATORY,
        rationale=(
            "Allocation is not utilisation: fleets often use 5–30 % of the GPUs they pay for. "
            "A change that raises a GPU pool's capacity is denied while the pool's measured "
            "GPU utilisation is below the threshold (40 % by default, per pool pattern), with "
            "the figures: utilisation, compute debt in GPU-hours and dollars, and what the "
            "raise adds. For an AWS pool that is its min, desired or max size, or GPU types "
            "added; for a Kubernetes or on-premises pool a KEDA ScaledObject's "
            "maxReplicaCount, a Karpenter NodePool's limits of nvidia.com/gpu or a "
            "ResourceQuota's GPU keys (requests.nvidia.com/gpu, limits.nvidia.com/gpu) raised "
            "or removed, the object matched to its pool by the kit's gpupool.io/pool label. "
            "Measurements come from a snapshot written by `gpupool debt --format json` "
            "(--prometheus for Kubernetes pools), matched by name (or Pulumi logical name). "
            "A snapshot older than maxSnapshotAgeHours, a pool the snapshot could not measure "
            "(no CloudWatch agent, no DCGM exporter) and a Kubernetes pool measured only in "
            "part (exporter gaps) are 'cannot verify'. Without a snapshot, a raise is advised "
            "on as 'cannot verify'; a pool the snapshot does not know (a new pool has no "
            "history) likewise: the rule never blocks a first deployment."
        ),
        scope="stack",
        kinds=frozenset({ResourceKind.AUTOSCALING_GROUP, *KUBE_KINDS}),
        params=Params,
        needs_old_inputs=True,
    )

    examples = ()  # filled in below, after the helper that builds them

    def check_resource(self, change: ResourceChange, ctx: RuleContext) -> Iterable[Finding]:
        return ()  # stack scope: see check

    def check(self, changes: Sequence[ResourceChange], ctx: RuleContext) -> Iterable[Finding]:
        params: Params = ctx.params
        plan = ctx.plan if (ctx.plan_index is not None or ctx.index) else PlanIndex(changes)
        groups = [g for g in plan.groups if g.change not in _SKIPPED]
        kube = []
        if not KUBE_KINDS.isdisjoint({c.kind for c in changes}):  # Kubernetes readers: only then
            from policies.rules._k8s_raise import kube_raise

            kube = [(c, r) for c in changes if c.kind in KUBE_KINDS and c.change not in _SKIPPED
                    and (r := kube_raise(c)) is not None]
        if not groups and not kube:
            return
        try:
            snapshot = load(params)
        except InputError as e:  # fail closed: an unreadable snapshot never passes
            for address in [g.address for g in groups] + [c.address for c, _ in kube]:
                yield Finding(address, "utilisation snapshot cannot be read: "
                              + "; ".join(e.problems))
            return
        names = snapshot.by_name() if snapshot is not None else {}
        now = clock() if snapshot is not None else None  # no snapshot: no age to judge
        for group in groups:
            finding = self._judge(group, plan, ctx.catalog, params, snapshot, names, now)
            if finding is not None:
                yield finding
        pools = _kube_pools(snapshot)
        for change, what in kube:
            if what.unknown is not None and not what.bounds:
                yield Finding(change.address, cannot_verify(
                    f"{what.unknown}, so whether it raises GPU pool {what.pool}'s capacity "
                    "cannot be told"), unknown=True)
                continue
            finding = verdict(change.address, what.describe(), pools.get(what.pool), snapshot,
                              params, [what.pool], now,
                              {"raised": [list(b) for b in what.bounds]})
            if finding is not None:
                yield finding

    def _judge(self, group: ResourceChange, plan: PlanIndex, catalog: Catalog, params: Params,
               snapshot: Snapshot | None, names: Mapping[str, SnapshotPool],
               now: datetime | None) -> Finding | None:
        measured = match(group, names)
        new_rows, _ = gpu_types(plan, group, "new", catalog)
        if not new_rows and measured is None:
            return None  # not a GPU group (or one the rule cannot tell and nothing measured)
        gpu = new_rows[0] if new_rows else catalog.get(measured.instance_type if measured
                                                       else "")
        what = raised(group, plan, catalog, measured)
        if what is None:  # a new pool without measurements: nothing to hold it against
            if snapshot is not None and group.change is ChangeKind.CREATE:
                # said only when a snapshot was given: without one, every first deployment
                # would carry a note about a check nobody asked for
                return Finding(group.address, cannot_verify(
                    f"the snapshot {snapshot.path} does not know this pool; a new GPU pool has "
                    "no utilisation history, so its capacity is not judged (advisory)"),
                    advisory_only=True)
            return None
        if not what:
            return None
        names_ = [group.name, *(n for n in [text(group.after.get("name"))] if isinstance(n, str))]
        return verdict(group.address, describe(group, what, gpu), measured, snapshot, params,
                       names_, now, {"raised": [list(s) for s in what.sizes],
                                     "new_types": list(what.new_types)})


# -- examples (the docs show them and the tests run them) -----------------------------------

def _snapshot(pools: list[dict[str, Any]], generated: str = "2026-11-30T06:00:00Z"
              ) -> dict[str, Any]:
    return {"generated_at": generated,
            "window": {"start": "2026-11-23T06:00:00Z", "end": "2026-11-30T06:00:00Z",
                       "period_s": 3600},
            "pools": pools}


def _pool(name: str, utilisation: float | None, *, debt: float | None = None,
          usd_: float | None = None, status: str = "measured", impossible: int = 0
          ) -> dict[str, Any]:
    return {"pool": name, "team": "research", "instance_type": "g4dn.xlarge",
            "gpus_per_instance": 1, "status": status, "min_size": 2, "desired_capacity": 2,
            "max_size": 4, "allocated_gpu_hours": 336.0, "utilisation": utilisation,
            "debt_gpu_hours": debt, "debt_usd": usd_, "impossible_readings": impossible}


def _group(name: str, old_max: int | None, new_max: int, *, min_size: int = 2,
           itype: str = "g4dn.xlarge") -> dict[str, Any]:
    new = {"name": name, "minSize": min_size, "maxSize": new_max, "mixedInstancesPolicy": {
        "launchTemplate": {"overrides": [{"instanceType": itype}]}}}
    out: dict[str, Any] = {"type": "aws:autoscaling/group:Group", "name": "pool", "new": new}
    if old_max is not None:
        out["old"] = {**new, "maxSize": old_max, "mixedInstancesPolicy": {
            "launchTemplate": {"overrides": [{"instanceType": "g4dn.xlarge"}]}}}
    return out


def _kube_pool(utilisation: float | None, status: str = "measured") -> dict[str, Any]:
    used = None if utilisation is None else round(2688.0 * utilisation, 1)
    return {"pool": "onprem", "platform": "on-prem", "team": "ml-platform",
            "instance_type": "", "gpus_per_instance": 8, "status": status,
            "allocated_gpu_hours": 2688.0, "used_gpu_hours": used, "utilisation": utilisation,
            "debt_gpu_hours": None if used is None else round(2688.0 - used, 1),
            "debt_usd": None if used is None else 0.0}


def _kube(kind: str, api: str, name: str, old_spec: dict[str, Any], new_spec: dict[str, Any],
          namespace: str | None = "gpu-ml-platform") -> dict[str, Any]:
    meta = {"name": name, "labels": {"gpupool.io/pool": "onprem", "team": "ml-platform"},
            **({} if namespace is None else {"namespace": namespace})}
    group = api if "/" in api else f"core/{api}"
    return {"type": f"kubernetes:{group}:{kind}", "name": name,
            "old": {"apiVersion": api, "kind": kind, "metadata": meta, "spec": old_spec},
            "new": {"apiVersion": api, "kind": kind, "metadata": meta, "spec": new_spec}}


_TRIGGER = [{"type": "prometheus", "metadata": {"query": "sum(DCGM_FI_DEV_GPU_UTIL)"}}]
_KEDA_RAISE = _kube("ScaledObject", "keda.sh/v1alpha1", "embeddings",
                    {"maxReplicaCount": 6, "triggers": _TRIGGER},
                    {"maxReplicaCount": 12, "triggers": _TRIGGER})
_QUOTA_RAISE = _kube("ResourceQuota", "v1", "gpu-quota",
                     {"hard": {"requests.nvidia.com/gpu": "8"}},
                     {"hard": {"requests.nvidia.com/gpu": "16"}})
_KUBE_IDLE = _snapshot([_kube_pool(0.08)])
_KUBE_BUSY = _snapshot([_kube_pool(0.66)])

_FRESH = {"maxSnapshotAgeHours": 0}  # the examples' snapshot has a fixed date: age not checked
_IDLE = _snapshot([_pool("gpu-inference", 0.12, debt=295.7, usd_=155.54)])
_BUSY = _snapshot([_pool("gpu-inference", 0.71, debt=97.4, usd_=51.23)])

GpuCapacityVsUtilisation.examples = (
    Example(
        title="Raising the max of a pool that runs at 12 %",
        allowed=False,
        resources=[_group("gpu-inference", 4, 8)],
        params={**_FRESH, "utilisationSnapshot": _IDLE},
        message_contains=["raises maxSize 4 → 8 (+4 GPUs of capacity, up to +$2.104/h)",
                          "ran at 12.0% GPU utilisation over 7 days",
                          "295.7 GPU-hours allocated and not used ($155.54)"],
    ),
    Example(
        title="Adding a GPU type to an idle pool (Terraform)",
        allowed=False,
        resources=[{"type": "aws_autoscaling_group", "name": "pool",
                    "address": "aws_autoscaling_group.pool",
                    "old": {"name": "gpu-inference", "min_size": 2, "max_size": 4,
                            "mixed_instances_policy": [{"launch_template": [{"override": [
                                {"instance_type": "g4dn.xlarge"}]}]}]},
                    "new": {"name": "gpu-inference", "min_size": 2, "max_size": 4,
                            "mixed_instances_policy": [{"launch_template": [{"override": [
                                {"instance_type": "g4dn.xlarge"},
                                {"instance_type": "g6.xlarge"}]}]}]}}],
        params={**_FRESH, "utilisationSnapshot": _IDLE},
        message_contains=["adds GPU type g6.xlarge", "12.0% GPU utilisation"],
    ),
    Example(
        title="Raising the max of a busy pool",
        allowed=True,
        resources=[_group("gpu-inference", 4, 8)],
        params={**_FRESH, "utilisationSnapshot": _BUSY},
    ),
    Example(
        title="A per-pool threshold: batch pools may run at 10 %",
        allowed=True,
        resources=[_group("gpu-inference", 4, 8)],
        params={**_FRESH, "utilisationSnapshot": _IDLE, "thresholds": {"gpu-*": 10}},
    ),
    Example(
        title="Lowering the max of an idle pool",
        allowed=True,
        resources=[_group("gpu-inference", 8, 4)],
        params={**_FRESH, "utilisationSnapshot": _IDLE},
    ),
    Example(
        title="No snapshot: advisory 'cannot verify', never a block",
        allowed=True,
        resources=[_group("gpu-inference", 4, 8)],
    ),
    Example(
        title="A new pool (Pulumi autonames it at apply) has no history: advisory",
        allowed=True,
        resources=[_group("gpu-training", None, 8)],
        params={**_FRESH, "utilisationSnapshot": _IDLE},
    ),
    Example(
        title="A stale snapshot cannot vouch for the pool",
        allowed=False,
        unknown=True,
        resources=[_group("gpu-inference", 4, 8)],
        params={"maxSnapshotAgeHours": 48,
                "utilisationSnapshot": _snapshot([_pool("gpu-inference", 0.71)],
                                                 generated="2026-01-05T00:00:00Z")},
        message_contains=["cannot verify", "was taken 2026-01-05 00:00 UTC, more than "
                          "maxSnapshotAgeHours (48) ago",
                          "refresh it with gpupool debt"],
    ),
    Example(
        title="A pool the snapshot could not measure (no CloudWatch agent)",
        allowed=False,
        unknown=True,
        resources=[_group("gpu-inference", 4, 8)],
        params={**_FRESH, "utilisationSnapshot": _snapshot(
            [_pool("gpu-inference", None, status="not measured")])},
        message_contains=["cannot verify", "which the snapshot could not measure"],
    ),
    Example(
        title="A pool whose agent reported impossible values (150 % utilisation)",
        allowed=False,
        unknown=True,
        resources=[_group("gpu-inference", 4, 8)],
        params={**_FRESH, "utilisationSnapshot": _snapshot(
            [_pool("gpu-inference", 0.71, status="partial", impossible=3)])},
        message_contains=["cannot verify", "3 impossible value(s)"],
    ),
    Example(
        title="Kubernetes: raising a KEDA maxReplicaCount while the on-premises pool idles at 8 %",
        allowed=False,
        resources=[_KEDA_RAISE],
        params={**_FRESH, "utilisationSnapshot": _KUBE_IDLE},
        message_contains=["raises ScaledObject gpu-ml-platform/embeddings maxReplicaCount "
                          "6 → 12 on GPU pool onprem, which ran at 8.0% GPU utilisation",
                          "2,473.0 GPU-hours allocated and not used"],
    ),
    Example(
        title="Kubernetes: raising a namespace's GPU quota on an idle pool",
        allowed=False,
        resources=[_QUOTA_RAISE],
        params={**_FRESH, "utilisationSnapshot": _KUBE_IDLE},
        message_contains=["raises ResourceQuota gpu-ml-platform/gpu-quota "
                          "hard.requests.nvidia.com/gpu 8 → 16 on GPU pool onprem"],
    ),
    Example(
        title="Kubernetes: removing a Karpenter NodePool's GPU limit on an idle pool",
        allowed=False,
        resources=[_kube("NodePool", "karpenter.sh/v1", "gpupool-onprem",
                         {"limits": {"nvidia.com/gpu": "16"}}, {"limits": {"cpu": "256"}},
                         namespace=None)],
        params={**_FRESH, "utilisationSnapshot": _KUBE_IDLE},
        message_contains=["raises NodePool gpupool-onprem limits.nvidia.com/gpu 16 → no limit"],
    ),
    Example(
        title="Kubernetes: raising a NodePool's GPU limit on a busy pool",
        allowed=True,
        resources=[_kube("NodePool", "karpenter.sh/v1", "gpupool-onprem",
                         {"limits": {"nvidia.com/gpu": "16"}},
                         {"limits": {"nvidia.com/gpu": "24"}}, namespace=None)],
        params={**_FRESH, "utilisationSnapshot": _KUBE_BUSY},
    ),
    Example(
        title="Kubernetes: lowering a GPU quota on an idle pool",
        allowed=True,
        resources=[_kube("ResourceQuota", "v1", "gpu-quota",
                         {"hard": {"requests.nvidia.com/gpu": "8"}},
                         {"hard": {"requests.nvidia.com/gpu": "4"}})],
        params={**_FRESH, "utilisationSnapshot": _KUBE_IDLE},
    ),
    Example(
        title="Kubernetes: a pool with exporter gaps (partial) cannot vouch for a raise",
        allowed=False,
        unknown=True,
        resources=[_KEDA_RAISE],
        params={**_FRESH, "utilisationSnapshot": _snapshot([_kube_pool(0.66, "partial")])},
        message_contains=["cannot verify", "which the snapshot could not measure (partial"],
    ),
    Example(
        title="Kubernetes: GPU nodes without a DCGM exporter (not measured)",
        allowed=False,
        unknown=True,
        resources=[_QUOTA_RAISE],
        params={**_FRESH, "utilisationSnapshot": _snapshot([_kube_pool(None, "not measured")])},
        message_contains=["cannot verify", "no DCGM exporter series for its GPUs"],
    ),
)

RULE = GpuCapacityVsUtilisation()

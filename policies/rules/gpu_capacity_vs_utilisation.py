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
from policies.rules.base import (
    Enforcement,
    Example,
    Finding,
    Rule,
    RuleContext,
    RuleMeta,
    lazy_examples,
)
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


def _examples() -> tuple[Example, ...]:
    """The examples, from their own module: built (and their snapshots with them) only when the
    docs, the tests or the pack read them, never by a check importing the rule."""
    from policies.rules._capacity_examples import EXAMPLES

    return EXAMPLES


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

    examples = lazy_examples(_examples)

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


RULE = GpuCapacityVsUtilisation()

"""What a change adds to a Kubernetes GPU pool, for gpu-capacity-vs-utilisation.

Three objects bound how many GPUs a Kubernetes pool can hold: a KEDA ScaledObject's
``maxReplicaCount`` (the GPU Deployment's replicas), a Karpenter NodePool's ``limits`` of a GPU
resource (the nodes it may launch) and a ResourceQuota's GPU keys (``requests.nvidia.com/gpu``,
``limits.nvidia.com/gpu``: what a namespace may ask for). Raising one, or removing it (no bound
at all), is more capacity. The kit labels every object with its pool (``gpupool.io/pool``), which
names the pool in the snapshot; an object without the label is matched by its own name.
"""

from __future__ import annotations

from gpupool.record import Frozen
from policies.facts.k8s.autoscalers import is_gpu_metric, texts
from policies.facts.k8s.objects import K8sObject, k8s_object
from policies.facts.k8s.quantities import GPU_RESOURCES, quantity, whole_number
from policies.facts.values import block, is_map
from policies.model import UNKNOWN, ChangeKind, ResourceChange, ResourceKind

TYPE_CHECKING = False  # typing's, without importing typing (not on a check's path)
if TYPE_CHECKING:
    from typing import Any

# The kit's pool label (gpupool.config.kubernetes.POOL_LABEL): written here, not imported, so
# checking a plan never imports the stack config models (tests/cli/test_check_at_scale.py).
POOL_LABEL = "gpupool.io/pool"

KINDS = frozenset({ResourceKind.K8S_AUTOSCALER, ResourceKind.KARPENTER_NODE_POOL,
                   ResourceKind.K8S_RESOURCE_QUOTA, ResourceKind.K8S_MANIFEST})
_QUOTA_KEYS = tuple(k for r in GPU_RESOURCES for k in (f"requests.{r}", f"limits.{r}", r))
NO_BOUND = float("inf")


class KubeRaise(Frozen):
    """The bounds a change raises on one Kubernetes object: (key, old, new); ``inf`` = none."""

    __slots__ = ("pool", "what", "bounds", "unknown")

    pool: str  # the pool label, or the object's name
    what: str  # "ScaledObject gpu-ml-platform/embeddings"
    bounds: tuple[tuple[str, float, float], ...]
    unknown: str | None  # a bound unknown until apply

    def __init__(
        self,
        pool: str,
        what: str,
        bounds: tuple[tuple[str, float, float], ...],
        unknown: str | None = None,
    ) -> None:
        object.__setattr__(self, "pool", pool)
        object.__setattr__(self, "what", what)
        object.__setattr__(self, "bounds", bounds)
        object.__setattr__(self, "unknown", unknown)

    def describe(self) -> str:
        shown = "; ".join(f"{key} {_n(old)} → {_n(new)}" for key, old, new in self.bounds)
        return f"raises {self.what} {shown}" if shown else f"changes {self.what}"


def _n(v: float) -> str:
    return "no limit" if v == NO_BOUND else f"{v:g}"


def _bounds(obj: K8sObject) -> dict[str, float | str] | None:
    """The object's GPU bounds (a value, ``inf`` for none, "unknown"); None: no GPU bound."""
    spec = obj.spec
    if spec is UNKNOWN:
        return {"spec": "unknown"}
    spec = spec or {}
    if obj.kind == "ScaledObject":
        raw = spec.get("max_replica_count")
        if raw is UNKNOWN:
            return {"maxReplicaCount": "unknown"}
        most = whole_number(raw, 100)
        return {"maxReplicaCount": float(most) if most is not None else "unknown"}
    if obj.kind in ("NodePool", "Provisioner"):
        limits = block(spec.get("limits"))
        if is_map(limits) and obj.kind == "Provisioner":
            limits = block(limits.get("resources"))
        if limits is UNKNOWN:
            return {"limits": "unknown"}
        found = {r: (limits or {}).get(r) for r in GPU_RESOURCES}
        return {f"limits.{r}": _quantity(v) for r, v in found.items()}
    if obj.kind == "ResourceQuota":
        hard = spec.get("hard")
        if hard is UNKNOWN:
            return {"hard": "unknown"}
        keys = hard if is_map(hard) else {}
        return {f"hard.{k}": _quantity(keys.get(k)) for k in _QUOTA_KEYS}
    return None


def _quantity(raw: Any) -> float | str:
    if raw is None:
        return NO_BOUND
    q = quantity(raw)
    return q.value if q.value is not None else "unknown"


def _is_gpu(obj: K8sObject) -> bool:
    """A GPU pool's object: labelled with a pool, or bounding a GPU resource, or (an
    autoscaler) scaling on a GPU metric."""
    if obj.labels.get(POOL_LABEL):
        return True
    if obj.kind == "ScaledObject":
        spec = obj.spec if is_map(obj.spec) else {}
        return is_gpu_metric(tuple(texts(spec.get("triggers"))))
    bounds = _bounds(obj) or {}
    return any(v != NO_BOUND for v in bounds.values())


def kube_raise(change: ResourceChange) -> KubeRaise | None:
    """What ``change`` adds to a Kubernetes GPU pool; None for anything else, for a new object
    (no history to hold it against: the pool's other objects are judged) and a lowered one."""
    if change.change is ChangeKind.CREATE or change.old is None:
        return None
    new, old = k8s_object(change, "new"), k8s_object(change, "old")
    if new is None or old is None or not (_is_gpu(new) or _is_gpu(old)):
        return None
    after, before = _bounds(new), _bounds(old)
    if after is None or before is None:
        return None
    label = new.labels.get(POOL_LABEL) or old.labels.get(POOL_LABEL)
    name = new.name if isinstance(new.name, str) else ""
    pool = label if isinstance(label, str) and label else name
    where = f"{new.namespace}/{name}" if isinstance(new.namespace, str) else name
    what = f"{new.kind} {where}"
    raised: list[tuple[str, float, float]] = []
    unknown = None
    for key, value in after.items():
        prior = before.get(key, NO_BOUND)
        if isinstance(value, str) or isinstance(prior, str):
            if value != prior:
                unknown = f"{what} {key} is unknown until apply"
            continue
        if value > prior:
            raised.append((key, prior, value))
    if not raised and unknown is None:
        return None
    return KubeRaise(pool, what, tuple(raised), unknown)

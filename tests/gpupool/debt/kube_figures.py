"""A Kubernetes pool's figures built by hand, with charge lines, quotas, autoscalers, its
namespaces' labels and its pods (one held all window, one that ran two buckets): what the
JSON document's ``pool_series`` must carry for ``rightsize --utilisation`` to size it."""

from __future__ import annotations

from gpupool.debt.model import Charge, KubePool, PodFigures, PoolFigures, Sums, Timeline


def kube_pool(buckets: int) -> PoolFigures:
    def t(alloc: float | None, used: float | None) -> Timeline:
        return Timeline((8.0,) * buckets, (alloc,) * buckets, (used,) * buckets,
                        (alloc if used is not None else None,) * buckets)

    none = (None,) * buckets
    brief = tuple(1.0 if i in (2, 3) else None for i in range(buckets))  # buckets 2 and 3
    s = Sums(capacity_gpu_hours=8.0 * buckets, allocated_gpu_hours=3.0 * buckets,
             used_gpu_hours=0.1 * buckets, measured_gpu_hours=3.0 * buckets)
    info = KubePool("eks-gpu", "kubernetes", "http://127.0.0.1:9090", "ml", None,
                    "g4dn.xlarge", "T4", 1.0, 8, min_size=2, max_size=8)
    lines = [Charge("eks-gpu", "vision", "namespace", "measured", s, t(2.0, 1 / 3),
                    namespace="vision", pods=("a-0", "a-1")),
             Charge("eks-gpu", "ml", "capacity", "partial", Sums(), t(None, None))]
    pods = [PodFigures("eks-gpu", "vision", "serve-6f7d8-x2x9p", "node-1", "vision",
                       "measured", float(buckets), buckets / 3, float(buckets), 0.0, 0.0,
                       buckets / 3 * 0.526,
                       Timeline(none, (1.0,) * buckets, (1 / 3,) * buckets, (1.0,) * buckets)),
            PodFigures("eks-gpu", "vision", "eval-4m8qz", "node-2", "vision", "not measured",
                       2.0, None, 0.0, 2.0, 0.0, None, Timeline(none, brief, none, tuple(
                           0.0 if v is not None else None for v in brief)))]
    labels = {"vision": {"app_kubernetes_io_managed_by": "gpupool", "environment": "prod",
                         "gpupool_io_pool": "eks-gpu", "team": "vision"}}
    return PoolFigures(info, "measured", s, t(3.0, 0.1), None, 0.526, buckets, buckets, None,
                       lines=lines, pods=pods, namespace_quota={"vision": 4.0},
                       autoscalers=[{"kind": "ScaledObject", "max_replicas": 6}],
                       namespace_labels=labels)

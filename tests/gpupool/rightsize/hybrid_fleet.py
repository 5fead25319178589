"""The prod stack's fleet over a seeded idle week: its AWS groups on a moto server and its
on-premises Kubernetes pool ``onprem`` in a real Prometheus (the debt tests' harness,
backfilled with promtool), each labelled as the kit labels it.

``onprem`` (8 nodes of 2 L40S, the stack's 16 GPUs), hour by hour:

- gpu-ml-platform: the ``embeddings`` Deployment held at its ``minReplicas: 2`` all week, each
  replica's GPU 10 % busy: 0.2 GPUs used, 0.29 replicas needed at its 70 % target;
- gpu-research: the ``nightly-eval`` Job's two pods (``parallelism: 2``), 60 % busy, in the
  first two hours of each day;
- both namespaces carry the kit's labels (team, cost-center, environment, gpupool.io/pool,
  app.kubernetes.io/managed-by), their ResourceQuota of 8 GPUs and embeddings' KEDA HPA its
  maximum of 6, as the stack file says.
"""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "debt"))

import boto3
from debt_fleet import PoolSpec, build_fleet
from prom_history import (
    KSM,
    L40S,
    UTIL,
    History,
    Value,
    dcgm,
    namespace,
    node,
    now_and_then,
)

from gpupool.debt.window import Window

ML, RS = "gpu-ml-platform", "gpu-research"
EMBEDDINGS = ("embeddings-7c9d5b8f4-k2x9p", "embeddings-7c9d5b8f4-q7w3z")
EVAL = ("nightly-eval-4m8qz", "nightly-eval-x9t2c")


def nightly(v: float) -> Value:
    return lambda h, _k: v if h % 24 < 2 else None


def always(v: float) -> Value:
    return lambda _h, _k: v


def _pod(hist: History, ns: str, name: str, node_name: str, present: Value) -> None:
    uid = f"uid-{ns}-{name}"
    hist.add("kube_pod_container_resource_requests",
             {"namespace": ns, "pod": name, "uid": uid, "container": "main", "node": node_name,
              "resource": "nvidia_com_gpu", "unit": "integer", **KSM}, present)
    hist.add("kube_pod_status_phase", {"namespace": ns, "pod": name, "uid": uid,
                                       "phase": "Running", **KSM}, present)


def idle_week(start: int) -> History:
    hist = History(start)
    for ns, team, cc in ((ML, "ml-platform", "cc-ml-1042"), (RS, "research", "cc-research-2001")):
        namespace(hist, ns, {"team": team, "cost_center": cc, "environment": "prod",
                             "gpupool_io_pool": "onprem",
                             "app_kubernetes_io_managed_by": "gpupool",
                             "app_kubernetes_io_part_of": "gpupool"})
        for resource in ("requests.nvidia.com/gpu", "limits.nvidia.com/gpu"):
            hist.add("kube_resourcequota", {"namespace": ns, "resourcequota": "gpu-quota",
                                            "resource": resource, "type": "hard", **KSM},
                     now_and_then(8))
    for i in range(1, 9):
        node(hist, f"onprem-{i}", {"nvidia_com_gpu": 2},
             {"gpupool_io_pool": "onprem", "nvidia_com_gpu_product": "NVIDIA-L40S"})
    for g, pod in enumerate(EMBEDDINGS):
        _pod(hist, ML, pod, "onprem-1", always(1))
        dcgm(hist, UTIL, "onprem-1", g, f"GPU-10{g}", L40S, always(10), (ML, pod))
    for g, pod in enumerate(EVAL):
        _pod(hist, RS, pod, "onprem-2", nightly(1))
        dcgm(hist, UTIL, "onprem-2", g, f"GPU-20{g}", L40S, nightly(60), (RS, pod))
    hist.add("kube_horizontalpodautoscaler_spec_max_replicas",
             {"namespace": ML, "horizontalpodautoscaler": "keda-hpa-embeddings", **KSM},
             now_and_then(6))
    return hist



def tags(pool: str, team: str, **more: str) -> dict[str, str]:
    return {"environment": "prod", "gpupool:pool": pool, "managed-by": "gpupool", **more,
            "team": team}


def prod_specs(n: int) -> list[PoolSpec]:
    """The prod stack's groups over ``n`` buckets, tagged as the kit tags them."""
    return [
        # inference: held at its minimum of 3 T4, 5 % busy → 0.15 GPUs, 0.21 instances at 70 %
        PoolSpec("prod-inference", "g4dn.xlarge", None, min_size=3, desired=4, max_size=24,
                 in_service=[3] * n, utilisation=[5] * n,
                 extra_tags=tags("inference", "ml-platform")),
        # training: its group says ml-platform, its stack entry charges research
        PoolSpec("prod-training", "g5.xlarge", None, max_size=16, in_service=[1] * n,
                 utilisation=[10] * n, extra_tags=tags("training", "ml-platform")),
        # l4-inference: no GPU agent, not measured
        PoolSpec("prod-l4", "g6.xlarge", None, min_size=1, max_size=12, in_service=[1] * n,
                 extra_tags=tags("l4-inference", "ml-platform")),
        # the remote-GPU tier: 2 proxies 60 % busy → 1.71 instances, + 20 % → 3: min stays 2
        PoolSpec("prod-llm-decode", "g4dn.2xlarge", None, min_size=2, desired=2, max_size=8,
                 in_service=[2] * n, utilisation=[60] * n,
                 extra_tags=tags("llm-decode", "ml-platform", **{"gpupool:role": "gpu-proxy"})),
    ]


def prod_groups(window: Window) -> None:
    """The prod stack's groups as the AWS rightsize test builds them (its EXPECTED holds)."""
    build_fleet(boto3.session.Session(), prod_specs(window.buckets), window)

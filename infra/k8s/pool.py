"""``KubernetesGpuPool``: GPU capacity on a Kubernetes cluster, run by the same three ideas.

One component per ``gpupool:kubernetes`` entry. Its explicit ``kubernetes.Provider`` is built
from the stack's config (kubeconfig path and/or context) and is the only place that knows the
cluster: every child is declared through it, so nothing falls back to whatever cluster the
ambient kubeconfig happens to point at. Children:

- per team: a namespace with a GPU ResourceQuota and a LimitRange capping GPUs per container
  (and giving none to a container that asks for none);
- GPU plumbing in ``gpupool-system``: the NVIDIA device plugin (unless the GPU Operator runs),
  the DCGM exporter with its Service and, with the Prometheus Operator, a ServiceMonitor; the
  pool's Grafana dashboard (a ConfigMap for the Grafana chart's sidecar, unless opted out);
- workload templates (inference Deployments scaled by KEDA on GPU utilisation, batch Jobs);
- the remote-GPU proxy when configured;
- on EKS with Karpenter: a NodePool + EC2NodeClass of the smallest size for the GPU.

Every object carries the chargeback labels (team, cost-center, environment).
"""

from __future__ import annotations

from dataclasses import dataclass

import pulumi
import pulumi_kubernetes as k8s

from gpupool.catalog import InstanceType
from gpupool.config.kubernetes import KubernetesPoolConfig
from gpupool.config.models import StackConfig
from infra.k8s import dashboard, karpenter, plumbing, proxy, tenancy, workloads
from infra.k8s.labels import node_labels, pool_labels, team_labels

COMPONENT_TYPE = "gpupool:k8s:KubernetesGpuPool"


@dataclass(frozen=True, slots=True)
class KubernetesGpuPoolArgs:
    stack: StackConfig  # chargeback values and the environment
    pool: KubernetesPoolConfig
    node_type: InstanceType | None = None  # Karpenter: the smallest type for pool.gpu


class KubernetesGpuPool(pulumi.ComponentResource):
    """A cluster's GPU pool: tenancy, GPU plumbing, workloads, proxy and (EKS) node capacity."""

    provider: k8s.Provider
    namespaces: dict[str, pulumi.Output[str]]

    def __init__(self, name: str, args: KubernetesGpuPoolArgs,
                 opts: pulumi.ResourceOptions | None = None) -> None:
        pool = args.pool
        if pool.karpenter is not None and args.node_type is None:
            raise ValueError(f"Kubernetes pool {pool.name}: Karpenter capacity needs the "
                             "resolved smallest instance type for its GPU")
        super().__init__(COMPONENT_TYPE, name, None, opts)
        cluster = pool.cluster
        self.provider = k8s.Provider(
            f"{name}-cluster",
            k8s.ProviderArgs(kubeconfig=cluster.kubeconfig, context=cluster.context,
                             enable_server_side_apply=True),
            opts=pulumi.ResourceOptions(parent=self),
        )
        child = pulumi.ResourceOptions(parent=self, provider=self.provider)
        shared = pool_labels(args.stack, pool)

        namespaces = {
            team.name: tenancy.team_namespace(name, team, team_labels(args.stack, pool, team),
                                              child)
            for team in pool.teams
        }
        system = plumbing.system_namespace(name, shared, child)
        in_system = pulumi.ResourceOptions.merge(child, pulumi.ResourceOptions(depends_on=[system]))
        if not pool.gpu_operator:
            plumbing.device_plugin(name, pool, shared, in_system)
        exporter = plumbing.dcgm_exporter(name, pool, shared, in_system)
        if pool.monitoring.grafana_dashboard:
            dashboard.grafana_dashboard(name, pool, shared, in_system)

        for w in pool.workloads:
            team = pool.team(w.team)
            labels = team_labels(args.stack, pool, team)
            in_ns = pulumi.ResourceOptions.merge(
                child, pulumi.ResourceOptions(depends_on=[namespaces[team.name]]))
            build = workloads.inference if w.type == "inference" else workloads.batch
            build(f"{name}-{w.name}", pool, w, team.namespace_name, labels, in_ns)

        proxy_service: pulumi.Output[str] | None = None
        if pool.remote_gpu is not None:
            team = pool.team(pool.remote_gpu.team)
            in_ns = pulumi.ResourceOptions.merge(
                child, pulumi.ResourceOptions(depends_on=[namespaces[team.name]]))
            service = proxy.remote_gpu_proxy(
                f"{name}-proxy", pool, pool.remote_gpu, team.namespace_name,
                team_labels(args.stack, pool, team), in_ns)
            proxy_service = service.metadata.name

        if pool.karpenter is not None:
            assert args.node_type is not None
            tags = {**args.stack.tags, "team": args.stack.team,
                    "cost-center": args.stack.cost_center,
                    "environment": args.stack.environment, "gpupool:pool": pool.name,
                    "managed-by": "gpupool"}
            karpenter.node_pool(f"{name}-gpu", f"gpupool-{pool.name}", args.node_type,
                                pool.karpenter, shared, node_labels(args.stack, pool), tags,
                                child)

        self.namespaces = {t: ns.metadata.name for t, ns in namespaces.items()}
        self.register_outputs({
            "namespaces": self.namespaces,
            "metricsService": exporter.metadata.name,
            "proxyService": proxy_service,
        })

"""Kubernetes GPU pools (pulumi-kubernetes): the hybrid half of the kit."""

from infra.k8s.pool import COMPONENT_TYPE, KubernetesGpuPool, KubernetesGpuPoolArgs

__all__ = ["COMPONENT_TYPE", "KubernetesGpuPool", "KubernetesGpuPoolArgs"]

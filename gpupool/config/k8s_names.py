"""Kubernetes names, label keys and values, images and quantities as stack keys accept them.

Shared by the pool's models (:mod:`gpupool.config.kubernetes`) and its workloads'
(:mod:`gpupool.config.k8s_workloads`), so neither imports the other for a pattern.
"""

from __future__ import annotations

import re
from typing import Final

from pydantic import ValidationInfo

# Kubernetes names: DNS-1123 labels (namespaces, services) and label values.
DNS_LABEL = r"^[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?$"
DNS_SUBDOMAIN = r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$"
_LABEL_VALUE = re.compile(r"^(([A-Za-z0-9][-A-Za-z0-9_.]{0,61})?[A-Za-z0-9])?$")
_LABEL_KEY = re.compile(
    r"^([a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*/)?"
    r"[A-Za-z0-9]([-A-Za-z0-9_.]{0,61}[A-Za-z0-9])?$"
)
# An image reference pinned to a version: a tag other than "latest", or a digest.
IMAGE = r"^[a-z0-9][a-z0-9._/:-]*(:[A-Za-z0-9_][A-Za-z0-9_.-]{0,127}|@sha256:[0-9a-f]{64})$"
K8S_VERSION = r"^1\.(2[5-9]|3[0-9])$"
QUANTITY = r"^[0-9]+(\.[0-9]+)?(m|k|Ki|Mi|Gi|Ti|M|G|T)?$"
ABSOLUTE_PATH = r"^/[^\s:]*$"
HTTP_PATH = r"^/[\x21-\x7e]*$"

# What each pattern means, in words (the loader prints these instead of the regex).
PATTERN_HINTS: dict[str, str] = {
    DNS_LABEL: "a Kubernetes name of 1-63 characters (a-z, 0-9, '-'), such as ml-research",
    DNS_SUBDOMAIN: "a Kubernetes object name (a-z, 0-9, '-', '.'), such as triton-models",
    IMAGE: "a container image pinned to a version tag or digest (not :latest), such as "
    "nvcr.io/nvidia/tritonserver:24.08-py3",
    K8S_VERSION: "a Kubernetes minor version between 1.25 and 1.39, such as \"1.31\" (quoted)",
    QUANTITY: "a Kubernetes quantity such as 2, 500m or 16Gi",
    ABSOLUTE_PATH: "an absolute path in the container without spaces or ':', such as /models",
    HTTP_PATH: "an HTTP path such as /v2/health/ready",
}

# Node label domains Karpenter refuses on a NodePool's nodes: v1.0-v1.8 refuse kubernetes.io
# and k8s.io (but node-restriction.kubernetes.io), every v1 release karpenter.sh and
# karpenter.k8s.aws (their CRDs' x-kubernetes-validations on spec.template.metadata.labels).
KARPENTER_REFUSED_DOMAINS: Final = ("kubernetes.io", "k8s.io", "karpenter.sh", "karpenter.k8s.aws")
_NODE_RESTRICTION: Final = "node-restriction.kubernetes.io"


def is_label_value(value: str) -> bool:
    return len(value) <= 63 and bool(_LABEL_VALUE.match(value))


def labels(value: dict[str, str]) -> dict[str, str]:
    """A field validator's body: every key a label key, every value a label value."""
    for key, v in value.items():
        if not _LABEL_KEY.match(key) or len(key) > 253:
            raise ValueError(f"expected Kubernetes label keys, got {key!r}")
        if not is_label_value(v):
            raise ValueError(
                f"expected Kubernetes label values (at most 63 of A-Z a-z 0-9 - _ .), got {v!r}"
            )
    return value


def karpenter_settable(key: str) -> bool:
    """Whether every Karpenter v1 release accepts ``key`` as a NodePool node label: its domain
    (the whole key when it has no prefix, as Karpenter's rules read it) ends in none of the
    refused domains, node-restriction.kubernetes.io aside (meant for labels like these)."""
    domain = key.split("/", 1)[0]
    if domain.endswith(_NODE_RESTRICTION):
        return True
    return not domain.endswith(KARPENTER_REFUSED_DOMAINS)


def pinned(image: str) -> str:
    if image.endswith(":latest"):
        raise ValueError(f"expected an image pinned to a version, not :latest, got {image!r}")
    return image


def at_least_min(v: int, info: ValidationInfo) -> int:
    low = info.data.get("min_replicas")
    if isinstance(low, int) and v < low:
        raise ValueError(f"expected at least minReplicas ({low}), got {v}")
    return v

"""What share of a physical GPU one schedulable unit is: a GPU, a time slice, a MIG instance.

The report counts physical GPUs, so that a time-sliced node offering 8 ``nvidia.com/gpu`` on 2
GPUs is 2 GPUs of capacity and a pod holding one slice is allocated a quarter of one:

- ``nvidia_com_gpu`` is one GPU, or 1/replicas of one on a time-sliced node (the device
  plugin's ``nvidia.com/gpu.replicas`` node label, else the pool's ``timeSlicingReplicas``),
  or one MIG instance's share under the ``single`` strategy (the node's
  ``nvidia.com/gpu.product`` ends ``-MIG-<n>g.<mem>``);
- ``nvidia_com_gpu_shared`` (time slices renamed by the device plugin) is 1/replicas;
- ``nvidia_com_mig_<n>g_<mem>gb`` (the ``mixed`` strategy) is n of the GPU's compute slices:
  7 on A100, H100, H200 and B200, 4 on A30.

A MIG instance's DCGM series (``GPU_I_PROFILE`` ``3g.20gb``) carries the same share, so its
``DCGM_FI_PROF_GR_ENGINE_ACTIVE`` is weighted by it.
"""

from __future__ import annotations

import re
from collections.abc import Mapping

_MIG_RESOURCE = re.compile(r"^nvidia_com_mig_(\d+)g_")
_MIG_PROFILE = re.compile(r"(?:(\d+)c\.)?(\d+)g\.")
_MIG_PRODUCT = re.compile(r"-MIG-(\d+)g\.", re.IGNORECASE)
REPLICAS_LABEL = "nvidia_com_gpu_replicas"  # kube_node_labels' label_nvidia_com_gpu_replicas
PRODUCT_LABEL = "nvidia_com_gpu_product"
FOUR_SLICE_MODELS = ("A30",)


def compute_slices(model: str) -> int:
    return 4 if any(m in model.upper() for m in FOUR_SLICE_MODELS) else 7


def replicas(node_labels: Mapping[str, str], configured: int | None) -> int:
    raw = node_labels.get(REPLICAS_LABEL, "")
    if raw.isdigit() and int(raw) >= 1:
        return int(raw)
    return configured if configured and configured > 1 else 1


def share(resource: str, node_labels: Mapping[str, str], model: str,
          configured_replicas: int | None) -> float:
    """The share of a physical GPU one unit of ``resource`` is on this node."""
    m = _MIG_RESOURCE.match(resource)
    if m:
        return int(m[1]) / compute_slices(model)
    if resource == "nvidia_com_gpu":
        single = _MIG_PRODUCT.search(node_labels.get(PRODUCT_LABEL, ""))
        if single:
            return int(single[1]) / compute_slices(model)
    if resource in ("nvidia_com_gpu", "nvidia_com_gpu_shared"):
        return 1 / replicas(node_labels, configured_replicas)
    return 0.0  # not a GPU resource


def profile_share(profile: str, model: str) -> float:
    """A MIG instance's share of its GPU from its DCGM ``GPU_I_PROFILE``; 1 for a whole GPU."""
    if not profile:
        return 1.0
    m = _MIG_PROFILE.search(profile)
    if m is None:
        return 1.0
    return int(m[1] or m[2]) / compute_slices(model)

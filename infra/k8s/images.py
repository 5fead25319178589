"""Container images the Kubernetes pool deploys, each pinned to a released version.

Sources (the tag's own static manifest names the image; commit recorded for the audit trail):

- NVIDIA device plugin ``v0.20.0``: NVIDIA/k8s-device-plugin, tag v0.20.0
  (commit 1b826acc6af3079d8923bac395c3124b8861a9a6),
  ``deployments/static/nvidia-device-plugin.yml``.
- DCGM exporter ``4.5.3-4.8.2`` (DCGM 4.5.3, exporter 4.8.2): NVIDIA/dcgm-exporter, tag
  4.5.3-4.8.2 (commit 691c92762eb551313c825f6efe4ceeee20982801), ``dcgm-exporter.yaml``.

Bump both together with the tests that pin them (tests/infra/test_k8s_pool.py).
"""

from __future__ import annotations

from typing import Final

DEVICE_PLUGIN_VERSION: Final = "v0.20.0"
DEVICE_PLUGIN_IMAGE: Final = f"nvcr.io/nvidia/k8s-device-plugin:{DEVICE_PLUGIN_VERSION}"
DCGM_EXPORTER_VERSION: Final = "4.5.3-4.8.2"
DCGM_EXPORTER_IMAGE: Final = f"nvcr.io/nvidia/k8s/dcgm-exporter:{DCGM_EXPORTER_VERSION}-distroless"
DCGM_PORT: Final = 9400

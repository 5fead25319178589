"""The GPU instance catalog: what each EC2 GPU type carries and what it costs."""

from gpupool.catalog.model import (
    Catalog,
    GpuKey,
    InstanceType,
    canonical_instance_type,
    load_catalog,
)

__all__ = ["Catalog", "GpuKey", "InstanceType", "canonical_instance_type", "load_catalog"]

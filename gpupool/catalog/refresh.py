"""``gpupool catalog refresh``: rebuild the catalog data file from EC2 and the recorded prices.

Reads DescribeInstanceTypes through boto3 (so ``AWS_ENDPOINT_URL`` points it at a moto server in
tests, or at real EC2 with credentials), keeps every type that reports a GPU, and joins the
recorded on-demand price list. Instance data is never typed by hand.
"""

from __future__ import annotations

import json
import re
from datetime import UTC, datetime
from importlib import resources
from pathlib import Path
from typing import Any

PRICES_FILE = "prices-us-east-1.json"
_SIZE = re.compile(r"^(?P<family>[^.]+)\.(?P<size>.+)$")


def load_prices(path: str | None = None) -> dict[str, Any]:
    if path is not None:
        return json.loads(Path(path).read_text())
    return json.loads(resources.files("gpupool.catalog").joinpath("data", PRICES_FILE).read_text())


def describe_gpu_instance_types(client: Any) -> list[dict[str, Any]]:
    """Every instance type the endpoint reports that carries a GPU."""
    out: list[dict[str, Any]] = []
    for page in client.get_paginator("describe_instance_types").paginate():
        out.extend(t for t in page["InstanceTypes"] if t.get("GpuInfo", {}).get("Gpus"))
    return out


def to_row(t: dict[str, Any], prices: dict[str, float]) -> dict[str, Any]:
    """One DescribeInstanceTypes entry → one catalog row."""
    name = t["InstanceType"]
    m = _SIZE.match(name)
    if m is None:
        raise ValueError(f"unexpected instance type name {name!r}")
    gpu = t["GpuInfo"]["Gpus"][0]
    count = float(gpu.get("Count") or 0)
    if count == 0:  # partitioned GPU (g6f, gr6f): a fraction of one physical GPU
        count = float(gpu.get("GpuPartitionSize") or 0) * float(gpu.get("LogicalGpuCount") or 1)
    net = t.get("NetworkInfo", {})
    cards = net.get("NetworkCards") or []
    baseline = sum(float(c.get("BaselineBandwidthInGbps") or 0) for c in cards)
    burst = sum(float(c.get("PeakBandwidthInGbps") or 0) for c in cards)
    archs = t["ProcessorInfo"]["SupportedArchitectures"]
    price = prices.get(name)
    return {
        "instance_type": name,
        "family": m["family"],
        "size": m["size"],
        "vcpus": int(t["VCpuInfo"]["DefaultVCpus"]),
        "memory_mib": int(t["MemoryInfo"]["SizeInMiB"]),
        "gpu_maker": gpu.get("Manufacturer", ""),
        "gpu_model": gpu["Name"],
        "gpu_count": count if count % 1 else int(count),
        "gpu_memory_mib": int(gpu.get("MemoryInfo", {}).get("SizeInMiB") or 0),
        "arch": "arm64" if "arm64" in archs else archs[0],
        "network_baseline_gbps": baseline,
        "network_burst_gbps": max(burst, baseline),
        "efa_supported": bool(net.get("EfaSupported", False)),
        "price_per_hour": None if price is None else float(price),
    }


def build_document(types: list[dict[str, Any]], prices_doc: dict[str, Any], endpoint: str) -> dict:
    prices = prices_doc["prices"]
    rows = sorted((to_row(t, prices) for t in types), key=lambda r: r["instance_type"])
    return {
        "source": {
            "instances": f"EC2 DescribeInstanceTypes via boto3 ({endpoint})",
            "prices": prices_doc["source"],
            "prices_generated_at": prices_doc["generated_at"],
        },
        "generated_at": datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ"),
        "price_region": prices_doc["region"],
        "types": rows,
    }


def refresh(output: Path, *, region: str = "us-east-1", prices_path: str | None = None) -> int:
    """Write the catalog data file; returns the number of GPU types written."""
    import boto3  # lazy: boto3 costs ~0.3 s to import

    client = boto3.client("ec2", region_name=region)
    types = describe_gpu_instance_types(client)
    if not types:
        raise RuntimeError("DescribeInstanceTypes returned no GPU instance types")
    doc = build_document(types, load_prices(prices_path), client.meta.endpoint_url)
    output.write_text(json.dumps(doc, indent=1) + "\n")
    return len(doc["types"])

"""Put a probe's figures into CloudWatch, so a tier's network is watched like its GPUs.

One ``PutMetricData`` call (boto3; ``AWS_ENDPOINT_URL`` and the usual credential chain
honoured) in namespace ``GPUPool/Netcheck`` by default, with the dimension ``Target`` (the
HOST:PORT probed) and any ``--dimension Name=Value`` given, such as the proxy group's
``AutoScalingGroupName`` so the figures sit beside its ``nvidia_smi_utilization_gpu``. An alarm
on ``RttP99`` or ``Bandwidth`` (the lower direction; ``BandwidthToServer`` and
``BandwidthFromServer`` each) against the tier's budget tags then watches the budget.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from gpupool.errors import InputError

NAMESPACE = "GPUPool/Netcheck"


def parse_dimensions(pairs: Sequence[str]) -> dict[str, str]:
    out: dict[str, str] = {}
    for pair in pairs:
        name, sep, value = pair.partition("=")
        if not sep or not name.strip() or not value.strip() or len(name) > 255 \
                or len(value) > 1024:
            raise InputError(f"--dimension: expected Name=Value (such as "
                             f"AutoScalingGroupName=proxies), got {pair!r}")
        out[name.strip()] = value.strip()
    return out


def metric_data(result: Mapping[str, Any], dimensions: Mapping[str, str]) -> list[dict[str, Any]]:
    """The PutMetricData entries for a probe result (the JSON of ``netcheck probe``)."""
    dims = [{"Name": "Target", "Value": result["target"]}] + [
        {"Name": k, "Value": v} for k, v in dimensions.items()]
    rtt = result["rtt_us"]
    data = [
        {"MetricName": "RttP50", "Value": rtt["p50"], "Unit": "Microseconds"},
        {"MetricName": "RttP99", "Value": rtt["p99"], "Unit": "Microseconds"},
        {"MetricName": "RttMax", "Value": rtt["max"], "Unit": "Microseconds"},
        {"MetricName": "Bandwidth", "Value": result["bandwidth_gbps"], "Unit": "Gigabits/Second"},
    ]
    both = result.get("bandwidth") or {}
    for name, key in (("BandwidthToServer", "client_to_server"),
                      ("BandwidthFromServer", "server_to_client")):
        if key in both:
            data.append({"MetricName": name, "Value": both[key]["gbps"],
                         "Unit": "Gigabits/Second"})
    if result.get("predicted_overhead") is not None:
        data.append({"MetricName": "PredictedOverhead",
                     "Value": result["predicted_overhead"] * 100, "Unit": "Percent"})
    return [{**d, "Dimensions": dims} for d in data]


def put(result: Mapping[str, Any], dimensions: Mapping[str, str], namespace: str = NAMESPACE,
        region: str | None = None) -> int:
    """Send the figures; the number of metrics sent. Failures are one InputError line."""
    import boto3
    from botocore.exceptions import BotoCoreError, ClientError

    data = metric_data(result, dimensions)
    try:
        client = boto3.client("cloudwatch", region_name=region)
        client.put_metric_data(Namespace=namespace, MetricData=data)
    except (BotoCoreError, ClientError) as e:
        raise InputError(f"--cloudwatch: PutMetricData to {namespace} failed ({e})") from None
    return len(data)

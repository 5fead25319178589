"""Capacity and cost envelope: the figures the plan, the stack outputs and the reports quote."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from gpupool.catalog import load_catalog
from gpupool.config import load_stack
from gpupool.config.models import GpuPoolConfig
from gpupool.envelope import pool_envelope, stack_envelope
from gpupool.record import replace

ROOT = Path(__file__).resolve().parents[2]
CATALOG = load_catalog()


def _type(name: str):  # type: ignore[no-untyped-def]
    t = CATALOG.get(name)
    assert t is not None
    return t


def test_dev_stack_envelope_matches_the_catalog_prices() -> None:
    loaded = load_stack(str(ROOT / "stacks" / "Pulumi.dev.yaml"))
    env = stack_envelope(loaded.config, loaded.instance_types)
    by_pool = {p.pool: p for p in env.pools}
    inference = by_pool["inference"]
    assert inference.instance_type == "g4dn.xlarge"
    assert (inference.gpus_min, inference.gpus_max) == (1, 4)
    assert inference.price_per_hour == pytest.approx(0.526)
    assert inference.per_hour_max == pytest.approx(4 * 0.526)
    assert inference.per_month_max == pytest.approx(4 * 0.526 * 730)
    assert inference.price_per_gpu_hour == pytest.approx(0.526)
    assert inference.upper_bound  # 90 % spot: on-demand prices only bound the bill
    arm = by_pool["arm-inference"]
    assert (arm.instance_type, arm.arch, arm.per_hour_max) == ("g5g.xlarge", "arm64", 0.84)
    assert (env.gpus_min, env.gpus_max) == (2, 6)
    assert env.per_hour_max == pytest.approx(4 * 0.526 + 2 * 0.42)
    assert env.per_month_min == pytest.approx((0.526 + 0.42) * 730)


def test_prod_on_demand_base_costs_money_at_minimum() -> None:
    loaded = load_stack(str(ROOT / "stacks" / "Pulumi.prod.yaml"))
    env = stack_envelope(loaded.config, loaded.instance_types)
    # AWS pools 3 + 0 + 1, the on-premises Kubernetes pool 2 (embeddings' minimum replicas)
    assert env.gpus_min == 3 + 0 + 1 + 2
    assert env.gpus_max == 24 + 16 + 12 + 16
    assert env.per_hour_min == pytest.approx(3 * 0.526 + 1 * 0.8048)  # on-premises: $0
    doc = env.to_dict()
    assert doc["total"]["perHourMin"] == round(3 * 0.526 + 0.8048, 4)
    assert doc["priceBasis"] == "on-demand" and doc["priceRegion"] == "us-east-1"
    assert [p["pool"] for p in doc["pools"]] == ["inference", "training", "l4-inference", "onprem"]
    onprem = doc["pools"][-1]
    assert (onprem["platform"], onprem["priceBasis"], onprem["pricePerGpuHour"]) == (
        "kubernetes", "configured", 0.0)


def test_multi_gpu_type_counts_every_gpu_and_prices_per_gpu() -> None:
    pool = GpuPoolConfig(name="big", gpu="T4", min_size=1, max_size=3)
    env = pool_envelope(pool, _type("g4dn.12xlarge"))
    assert (env.gpus_per_instance, env.gpus_min, env.gpus_max) == (4, 4, 12)
    assert env.price_per_gpu_hour == pytest.approx(3.912 / 4)
    assert not env.upper_bound  # no spot: on-demand is the price


def test_unknown_price_stays_unknown_and_poisons_totals() -> None:
    loaded = load_stack(str(ROOT / "stacks" / "Pulumi.dev.yaml"))
    unpriced = replace(loaded.instance_types["inference"], price_per_hour=None)
    env = stack_envelope(loaded.config, {**loaded.instance_types, "inference": unpriced})
    p = env.pools[0]
    assert p.price_per_hour is None and p.per_hour_max is None and p.per_month_min is None
    assert p.gpus_max == 4  # capacity is still known
    assert env.per_hour_min is None and env.per_hour_max is None
    assert env.unpriced_pools == ["inference"]
    assert env.to_dict()["total"]["perMonthMax"] is None


EU_STACK = """\
config:
  aws:region: eu-west-1
  gpupool:environment: dev
  gpupool:team: ml
  gpupool:costCenter: cc-1
  gpupool:network: {createVpc: true, azCount: 3}
  gpupool:pools:
    - {name: t4, gpu: T4, minSize: 1, maxSize: 4, rootVolumeGib: 100}
    - {name: a10g, gpu: A10G, minSize: 0, maxSize: 2, rootVolumeGib: 200}
"""


def test_stack_in_eu_west_1_is_priced_at_eu_west_1_prices(tmp_path: Path) -> None:
    """Issue 7 item 15: a stack in eu-west-1 was unpriced (only us-east-1 prices existed)."""
    path = tmp_path / "Pulumi.eu.yaml"
    path.write_text(EU_STACK)
    loaded = load_stack(str(path))
    env = stack_envelope(loaded.config, loaded.instance_types)
    assert env.region == env.price_region == "eu-west-1"
    t4, a10g = env.pools
    assert (t4.instance_type, t4.price_per_hour) == ("g4dn.xlarge", 0.587)
    assert (a10g.instance_type, a10g.price_per_hour) == ("g5.xlarge", 1.123)
    assert env.per_hour_max == pytest.approx(4 * 0.587 + 2 * 1.123)
    assert "instances.vantage.sh" in env.price_source and "2026-01-21" in env.price_source
    assert loaded.instance_types["t4"].price_per_hour == 0.526  # the catalog row is untouched


def test_region_without_recorded_prices_is_unpriced(tmp_path: Path) -> None:
    import yaml

    from gpupool.config import parse_flat_config

    # parsed without the offering check: ap-southeast-4 offers no GPU type (validate says so)
    flat = yaml.safe_load(EU_STACK.replace("eu-west-1", "ap-southeast-4"))["config"]
    config, resolved = parse_flat_config(flat, "melbourne.yaml")
    env = stack_envelope(config, resolved)
    assert env.price_region == "ap-southeast-4"
    assert all(p.price_per_hour is None for p in env.pools)
    assert env.per_hour_max is None and env.gpus_max == 6
    assert env.price_source == "no recorded prices for ap-southeast-4"


def test_envelope_states_what_it_leaves_out(tmp_path: Path) -> None:
    path = tmp_path / "Pulumi.eu.yaml"
    path.write_text(EU_STACK)
    loaded = load_stack(str(path))
    doc = stack_envelope(loaded.config, loaded.instance_types).to_dict()
    assert doc["includes"] == "GPU instances at on-demand prices"
    excluded = {e["item"]: e["quantity"] for e in doc["excludes"]}
    assert excluded["EBS gp3 root volumes (per GiB-month)"] == (
        "100-800 GiB at minimum-maximum size")
    assert excluded["VPC interface endpoints (per endpoint-zone hour and per GB processed)"] == (
        "6 endpoints x 3 zones = 18 endpoint-zones")
    assert any(item.startswith("data transfer") for item in excluded)
    assert excluded["CloudWatch alarms and dashboard (per alarm-month, per dashboard-month; "
                    "gpupool:monitoring)"] == f"{len(loaded.config.pools)} alarm(s), 1 dashboard(s)"


@given(
    lo=st.integers(0, 50),
    extra=st.integers(0, 50),
    spot=st.floats(0, 1),
    name=st.sampled_from(sorted(t.instance_type for t in CATALOG if t.price_per_hour)),
)
def test_envelope_is_monotone_and_linear(lo: int, extra: int, spot: float, name: str) -> None:
    itype = _type(name)
    pool = GpuPoolConfig(name="p-1", gpu=itype.gpu_model, min_size=lo, max_size=max(lo + extra, 1),
                         spot_share=spot)
    env = pool_envelope(pool, itype)
    assert env.per_hour_min is not None and env.per_hour_max is not None
    assert env.per_hour_min <= env.per_hour_max
    assert env.per_month_max == pytest.approx(env.per_hour_max * 730)
    assert env.gpus_max == pytest.approx(itype.gpu_count * pool.max_size)
    assert env.upper_bound == (spot > 0)

"""The ENA Express data file comes from DescribeInstanceTypes (a moto server over HTTP), and
the sizing questions the tier and the rules ask of it."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from gpupool.catalog import load_catalog
from gpupool.catalog.network import (
    FLOW_CAP_CLUSTER_GBPS,
    NetworkKind,
    bundled_network_path,
    flow_gbps,
    justified_by_bandwidth,
    load_network_data,
    main,
    smallest_for_bandwidth,
)

CATALOG = load_catalog()


def test_refresh_from_moto_reproduces_the_bundled_file(
    aws_env: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "ena.json"
    assert main(["--output", str(out)]) == 0
    new = json.loads(out.read_text())
    bundled = json.loads(bundled_network_path().read_text())
    assert {k: v for k, v in new.items() if k != "generated_at"} == {
        k: v for k, v in bundled.items() if k != "generated_at"}
    assert new["source"]["endpoint"].startswith("a moto server")
    assert "support ENA Express" in capsys.readouterr().out


def test_every_catalog_type_is_recorded_or_listed_as_not_described() -> None:
    data = load_network_data()
    missing = set(data.meta["source"]["not_described"])
    for t in CATALOG:
        assert t.instance_type in data or t.instance_type in missing
        row = data.get(t.instance_type)
        if row is not None:
            assert row.gpu and row.baseline_gbps == t.network_baseline_gbps
    # what DescribeInstanceTypes says today: the smallest sizes lack ENA Express, p5 has it
    assert data.ena_express("g4dn.xlarge") is False
    assert data.ena_express("p5.4xlarge") is True
    assert data.ena_express("c6in.8xlarge") is True and data.ena_express("no.such") is None
    assert "c7i.xlarge" in data.client_types() and "g4dn.xlarge" not in data.client_types()


def test_flow_caps_follow_the_ec2_user_guide() -> None:
    assert flow_gbps(50, NetworkKind.TCP, in_cluster=False) == 5
    assert flow_gbps(50, NetworkKind.TCP) == FLOW_CAP_CLUSTER_GBPS == 10
    assert flow_gbps(50, NetworkKind.ENA_EXPRESS) == 25
    assert flow_gbps(2.5, NetworkKind.ENA_EXPRESS) == 2.5  # never above the baseline
    assert flow_gbps(100, NetworkKind.EFA) == 100


@pytest.mark.parametrize(("itype", "min_gbps", "chosen"), [
    ("g4dn.xlarge", 5, "g4dn.xlarge"),
    ("g4dn.xlarge", 5.01, "g4dn.2xlarge"),
    ("g4dn.16xlarge", 12, "g4dn.4xlarge"),
    ("g5g.xlarge", 5, "g5g.4xlarge"),
    ("g5.xlarge", 26, None),  # no single-A10G size has more than 25 Gbps
])
def test_smallest_for_bandwidth_never_beyond_the_budget(
        itype: str, min_gbps: float, chosen: str | None) -> None:
    found = smallest_for_bandwidth(CATALOG, itype, min_gbps)
    assert (found.instance_type if found else None) == chosen
    if found is not None:
        assert justified_by_bandwidth(CATALOG, found.instance_type, min_gbps)[0]
        bigger = [t for t in CATALOG.same_gpu_sizes(itype)
                  if (t.price_per_hour or 0) > (found.price_per_hour or 0)]
        assert all(not justified_by_bandwidth(CATALOG, t.instance_type, min_gbps)[0]
                   for t in bigger)

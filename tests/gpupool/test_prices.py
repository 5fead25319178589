"""The per-region price table: its sources' formats, its checks, and what the catalog makes of it.

The excerpts below are verbatim lines of the two sources (Karpenter's generated Go file at
aws/karpenter-provider-aws 6fc13b5236fd, and instances.vantage.sh rows as committed to
tsaol/aws-gpu 77fcd9fe1d06), cut down to a few types.
"""

# ruff: noqa: E501  (verbatim lines of the sources)
from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from gpupool.catalog import load_catalog
from gpupool.catalog.prices import (
    build_document,
    karpenter_prices,
    load_price_table,
    table_from_document,
    vantage_prices,
)
from gpupool.catalog.record_prices import main
from gpupool.errors import InputError

KARPENTER_EXCERPT = """\
// generated at 2026-07-20T13:44:30Z for us-east-1

import ec2types "github.com/aws/aws-sdk-go-v2/service/ec2/types"

var InitialOnDemandPricesAWS = map[string]map[ec2types.InstanceType]float64{
	// us-east-1
	"us-east-1": {
		// g4dn family
		"g4dn.12xlarge": 3.912000, "g4dn.16xlarge": 4.352000, "g4dn.2xlarge": 0.752000, "g4dn.4xlarge": 1.204000,
		"g4dn.8xlarge": 2.176000, "g4dn.metal": 7.824000, "g4dn.xlarge": 0.526000,
	},
}
"""

VANTAGE_EXCERPT = """\
// Auto-generated from instances.vantage.sh data
// Last updated: 2026-01-21
const allGPUInstances = [
  {
    "name": "g4dn.xlarge",
    "pricing": {
      "eu-west-1": {"onDemand": 0.587, "reserved": 0.37},
      "us-east-1": {"onDemand": 0.526, "reserved": 0.331},
      "us-east-1-atl-1": {"onDemand": 0.631},
      "us-gov-west-1": {"onDemand": 0.658}
    }
  }
];
"""

SOURCES = {"karpenter": {"what": "k"}, "vantage": {"what": "v"}}


def test_sources_are_read_in_their_own_formats() -> None:
    k = karpenter_prices(KARPENTER_EXCERPT)
    assert k == {"us-east-1": {
        "g4dn.12xlarge": 3.912, "g4dn.16xlarge": 4.352, "g4dn.2xlarge": 0.752,
        "g4dn.4xlarge": 1.204, "g4dn.8xlarge": 2.176, "g4dn.metal": 7.824, "g4dn.xlarge": 0.526}}
    v = vantage_prices(VANTAGE_EXCERPT)
    assert v["eu-west-1"] == {"g4dn.xlarge": 0.587}


def test_table_keeps_commercial_regions_and_the_primary_source() -> None:
    doc = build_document(["g4dn.xlarge", "g4dn.16xlarge"], karpenter_prices(KARPENTER_EXCERPT),
                         vantage_prices(VANTAGE_EXCERPT), SOURCES, "2026-11-30")
    assert sorted(doc["regions"]) == ["eu-west-1", "us-east-1"]  # no Local Zone, no GovCloud
    assert doc["regions"]["us-east-1"] == {
        "source": "karpenter", "prices": {"g4dn.16xlarge": 4.352, "g4dn.xlarge": 0.526}}
    assert doc["regions"]["eu-west-1"]["source"] == "vantage"


def test_sources_that_disagree_are_refused() -> None:
    wrong = VANTAGE_EXCERPT.replace('"onDemand": 0.526', '"onDemand": 0.5')
    with pytest.raises(InputError, match=r"price sources disagree: us-east-1 g4dn.xlarge"):
        build_document(["g4dn.xlarge"], karpenter_prices(KARPENTER_EXCERPT),
                       vantage_prices(wrong), SOURCES, "2026-11-30")


def test_import_command_writes_a_table_the_catalog_reads(tmp_path: Path) -> None:
    (tmp_path / "k.go").write_text(KARPENTER_EXCERPT)
    (tmp_path / "v.js").write_text(VANTAGE_EXCERPT)
    out = tmp_path / "prices.json"
    assert main(["--karpenter", str(tmp_path / "k.go"), "--karpenter-commit", "abc",
                 "--karpenter-date", "2026-07-20T13:44:30Z", "--vantage", str(tmp_path / "v.js"),
                 "--vantage-commit", "def", "--vantage-date", "2026-01-21",
                 "--recorded-at", "2026-11-30", "--output", str(out)]) == 0
    table = table_from_document(json.loads(out.read_text()), str(out))
    assert table.prices("eu-west-1") == {"g4dn.xlarge": 0.587}
    eu = load_catalog().for_region("eu-west-1", table)
    assert eu.get("g4dn.xlarge").price_per_hour == 0.587  # type: ignore[union-attr]
    assert eu.get("g4dn.16xlarge").price_per_hour is None  # type: ignore[union-attr]


def test_bundled_table_covers_every_commercial_region_selling_gpus() -> None:
    table = load_price_table()
    assert len(table.regions) >= 28
    assert all(re.match(r"^[a-z]{2}-[a-z]+-\d$", r) and not r.startswith(("us-gov", "cn-"))
               for r in table.regions)
    assert {"us-east-1", "us-west-2", "eu-west-1", "eu-central-1", "ap-northeast-1",
            "ap-south-1", "sa-east-1", "me-central-1", "af-south-1"} <= set(table.regions)
    # the catalog's own prices are the table's us-east-1 ones
    us = table.prices("us-east-1")
    assert us is not None
    for row in load_catalog():
        assert row.price_per_hour == us.get(row.instance_type), row.instance_type
    assert table.sources["karpenter"]["commit"] == "6fc13b5236fd04fd16ff3f9dc7490d0813994099"
    assert table.sources["vantage"]["commit"] == "77fcd9fe1d0652fd07b830e5ed030d61da87923e"


def test_regional_catalog_prices_and_says_where_from() -> None:
    eu = load_catalog(region="eu-west-1")
    assert eu.get("g4dn.xlarge").price_per_hour == 0.587  # type: ignore[union-attr]
    assert eu.get("g6.xlarge").price_per_hour is None  # type: ignore[union-attr]
    assert eu.meta["price_region"] == "eu-west-1" and "vantage" in eu.meta["price_source"]
    nowhere = load_catalog(region="ap-southeast-4")
    assert all(r.price_per_hour is None for r in nowhere)
    assert nowhere.meta["prices_recorded"] is False
    assert load_catalog() is load_catalog()  # the base catalog is still cached and unchanged
    assert load_catalog().get("g4dn.xlarge").price_per_hour == 0.526  # type: ignore[union-attr]


def test_bad_table_is_one_line_per_problem() -> None:
    with pytest.raises(InputError) as e:
        table_from_document({"regions": {"eu-west-1": {"prices": {"g4dn.xlarge": -1}}}}, "t.json")
    assert e.value.problems == [
        "t.json: regions.eu-west-1.prices.g4dn.xlarge: expected a positive number of $ per hour,"
        " got -1"]

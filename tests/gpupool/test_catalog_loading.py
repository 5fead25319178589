"""What loading the catalog and pricing it for a plan's region costs a check, held by counting.

A check of a plan that names a region prices the catalog for it (policies.engine.priced_for);
the bundled table's prices are read in one pass when they are all positive floats, rows whose
price does not change are shared rather than copied, and the region offerings, which only
``gpupool validate`` reads, are read when first asked for, not with the catalog.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from gpupool.catalog import load_catalog
from gpupool.catalog import offerings as offerings_module
from gpupool.catalog.model import catalog_from_document
from gpupool.catalog.offerings import load_offerings
from gpupool.catalog.prices import load_price_table, table_from_document
from gpupool.errors import InputError

ROOT = Path(__file__).resolve().parents[2]
PLAN = "tests/fixtures/pulumi/preview-upsize.json"


def _fresh(code: str) -> dict[str, object]:
    proc = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True,
                          text=True, timeout=120, check=False)
    assert proc.returncode == 0, proc.stderr
    out: dict[str, object] = json.loads(proc.stdout.splitlines()[-1])
    return out


def test_a_check_reads_no_region_offerings() -> None:
    """A whole check (a region priced, every rule run) leaves the offerings unread; asking for
    them afterwards reads the bundled record."""
    out = _fresh(f"""
import json, sys
from gpupool.cli import main
code = main(["check", {PLAN!r}, "--format", "json", "--output", "/dev/null"])
read = "gpupool.catalog.offerings" in sys.modules
from gpupool.catalog import load_catalog
offered = sorted(load_catalog().offered_in("eu-west-1") or ())
print(json.dumps({{"code": code, "read": read, "offered": offered}}))
""")
    assert out["read"] is False
    assert out["code"] in (0, 1)
    assert out["offered"] == sorted(load_offerings()["regions"]["eu-west-1"])


def test_offerings_are_read_once_and_travel_with_a_regional_catalog(
        monkeypatch: pytest.MonkeyPatch) -> None:
    calls: list[int] = []

    def offerings() -> dict[str, object]:
        calls.append(1)
        return {"source": "test", "regions": {"eu-west-1": ["g4dn.xlarge"]}}

    monkeypatch.setattr(offerings_module, "load_offerings", offerings)
    doc = {"types": [row_doc("g4dn.xlarge", 0.526)], "price_region": "us-east-1"}
    cat = catalog_from_document(doc, bundled=True)
    eu = cat.for_region("eu-west-1")
    assert calls == []
    assert eu.offered_in("eu-west-1") == frozenset({"g4dn.xlarge"})
    assert eu.regions_offering("g4dn.xlarge") == ["eu-west-1"]
    assert eu.offerings["source"] == "test"
    assert calls == [1]
    # a document that records its own offerings is read as it is; one without has none
    own = catalog_from_document({**doc, "offerings": {"regions": {"x-1": []}}}, bundled=True)
    assert own.offered_in("x-1") == frozenset() and calls == [1]
    assert catalog_from_document(doc).offered_in("eu-west-1") is None and calls == [1]


def row_doc(name: str, price: float | None) -> dict[str, object]:
    return {"instance_type": name, "family": name.split(".")[0], "size": name.split(".")[1],
            "vcpus": 4, "memory_mib": 16384, "gpu_maker": "NVIDIA", "gpu_model": "T4",
            "gpu_count": 1, "gpu_memory_mib": 15360, "arch": "x86_64",
            "network_baseline_gbps": 5.0, "network_burst_gbps": 25.0, "efa_supported": False,
            "price_per_hour": price}


def test_pricing_for_the_catalogs_own_region_copies_no_row() -> None:
    base = load_catalog()
    table = load_price_table()
    us = base.for_region("us-east-1")
    assert len(us) == len(base)
    assert all(a is b for a, b in zip(us._rows, base._rows, strict=True))
    assert us.meta["price_region"] == "us-east-1" and us.meta["prices_recorded"] is True
    eu = base.for_region("eu-west-1")
    prices = table.prices("eu-west-1") or {}
    copied = [b for a, b in zip(base._rows, eu._rows, strict=True) if a is not b]
    assert copied, "eu-west-1 prices differ from us-east-1's"
    for a, b in zip(base._rows, eu._rows, strict=True):
        assert b.price_per_hour == prices.get(a.instance_type)
        assert (a is b) == (type(a.price_per_hour) is type(b.price_per_hour)
                            and a.price_per_hour == b.price_per_hour)
        assert b.instance_type == a.instance_type and b.vcpus == a.vcpus


def test_a_price_of_another_type_is_copied_never_shared() -> None:
    """An integer price equal to the table's float is a copy with the table's float (reports
    print 1.0, not 1)."""
    cat = catalog_from_document({"types": [row_doc("g4dn.xlarge", 1)]})
    table = table_from_document({"regions": {"r-1": {"prices": {"g4dn.xlarge": 1.0}}}}, "t")
    row = cat.for_region("r-1", table).get("g4dn.xlarge")
    assert row is not None and type(row.price_per_hour) is float
    assert row is not cat.get("g4dn.xlarge")


def test_bundled_table_reads_as_the_full_reading_does() -> None:
    doc = json.loads((ROOT / "gpupool/catalog/data/prices.json").read_text())
    table = table_from_document(doc, "prices.json")
    for region, entry in doc["regions"].items():
        want = {k: float(v) for k, v in entry["prices"].items()}
        assert table.regions[region] == want
        assert all(type(v) is float for v in table.regions[region].values())


@pytest.mark.parametrize("value, shown", [
    (float("nan"), "nan"), (float("inf"), "inf"), (0.0, "0.0"), (-0.5, "-0.5"), (True, "True"),
    ("1.2", "'1.2'"), (None, "None"),
])
def test_a_bad_price_beside_good_ones_is_still_refused(value: object, shown: str) -> None:
    doc = {"regions": {"eu-west-1": {"prices": {"g4dn.xlarge": 0.587, "g5.xlarge": value}}}}
    with pytest.raises(InputError) as e:
        table_from_document(doc, "t.json")
    assert e.value.problems == [
        f"t.json: regions.eu-west-1.prices.g5.xlarge: expected a positive number of $ per hour,"
        f" got {shown}"]


def test_integer_prices_are_read_as_floats() -> None:
    table = table_from_document({"regions": {"r-1": {"prices": {"a.b": 2, "c.d": 0.5}}}}, "t")
    assert table.regions["r-1"] == {"a.b": 2.0, "c.d": 0.5}
    assert type(table.regions["r-1"]["a.b"]) is float

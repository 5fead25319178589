"""Region offerings recorded from EC2 (a moto server over HTTP, as the bundled file was)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from gpupool.catalog import load_catalog
from gpupool.catalog.offerings import load_offerings
from gpupool.catalog.record_offerings import main


def test_recording_regions_reproduces_the_bundled_offerings(
    aws_env: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "offerings.json"
    regions = ["us-east-1", "eu-west-1", "ap-south-2", "ap-east-2"]
    assert main([arg for r in regions for arg in ("--region", r)] + ["--output", str(out)]) == 0
    new = json.loads(out.read_text())
    bundled = load_offerings()
    for region in ("us-east-1", "eu-west-1", "ap-south-2"):
        assert new["regions"][region] == bundled["regions"][region], region
    # moto carries no offering data for the newest regions: skipped ("not checked"), never
    # recorded as "offers nothing"
    assert new["skipped"] == ["ap-east-2"] and "ap-east-2" not in bundled["regions"]
    assert new["source"] == bundled["source"] and "moto server" in new["source"]
    assert "wrote" in capsys.readouterr().out


def test_offerings_agree_with_the_catalog_and_the_prices() -> None:
    catalog = load_catalog()
    eu = catalog.offered_in("eu-west-1")
    assert eu is not None and "g4dn.xlarge" in eu and "g6.xlarge" not in eu
    assert catalog.offered_in("mx-central-1") is None  # not recorded: not checked
    assert catalog.regions_offering("g5g.xlarge")[:2] == ["ap-northeast-1", "ap-northeast-2"]
    assert all(t in catalog for types in load_offerings()["regions"].values() for t in types)

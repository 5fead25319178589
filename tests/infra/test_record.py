"""The bundled offline fixtures are what the recorder reads from the EC2 API (moto over HTTP)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from infra.offline.fixtures import load_fixture
from infra.offline.record import record, write


@pytest.mark.parametrize("region", ["us-east-1", "us-west-2"])
def test_recorder_reproduces_the_bundled_fixture(
    aws_env: str, region: str, tmp_path: Path
) -> None:
    doc = record(region)
    bundled = dict(load_fixture(region).data)
    for key in ("availabilityZones", "instanceTypeOfferings", "partition", "callerIdentity"):
        assert doc[key] == bundled[key], key
    # moto publishes neither the DLAMI parameters nor S3's prefix list: they stay marked examples
    assert all(p.get("example") for p in doc["ssmParameters"].values())
    assert all(p.get("example") for p in doc["prefixLists"].values())
    assert "moto" in doc["source"]["endpoint"]
    path = write(doc, tmp_path)
    assert json.loads(path.read_text())["region"] == region


def test_bundled_fixtures_say_what_they_are() -> None:
    fx = load_fixture("us-east-1")
    assert "example" in fx.data["about"] and "pulumi up" in fx.data["about"]
    for p in fx.table("ssmParameters").values():
        assert p["example"] is True and p["value"].startswith("ami-")

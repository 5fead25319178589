"""The bundled offline fixtures are what the recorder reads from the EC2 API (moto over HTTP)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from infra.offline.fixtures import RECORDED, bundled_regions, load_fixture
from infra.offline.record import main, priced_regions, record, write


@pytest.mark.parametrize("region", priced_regions())
def test_recorder_reproduces_the_bundled_fixture(aws_env: str, region: str) -> None:
    doc = record(region)
    bundled = dict(load_fixture(region).data)
    for key in RECORDED:
        assert doc[key] == bundled[key], key
    assert doc["source"] == bundled["source"]
    assert "moto" in doc["source"]["endpoint"]
    # only what cannot be derived is recorded
    assert set(doc) == {"about", "region", "source", "recordedAt", *RECORDED}


def test_cli_writes_one_file_a_region(aws_env: str, tmp_path: Path,
                                      capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["--region", "eu-central-1", "--region", "eu-central-1",
                 "--output-dir", str(tmp_path)]) == 0
    assert capsys.readouterr().out == f"wrote {tmp_path / 'eu-central-1.json'}\n"
    doc = json.loads((tmp_path / "eu-central-1.json").read_text())
    assert doc["region"] == "eu-central-1" and doc["availabilityZones"]
    path = write(doc, tmp_path / "again")
    assert json.loads(path.read_text()) == doc


def test_bundled_fixtures_say_what_they_are() -> None:
    assert bundled_regions() == priced_regions()
    fx = load_fixture("us-east-1")
    assert "derived" in fx.data["about"] and "pulumi up" in fx.data["about"]
    for p in fx.table("ssmParameters").values():
        assert p["placeholder"] == "placeholder: resolved at pulumi up"
        assert p["value"].startswith("ami-offline-us-east-1-")

"""The bundled offline fixtures are what the recorder reads from the EC2 API (moto over HTTP).

The recorder asks every priced region, so it gets a moto server process of its own: EC2 backends
for 28 regions in the session's shared server would make every later test's reset slow.
"""

from __future__ import annotations

import json
import os
import re
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from infra.offline.fixtures import RECORDED, bundled_regions, load_fixture
from infra.offline.record import main, priced_regions, record, write

HANG: float = 60.0  # seconds: only a hung server takes this long
MOTO_RELEASE = re.compile(r"a local moto \d+(\.\d+)+ server")


def _without_moto_release(source: Any) -> Any:
    """The source with the recording moto's release number left out of its endpoint."""
    endpoint = MOTO_RELEASE.sub("a local moto server", source["endpoint"])
    return {**source, "endpoint": endpoint}


@pytest.fixture(scope="module")
def own_moto() -> Iterator[str]:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    server = subprocess.Popen(
        [str(Path(sys.executable).with_name("moto_server")), "-H", "127.0.0.1", "-p", str(port)],
        env={**os.environ, "MOTO_EC2_LOAD_DEFAULT_AMIS": "false"},
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        for _ in range(int(HANG / 0.05)):  # only a hung server uses them all
            try:
                socket.create_connection(("127.0.0.1", port), timeout=HANG).close()
                break
            except OSError:
                if server.poll() is not None:
                    pytest.fail(f"moto_server exited with {server.returncode}")
                time.sleep(0.05)
        else:
            pytest.fail("moto_server did not listen")
        yield f"http://127.0.0.1:{port}"
    finally:
        server.terminate()
        server.wait(timeout=HANG)


@pytest.fixture
def recorder_env(own_moto: str, monkeypatch: pytest.MonkeyPatch) -> str:
    monkeypatch.setenv("AWS_ENDPOINT_URL", own_moto)
    for key, value in (("AWS_ACCESS_KEY_ID", "testing"), ("AWS_SECRET_ACCESS_KEY", "testing")):
        monkeypatch.setenv(key, value)
    for key in ("AWS_PROFILE", "AWS_SESSION_TOKEN"):
        monkeypatch.delenv(key, raising=False)
    return own_moto


@pytest.fixture(scope="module")
def botocore_session() -> Any:
    import botocore.session

    return botocore.session.get_session()


@pytest.mark.parametrize("region", priced_regions())
def test_recorder_reproduces_the_bundled_fixture(recorder_env: str, region: str,
                                                 botocore_session: Any) -> None:
    doc = record(region, botocore_session)
    bundled = dict(load_fixture(region).data)
    for key in RECORDED:
        assert doc[key] == bundled[key], (
            f"{key}: recorded from {bundled['source']['endpoint'].split(':')[0]}, now from "
            f"{doc['source']['endpoint'].split(':')[0]} (a moto upgrade re-records the fixtures: "
            "python -m infra.offline.record)")
    # the source names the moto release that recorded it: provenance, not data, so a moto
    # release carrying the same zone tables reproduces the fixture
    assert _without_moto_release(doc["source"]) == _without_moto_release(bundled["source"])
    assert MOTO_RELEASE.search(doc["source"]["endpoint"])
    # only what cannot be derived is recorded
    assert set(doc) == {"about", "region", "source", "recordedAt", *RECORDED}


def test_cli_writes_one_file_a_region(recorder_env: str, tmp_path: Path,
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

"""Shared test fixtures."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest
from hypothesis import settings

# `make test` is reproducible: property tests draw the same examples every run, so a red CI is
# a real regression, never a dice roll. `make fuzz` explores with fresh seeds and more examples.
settings.register_profile("repeatable", derandomize=True, print_blob=True)
settings.register_profile("fuzz", derandomize=False, max_examples=2000, print_blob=True)
settings.load_profile(os.environ.get("GPUPOOL_HYPOTHESIS_PROFILE", "repeatable"))

ROOT = Path(__file__).resolve().parent.parent
FIXTURES = ROOT / "tests" / "fixtures"


@pytest.fixture(scope="session")
def repo_root() -> Path:
    return ROOT


@pytest.fixture(scope="session")
def moto_endpoint() -> Iterator[str]:
    """A moto server on 127.0.0.1 (real HTTP), the way boto3 users point at an endpoint."""
    from moto.server import ThreadedMotoServer

    server = ThreadedMotoServer(ip_address="127.0.0.1", port=0, verbose=False)
    server.start()
    host, port = server.get_host_and_port()
    yield f"http://{host}:{port}"
    server.stop()


@pytest.fixture
def aws_env(moto_endpoint: str, monkeypatch: pytest.MonkeyPatch) -> str:
    """Environment that sends every boto3 client to the moto server, with fake credentials."""
    monkeypatch.setenv("AWS_ENDPOINT_URL", moto_endpoint)
    monkeypatch.setenv("AWS_ACCESS_KEY_ID", "testing")
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", "testing")
    monkeypatch.setenv("AWS_DEFAULT_REGION", "us-east-1")
    for key in ("AWS_PROFILE", "AWS_SESSION_TOKEN"):
        monkeypatch.delenv(key, raising=False)
    assert os.environ["AWS_ENDPOINT_URL"] == moto_endpoint
    return moto_endpoint

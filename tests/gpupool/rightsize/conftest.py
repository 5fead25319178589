"""Fixtures for the rightsize tests: the debt tests' moto fleet builder and a clean server."""

from __future__ import annotations

import sys
import urllib.request
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "debt"))  # debt_fleet, synthetic


@pytest.fixture
def moto(aws_env: str) -> str:
    """The session's moto server, emptied: every test builds its own fleet."""
    request = urllib.request.Request(f"{aws_env}/moto-api/reset", method="POST")
    with urllib.request.urlopen(request, timeout=10) as response:
        assert response.status == 200
    return aws_env

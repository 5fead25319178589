"""Fixtures for the rightsize tests: the debt tests' moto fleet builder and a clean server."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "debt"))  # debt_fleet, synthetic
sys.path.insert(0, str(Path(__file__).resolve().parent))  # hybrid_fleet (importlib mode)


@pytest.fixture(scope="session")
def idle_prometheus(tmp_path_factory: pytest.TempPathFactory):  # type: ignore[no-untyped-def]
    """A real Prometheus with prod's on-premises pool idle for a week (hybrid_fleet)."""
    from hybrid_fleet import idle_week
    from prometheus_server import SKIP, available, serve

    if not available():
        pytest.skip(SKIP)
    with serve(tmp_path_factory.mktemp("idle-prometheus"), idle_week) as server:
        yield server

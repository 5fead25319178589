"""Fixtures for the compute-debt tests: a clean moto server state and a fixed window."""

from __future__ import annotations

import sys
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))  # debt_fleet (importlib mode)

from gpupool.debt.window import Window


@pytest.fixture
def window() -> Window:
    """Six whole hours ending at the last full hour."""
    now = datetime.now(UTC).replace(minute=0, second=0, microsecond=0)
    return Window(now - timedelta(hours=6), now, 3600)


@pytest.fixture(scope="session")
def prometheus(tmp_path_factory: pytest.TempPathFactory):  # type: ignore[no-untyped-def]
    """A real Prometheus with a week of a messy cluster (prom_history), once per session."""
    from prometheus_server import SKIP, available, serve

    if not available():
        pytest.skip(SKIP)
    with serve(tmp_path_factory.mktemp("prometheus")) as server:
        yield server

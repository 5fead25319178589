"""One gpupool pack process per test module, driven through the gRPC harness."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from policies.testing import PolicyPackHarness

PACK_DIR = Path(__file__).resolve().parents[3] / "policies"


@pytest.fixture(scope="module")
def pack() -> Iterator[PolicyPackHarness]:
    with PolicyPackHarness(PACK_DIR, stack="prod", project="gpupool") as h:
        yield h

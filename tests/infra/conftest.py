"""Offline plans of the kit's own stacks, made once per session (each run is ~0.3 s)."""

from __future__ import annotations

import textwrap
from collections.abc import Callable
from pathlib import Path

import pytest

from gpupool.config import LoadedStack, load_stack
from infra.offline import OfflinePlan, run_offline

ROOT = Path(__file__).resolve().parents[2]
STACKS = ("dev", "staging", "prod")


@pytest.fixture(scope="session")
def stack_plans() -> dict[str, tuple[LoadedStack, OfflinePlan]]:
    out = {}
    for name in STACKS:
        loaded = load_stack(str(ROOT / "stacks" / f"Pulumi.{name}.yaml"))
        out[name] = (loaded, run_offline(loaded))
    return out


@pytest.fixture
def write_stack(tmp_path: Path) -> Callable[[str, str], Path]:
    """Write a stack file (YAML text, dedented) and return its path."""

    def write(name: str, text: str) -> Path:
        path = tmp_path / f"Pulumi.{name}.yaml"
        path.write_text(textwrap.dedent(text))
        return path

    return write


EXISTING_VPC_STACK = """\
    config:
      aws:region: us-east-1
      gpupool:environment: test
      gpupool:team: vision
      gpupool:costCenter: cc-7
      gpupool:network:
        vpcId: vpc-0123456789abcdef0
        subnetIds: [subnet-0aaaaaaaaaaaaaaa1, subnet-0bbbbbbbbbbbbbbb2]
      gpupool:pools:
        - name: l4
          gpu: L4
          minSize: 1
          maxSize: 3
          onDemandBase: 1
          spotShare: 0.25
          targetGpuUtilisation: 55
"""

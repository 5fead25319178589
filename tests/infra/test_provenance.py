"""``gpupool.config.provenance`` says which stack key sets which resource input, so SARIF can
point a finding at the line to change (issue 7, item 14). Each entry is held against the real
program: changing that key of a pool entry changes that input of the pool's resources, and
``locate`` sends those resources back to the key."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from gpupool.config import load_stack
from gpupool.config.provenance import POOL_KEYS, locate
from infra.offline import run_offline
from policies.model import normalise_inputs

STACK = """\
    config:
      aws:region: us-east-1
      gpupool:environment: test
      gpupool:team: vision
      gpupool:costCenter: cc-7
      gpupool:network:
        createVpc: true
      gpupool:pools:
        - name: other
          gpu: T4
          maxSize: 2
        - name: l4
          gpu: L4
          minSize: 1
          maxSize: 3
          desiredCapacity: 2
          targetGpuUtilisation: 55
          rootVolumeGib: 100
"""
# the value each key takes in the changed stack
CHANGED = {"gpu": "A10G", "minSize": "2", "maxSize": "5", "desiredCapacity": "3",
           "targetGpuUtilisation": "75", "rootVolumeGib": "200"}


def _inputs(path: Path) -> dict[str, dict[str, Any]]:
    plan = run_offline(load_stack(str(path)))
    return {r.urn: normalise_inputs(dict(r.inputs)) for r in plan.resources
            if r.custom and r.name.startswith("test-l4-")}


@pytest.mark.parametrize(("prop", "key"), sorted(POOL_KEYS.items()))
def test_each_pool_key_sets_the_input_it_is_said_to_set(
        prop: str, key: str, write_stack: Callable[[str, str], Path]) -> None:
    base = write_stack("test", STACK)
    before = _inputs(base)
    head, l4 = STACK.split("- name: l4")
    l4 = "\n".join(f"{line.split(':')[0]}: {CHANGED[key]}"
                   if line.strip().startswith(f"{key}:") else line for line in l4.split("\n"))
    after = _inputs(write_stack("test", f"{head}- name: l4{l4}"))
    assert set(before) == set(after)
    moved = [urn for urn in before if before[urn].get(prop) != after[urn].get(prop)]
    assert moved, f"changing {key} changed no {prop}"
    for urn in moved:
        found = locate(base, urn, prop)
        assert found is not None and found.key == f"gpupool:pools[1].{key}", (urn, found)
        line = base.read_text().splitlines()[found.line - 1]
        assert line[found.column - 1:].startswith(f"{key}:")


def test_an_input_without_a_key_points_at_the_pool_entry(
        write_stack: Callable[[str, str], Path]) -> None:
    base = write_stack("test", STACK)
    urn = next(iter(_inputs(base)))
    found = locate(base, urn, "metadata_options")
    assert found is not None and found.key == "gpupool:pools[1]"
    assert base.read_text().splitlines()[found.line - 1].strip() == "- name: l4"
    assert locate(base, "urn:pulumi:test::gpupool::aws:ec2/vpc:Vpc::test-vpc", None) is None

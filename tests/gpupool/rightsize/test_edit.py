"""Editing a real stack file: only the changed values move, every other byte is the file's."""

from __future__ import annotations

from pathlib import Path

import pytest

from gpupool.errors import InputError
from gpupool.rightsize.edit import apply, unified_diff

ROOT = Path(__file__).resolve().parents[3]
PROD = (ROOT / "stacks" / "Pulumi.prod.yaml").read_text()
POOLS = ("config", "gpupool:pools")


def test_a_real_stack_is_byte_identical_outside_the_changed_values() -> None:
    changes = [((*POOLS, 0, "minSize"), 1), ((*POOLS, 0, "desiredCapacity"), 1),
               ((*POOLS, 0, "maxSize"), 4), ((*POOLS, 2, "maxSize"), 6),
               (("config", "gpupool:remoteGpu", 0, "maxSize"), 3),
               ((*POOLS, 1, "targetGpuUtilisation"), 80)]
    after = apply(PROD, changes, "stacks/Pulumi.prod.yaml")
    before_lines, after_lines = PROD.splitlines(keepends=True), after.splitlines(keepends=True)
    assert len(before_lines) == len(after_lines)
    changed = [(a, b) for a, b in zip(before_lines, after_lines, strict=True) if a != b]
    assert changed == [
        ("      minSize: 3\n", "      minSize: 1\n"),
        ("      maxSize: 24\n", "      maxSize: 4\n"),
        ("      desiredCapacity: 4\n", "      desiredCapacity: 1\n"),
        ("      targetGpuUtilisation: 75\n", "      targetGpuUtilisation: 80\n"),
        ("      maxSize: 12\n", "      maxSize: 6\n"),
        ("      maxSize: 8\n", "      maxSize: 3\n"),
    ]
    diff = unified_diff(PROD, after, "stacks/Pulumi.prod.yaml")
    assert diff.count("\n-      ") == 6 and diff.count("\n+      ") == 6


def test_a_value_beside_a_comment_keeps_the_comment() -> None:
    text = "config:\n  gpupool:pools:\n    - name: a\n      maxSize: 8   # burst\n"
    out = apply(text, [(("config", "gpupool:pools", 0, "maxSize"), 3)], "s.yaml")
    assert out == "config:\n  gpupool:pools:\n    - name: a\n      maxSize: 3   # burst\n"
    flow = "config:\n  gpupool:pools: [{name: a, maxSize: 8, minSize: 2}]\n"
    out = apply(flow, [(("config", "gpupool:pools", 0, "maxSize"), 3)], "s.yaml")
    assert out == "config:\n  gpupool:pools: [{name: a, maxSize: 3, minSize: 2}]\n"


def test_a_missing_key_is_one_line_naming_it() -> None:
    with pytest.raises(InputError, match=r"s.yaml: gpupool:pools\[0\].desiredCapacity: "
                                         "expected the key in the file"):
        apply("config:\n  gpupool:pools:\n    - name: a\n      maxSize: 8\n",
              [(("config", "gpupool:pools", 0, "desiredCapacity"), 1)], "s.yaml")

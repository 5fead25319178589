"""Fixtures for the report tests: a plan file on disk and the hand-built results."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))

from report_samples import (
    LT_ADDR,
    TF_ADDR,
    advisory_only_result,
    empty_result,
    full_result,
)

from policies.result import Result


@pytest.fixture
def plan_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> str:
    """A Terraform-shaped plan in the working directory; returns its relative path."""
    monkeypatch.chdir(tmp_path)
    (tmp_path / "plans").mkdir()
    doc = {
        "format_version": "1.2",
        "planned_values": {"root_module": {"resources": [{"address": LT_ADDR}]}},
        "resource_changes": [
            {"address": "aws_vpc.main", "type": "aws_vpc"},
            {"address": TF_ADDR, "type": "aws_instance"},
            {"address": LT_ADDR, "type": "aws_launch_template"},
        ],
    }
    (tmp_path / "plans" / "tf.json").write_text(json.dumps(doc, indent=2))
    return "plans/tf.json"


@pytest.fixture
def full() -> Result:
    return full_result()


@pytest.fixture
def empty() -> Result:
    return empty_result()


@pytest.fixture
def advisory_only() -> Result:
    return advisory_only_result()

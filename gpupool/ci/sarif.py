"""Several SARIF reports as one upload: one run per stack, each in its own category.

Code scanning keeps one analysis per tool and category, and refuses an upload with two runs of
the same tool in one category; ``automationDetails.id`` (``gpupool/<stack>/``) gives each run
its own, so the stacks never overwrite each other and upload-sarif needs no ``category``.
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from pathlib import Path
from typing import Any

SARIF_SCHEMA = "https://json.schemastore.org/sarif-2.1.0.json"
_UNSAFE = re.compile(r"[^A-Za-z0-9._-]+")


def category(label: str) -> str:
    return f"gpupool/{_UNSAFE.sub('-', label).strip('-') or 'plans'}/"


def merge(reports: Sequence[tuple[str, Path]]) -> dict[str, Any] | None:
    """(label, SARIF file) pairs as one SARIF document; None when there is none."""
    runs: list[dict[str, Any]] = []
    for label, path in reports:
        doc = json.loads(path.read_text(encoding="utf-8"))
        for run in doc.get("runs", []):
            run["automationDetails"] = {"id": category(label)}
            runs.append(run)
    if not runs:
        return None
    return {"$schema": SARIF_SCHEMA, "version": "2.1.0", "runs": runs}


def counts(doc: dict[str, Any]) -> dict[str, int]:
    """Unsuppressed results by SARIF level (error = mandatory, warning = advisory)."""
    out = {"error": 0, "warning": 0, "note": 0}
    for run in doc.get("runs", []):
        for result in run.get("results", []):
            if result.get("suppressions"):
                continue
            level = result.get("level", "warning")
            out[level] = out.get(level, 0) + 1
    return out

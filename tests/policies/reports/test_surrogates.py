"""A lone surrogate in a resource name or file name never crashes a report (issue 7, item 7).

JSON may escape one (``"gpu\\ud800"``), and a file name that is not UTF-8 reaches ``sys.argv``
with ``surrogateescape``. Every format crashed writing such a result (SARIF already while hashing
its fingerprint); now each encodes, and JSON keeps the code point.
"""

from __future__ import annotations

import json
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from policies.engine import evaluate
from policies.reports import FORMATS, render
from policies.result import Result
from policies.settings import Settings
from policies.sources import parse_document

ADDRESS = "aws_instance.gpu\ud800"
ORIGIN = "plan-\udc80.json"  # how Python hands over a non-UTF-8 file name


def _result() -> Result:
    doc = {"format_version": "1.2", "resource_changes": [{
        "address": ADDRESS, "mode": "managed", "type": "aws_instance", "name": "gpu\ud800",
        "change": {"actions": ["create"], "before": None, "after": {
            "instance_type": "g4dn.12xlarge", "tags": {"team\udfff": "ml\ud800"}}}}]}
    result = evaluate([parse_document(doc, ORIGIN)], Settings.default())
    assert any(v.resource == ADDRESS for v in result.violations)
    return result


@pytest.mark.parametrize("fmt", FORMATS)
def test_every_format_writes_utf8(fmt: str) -> None:
    out = render(_result(), fmt)
    out.encode("utf-8")  # the crash before
    if fmt == "json":
        doc = json.loads(out)
        assert ADDRESS in {v["resource"] for v in doc["violations"]}  # the same code point
        assert doc["summary"]["sources"] == [ORIGIN]
    elif fmt == "sarif":
        assert json.loads(out)["runs"][0]["results"]
    elif fmt == "junit":
        ET.fromstring(out.encode("utf-8"))
    else:  # shown as the text of the escape (Markdown escapes its backslash once more)
        assert "gpu\\ud800" in out.replace("\\\\", "\\")


@pytest.mark.parametrize("fmt", FORMATS)
def test_every_format_to_a_file_from_the_command_line(tmp_path: Path, fmt: str) -> None:
    from gpupool.cli import main

    plan = tmp_path / "plan.json"
    plan.write_text(json.dumps({"format_version": "1.2", "resource_changes": [{
        "address": ADDRESS, "mode": "managed", "type": "aws_instance", "name": "gpu\ud800",
        "change": {"actions": ["create"], "before": None,
                   "after": {"instance_type": "g4dn.12xlarge"}}}]}))
    out = tmp_path / f"report.{fmt}"
    assert main(["check", str(plan), "--format", fmt, "--output", str(out)]) == 1
    assert out.read_bytes().decode("utf-8")


@pytest.mark.parametrize("fmt", FORMATS)
def test_the_bytes_written_are_the_texts_utf8(fmt: str) -> None:
    """render_utf8 hands the writer the encoding that proved the text writable (one encode of
    the report, not two), on a result with surrogates and on one without."""
    from policies.reports import render_utf8

    for result in (_result(), evaluate([], Settings.default())):
        data = render_utf8(result, fmt)
        assert isinstance(data, bytes)
        assert data == render(result, fmt).encode("utf-8")

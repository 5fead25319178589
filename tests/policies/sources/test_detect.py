"""The plan kind comes from the content, and everything that is not a plan says what it is."""

from __future__ import annotations

import json
import shutil
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from gpupool.errors import InputError
from policies.sources import detect, load_plan, parse_document

Write = Callable[[Any, str], Path]


@pytest.mark.parametrize(
    ("fixture", "kind"),
    [
        ("terraform/upsize-g4dn.json", "terraform"),
        ("terraform/empty-plan.json", "terraform"),
        ("terraform/format-0.1.json", "terraform"),
        ("pulumi/preview-mixed.json", "pulumi-preview"),
        ("pulumi/preview-empty.json", "pulumi-preview"),
        ("gpupool/plan-dev-head.json", "gpupool-plan"),
    ],
)
def test_detects_each_fixture_by_content_not_name(
    fixtures: Path, tmp_path: Path, fixture: str, kind: str
) -> None:
    source = fixtures / fixture
    assert detect(json.loads(source.read_text())) == kind
    disguised = tmp_path / "plan.yaml"  # the extension says nothing
    shutil.copy(source, disguised)
    assert load_plan(disguised).source == kind


def test_utf16_with_bom_as_windows_powershell_writes_it(fixtures: Path, write: Write) -> None:
    text = (fixtures / "pulumi" / "preview-upsize.json").read_text(encoding="utf-8")
    plan = load_plan(write(text.encode("utf-16"), "preview.json"))
    assert len(plan.changes) == 3


@pytest.mark.parametrize(
    ("content", "expected"),
    [
        (b"", "expected a JSON plan, got an empty file"),
        (b"  \n", "expected a JSON plan, got an empty file"),
        (b"{\"format_version\": ", "expected valid JSON: Expecting value at line 1 column 20"),
        (b'{"a": "\xff\xfe"}', "expected JSON text (UTF-8), got undecodable bytes"),
        (b"PK\x03\x04\x14\x00binary", "got a binary Terraform plan; convert it with "
                                       "`terraform show -json"),
        (b'{"@level":"info","@message":"Terraform 1.7.5","type":"version"}\n'
         b'{"@level":"info","type":"planned_change"}\n',
         "got Terraform's JSON-lines UI log (`terraform plan -json`)"),
        # A streamed preview that was cancelled: read as events, refused as incomplete.
        (b'{"sequence":0,"timestamp":1,"cancelEvent":{}}\n{"sequence":1,"timestamp":2}\n',
         "expected a complete Pulumi event stream ending with a summaryEvent"),
        (b'{"a":1}\n{"b":2}\n', "got 2 JSON objects on separate lines"),
        (b"[]", "expected a Terraform plan (terraform show -json PLANFILE), a Pulumi preview "
                "(pulumi preview --json), a gpupool plan (gpupool plan STACK --format json) or "
                "Kubernetes manifests, got array"),
        (b'"plan"', 'got string "plan"'),
        (b"null", "got null"),
        (b'{"hello": 1}', "got an object with keys: hello"),
        (b'{"format_version": "1.0", "values": {}}', "got Terraform state as JSON"),
        (b'{"format_version": "1.2"}', "resource_changes: expected a Terraform plan's "
                                       "resource_changes or planned_values"),
        (b'{"version": 4, "serial": 3, "lineage": "x", "resources": []}',
         "got a Terraform state file"),
        (b'{"version": 3, "deployment": {"resources": []}}', "got a stack export (state)"),
        (b"[" * 5000 + b"]" * 5000, "nesting too deep"),
    ],
)
def test_not_a_plan_is_one_clear_line(write: Write, content: bytes, expected: str) -> None:
    path = write(content, "input.json")
    with pytest.raises(InputError) as err:
        load_plan(path)
    (line,) = err.value.problems
    assert line.startswith(f"{path}: ") and "\n" not in line
    assert expected in line, line


def test_missing_file_and_directory(tmp_path: Path) -> None:
    with pytest.raises(InputError, match=r"nope\.json: cannot read: No such file or directory"):
        load_plan(tmp_path / "nope.json")
    with pytest.raises(InputError, match=r": is a directory, expected a plan file"):
        load_plan(tmp_path)


def test_deep_nesting_inside_a_valid_plan_is_an_input_error() -> None:
    deep: Any = "x"
    for _ in range(5000):  # deeper than any reader will walk (json.loads would refuse it)
        deep = {"a": [deep]}
    doc = {"steps": [{"op": "create", "urn": "urn:pulumi:d::p::t:m:R::r",
                      "newState": {"inputs": {"v": deep}}}]}
    with pytest.raises(InputError, match=r"^preview\.json: expected a JSON plan, got nesting too"):
        parse_document(doc, "preview.json")


def test_the_offline_plan_kind_is_the_readers_own() -> None:
    """detect() tells a gpupool plan by its kind without importing the offline reader."""
    from policies.sources import GPUPOOL_PLAN, offline

    assert offline.KIND == GPUPOOL_PLAN

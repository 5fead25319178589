"""Property tests at the CLI: whatever the file holds, ``gpupool check`` answers with a verdict
(exit 0/1 and a well-formed report) or one clean line per problem (exit 2) — never a
traceback, and never a pass for input it could not read."""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import pytest
from cli_support import FIXTURES, Run, run_in_process
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

SEEDS = sorted(
    p for kind in ("terraform", "pulumi", "gpupool") for p in (FIXTURES / kind).glob("*.json")
)
FUZZ = settings(
    max_examples=60,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)

json_scalars = st.one_of(
    st.none(), st.booleans(), st.integers(-(2**40), 2**40),
    st.floats(allow_nan=False, allow_infinity=False), st.text(max_size=20),
)
json_values = st.recursive(
    json_scalars,
    lambda inner: st.one_of(
        st.lists(inner, max_size=4),
        st.dictionaries(st.text(max_size=12), inner, max_size=4),
    ),
    max_leaves=12,
)
# Keys the detectors and parsers look for, so generated documents get past the first gate.
PLAN_KEYS = st.sampled_from([
    "format_version", "resource_changes", "planned_values", "configuration", "steps",
    "changeSummary", "kind", "resources", "stack", "envelope", "address", "type", "change",
    "actions", "before", "after", "after_unknown", "op", "urn", "newState", "oldState", "inputs",
    "instance_type", "instanceType", "launch_template", "mode", "index", "module_address",
])


def check_file(path: Path, content: bytes) -> Run:
    path.write_bytes(content)
    run = run_in_process(["check", str(path), "--format", "json"])
    assert "Traceback" not in run.err
    assert run.code in (0, 1, 2), run
    if run.code == 2:
        assert run.out == ""
        assert run.err_lines and all(line.startswith("gpupool check: ") for line in run.err_lines)
    else:  # a real verdict: a whole report whose verdict matches the exit code
        doc = json.loads(run.out)
        assert doc["verdict"] == ("pass" if run.code == 0 else "fail")
        assert doc["summary"]["sources"] == [str(path)]
    return run


def readable_json_object(content: bytes) -> bool:
    try:
        return isinstance(json.loads(content), dict)
    except (ValueError, UnicodeDecodeError):
        return False


@FUZZ
@given(content=st.binary(max_size=512))
def test_arbitrary_bytes(tmp_path: Path, content: bytes) -> None:
    run = check_file(tmp_path / "plan.json", content)
    if run.code == 0:
        assert readable_json_object(content)


@FUZZ
@given(doc=st.dictionaries(PLAN_KEYS, json_values, max_size=6))
def test_plan_shaped_documents(tmp_path: Path, doc: dict[str, Any]) -> None:
    check_file(tmp_path / "plan.json", json.dumps(doc).encode())


def _paths(node: Any, prefix: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    out = [prefix]
    if isinstance(node, dict):
        for k, v in node.items():
            out += _paths(v, (*prefix, k))
    elif isinstance(node, list):
        for i, v in enumerate(node):
            out += _paths(v, (*prefix, i))
    return out


@st.composite
def mutated_plans(draw: st.DrawFn) -> tuple[Path, Any]:
    seed = draw(st.sampled_from(SEEDS))
    doc = json.loads(seed.read_text())
    for _ in range(draw(st.integers(1, 3))):
        paths = [p for p in _paths(doc) if p]
        if not paths:
            break
        path = draw(st.sampled_from(paths))
        parent = doc
        for key in path[:-1]:
            parent = parent[key]
        op = draw(st.sampled_from(["replace", "delete", "stringify", "wrap"]))
        last = path[-1]
        if op == "delete":
            del parent[last]
        elif op == "replace":
            parent[last] = draw(json_values)
        elif op == "stringify":
            parent[last] = json.dumps(parent[last])
        else:
            parent[last] = [copy.deepcopy(parent[last])]
    return seed, doc


@FUZZ
@given(case=mutated_plans())
def test_mutated_fixture_plans(tmp_path: Path, case: tuple[Path, Any]) -> None:
    _, doc = case
    check_file(tmp_path / "plan.json", json.dumps(doc).encode())


@FUZZ
@given(seed=st.sampled_from(SEEDS), data=st.data())
def test_truncated_plans_never_pass(tmp_path: Path, seed: Path, data: st.DataObject) -> None:
    """A plan cut short (an interrupted upload, a full disk) is unreadable: exit 2, always."""
    content = seed.read_bytes().rstrip()
    cut = data.draw(st.integers(0, len(content) - 1))
    run = check_file(tmp_path / "plan.json", content[:cut])
    assert run.code == 2


@pytest.mark.parametrize("seed", SEEDS, ids=lambda p: p.name)
def test_seed_plans_give_a_verdict(tmp_path: Path, seed: Path) -> None:
    """The unmutated seeds are readable: the properties above start from real plans."""
    run = check_file(tmp_path / "plan.json", seed.read_bytes())
    assert run.code in (0, 1)

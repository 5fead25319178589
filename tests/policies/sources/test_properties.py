"""Whatever the input, load_plan returns a Plan or raises InputError: nothing else, ever.

Arbitrary JSON, arbitrary bytes and mutated versions of every fixture go through the real file
path. An InputError must name the file on every line (one line per problem); a Plan must be
well formed (a change has new inputs unless it deletes), so no input turns into a silent pass.
"""

from __future__ import annotations

import copy
import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from gpupool.errors import InputError
from policies.model import ChangeKind, Plan, ResourceChange, normalise_inputs
from policies.sources import load_plan
from policies.sources.pulumi_values import SECRET_SIG, SIG_KEY, UNKNOWN_SENTINEL, clean, inputs

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures"
FIXTURE_FILES = sorted(
    p for kind in ("terraform", "pulumi", "gpupool") for p in (FIXTURES / kind).glob("*.json")
)
DOCS = {p.name: json.loads(p.read_text(encoding="utf-8")) for p in FIXTURE_FILES}

# Keys and strings the readers look for, so random documents reach deep into them.
KEYS = st.sampled_from([
    "format_version", "resource_changes", "planned_values", "configuration", "root_module",
    "resources", "module_calls", "module", "expressions", "references", "outputs", "expression",
    "address", "module_address", "mode", "type", "name", "change", "actions", "before", "after",
    "after_unknown", "steps", "op", "urn", "oldState", "newState", "inputs", "custom", "parent",
    "propertyDependencies", "diagnostics", "severity", "kind", "version", "stack", "values",
    SIG_KEY, "plaintext", "ciphertext", "value", "id",
]) | st.text(max_size=8)
STRINGS = st.sampled_from([
    "1.2", "0.1", "2.0", "managed", "data", "create", "delete", "update", "no-op", "read",
    "replace", "same", "create-replacement", "delete-replaced", "gpupool-plan", "error",
    "aws_instance.a", "module.m.aws_instance.a", 'module.m["k"]', "aws_instance.a[0]",
    "urn:pulumi:s::p::aws:ec2/instance:Instance::i", "urn:pulumi:s::p::pulumi:pulumi:Stack::s",
    "var.x", "module.m.out", UNKNOWN_SENTINEL, SECRET_SIG, "[secret]", "{}", '"x"',
]) | st.text(max_size=12)
SCALARS = (st.none() | st.booleans() | st.integers(-3, 3) | st.floats(allow_nan=False)
           | STRINGS)
JSON = st.recursive(
    SCALARS,
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(KEYS, inner, max_size=5),
    max_leaves=30,
)


@pytest.fixture(scope="module")
def scratch(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("props") / "plan.json"


def _check(path: Path) -> Plan | None:
    try:
        plan = load_plan(path)
    except InputError as e:
        assert e.problems
        for line in e.problems:
            assert line.startswith(f"{path}: ") and "\n" not in line, line
        return None
    assert isinstance(plan, Plan)
    for c in plan.changes:
        assert isinstance(c, ResourceChange) and isinstance(c.address, str)
        assert (c.new is None) == (c.change is ChangeKind.DELETE), c
        assert c.new is None or isinstance(c.new, Mapping)
        assert c.old is None or isinstance(c.old, Mapping)
        assert all(isinstance(k, str) and isinstance(v, str) for k, v in c.references.items())
    return plan


PROPS = settings(deadline=None,
                 suppress_health_check=[HealthCheck.function_scoped_fixture,
                                        HealthCheck.too_slow])


@PROPS
@given(doc=JSON)
def test_arbitrary_json(scratch: Path, doc: Any) -> None:
    scratch.write_text(json.dumps(doc), encoding="utf-8")
    plan = _check(scratch)
    if plan is not None:  # only documents that carry a plan's markers are read as plans
        assert isinstance(doc, dict)
        assert {"format_version", "steps", "changeSummary", "kind"} & doc.keys()


@settings(max_examples=60, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
@given(raw=st.binary(max_size=200))
def test_arbitrary_bytes(scratch: Path, raw: bytes) -> None:
    scratch.write_bytes(raw)
    _check(scratch)


def _paths(node: Any, prefix: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    out = [prefix]
    if isinstance(node, dict):
        for k, v in node.items():
            out += _paths(v, (*prefix, k))
    elif isinstance(node, list):
        for i, v in enumerate(node):
            out += _paths(v, (*prefix, i))
    return out


PATHS = {name: _paths(doc) for name, doc in DOCS.items()}


def _mutate(doc: Any, path: tuple[Any, ...], op: str, value: Any) -> Any:
    if not path:
        return value if op == "replace" else doc
    parent = doc
    for step in path[:-1]:
        parent = parent[step]
    last = path[-1]
    if op == "delete" and isinstance(parent, dict):
        del parent[last]
    elif op == "wrap":
        parent[last] = [parent[last]]
    elif op == "empty":
        parent[last] = {} if isinstance(parent[last], list) else []
    else:
        parent[last] = value
    return doc


@PROPS
@given(data=st.data(), name=st.sampled_from(sorted(DOCS)))
def test_mutated_fixtures(scratch: Path, data: st.DataObject, name: str) -> None:
    doc = copy.deepcopy(DOCS[name])
    for _ in range(data.draw(st.integers(1, 3))):
        paths = _paths(doc) if _ else PATHS[name]
        if not paths:
            break
        path = data.draw(st.sampled_from(paths))
        op = data.draw(st.sampled_from(["replace", "delete", "wrap", "empty"]))
        doc = _mutate(doc, path, op, data.draw(JSON))
    scratch.write_text(json.dumps(doc), encoding="utf-8")
    _check(scratch)


@pytest.mark.parametrize("fixture", FIXTURE_FILES, ids=lambda p: p.name)
def test_every_fixture_reads_as_a_well_formed_plan(fixture: Path) -> None:
    assert _check(fixture) is not None


PULUMI_KEYS = st.sampled_from([
    "instanceType", "tags", "tagsAll", "labels", "metadataOptions", "httpTokens", "nodeSelector",
    "mixedInstancesPolicy", "cost-center", "Name", "__defaults", "HTTPTokens", "a1B2", "",
    SIG_KEY, "plaintext", "ciphertext", "value", "id", "urn",
]) | st.text(max_size=6)
PULUMI_VALUES = st.recursive(
    SCALARS | st.sampled_from([SECRET_SIG, "d0e6a833031e9bbcd3f4e8bde6ca49a4",
                               "5cf8f73096256a8f31e491e813e4eb8e", '{"fooBar": "[secret]"}']),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(PULUMI_KEYS, inner, max_size=4),
    max_leaves=25,
)


@settings(deadline=None)
@given(value=st.dictionaries(PULUMI_KEYS, PULUMI_VALUES, max_size=5))
def test_one_pass_pulumi_inputs_equal_the_model_normalisation(value: dict[str, Any]) -> None:
    assert inputs(value) == normalise_inputs(clean(value))

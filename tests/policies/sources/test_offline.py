"""gpupool offline plans (gpupool plan --format json) → normalised creates."""

from __future__ import annotations

import copy
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from gpupool.errors import InputError
from policies.model import UNKNOWN, ChangeKind, ResourceKind, get_path
from policies.sources import load_plan
from policies.sources.offline import read

Write = Callable[[Any, str], Path]
POOL = "urn:pulumi:dev::gpupool::gpupool:aws:GpuPool"


def test_offline_plan_is_all_creates_without_components(fixtures: Path) -> None:
    plan = load_plan(fixtures / "gpupool" / "plan-dev-base.json")
    assert plan.source == "gpupool-plan"
    assert [(c.name, c.change) for c in plan.changes] == [
        (f"dev-{p}-{r}", ChangeKind.CREATE)
        for p in ("inference", "training") for r in ("lt", "asg", "gpu-utilisation")
    ]  # neither the stack nor the GpuPool components are changes
    assert all(c.old is None for c in plan.changes)
    by = {c.name: c for c in plan.changes}
    lt = by["dev-inference-lt"]
    assert lt.kind is ResourceKind.LAUNCH_TEMPLATE and lt.parent == f"{POOL}::dev-inference"
    assert lt.new["instance_type"] == "g4dn.xlarge"
    assert get_path(lt.new, "metadata_options.http_tokens") == "required"
    assert lt.new["tags"]["gpupool:pool"] == "inference"  # tag keys verbatim
    policy = by["dev-inference-gpu-utilisation"]
    assert policy.references["autoscaling_group_name"] == by["dev-inference-asg"].address
    assert policy.new["autoscaling_group_name"] == "dev-inference-asg-440a86a"
    assert plan.meta["stack"] == "dev" and "envelope" in plan.meta


def _doc(**resource: Any) -> dict[str, Any]:
    res = {"urn": "urn:pulumi:dev::p::aws:ec2/instance:Instance::i", "type":
           "aws:ec2/instance:Instance", "name": "i", "parent": None, "custom": True,
           "inputs": {"instanceType": "g4dn.xlarge"}, **resource}
    return {"kind": "gpupool-plan", "version": 1, "stack": "dev", "project": "p",
            "resources": [res], "outputs": {}, "envelope": {}}


def test_unknown_sentinel_in_an_offline_plan_is_unknown(write: Write) -> None:
    doc = _doc(inputs={"instanceType": "04da6b54-80e4-46f7-96ec-b56ff0331ba9"})
    (change,) = load_plan(write(doc, "plan.json")).changes
    assert change.new == {"instance_type": UNKNOWN}


def _with(path: str, value: Any) -> dict[str, Any]:
    doc = copy.deepcopy(_doc())
    *parents, last = path.split("/")
    node: Any = doc
    for p in parents:
        node = node[int(p)] if isinstance(node, list) else node[p]
    if isinstance(node, list):
        node[int(last)] = value
    else:
        node[last] = value
    return doc


R = "resources/0"


@pytest.mark.parametrize(
    ("doc", "expected"),
    [
        (_with("version", 2), "version: expected 1 (the offline plan format this gpupool reads)"),
        (_with("version", "1"), 'version: expected 1'),
        (_with("version", True), "version: expected 1"),
        (_with("stack", None), "stack: expected a string, got null"),
        (_with("project", 3), "project: expected a string, got 3"),
        (_with("resources", {}), "resources: expected an array, got object"),
        (_with(R, []), "resources[0]: expected an object, got array"),
        (_with(f"{R}/urn", "i"), 'resources[0].urn: expected a Pulumi URN'),
        (_with(f"{R}/type", 1), "resources[0].type: expected a string, got 1"),
        (_with(f"{R}/custom", "yes"), 'resources[0].custom: expected a boolean, got string "yes"'),
        (_with(f"{R}/parent", "nope"), "resources[0].parent: expected a Pulumi URN"),
        (_with(f"{R}/inputs", []), "resources[0].inputs: expected an object, got array"),
        (_with(f"{R}/propertyDependencies", {"x": "u"}),
         "resources[0].propertyDependencies.x: expected an array"),
        ({**_doc(), "resources": _doc()["resources"] * 2},
         "resources[1].urn: expected each URN once"),
    ],
)
def test_errors_name_file_key_and_expectation(
    write: Write, doc: dict[str, Any], expected: str
) -> None:
    path = write(doc, "offline.json")
    with pytest.raises(InputError) as err:
        load_plan(path)
    (line,) = err.value.problems
    assert line.startswith(f"{path}: ") and "\n" not in line
    assert expected in line, line


def test_kind_is_checked_when_read_directly() -> None:
    expected = r'^base: kind: expected "gpupool-plan", got string "other"'
    with pytest.raises(InputError, match=expected):
        read({**_doc(), "kind": "other"}, "base")

"""A Pulumi preview's inputs of kinds no rule reads are converted on first read, not when read.

Half a bench pool (security group, bucket, IAM role, subnet, log group) is read by no rule of a
check; converting their inputs was ~10 M instructions of a 1,000-resource check. Held here:
exactly the read resources are converted (counted), and a plan read so equals, reprs, pickles
and compares as the plan read eagerly, on every fixture preview and on generated inputs.
"""

from __future__ import annotations

import copy
import dis
import importlib.util
import json
import pickle
import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from gpupool.errors import InputError
from gpupool.record import replace
from policies import deferred
from policies.model import ChangeKind, Plan, ResourceChange, ResourceKind
from policies.sources import fields, load_plan, parse_document, pulumi_preview, pulumi_values

ROOT = Path(__file__).resolve().parents[3]
FIXTURES = ROOT / "tests" / "fixtures"
PREVIEWS = sorted((FIXTURES / "pulumi").rglob("*.json"))
TERRAFORM = sorted((FIXTURES / "terraform").rglob("*.json"))
UNREAD = frozenset({ResourceKind.SECURITY_GROUP, ResourceKind.SUBNET, ResourceKind.IAM_ROLE,
                    ResourceKind.OTHER})


def _generate(n: int) -> dict[str, Any]:
    spec = importlib.util.spec_from_file_location("gen_preview", ROOT / "bench" / "gen_preview.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.generate(n)  # type: ignore[no-any-return]


def _eager(convert: Callable[[Any], Any], new_raw: Any, old_raw: Any, address: str, type: str,
           name: str, change: Any, new: Any, old: Any, source: str, kind: ResourceKind,
           references: Any, parent: str | None = None) -> ResourceChange:
    """What the reader made before deferring: every side converted at once."""
    return ResourceChange(address, type, name, change,
                          new if new_raw is None else convert(new_raw),
                          old if old_raw is None else convert(old_raw),
                          source, kind, references, parent)


@pytest.fixture
def conversions(monkeypatch: pytest.MonkeyPatch) -> Iterator[list[Any]]:
    """The raw inputs the Pulumi reader converts, when it converts them."""
    seen: list[Any] = []
    real = pulumi_values.inputs

    def counted(raw: dict[str, Any]) -> dict[str, Any]:
        seen.append(raw)
        return real(raw)

    monkeypatch.setattr(pulumi_preview, "inputs", counted)
    yield seen


def _pending(plan: Plan) -> list[ResourceChange]:
    return [c for c in plan.changes if type(c) is not ResourceChange]


@pytest.mark.parametrize("fmt", ["text", "json", "sarif", "junit", "markdown"])
def test_a_check_converts_exactly_the_resources_it_reads(
        fmt: str, tmp_path: Path, conversions: list[Any]) -> None:
    """Bench pools: 5 typed resources (checked as read) and 5 of kinds no rule reads. A check
    in every report format converts the 50 typed ones (and the upsized pool's 3 old sides),
    never the other 50; the first read of one of those converts it, once."""
    sys.path.insert(0, str(ROOT / "tests" / "cli"))
    try:
        from cli_support import run_in_process
    finally:
        sys.path.remove(str(ROOT / "tests" / "cli"))
    path = tmp_path / "preview.json"
    path.write_text(json.dumps(_generate(100)))
    plan = load_plan(path)
    typed = [c for c in plan.changes if c.kind in fields.TYPED]
    assert len(plan.changes) == 100 and len(typed) == 50
    olds = sum(1 for c in typed if c.old is not None)  # the upsized pool's launchers
    assert olds == 3 and len(conversions) == 53
    assert {c.address for c in _pending(plan)} == {
        c.address for c in plan.changes if c.kind not in fields.TYPED}
    del conversions[:]
    run = run_in_process(["check", str(path), "--format", fmt])
    assert run.code == 1 and run.out, run.err
    assert len(conversions) == 53  # the check's own reading: none of the 50 others
    del conversions[:]
    role = next(c for c in plan.changes if c.kind is ResourceKind.IAM_ROLE)
    assert role.after["name"] == "pool-0-node" and role.new is role.new
    assert type(role) is ResourceChange and len(conversions) == 1


def _both(path: Path, monkeypatch: pytest.MonkeyPatch) -> tuple[Plan, Plan]:
    lazy = load_plan(path)
    with monkeypatch.context() as m:
        m.setattr(pulumi_preview, "pending_change", _eager)
        eager = load_plan(path)
    return lazy, eager


@pytest.mark.parametrize("path", PREVIEWS + TERRAFORM, ids=lambda p: p.name)
def test_every_fixture_plan_reads_lazily_as_it_reads_eagerly(
        path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    try:
        lazy, eager = _both(path, monkeypatch)
    except InputError as e:  # not a plan (a checkpoint): refused alike, eagerly or not
        with monkeypatch.context() as m, pytest.raises(InputError) as refused:
            m.setattr(pulumi_preview, "pending_change", _eager)
            load_plan(path)
        assert str(refused.value) == str(e)
        return
    assert not _pending(eager)
    if path in TERRAFORM:  # the Terraform reader converts as it reads (deferring did not pay)
        assert not _pending(lazy)
    assert pickle.loads(pickle.dumps(lazy)) == eager  # pickled from pending changes
    lazy = load_plan(path)
    assert repr(lazy) == repr(eager) and lazy == eager and eager == lazy
    assert not _pending(lazy)  # read: plain ResourceChanges now


def test_the_bench_preview_defers_exactly_its_unread_kinds(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = tmp_path / "preview.json"
    path.write_text(json.dumps(_generate(200)))
    lazy, eager = _both(path, monkeypatch)
    assert {c.kind for c in _pending(lazy)} == UNREAD and len(_pending(lazy)) == 100
    for a, b in zip(lazy.changes, eager.changes, strict=True):
        assert b == a and a.new == b.new and a.old == b.old and type(a) is ResourceChange


_KEYS = st.sampled_from(["name", "tags", "ingress", "cidrBlock", "vpcId", "x-y", "Key", ""])
_LEAVES = st.one_of(st.none(), st.booleans(), st.integers(), st.floats(allow_nan=False),
                    st.text(max_size=4), st.sampled_from([pulumi_values.UNKNOWN_SENTINEL,
                                                          pulumi_values.REDACTED_SECRET]))
_VALUES = st.recursive(_LEAVES, lambda inner: st.one_of(
    st.lists(inner, max_size=3), st.dictionaries(_KEYS, inner, max_size=3),
    st.builds(lambda v: {pulumi_values.SIG_KEY: pulumi_values.OUTPUT_SIG, "value": v}, inner),
    st.builds(lambda v: {pulumi_values.SIG_KEY: pulumi_values.SECRET_SIG,
                         "plaintext": json.dumps(v)}, inner),
), max_leaves=12)
_INPUTS = st.dictionaries(_KEYS, _VALUES, max_size=4)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(new=_INPUTS, old=st.one_of(st.none(), _INPUTS), op=st.sampled_from(
    ["create", "update", "replace", "delete", "same", "read"]),
    rtype=st.sampled_from(["aws:ec2/subnet:Subnet", "aws:s3/bucketV2:BucketV2",
                           "kubernetes:apps/v1:Deployment", "aws:ec2/instance:Instance"]))
def test_generated_inputs_read_lazily_as_eagerly(
        new: dict[str, Any], old: dict[str, Any] | None, op: str, rtype: str) -> None:
    urn = f"urn:pulumi:dev::p::{rtype}::r"
    step: dict[str, Any] = {"op": op, "urn": urn,
                            "newState": {"type": rtype, "custom": True, "inputs": new}}
    if old is not None:
        step["oldState"] = {"type": rtype, "custom": True, "inputs": old}
    try:
        (lazy,) = pulumi_preview.parse({"steps": [copy.deepcopy(step)]}, "p.json", True).changes
    except InputError as e:  # an instance whose instanceType is no string: refused, as before
        assert rtype == "aws:ec2/instance:Instance", e
        return
    eager = _eager(pulumi_values.inputs,
                   None if op == "delete" or not new else new,
                   None if old is None or op == "create" or not old else old,
                   urn, rtype, "r", lazy.change, None if op == "delete" else {},
                   None if old is None or op == "create" else {}, "pulumi-preview",
                   lazy.kind, {})
    assert copy.copy(lazy) == eager and copy.deepcopy(lazy) == eager
    assert replace(lazy, name="s") == replace(eager, name="s")
    assert lazy == eager and repr(lazy) == repr(eager) and type(lazy) is ResourceChange


def _role(inputs: Any, op: str = "create") -> dict[str, Any]:
    urn = "urn:pulumi:dev::p::aws:iam/role:Role::node"
    return {"steps": [{"op": op, "urn": urn, "newState": {
        "type": "aws:iam/role:Role", "custom": True, "inputs": inputs}}]}


def test_a_pending_change_behaves_as_a_change() -> None:
    def one() -> ResourceChange:
        (c,) = pulumi_preview.parse(_role({"maxSessionDuration": 3600}), "p.json", True).changes
        assert type(c) is not ResourceChange and isinstance(c, ResourceChange)
        return c

    eager = ResourceChange("urn:pulumi:dev::p::aws:iam/role:Role::node", "aws:iam/role:Role",
                           "node", one().change, {"max_session_duration": 3600}, None,
                           "pulumi-preview", ResourceKind.IAM_ROLE, {})
    assert one() == eager and eager == one() and one() != replace(eager, name="x")
    for twin in (copy.copy(one()), copy.deepcopy(one()), pickle.loads(pickle.dumps(one()))):
        assert type(twin) is ResourceChange and twin == eager
    assert repr(one()) == repr(eager)
    with pytest.raises(TypeError):  # a mapping field: unhashable, as an eager change
        hash(one())
    with pytest.raises(AttributeError, match="no attribute 'bogus'"):
        one().bogus  # type: ignore[attr-defined]  # noqa: B018
    assert not hasattr(one(), "__dict__")
    match one():
        case ResourceChange(name="node", new={"max_session_duration": 3600}):
            pass
        case _:
            pytest.fail("no match")
    c = one()
    assert c.before == {} and c.kind is ResourceKind.IAM_ROLE and c.old is None
    assert type(c) is not ResourceChange  # a side known as read waits for no conversion
    assert c.after == {"max_session_duration": 3600} and type(c) is ResourceChange
    deferred.convert_pending(c)  # already converted: nothing to do
    assert c == eager


def test_a_bad_shape_of_an_unread_kind_is_still_refused() -> None:
    with pytest.raises(InputError, match=r"steps\[0\]\.newState\.inputs: expected an object"):
        pulumi_preview.parse(_role([1]), "p.json", True)


def test_a_document_not_read_from_json_here_is_converted_as_read() -> None:
    """Only ``json`` bounds a document's nesting: one built otherwise may be deeper than any
    stack a rule reads it in, and is refused while read (tests/policies/sources/test_detect)."""
    doc = _role({"maxSessionDuration": 3600})
    assert not _pending(parse_document(doc, "p.json"))
    assert not _pending(pulumi_preview.parse(doc, "p.json"))
    assert _pending(parse_document(doc, "p.json", from_json=True))


def test_inputs_as_deep_as_json_reads_convert_when_read_deep_in_a_stack(tmp_path: Path) -> None:
    """The reader converted them at its own depth; a rule reads them deeper in the stack."""
    frames, frame = 0, sys._getframe()
    while frame is not None:
        frames, frame = frames + 1, frame.f_back
    depth = sys.getrecursionlimit() - frames - 100  # 150 frames deeper, no room left for it
    path = tmp_path / "deep.json"
    nested = "[" * depth + "]" * depth
    path.write_text(json.dumps(_role({"x": 1})).replace("1}", nested + "}"))
    (c,) = load_plan(path).changes
    assert type(c) is not ResourceChange

    def down(n: int) -> Any:
        return down(n - 1) if n else c.new

    value = down(150)["x"]
    for _ in range(depth - 1):
        (value,) = value
    assert value == [] and type(c) is ResourceChange


def test_a_pending_change_is_made_from_the_constructors_arguments() -> None:
    """ResourceChange's fields are listed once, by its constructor: a pending change takes the
    same arguments (every field, origin too) and equals the change they make."""
    args = ("urn:pulumi:dev::p::aws:iam/role:Role::node", "aws:iam/role:Role", "node",
            ChangeKind.CREATE, None, None, "pulumi-preview", ResourceKind.IAM_ROLE,
            {"role": "urn:pulumi:dev::p::aws:iam/role:Role::other"}, "urn:pulumi:dev::p::x::y",
            "stack.yaml:3")
    lazy = deferred.pending_change(pulumi_values.inputs, {"maxSessionDuration": 1}, None, *args)
    assert type(lazy) is not ResourceChange
    assert lazy == ResourceChange(*args[:4], {"max_session_duration": 1}, *args[5:])
    assert lazy.origin == "stack.yaml:3" and type(lazy) is ResourceChange
    stores = {i.argval for i in dis.get_instructions(deferred.pending_change)
              if i.opname == "STORE_ATTR"}
    assert stores == {"_pending", "__class__"}  # main: each field again, by name

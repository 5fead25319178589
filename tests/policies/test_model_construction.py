"""ResourceChange, and the readers' per-entry records, are made by plain slot stores.

A plan makes one ResourceChange per resource (and the Pulumi reader one Step, the Terraform one
tuple row, per entry): each field set through ``object.__setattr__`` (what a frozen record's
``__init__`` must do) cost about ten times a plain slot store, ~25k instructions per change, a
tenth of reading a 1,000-resource Pulumi preview. The figures are in the speed report; here the
structure is counted (the bytecode's stores and calls) and the frozen record's behaviour held
equal to what it was: refused assignment, equality, hashing, repr, replace, copy and pickle.
"""

from __future__ import annotations

import copy
import dis
import pickle
from collections.abc import Callable
from types import FunctionType

import pytest

from gpupool.record import FrozenInstanceError, fields, replace
from policies.model import ChangeKind, ResourceChange, ResourceKind
from policies.sources import pulumi_preview, terraform

FIELDS = ("address", "type", "name", "change", "new", "old", "source", "kind", "references",
          "parent", "origin")


def _stores_and_calls(fn: Callable[..., object]) -> tuple[list[str], list[str]]:
    """The attribute names ``fn`` stores to, and the attributes it loads to call."""
    assert isinstance(fn, FunctionType)
    ops = list(dis.get_instructions(fn))
    stores = [i.argval for i in ops if i.opname == "STORE_ATTR"]
    loads = [i.argval for i in ops if i.opname in ("LOAD_ATTR", "LOAD_METHOD")]
    return stores, loads


@pytest.mark.parametrize("fn, names", [
    (ResourceChange.__new__, (*FIELDS, "__class__")),
    (pulumi_preview.Step.__init__, ("body", "where")),
])
def test_each_field_is_one_plain_store(fn: Callable[..., object], names: tuple[str, ...]) -> None:
    stores, loads = _stores_and_calls(fn)
    assert stores == list(names)
    assert "__setattr__" not in loads


def test_a_terraform_row_is_a_plain_tuple() -> None:
    instances: dict[str, list[str]] = {}
    (row,) = terraform._read_rows([{"address": "aws_instance.a[0]", "mode": "managed",
                                    "type": "aws_instance", "name": "a"}], "plan.json", instances)
    assert type(row) is tuple and row[2:] == (
        "aws_instance.a[0]", "managed", "aws_instance", "a", "aws_instance.a", (), (),
        "aws_instance.a", "[0]")
    assert instances == {"aws_instance.a": ["[0]"]}


def _change(**changes: object) -> ResourceChange:
    base: dict[str, object] = dict(address="aws_instance.a", type="aws_instance", name="a",
                                   change=ChangeKind.CREATE, new={"instance_type": "g5.xlarge"},
                                   old=None, source="terraform", kind=ResourceKind.INSTANCE)
    base.update(changes)
    return ResourceChange(**base)  # type: ignore[arg-type]


def test_a_change_is_a_frozen_record_of_its_fields() -> None:
    c = _change()
    assert type(c) is ResourceChange
    assert fields(c) == FIELDS == ResourceChange.__match_args__
    assert c.references == {} and c.parent is None and c.origin is None
    with pytest.raises(FrozenInstanceError):
        c.name = "b"  # type: ignore[misc]
    with pytest.raises(FrozenInstanceError):
        del c.name  # type: ignore[misc]
    with pytest.raises(AttributeError):
        c.unknown_field = 1  # type: ignore[attr-defined]
    assert not hasattr(c, "__dict__")
    assert repr(c).startswith("ResourceChange(address='aws_instance.a', type='aws_instance', ")
    assert repr(c).endswith("references={}, parent=None, origin=None)")


def test_equality_hash_replace_copy_pickle() -> None:
    c = _change(new=None, change=ChangeKind.DELETE, references={"subnet_id": "aws_subnet.s"})
    same = _change(new=None, change=ChangeKind.DELETE, references={"subnet_id": "aws_subnet.s"})
    assert c == same and c != _change(name="b")
    with pytest.raises(TypeError):
        hash(c)  # a mapping field: unhashable, as the frozen dataclass was
    hashable = ResourceChange("a", "t", "n", ChangeKind.NOOP, None, None, "s",
                              references=(), parent="p")  # type: ignore[arg-type]
    assert hash(hashable) == hash(ResourceChange("a", "t", "n", ChangeKind.NOOP, None, None, "s",
                                                 references=(), parent="p"))  # type: ignore[arg-type]
    moved = replace(c, name="b", origin="x.yaml:3")
    assert type(moved) is ResourceChange
    assert (moved.name, moved.origin, moved.references) == ("b", "x.yaml:3", c.references)
    for twin in (copy.copy(c), copy.deepcopy(c), pickle.loads(pickle.dumps(c))):
        assert type(twin) is ResourceChange and twin == c
    with pytest.raises(TypeError):
        replace(c, bogus=1)
    with pytest.raises(TypeError):
        ResourceChange("a", "t", "n", ChangeKind.CREATE, {}, None)  # type: ignore[call-arg]

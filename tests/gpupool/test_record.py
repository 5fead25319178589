"""gpupool.record: classes that behave as the dataclasses they replace (issue 16 item 25).

Each behaviour is compared with the dataclass the same fields make: equality, hashing, repr,
frozen-ness, copy and pickle, ``replace``; and the classes of a check are defined without
``dataclasses`` being imported at all.
"""

from __future__ import annotations

import copy
import dataclasses
import json
import operator
import pickle
import subprocess
import sys
from pathlib import Path

import pytest

from gpupool.record import Frozen, FrozenInstanceError, Record, fields, replace
from policies.result import Ref, Violation
from policies.rules.params import Enforcement

ROOT = Path(__file__).resolve().parents[2]


class Point(Frozen):
    __slots__ = ("x", "y", "tags")
    x: int
    y: str
    tags: tuple[str, ...]

    def __init__(self, x: int, y: str = "", tags: tuple[str, ...] = ()) -> None:
        object.__setattr__(self, "x", x)
        object.__setattr__(self, "y", y)
        object.__setattr__(self, "tags", tags)


@dataclasses.dataclass(frozen=True)
class DPoint:
    x: int
    y: str = ""
    tags: tuple[str, ...] = ()


class Box(Record):
    __slots__ = ("items",)
    items: list[int]

    def __init__(self, items: list[int]) -> None:
        self.items = items


@dataclasses.dataclass
class DBox:
    items: list[int]


class One(Frozen):
    __slots__ = ("v",)
    v: float

    def __init__(self, v: float) -> None:
        object.__setattr__(self, "v", v)


@dataclasses.dataclass(frozen=True)
class DOne:
    v: float


def test_equality_and_hash_are_a_frozen_dataclasses() -> None:
    cases = [(1, "a", ("t",)), (1, "a", ()), (2, "", ())]
    for a in cases:
        for b in cases:
            assert (Point(*a) == Point(*b)) == (DPoint(*a) == DPoint(*b))
        assert hash(Point(*a)) == hash(DPoint(*a))  # same hash: same set and dict order
    assert Point(1) != DPoint(1) and Point(1) != (1, "", ())  # another class is never equal
    nan = float("nan")
    assert (One(nan) == One(nan)) == (DOne(nan) == DOne(nan))  # tuple comparison, as theirs
    assert hash(One(2.5)) == hash(DOne(2.5))
    assert {Point(1), Point(1), Point(2)} == {Point(1), Point(2)}


class Empty(Frozen):
    __slots__ = ()


@dataclasses.dataclass(frozen=True)
class DEmpty:
    pass


def test_a_records_key_is_stored_without_a_staticmethod_when_it_needs_none() -> None:
    """An attrgetter binds to no instance: a class of two fields or more keeps it as it is
    (a staticmethod of it costs ~15k instructions a class, at every import); the lambdas of
    fewer fields are staticmethods. Equality and hash are a dataclass's either way."""
    assert type(vars(Point)["_key"]) is operator.attrgetter
    assert type(vars(One)["_key"]) is staticmethod and type(vars(Empty)["_key"]) is staticmethod
    assert Empty() == Empty() and hash(Empty()) == hash(DEmpty())
    assert hash(One(1.5)) == hash(DOne(1.5)) and hash(Point(3, "b")) == hash(DPoint(3, "b"))
    assert type(vars(Violation)["_key"]) is operator.attrgetter  # (__init_subclass__'s)


def test_a_mutable_record_is_unhashable_and_changeable_as_a_dataclass() -> None:
    box = Box([1])
    with pytest.raises(TypeError):
        hash(box)
    with pytest.raises(TypeError):
        hash(DBox([1]))
    box.items = [2]
    assert box == Box([2]) and box != Box([1])
    assert repr(box) == repr(DBox([2])).replace("DBox", "Box")


def test_repr_is_a_dataclasses() -> None:
    assert repr(Point(1, "a\n", ("t",))) == repr(DPoint(1, "a\n", ("t",))).replace("DPoint",
                                                                                  "Point")
    assert repr(Ref("aws_instance.a")) == "Ref(address='aws_instance.a', type='')"


def test_a_frozen_record_refuses_assignment_but_copies_and_pickles() -> None:
    p = Point(1, "a", ("t",))
    with pytest.raises(FrozenInstanceError, match="cannot assign to field 'x'"):
        p.x = 2  # type: ignore[misc]
    with pytest.raises(AttributeError):
        del p.y
    with pytest.raises(AttributeError):
        p.other = 1  # type: ignore[attr-defined]
    assert issubclass(FrozenInstanceError, AttributeError)
    for clone in (copy.copy(p), copy.deepcopy(p), pickle.loads(pickle.dumps(p))):
        assert clone == p and clone is not p and type(clone) is Point
    v = Violation("p", Enforcement.MANDATORY, "r", "m", detail={"a": [1]}, also=(Ref("x"),))
    assert pickle.loads(pickle.dumps(v)) == v == copy.deepcopy(v)


def test_replace_and_fields() -> None:
    p = Point(1, "a")
    assert fields(p) == fields(Point) == ("x", "y", "tags")
    assert replace(p, y="b") == Point(1, "b") and p == Point(1, "a")
    with pytest.raises(TypeError):
        replace(p, z=1)
    assert replace(DPoint(1), y="b") == DPoint(1, "b")  # a dataclass: dataclasses.replace
    assert Point.__match_args__ == ("x", "y", "tags")
    match Point(3, "c"):
        case Point(x, y):
            assert (x, y) == (3, "c")


def test_defaults_are_fresh_per_instance() -> None:
    a, b = Violation("p", Enforcement.ADVISORY, "r", "m"), Violation("p", Enforcement.ADVISORY,
                                                                     "r", "m")
    assert a.detail == {} and a.detail is not b.detail


def test_a_plan_check_defines_no_dataclass(tmp_path: Path) -> None:
    """Counted in a fresh interpreter: a check of a Terraform plan and of a Pulumi preview
    make no class with ``@dataclass`` (each cost ~0.7 ms of CPU to define) and do not import
    ``dataclasses`` (with inspect, ast, dis and tokenize behind it)."""
    child = ("import json, sys\nfrom gpupool.cli import main\ncode = main(sys.argv[1:])\n"
             "print(json.dumps({'code': code, 'dc': 'dataclasses' in sys.modules}))")
    fixtures = ROOT / "tests" / "fixtures"
    for plan in (fixtures / "terraform" / "upsize-g4dn.json",
                 fixtures / "pulumi" / "preview-upsize.json",
                 fixtures / "terraform" / "live" / "gpu-asgs" / "plan-update.json"):
        p = subprocess.run([sys.executable, "-c", child, "check", str(plan), "--format", "json",
                            "--output", str(tmp_path / "r.json")], capture_output=True,
                           text=True, cwd=ROOT, timeout=300, check=False)
        doc = json.loads(p.stdout.strip().splitlines()[-1])
        assert doc == {"code": 1, "dc": False}, (plan, p.stderr)


def test_the_gpu_key_is_the_named_tuple_it_was() -> None:
    """gpupool.catalog's GpuKey, written out instead of typing.NamedTuple."""
    from typing import NamedTuple

    from gpupool.catalog import GpuKey

    class Was(NamedTuple):
        model: str
        memory_mib: int
        arch: str

    key, was = GpuKey("A10G", 24576, "x86_64"), Was("A10G", 24576, "x86_64")
    assert key == was == ("A10G", 24576, "x86_64") and hash(key) == hash(was)
    assert repr(key) == repr(was).replace("Was", "GpuKey")
    assert (key.model, key.memory_mib, key.arch) == tuple(key) and key._fields == was._fields
    for clone in (pickle.loads(pickle.dumps(key)), copy.deepcopy(key)):
        assert clone == key and type(clone) is GpuKey
    assert sorted([GpuKey("T4", 1, "x"), key]) == [key, GpuKey("T4", 1, "x")]


def _class_statements(made: type) -> type:
    """The enum ``made`` as ``class X(StrEnum)`` makes it (the functional API: the same path)."""
    from enum import StrEnum

    return StrEnum(made.__name__, [(m.name, m.value) for m in made],  # type: ignore[attr-defined]
                   module=made.__module__, qualname=made.__qualname__)


def test_str_enum_makes_the_enum_the_class_statement_makes() -> None:
    """ChangeKind, ResourceKind and Enforcement are StrEnums as before: the standard library's
    own check of its fast path finds no difference (members, values, order, repr, str, format,
    pickle, class attributes), and each member is itself in the class's dict, as before."""
    import enum

    from policies.model import ChangeKind, ResourceKind

    for made in (ChangeKind, ResourceKind, Enforcement):
        enum._test_simple_enum(made, _class_statements(made))  # raises TypeError on a difference
        assert issubclass(made, enum.StrEnum) and made.__doc__ is None
        for member in made:
            assert vars(made)[member.name] is member and getattr(made, member.name) is member
            assert pickle.loads(pickle.dumps(member)) is member and member == member.value
    assert ChangeKind("no-op") is ChangeKind.NOOP and f"{ResourceKind.OTHER}" == "other"


def test_str_enum_takes_the_fast_path_or_the_functional_api(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """A counting test: the fast path builds no member the general way (``_proto_member``,
    ~110k instructions each on 3.11); without the private fast path, the same enum still."""
    import enum

    from gpupool.record import EnumBody, str_enum

    calls: list[str] = []
    general = enum._proto_member.__set_name__  # type: ignore[attr-defined]

    def spy(self: object, enum_class: type, name: str) -> None:
        calls.append(name)
        general(self, enum_class, name)

    monkeypatch.setattr(enum._proto_member, "__set_name__", spy)  # type: ignore[attr-defined]

    class Colour(EnumBody):
        RED = "red"
        DARK_BLUE = "dark-blue"

    fast = str_enum(Colour)
    assert calls == []
    monkeypatch.delattr(enum, "_simple_enum")
    slow = str_enum(Colour)
    assert calls == ["RED", "DARK_BLUE"]
    enum._test_simple_enum(fast, slow)
    assert [m.value for m in fast] == ["red", "dark-blue"] and fast.RED == "red"


def test_the_kinds_and_enforcement_are_made_by_the_fast_path() -> None:
    """Importing policies.model and the rule parameters builds no enum member the general way."""
    code = ("import enum; calls = []; general = enum._proto_member.__set_name__\n"
            "def spy(self, cls, name):\n    calls.append(name); general(self, cls, name)\n"
            "enum._proto_member.__set_name__ = spy\n"
            "import policies.model, policies.rules.params; print(calls)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         cwd=ROOT, timeout=120, check=True)
    assert out.stdout.strip() == "[]", out.stdout + out.stderr

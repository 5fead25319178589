"""Classes that behave as the kit's dataclasses did, defined at no cost when imported.

``@dataclass`` writes each class's ``__init__``, ``__eq__``, ``__repr__``, ``__hash__`` and
``__setattr__`` as source text and compiles it every time the module is imported: Python 3.11
compiles each method apart, about 0.7 ms of CPU per class, and the ~60 classes a ``gpupool
check`` defines made that 0.035 s, the largest part of its start-up (issue 16 item 25;
bench/check_bench.py's phases table). A class on that path is written instead as::

    class Ref(Frozen):
        __slots__ = ("address", "type")
        address: str
        type: str

        def __init__(self, address: str, type: str = "") -> None:
            object.__setattr__(self, "address", address)
            object.__setattr__(self, "type", type)

Its ``__init__`` is ordinary code (compiled once, into the bytecode cache) and everything else
comes from the base, by the names in ``__slots__`` (the fields, in order; ``"__dict__"`` may
be listed too, for a ``cached_property``): :class:`Record` gives ``__eq__`` (same class, fields
equal, as a dataclass compares) and ``__repr__`` (``Ref(address='a', type='')``) and no hash,
as a mutable dataclass; :class:`Frozen` adds ``__hash__`` (the hash of the fields' tuple, as a
frozen dataclass) and refuses assignment (:class:`FrozenInstanceError`), while copy and pickle
still work. :func:`replace` and :func:`fields` stand for ``dataclasses.replace`` and
``dataclasses.fields`` (names only; ``replace`` takes a dataclass too).
tests/gpupool/test_record.py holds each behaviour equal to a dataclass's. :func:`str_enum` does
the same for a ``StrEnum``.
"""

from __future__ import annotations

from collections.abc import Callable
from operator import attrgetter

TYPE_CHECKING = False  # typing's, without importing typing (not on a check's path)
if TYPE_CHECKING:
    from typing import Any, ClassVar, TypeVar

    T = TypeVar("T")
    from enum import StrEnum as EnumBody
else:
    EnumBody = object  # the base :func:`str_enum`'s classes are written on (a StrEnum to types)
_NOT_FIELDS = ("__dict__", "__weakref__")


def key_of(names: tuple[str, ...]) -> Callable[[Any], tuple[Any, ...]]:
    """The tuple of the fields ``names`` of an object (what a dataclass compares and hashes)."""
    if len(names) > 1:
        return attrgetter(*names)
    if names:
        one = attrgetter(names[0])
        return lambda obj: (one(obj),)
    return lambda obj: ()


def key_attribute(names: tuple[str, ...]) -> Any:
    """:func:`key_of` as a class's ``_key``: an attrgetter (two fields or more) binds to no
    instance, so it is stored as it is; the lambdas of fewer fields go in a staticmethod. (Making
    a staticmethod copies its function's name, doc and module: for an attrgetter, which has
    none, five caught AttributeErrors, ~15k instructions of every record class defined.)"""
    key = key_of(names)
    return key if len(names) > 1 else staticmethod(key)


class FrozenInstanceError(AttributeError):
    """An assignment to a field of a frozen record (``dataclasses.FrozenInstanceError``)."""


class Record:
    """A class whose fields are its ``__slots__``: equality and repr by them, unhashable."""

    __slots__ = ()
    _fields: ClassVar[tuple[str, ...]] = ()
    _key: ClassVar[Callable[[Any], tuple[Any, ...]]]
    __match_args__: ClassVar[tuple[str, ...]] = ()

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        own = cls.__dict__.get("__slots__", ())
        own = (own,) if isinstance(own, str) else tuple(own)
        names = (*cls._fields, *(n for n in own if n not in _NOT_FIELDS))
        cls._fields = names
        cls.__match_args__ = names
        cls._key = key_attribute(names)

    def __eq__(self, other: object) -> bool:
        if other.__class__ is self.__class__:
            return bool(self._key(self) == self._key(other))
        return NotImplemented

    __hash__ = None  # type: ignore[assignment]  (equal by value and mutable: as a dataclass)

    def __repr__(self) -> str:
        shown = ", ".join(f"{n}={getattr(self, n)!r}" for n in self._fields)
        return f"{self.__class__.__qualname__}({shown})"


class Frozen(Record):
    """A :class:`Record` that cannot be changed once made, hashed by its fields."""

    __slots__ = ()

    def __hash__(self) -> int:
        return hash(self._key(self))

    def __setattr__(self, name: str, value: Any) -> None:
        raise FrozenInstanceError(f"cannot assign to field {name!r}")

    def __delattr__(self, name: str) -> None:
        raise FrozenInstanceError(f"cannot delete field {name!r}")

    # copy.copy, copy.deepcopy and pickle restore state by assignment, which __setattr__ refuses
    def __getstate__(self) -> tuple[Any, ...]:
        return tuple(getattr(self, n) for n in self._fields)

    def __setstate__(self, state: tuple[Any, ...]) -> None:
        for name, value in zip(self._fields, state, strict=True):
            object.__setattr__(self, name, value)


def str_enum(cls: type[T]) -> type[T]:
    """``class Kind(StrEnum)`` for ``@str_enum class Kind(EnumBody)`` (``NAME = "value"`` lines),
    made by the
    standard library's own fast path (``enum._simple_enum``, which re, http and ssl make their
    enums with): the class statement's way costs ~110k instructions a member on 3.11, at every
    import, half of it the machinery of a general enum these do not use. The same enum:
    ``enum._test_simple_enum`` finds no difference (tests/gpupool/test_record.py; by hand on
    3.11-3.13), and, as the class statement leaves them, no docstring and each member itself in
    the class's dict (``_simple_enum`` puts a redirect there, read through Python). Without the
    fast path (a private name), the functional API makes it."""
    from enum import StrEnum

    names = {k: v for k, v in vars(cls).items() if not k.startswith("_")}
    simple = getattr(__import__("enum"), "_simple_enum", None)
    if simple is None:
        made: Any = StrEnum(cls.__name__, names, module=cls.__module__,
                            qualname=cls.__qualname__)
        return made  # type: ignore[no-any-return]
    made = simple(StrEnum)(cls)
    made.__doc__ = cls.__dict__.get("__doc__")
    for name in names:
        type.__setattr__(made, name, made._member_map_[name])
    return made  # type: ignore[no-any-return]


def fields(obj: Record | type[Record]) -> tuple[str, ...]:
    """The names of the fields of a record (or record class), in order."""
    return obj._fields


def replace(obj: T, /, **changes: Any) -> T:
    """A copy of ``obj`` with ``changes``, made through ``__init__`` (a name that is not a field
    is a TypeError), as ``dataclasses.replace`` makes one; which it is for a dataclass."""
    if not isinstance(obj, Record):
        import dataclasses

        return dataclasses.replace(obj, **changes)  # type: ignore[type-var]
    values = {n: getattr(obj, n) for n in obj._fields}
    values.update(changes)
    return obj.__class__(**values)

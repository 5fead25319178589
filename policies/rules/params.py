"""Rule parameters as plain frozen classes; pydantic validates them only when asked.

A check with no ``--config`` needs every rule's defaults and nothing else, and building 20
pydantic models costs a check of a small plan most of its start-up (issue 16 item 25). So a rule
writes its parameters as a subclass of :class:`RuleParams`, declared as a frozen dataclass is
(annotated class attributes), each field made by :func:`param` with the same keywords
pydantic's ``Field`` takes (``description``, ``ge``, ``le``, ``gt``, ``min_length``): the
defaults are the class itself, built without pydantic. It is not a dataclass (defining one
compiles its methods, ~0.7 ms of CPU per class at every start): the fields are collected when
the class is defined (:func:`param_fields`) and the methods are :class:`gpupool.record.Frozen`'s,
the same equality, hash, repr and frozen-ness; ``__init__`` takes the fields as a dataclass's
does, positionally or by name, and then runs ``__post_init__``. Validating a configuration
and its JSON schema (:func:`policies.rules.param_schema.validate`, ``json_schema``) go
through a pydantic model generated once per class by :mod:`policies.rules.param_schema`, with
the configuration's spelling (camelCase aliases, snake_case accepted, unknown keys refused), so
error messages and schemas are what a hand-written pydantic model gives.

A check across fields (``minTarget`` ≤ ``maxTarget``) is the class's ``__post_init__``
raising ValueError: it runs for the defaults and, inside validation, becomes a pydantic error
without a location, as a model validator's does.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from enum import StrEnum

from gpupool.record import EnumBody, Frozen, key_attribute, str_enum

TYPE_CHECKING = False  # typing's, without importing typing (not on a check's path)
if TYPE_CHECKING:
    from typing import Any, ClassVar, Final, Literal, TypeVar

    P = TypeVar("P", bound="RuleParams")


class _Missing:
    def __repr__(self) -> str:
        return "MISSING"


MISSING: Final[Any] = _Missing()  # no default (dataclasses.MISSING)


@str_enum  # a StrEnum, made at a third of the class statement's cost (gpupool.record)
class Enforcement(EnumBody):
    MANDATORY = "mandatory"
    ADVISORY = "advisory"
    DISABLED = "disabled"


class Param:
    """One parameter field, as ``dataclasses.Field``: its name, default or default factory,
    and its constraints (``metadata``: pydantic ``Field`` keywords)."""

    __slots__ = ("default", "default_factory", "metadata", "name")

    def __init__(self, default: Any, default_factory: Any, metadata: Mapping[str, Any],
                 name: str = "") -> None:
        self.name = name
        self.default = default
        self.default_factory = default_factory
        self.metadata = metadata

    def __repr__(self) -> str:
        return f"Param(name={self.name!r}, default={self.default!r})"


def param(default: Any = MISSING, *, default_factory: Callable[[], Any] | None = None,
          **constraints: Any) -> Any:
    """A parameter field, written as pydantic's ``Field``: a default (or ``default_factory``)
    and constraint keywords (``description``, ``ge``, ``le``, ``gt``, ``min_length``)."""
    return Param(default, MISSING if default_factory is None else default_factory, constraints)


class RuleParams(Frozen):
    """Parameters every rule takes; rule modules subclass this with their own.

    Field names are snake_case in Python and camelCase in configuration (the aliases), exactly
    as Pulumi's ``--policy-pack-config`` spells them, so one config file serves both tools.
    """

    _params: ClassVar[tuple[Param, ...]] = ()

    unknown_enforcement: Literal[Enforcement.MANDATORY, Enforcement.ADVISORY] = param(
        Enforcement.ADVISORY,
        description=(
            "Level at which 'cannot verify' findings (values unknown until apply) are reported; "
            "never stricter than the policy's own enforcement. They are never a silent pass."
        ),
    )


    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        _collect(cls)

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        params = self._params
        if len(args) > len(params):
            raise TypeError(f"{type(self).__qualname__}() takes {len(params)} positional "
                            f"arguments but {len(args)} were given")
        for i, p in enumerate(params):
            if i < len(args):
                if p.name in kwargs:
                    raise TypeError(f"{type(self).__qualname__}() got multiple values for "
                                    f"argument {p.name!r}")
                value = args[i]
            elif p.name in kwargs:
                value = kwargs.pop(p.name)
            elif p.default is not MISSING:
                value = p.default
            elif p.default_factory is not MISSING:
                value = p.default_factory()
            else:
                raise TypeError(f"{type(self).__qualname__}() missing argument {p.name!r}")
            object.__setattr__(self, p.name, value)
        if kwargs:
            raise TypeError(f"{type(self).__qualname__}() got an unexpected keyword argument "
                            f"{next(iter(kwargs))!r}")
        post = getattr(self, "__post_init__", None)
        if post is not None:
            post()


def _collect(cls: type[RuleParams]) -> None:
    """The fields of ``cls``, as ``@dataclass`` finds them: its bases' first, then each of its
    own annotated attributes in order (a default as the class attribute, a :class:`Param` for
    constraints). A class attribute holds the default afterwards, as a dataclass's does."""
    fields: dict[str, Param] = {}
    for base in reversed(cls.__mro__[1:]):
        for p in base.__dict__.get("_params", ()):
            fields[p.name] = p
    # (not inspect.get_annotations: inspect is not imported on the path of a check)
    for name, annotation in cls.__dict__.get("__annotations__", {}).items():  # noqa: RUF063
        if str(annotation).startswith(("ClassVar", "typing.ClassVar")):
            continue
        value = cls.__dict__.get(name, MISSING)
        p = (Param(value.default, value.default_factory, value.metadata, name)
             if isinstance(value, Param) else Param(value, MISSING, {}, name))
        fields[name] = p
        if p.default is not MISSING:
            setattr(cls, name, p.default)
        elif name in cls.__dict__:
            delattr(cls, name)
    cls._params = tuple(fields.values())
    cls._fields = tuple(fields)
    cls.__match_args__ = cls._fields
    cls._key = key_attribute(cls._fields)


_collect(RuleParams)


def param_fields(cls: type[RuleParams] | RuleParams) -> tuple[Param, ...]:
    """The parameter fields of a class (or of an instance's class), in order, as
    ``dataclasses.fields`` gives them."""
    return cls._params


def to_camel(name: str) -> str:
    """``max_target`` → ``maxTarget`` (pydantic's ``to_camel``, for snake_case names)."""
    head, *rest = name.split("_")
    return head + "".join(part[:1].upper() + part[1:] for part in rest)


def defaults(cls: type[P]) -> P:
    """The parameters a rule runs with when nothing is configured (no pydantic involved)."""
    return cls()


def aliases(cls: type[RuleParams]) -> list[str]:
    """Every parameter's configuration name, in declaration order."""
    return [to_camel(f.name) for f in param_fields(cls)]


def dump(params: RuleParams, *, by_alias: bool = True, exclude_defaults: bool = False,
         mode: Literal["python", "json"] = "python") -> dict[str, Any]:
    """The values as a mapping (configuration names with ``by_alias``): what ``validate`` takes
    back. ``mode="json"`` turns tuples into lists and enums into their values."""
    out: dict[str, Any] = {}
    for f in param_fields(params):
        value = getattr(params, f.name)
        if exclude_defaults and value == _default(f):
            continue
        out[to_camel(f.name) if by_alias else f.name] = _json(value) if mode == "json" else value
    return out


def _default(f: Param) -> Any:
    if f.default is not MISSING:
        return f.default
    if f.default_factory is not MISSING:
        return f.default_factory()
    return MISSING


def _json(value: Any) -> Any:
    if isinstance(value, StrEnum):
        return value.value
    if isinstance(value, list | tuple):
        return [_json(v) for v in value]
    if isinstance(value, Mapping):
        return {str(k): _json(v) for k, v in value.items()}
    return value

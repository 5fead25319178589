"""Validating a rule's parameters class, and its JSON schema, by a pydantic model made from
it (see :mod:`policies.rules.params`).

Imported only to validate a configuration or to write a schema (``--config``, the CrossGuard
pack's Configure, the docs): a check with defaults never imports pydantic.
"""

from __future__ import annotations

import inspect
import sys
import typing
from collections.abc import Mapping
from functools import cache
from typing import Any, Literal, TypeVar

from pydantic import BaseModel, ConfigDict, Field, create_model, model_validator

from policies.rules.params import MISSING, RuleParams, param_fields, to_camel

P = TypeVar("P", bound=RuleParams)

_CONFIG = ConfigDict(extra="forbid", frozen=True, alias_generator=to_camel,
                     populate_by_name=True)


@cache
def model_of(cls: type[RuleParams]) -> type[BaseModel]:
    """A model with the class's fields, defaults and constraints; the class's
    ``__post_init__`` checks run as its model validator."""
    hints = _hints(cls)
    fields: dict[str, Any] = {}
    for f in param_fields(cls):
        kw = dict(f.metadata)
        if f.default is not MISSING:
            kw["default"] = f.default
        elif f.default_factory is not MISSING:
            kw["default_factory"] = f.default_factory
        fields[f.name] = (hints[f.name], Field(**kw))

    def _checked(self: BaseModel) -> BaseModel:
        to_params(cls, self)  # the class's __post_init__ checks
        return self

    doc = cls.__doc__
    model = create_model(  # type: ignore[call-overload]
        cls.__name__,
        __config__=_CONFIG,
        __doc__=doc,
        __module__=cls.__module__,
        __validators__={"_checked": model_validator(mode="after")(_checked)},
        **fields,
    )
    return model  # type: ignore[no-any-return]


def _hints(cls: type[RuleParams]) -> dict[str, Any]:
    """The fields' annotations evaluated, as ``typing.get_type_hints`` does, each in the names
    of the module that declares it, with typing's behind them: a module on a check's path
    imports typing's names (``Any``, ``Literal``) for the type checker only, so that a check
    never imports typing."""
    names = {n: getattr(typing, n) for n in typing.__all__}
    fields = {f.name for f in param_fields(cls)}
    out: dict[str, Any] = {}
    for base in reversed(cls.__mro__):
        module = sys.modules.get(base.__module__)
        scope = {**names, **(vars(module) if module is not None else {})}
        for name, annotation in inspect.get_annotations(base).items():
            if name in fields:
                out[name] = eval(annotation, scope) if isinstance(annotation, str) else annotation
    return out


def to_params(cls: type[RuleParams], model: BaseModel) -> Any:
    """The parameters holding a validated model's values."""
    return cls(**{f.name: getattr(model, f.name) for f in param_fields(cls)})


def validate(cls: type[P], raw: Mapping[str, Any] | None = None) -> P:
    """Validate camelCase (or snake_case) parameters; raises ``pydantic.ValidationError``."""
    params: P = to_params(cls, model_of(cls).model_validate(dict(raw or {})))
    return params


def json_schema(cls: type[RuleParams], *, mode: Literal["validation", "serialization"] =
                "validation") -> dict[str, Any]:
    """The JSON schema of the parameters as configuration spells them (camelCase)."""
    return model_of(cls).model_json_schema(by_alias=True, mode=mode)

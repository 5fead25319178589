"""Rule parameters are plain frozen classes (policies.rules.params); pydantic validates them only
when something is configured. These tests hold the two paths to the same answers: the defaults a
check runs with unconfigured are exactly what validating an empty configuration gives, and what
``dump`` writes validates back to the same parameters."""

from __future__ import annotations

import copy
import dataclasses
import pickle

import pytest
from pydantic import ValidationError

from policies import settings, waiver_file
from policies.rules import ALL_RULES
from policies.rules.param_schema import json_schema, validate
from policies.rules.params import RuleParams, aliases, dump, param_fields, to_camel


@pytest.mark.parametrize("rule", ALL_RULES, ids=lambda r: r.meta.id)
def test_defaults_are_what_validating_nothing_gives(rule: object) -> None:
    cls = rule.meta.params  # type: ignore[attr-defined]
    assert issubclass(cls, RuleParams) and not dataclasses.is_dataclass(cls)
    assert rule.parse_params() == validate(cls, {}) == cls()  # type: ignore[attr-defined]
    assert list(json_schema(cls)["properties"]) == aliases(cls)


@pytest.mark.parametrize("rule", ALL_RULES, ids=lambda r: r.meta.id)
def test_dump_validates_back(rule: object) -> None:
    cls = rule.meta.params  # type: ignore[attr-defined]
    params = cls()
    assert validate(cls, dump(params, mode="json")) == params
    assert dump(params, exclude_defaults=True) == {}


def test_configured_values_are_validated_and_checked_across_fields() -> None:
    from policies.rules.gpu_pool_scales_on_utilisation import Params

    assert validate(Params, {"minTarget": 50, "max_target": 60}).min_target == 50.0
    with pytest.raises(ValidationError, match="minTarget must not exceed maxTarget"):
        validate(Params, {"minTarget": 95})
    with pytest.raises(ValidationError, match="less than or equal to 100"):
        validate(Params, {"maxTarget": 101})
    with pytest.raises(ValidationError, match="Extra inputs are not permitted"):
        validate(Params, {"minTraget": 50})
    with pytest.raises(ValueError, match="minTarget must not exceed maxTarget"):
        Params(min_target=95)  # the defaults' path runs the same check


def test_dump_names_only_what_differs() -> None:
    from policies.rules.gpu_smallest_instance import Params

    p = validate(Params, {"maxPerGpuPremiumPct": 5, "allowedInstanceTypes": ["p5.48xlarge"]})
    assert dump(p, exclude_defaults=True) == {"allowedInstanceTypes": ["p5.48xlarge"],
                                              "maxPerGpuPremiumPct": 5.0}


def test_camel_case_as_pydantic_spells_it() -> None:
    from pydantic.alias_generators import to_camel as pydantic_camel

    for rule in ALL_RULES:
        for f in param_fields(rule.meta.params):
            assert to_camel(f.name) == pydantic_camel(f.name)


def test_waiver_defaults_agree() -> None:
    assert settings.DEFAULT_EXPIRY_WARNING_DAYS == waiver_file.DEFAULT_EXPIRY_WARNING_DAYS
    assert settings.EXPIRY_WARNING_KEY == waiver_file.EXPIRY_WARNING_KEY


def _as_dataclass(cls: type[RuleParams]) -> type:
    """The frozen dataclass ``cls`` was written as before it was a RuleParams class."""
    from policies.rules.params import MISSING

    ns: dict[str, object] = {"__annotations__": {f.name: "object" for f in param_fields(cls)},
                             "__post_init__": getattr(cls, "__post_init__", lambda self: None)}
    for f in param_fields(cls):
        ns[f.name] = (dataclasses.field(default=f.default) if f.default is not MISSING
                      else dataclasses.field(default_factory=f.default_factory))
    return dataclasses.dataclass(frozen=True)(type(cls.__name__, (), ns))


@pytest.mark.parametrize("rule", ALL_RULES, ids=lambda r: r.meta.id)
def test_parameters_behave_as_the_frozen_dataclass_they_were(rule: object) -> None:
    cls = rule.meta.params  # type: ignore[attr-defined]
    old = _as_dataclass(cls)
    new, was = cls(), old()
    names = [f.name for f in param_fields(cls)]
    assert names == [f.name for f in dataclasses.fields(old)]
    assert names[0] == "unknown_enforcement"  # the base's field first, as a dataclass orders
    assert repr(new) == repr(was)
    assert new == cls() and new != was and new is not cls()
    try:
        expected: object = hash(was)
    except TypeError:  # a list or dict parameter: unhashable, as the dataclass was
        with pytest.raises(TypeError):
            hash(new)
    else:
        assert hash(new) == expected
    with pytest.raises(AttributeError):
        new.unknown_enforcement = "mandatory"  # type: ignore[misc]
    values = [getattr(new, n) for n in names]
    assert cls(*values) == new == cls(**dict(zip(names, values, strict=True)))
    assert copy.deepcopy(new) == new == pickle.loads(pickle.dumps(new))
    with pytest.raises(TypeError, match="unexpected keyword argument 'no_such'"):
        cls(no_such=1)
    with pytest.raises(TypeError, match="positional"):
        cls(*values, 1)
    default_lists = [getattr(new, n) for n in names if isinstance(getattr(new, n), list | dict)]
    assert all(a is not b for a, b in zip(default_lists, [getattr(cls(), n) for n in names
                                                          if isinstance(getattr(new, n),
                                                                        list | dict)],
                                          strict=True))  # a factory's default, fresh each time

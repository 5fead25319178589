"""One line per problem: a pydantic error turned into ``file: key: expected …, got …``.

Keys are shown as the user wrote them (``gpupool:pools[0].minSize``), values as a YAML user
recognises them, bounds as a person writes them, and an unknown key gets a "did you mean".
"""

from __future__ import annotations

import difflib
from collections.abc import Mapping
from typing import Any, get_args

from pydantic import BaseModel

from gpupool.config.models import PATTERN_HINTS, StackConfig

NAMESPACE = "gpupool"  # also the project name, so unqualified keys belong to it (as in Pulumi)
REGION_KEY = "aws:region"


def sort_key(loc: tuple[Any, ...], order: Mapping[str, int]) -> tuple[int, int]:
    """Problems in file order: by top-level key, then by pool."""
    top = order.get(str(loc[0]), len(order)) if loc else -1
    item = loc[1] if len(loc) > 1 and isinstance(loc[1], int) else -1
    return (top, item)


def located(source: str, loc: tuple[Any, ...], names: Mapping[str, str],
            order: Mapping[str, int], expected: object) -> tuple[tuple[int, int], str]:
    """(its place in the file, the line) of one problem at ``loc``."""
    return sort_key(loc, order), f"{source}: {key_text(loc, names)}: {expected}"


def key_text(loc: tuple[Any, ...], names: Mapping[str, str]) -> str:
    """``('pools', 0, 'minSize')`` → ``gpupool:pools[0].minSize`` (as the user wrote the key)."""
    if not loc:
        return f"{NAMESPACE}:"
    head = str(loc[0])
    out = names.get(head) or (REGION_KEY if head == "region" else f"{NAMESPACE}:{head}")
    for part in loc[1:]:
        if isinstance(part, int):
            out += f"[{part}]"
        else:  # user-written keys (tag names) may hold anything: keep the error on one line
            text = str(part)
            out += f".{text}" if text.isprintable() and text else f".{text!r}"
    return out


def error_line(source: str, loc: tuple[Any, ...], names: Mapping[str, str], err: Any) -> str:
    return f"{source}: {key_text(loc, names)}: {expected_text(err, loc)}"


def describe(value: Any) -> str:
    """A value as a YAML user would recognise it."""
    if value is None:
        return "null (no value)"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, dict):
        return "a mapping"
    if isinstance(value, list):
        return "a list"
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."


def number_text(value: Any) -> str:
    """A bound as a person writes it: 1000000, not 1e+06; 0.05, not 0.050000000000000003."""
    if isinstance(value, float):
        return str(int(value)) if value.is_integer() and abs(value) < 1e15 else f"{value:g}"
    return str(value)


_KIND = {
    "string_type": "text",
    "int_type": "a whole number",
    "int_parsing": "a whole number",
    "int_from_float": "a whole number",
    "float_type": "a number",
    "float_parsing": "a number",
    "bool_type": "true or false",
    "bool_parsing": "true or false",
    "list_type": "a list",
    "dict_type": "a mapping of keys to values",
    "model_type": "a mapping of keys to values",
    "model_attributes_type": "a mapping of keys to values",
}


def expected_text(err: Mapping[str, Any], loc: tuple[Any, ...]) -> str:
    kind = err["type"]
    ctx = err.get("ctx") or {}
    got = describe(err.get("input"))
    if kind == "extra_forbidden":
        known = known_keys(loc[:-1])
        close = difflib.get_close_matches(str(loc[-1]), known, n=1, cutoff=0.6)
        if close:
            return f"expected a known key, not this one (did you mean {close[0]}?)"
        return f"expected a known key, not this one (known: {', '.join(known)})"
    if kind == "missing":
        return "expected a value: this key is required"
    if kind in _KIND:
        return f"expected {_KIND[kind]}, got {got}"
    if kind == "literal_error":
        return f"expected {ctx.get('expected')}, got {got}"
    if kind == "greater_than_equal":
        return f"expected at least {number_text(ctx.get('ge'))}, got {got}"
    if kind == "less_than_equal":
        return f"expected at most {number_text(ctx.get('le'))}, got {got}"
    if kind == "too_short":
        return f"expected at least {ctx.get('min_length')} item(s), got {ctx.get('actual_length')}"
    if kind == "too_long":
        return f"expected at most {ctx.get('max_length')} items, got {ctx.get('actual_length')}"
    if kind == "string_too_short":
        return f"expected at least {ctx.get('min_length')} character(s), got {got}"
    if kind == "string_too_long":
        return f"expected at most {ctx.get('max_length')} characters, got {got}"
    if kind == "string_pattern_mismatch":
        pattern = str(ctx.get("pattern"))
        return f"expected {PATTERN_HINTS.get(pattern, f'text matching {pattern}')}, got {got}"
    msg = str(err["msg"]).removeprefix("Value error, ")
    if kind == "value_error" and msg.startswith("expected"):
        return msg
    return f"expected a valid value ({msg[:1].lower()}{msg[1:]}), got {got}"


def known_keys(loc: tuple[Any, ...]) -> list[str]:
    """The keys a user may write at ``loc`` (the aliases of the model found there)."""
    model: type[BaseModel] = StackConfig
    for part in loc:
        if isinstance(part, int):
            continue
        info = model.model_fields.get(str(part)) or next(
            (f for f in model.model_fields.values() if f.alias == part), None)
        found = model_in(info.annotation) if info is not None else None
        if found is None:
            break
        model = found
    return [info.alias or name for name, info in model.model_fields.items()]


def model_in(annotation: Any) -> type[BaseModel] | None:
    """The config model inside ``X``, ``X | None`` or ``list[X]``, if there is one."""
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return annotation
    for arg in get_args(annotation):
        found = model_in(arg)
        if found is not None:
            return found
    return None



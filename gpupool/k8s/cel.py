"""A CRD's CEL validation rules (``x-kubernetes-validations``) evaluated as the API server does.

A structural schema says what shape an object has; the rules say what the API server refuses
beyond it (Karpenter's NodePool CRDs of v1.0-v1.8 refuse node labels in the ``kubernetes.io``
domain that way, and no JSON-schema check sees it). Each rule runs with ``self`` bound to the
value at its schema node, wherever that value is present: object properties, map values
(``additionalProperties``) and list items are walked alongside the schema.

Rules are compiled once each by ``cel-python`` (the Common Expression Language in Python),
with the two Kubernetes library functions these CRDs use and CEL lacks: ``<string>.find(regex)``
(the first match, or "") and ``<string>.split(separator)``. Transition rules (``oldSelf``) need
the stored object and are skipped: a render creates. A rule that cannot be evaluated is itself a
problem (fail closed), never a pass.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping
from functools import cache
from typing import Any

_KEY = "x-kubernetes-validations"


def problems(schema: Mapping[str, Any], obj: Any) -> Iterator[tuple[str, str]]:
    """(path, message) for every rule ``obj`` breaks, in schema order."""
    yield from _walk(schema, obj, "")


def _walk(schema: Mapping[str, Any], value: Any, path: str) -> Iterator[tuple[str, str]]:
    for rule in schema.get(_KEY, ()):
        text = rule.get("rule", "")
        if "oldSelf" in text:
            continue
        failed = _evaluate(text, value)
        if failed is not None:
            yield path or "(object)", failed if failed else rule.get("message") or (
                f"failed rule: {text}")
    if isinstance(value, Mapping):
        props = schema.get("properties") or {}
        extra = schema.get("additionalProperties")
        for key, item in value.items():
            sub = props.get(key)
            if sub is None and isinstance(extra, Mapping):
                sub = extra
            if isinstance(sub, Mapping):
                yield from _walk(sub, item, f"{path}.{key}" if path else str(key))
    elif isinstance(value, list) and isinstance(schema.get("items"), Mapping):
        for i, item in enumerate(value):
            yield from _walk(schema["items"], item, f"{path}[{i}]")


def _evaluate(rule: str, value: Any) -> str | None:
    """None when the rule holds; "" when it is false; a message when it cannot be evaluated."""
    import celpy

    try:
        program = _program(rule)
        result = program.evaluate({"self": celpy.json_to_cel(value)})
    except Exception as e:  # cel-python raises its own errors and plain ones: fail closed
        return f"rule could not be evaluated ({type(e).__name__}: {e}): {rule}"
    if isinstance(result, Exception):  # CELEvalError comes back as a value
        return f"rule could not be evaluated ({result}): {rule}"
    return None if bool(result) else ""


@cache
def _program(rule: str) -> Any:
    import celpy

    env = celpy.Environment()
    return env.program(env.compile(rule), functions={"find": _find, "split": _split})


def _find(text: Any, pattern: Any) -> Any:
    from celpy import celtypes

    found = re.search(str(pattern), str(text))
    return celtypes.StringType(found.group(0) if found else "")


def _split(text: Any, separator: Any) -> Any:
    from celpy import celtypes

    return celtypes.ListType([celtypes.StringType(p) for p in str(text).split(str(separator))])

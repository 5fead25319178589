"""Terraform address and reference grammar: just enough to link resources, no regex per resource.

Addresses look like ``module.pool["gpu.a"].module.asg[0].aws_autoscaling_group.this[1]``;
instance keys are ``[<number>]`` or ``["<Go-quoted string>"]`` and may hold dots and brackets
inside the quotes, so splitting on ``.`` is wrong. The scanners here step over quoted keys.
Keys are kept verbatim as text (``[0]``, ``["a"]``): Terraform writes them the same way in
addresses and in references, so text equality is identity.
"""

from __future__ import annotations

from gpupool.record import Frozen

TYPE_CHECKING = False  # typing's, without importing typing (not on a check's path)
if TYPE_CHECKING:
    from typing import Final

# Reference roots that are not resources (Terraform's reserved names).
_NOT_RESOURCES: Final = frozenset(
    {"var", "local", "count", "each", "path", "terraform", "self", "ephemeral", "action"}
)


def _index_end(text: str, start: int) -> int:
    """``text[start] == "["``: the index just past the matching ``]``, or -1 if malformed."""
    i = start + 1
    n = len(text)
    if i < n and text[i] == '"':
        i += 1
        while i < n:
            c = text[i]
            if c == "\\":
                i += 2
                continue
            if c == '"':
                break
            i += 1
        i += 1  # past the closing quote
    close = text.find("]", i)
    return -1 if close < 0 else close + 1


def _name_and_key(text: str, start: int) -> tuple[str, str | None, int] | None:
    """Read ``NAME`` and an optional ``[key]`` from ``start``: (name, key, end) or None."""
    n = len(text)
    i = start
    while i < n and text[i] not in ".[":
        i += 1
    name = text[start:i]
    if not name:
        return None
    key: str | None = None
    if i < n and text[i] == "[":
        end = _index_end(text, i)
        if end < 0:
            return None
        key = text[i:end]
        i = end
    return name, key, i


Segment = tuple[str, str | None]  # module call name, instance key text (None: no key)


def split_module_address(module_address: str) -> tuple[Segment, ...] | None:
    """``module.a["x"].module.b`` → ``(("a", '["x"]'), ("b", None))``; None if malformed."""
    out: list[Segment] = []
    i = 0
    n = len(module_address)
    while i < n:
        if not module_address.startswith("module.", i):
            return None
        read = _name_and_key(module_address, i + len("module."))
        if read is None:
            return None
        name, key, i = read
        out.append((name, key))
        if i < n:
            if module_address[i] != ".":
                return None
            i += 1
    return tuple(out)


def module_prefix(segments: tuple[Segment, ...]) -> str:
    """The address prefix of a module instance (``module.a["x"].``), empty at the root."""
    return "".join(f"module.{name}{key or ''}." for name, key in segments)


class ResourceRef(Frozen):
    __slots__ = ("rel", "key")
    rel: str  # module-relative resource address without key: aws_x.name or data.aws_x.name
    key: str | None  # explicit instance key text, if the reference names one

    def __init__(self, rel: str, key: str | None) -> None:
        object.__setattr__(self, "rel", rel)
        object.__setattr__(self, "key", key)


class VarRef(Frozen):
    __slots__ = ("name",)
    name: str

    def __init__(self, name: str) -> None:
        object.__setattr__(self, "name", name)


class ModuleOutputRef(Frozen):
    __slots__ = ("call", "key", "output")
    call: str
    key: str | None
    output: str | None  # None: the whole module object (not one output)

    def __init__(self, call: str, key: str | None, output: str | None) -> None:
        object.__setattr__(self, "call", call)
        object.__setattr__(self, "key", key)
        object.__setattr__(self, "output", output)


Ref = ResourceRef | VarRef | ModuleOutputRef


def parse_ref(ref: str) -> Ref | None:
    """What a configuration reference points at; None for locals, count, each and the like."""
    head = _name_and_key(ref, 0)
    if head is None:
        return None
    root, root_key, i = head
    if root_key is not None:
        return None
    if root == "var":
        read = _after_dot(ref, i)
        return None if read is None else VarRef(read[0])
    if root == "module":
        read = _after_dot(ref, i)
        if read is None:
            return None
        call, key, j = read
        out = _after_dot(ref, j)
        return ModuleOutputRef(call, key, None if out is None else out[0])
    if root in _NOT_RESOURCES:
        return None
    prefix = ""
    rtype = root
    if root == "data":
        read = _after_dot(ref, i)
        if read is None or read[1] is not None:
            return None
        rtype, _, i = read
        prefix = "data."
    read = _after_dot(ref, i)
    if read is None:
        return None
    name, key, _ = read
    return ResourceRef(f"{prefix}{rtype}.{name}", key)


def _after_dot(text: str, i: int) -> tuple[str, str | None, int] | None:
    if i >= len(text) or text[i] != ".":
        return None
    return _name_and_key(text, i + 1)

"""Resource properties ↔ protobuf ``Struct``, encoded the way the Pulumi engine sends them.

The engine marshals a value that is unknown during preview as one string sentinel (whatever the
value's type) and a secret as an object tagged with the special signature key. A harness that
wants to exercise a pack's preview behaviour must send exactly those encodings, so they live
here once, spelled as the ``pulumi`` SDK spells them.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Final

from google.protobuf import json_format, struct_pb2

from policies.model import UNKNOWN, is_unknown

# pulumi/runtime/rpc.py: UNKNOWN, _special_sig_key, _special_secret_sig.
UNKNOWN_SENTINEL: Final = "04da6b54-80e4-46f7-96ec-b56ff0331ba9"
SPECIAL_SIG_KEY: Final = "4dabf18193072939515e22adb298388d"
SECRET_SIG: Final = "1b47061264138c4ac30d75fd1eb44270"

__all__ = ["UNKNOWN", "UNKNOWN_SENTINEL", "Secret", "from_struct", "to_struct", "wire_value"]


@dataclass(frozen=True, slots=True)
class Secret:
    """A secret input: sent as ``{sig: secret, value: ...}`` as the engine does."""

    value: Any


def wire_value(value: Any) -> Any:
    """A Python value as the engine puts it on the wire (JSON-compatible, sentinels in place)."""
    if is_unknown(value):
        return UNKNOWN_SENTINEL
    if isinstance(value, Secret):
        return {SPECIAL_SIG_KEY: SECRET_SIG, "value": wire_value(value.value)}
    if isinstance(value, Mapping):
        return {str(k): wire_value(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [wire_value(v) for v in value]
    if value is None or isinstance(value, bool | int | float | str):
        return value
    raise TypeError(f"cannot send a {type(value).__name__} as a resource property")


def to_struct(properties: Mapping[str, Any]) -> struct_pb2.Struct:
    """Properties → ``Struct`` (numbers become doubles, as on the real wire)."""
    struct = struct_pb2.Struct()
    struct.update(wire_value(dict(properties)))
    return struct


def from_struct(struct: struct_pb2.Struct) -> dict[str, Any]:
    """``Struct`` → plain dict, the unknown sentinel back to :data:`UNKNOWN`."""
    return _unwire(json_format.MessageToDict(struct))


def _unwire(value: Any) -> Any:
    if value == UNKNOWN_SENTINEL:
        return UNKNOWN
    if isinstance(value, dict):
        if value.get(SPECIAL_SIG_KEY) == SECRET_SIG:
            return Secret(_unwire(value.get("value")))
        return {k: _unwire(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_unwire(v) for v in value]
    return value

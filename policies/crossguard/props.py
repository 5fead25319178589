"""CrossGuard resource properties → the engine's normalised inputs, unknowns made explicit.

pulumi-policy hands a policy its properties wrapped in a proxy that *raises* ``UnknownValueError``
when a value unknown during preview is read. A rule must not crash on that, nor skip the
resource; it must see the value as the engine's :data:`~policies.model.UNKNOWN` sentinel and
say "cannot verify". So the proxy is walked here, each unknown caught where it sits.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from typing import Any, Final

from pulumi_policy.proxy import UnknownValueError

from policies.model import UNKNOWN, normalise_inputs

# pulumi_policy/proxy.py: the type-specific sentinels of older engines; today's engine sends the
# string one for every type, but a pack must understand them all.
UNKNOWN_SENTINELS: Final = frozenset(
    {
        "1c4a061d-8072-4f0a-a4cb-0ff528b18fe7",  # boolean
        "3eeb2bf0-c639-47a8-9e75-3b44932eb421",  # number
        "04da6b54-80e4-46f7-96ec-b56ff0331ba9",  # string (what the engine sends)
        "6a19a0b0-7e62-4c92-b797-7f8e31da9cc2",  # array
        "030794c1-ac77-496b-92df-f27374a8bd58",  # asset
        "e48ece36-62e2-4504-bad9-02848725956a",  # archive
        "dd056dcd-154b-4c76-9bd3-c8f88648b5ff",  # object
    }
)


def plain(value: Any) -> Any:
    """A proxied (or raw) property value as plain dicts and lists, unknowns → ``UNKNOWN``."""
    if isinstance(value, str):
        return UNKNOWN if value in UNKNOWN_SENTINELS else value
    if isinstance(value, Mapping):
        out: dict[str, Any] = {}
        for key in list(value):
            out[str(key)] = plain(_read(value, key))
        return out
    if isinstance(value, Sequence) and not isinstance(value, bytes | bytearray):
        return [plain(_read(value, i)) for i in range(len(value))]
    return value


def _read(container: Any, key: Any) -> Any:
    try:
        return container[key]
    except UnknownValueError:
        return UNKNOWN


def normalised_props(props: Mapping[str, Any]) -> dict[str, Any]:
    """What a rule reads as ``change.new``: snake_case keys, ``UNKNOWN`` where unknown."""
    result = normalise_inputs(plain(props))
    return result if isinstance(result, dict) else {}


_scope = threading.local()


@contextmanager
def request_scope() -> Iterator[None]:
    """One Analyze request: its properties are converted once, not once per policy.

    pulumi-policy runs every resource policy of the pack on the same request, in the same
    thread, each with a fresh proxy over the same properties.
    """
    _scope.memo = {}
    try:
        yield
    finally:
        _scope.memo = None


def request_props(urn: str, props: Mapping[str, Any]) -> dict[str, Any]:
    """:func:`normalised_props`, shared by the policies of the current request."""
    memo: dict[str, dict[str, Any]] | None = getattr(_scope, "memo", None)
    if memo is None:
        return normalised_props(props)
    hit = memo.get(urn)
    if hit is None:
        hit = memo[urn] = normalised_props(props)
    return hit

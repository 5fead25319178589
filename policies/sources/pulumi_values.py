"""Pulumi's JSON value encoding → plain values with UNKNOWN, and URN parsing.

Pulumi serialises property values with markers (sdk ``resource/sig`` and ``apitype``):

- ``"04da6b54-80e4-46f7-96ec-b56ff0331ba9"``: a computed value, unknown until the update runs.
- ``{"4dabf18193072939515e22adb298388d": SIG, ...}``: a typed object. For secrets
  (``1b47061264138c4ac30d75fd1eb44270``) the value is the JSON-encoded ``plaintext`` when the
  file carries it, else unknown (only ``ciphertext``). Output values (``d0e6a833…``) unwrap to
  their ``value`` or unknown; resource references (``5cf8f730…``) become their ``id`` or, when
  that is empty or missing, their URN. Assets and archives stay as they are.
- ``"[secret]"``: what ``pulumi preview --json`` prints for every secret (it never shows
  plaintext): the value is hidden, so it is unknown to a rule, never a real string.
"""

from __future__ import annotations

import json

from policies.model import _USER_MAPS, UNKNOWN, snake
from policies.sources.reading import fail, want_obj, want_str

TYPE_CHECKING = False  # typing's, without importing typing (not on a check's path)
if TYPE_CHECKING:
    from typing import Any, Final

UNKNOWN_SENTINEL: Final = "04da6b54-80e4-46f7-96ec-b56ff0331ba9"
REDACTED_SECRET: Final = "[secret]"
SIG_KEY: Final = "4dabf18193072939515e22adb298388d"
SECRET_SIG: Final = "1b47061264138c4ac30d75fd1eb44270"
OUTPUT_SIG: Final = "d0e6a833031e9bbcd3f4e8bde6ca49a4"
RESOURCE_SIG: Final = "5cf8f73096256a8f31e491e813e4eb8e"

STACK_TYPE: Final = "pulumi:pulumi:Stack"
PROVIDER_PREFIX: Final = "pulumi:providers:"


def clean(value: Any) -> Any:
    """A copy of a Pulumi property value with markers resolved (see the module docstring)."""
    t = type(value)
    if t is str:
        return UNKNOWN if value in (UNKNOWN_SENTINEL, REDACTED_SECRET) else value
    if t is dict:
        if SIG_KEY in value:
            return _signed(value)
        return {k: clean(v) for k, v in value.items()}
    if t is list:
        return [clean(v) for v in value]
    return value


def _resolvable(sig: Any) -> bool:
    """Signatures that stand for another value (assets, archives stay plain objects)."""
    return sig in (SECRET_SIG, OUTPUT_SIG, RESOURCE_SIG)


def _signed(value: dict[str, Any]) -> Any:
    sig = value[SIG_KEY]
    if sig == SECRET_SIG:
        if "plaintext" not in value:
            return UNKNOWN
        plaintext = value["plaintext"]
        if type(plaintext) is not str:
            return clean(plaintext)
        try:
            return clean(json.loads(plaintext))
        except (ValueError, RecursionError):
            return plaintext  # not JSON-encoded: the plaintext is the value itself
    if sig == OUTPUT_SIG:
        return clean(value["value"]) if "value" in value else UNKNOWN
    if sig == RESOURCE_SIG:
        rid = value.get("id")
        if type(rid) is str and rid and rid != UNKNOWN_SENTINEL:
            return rid
        urn = value.get("urn")
        return urn if type(urn) is str else UNKNOWN
    return {k: clean(v) for k, v in value.items()}


def inputs(value: dict[str, Any]) -> dict[str, Any]:
    """Pulumi inputs (camelCase, markers) → the normalised snake_case inputs rules read.

    Equal to ``normalise_inputs(clean(value))`` (a property test holds it to that) in one pass
    with memoised key conversion: the two deep copies and a regex per key made previews of
    10k resources several times slower.
    """
    return _object(value, False)


_SNAKE: dict[str, str] = {}


def _snake(key: str) -> str:
    found = _SNAKE.get(key)
    if found is None:
        found = snake(key)
        if len(_SNAKE) < 65536:  # schema keys repeat; user data must not grow this forever
            _SNAKE[key] = found
    return found


def _normalised(value: Any, verbatim_keys: bool) -> Any:
    t = type(value)
    if t is str:
        return UNKNOWN if value in _MARKERS else value
    if t is dict:
        return _object(value, verbatim_keys)
    if t is list:
        return _list(value)
    return value


_MARKERS: Final = frozenset({UNKNOWN_SENTINEL, REDACTED_SECRET})


def _object(value: dict[Any, Any], verbatim_keys: bool) -> Any:
    # Hot (every object of every resource's inputs): leaves are read inline, one call per
    # object or list rather than one per value.
    if SIG_KEY in value and _resolvable(value[SIG_KEY]):
        return _normalised(_signed(value), verbatim_keys)
    out: dict[str, Any] = {}
    if verbatim_keys:  # a map of user data (tags, labels): its keys as written
        for k, v in value.items():
            out[str(k)] = ((UNKNOWN if v in _MARKERS else v) if type(v) is str
                           else _normalised(v, False))
        return out
    known = _SNAKE.get
    for k, v in value.items():
        key = known(k)  # its keys are str: a key of another type is never found
        if key is None:
            key = _snake(str(k))
        t = type(v)
        if t is str:  # two compares (specialised): cheaper than hashing each value for a set
            out[key] = UNKNOWN if v == UNKNOWN_SENTINEL or v == REDACTED_SECRET else v  # noqa: SIM109
        elif t is dict:
            out[key] = _object(v, key in _USER_MAPS)
        elif t is list:
            out[key] = _list(v) if v else []  # empty: most of them (Pulumi's __defaults)
        else:
            out[key] = v
    return out


def _list(value: list[Any]) -> list[Any]:
    out = []
    for v in value:
        t = type(v)
        if t is str:
            out.append(UNKNOWN if v == UNKNOWN_SENTINEL or v == REDACTED_SECRET else v)  # noqa: SIM109
        elif t is dict:
            out.append(_object(v, False))
        elif t is list:
            out.append(_list(v))
        else:
            out.append(v)
    return out


def urn_type_name(urn: str) -> tuple[str, str] | None:
    """``urn:pulumi:STACK::PROJECT::QUALIFIED$TYPE::NAME`` → (TYPE, NAME); None if not a URN."""
    parts = urn_parts(urn)
    return None if parts is None else (parts[2].rsplit("$", 1)[-1], parts[3])


def urn_parts(urn: str) -> list[str] | None:
    """A URN split at its first three ``::`` (its qualified type third, its name last), or None
    if it is no URN. The prefix is compared as a slice: ``str.startswith`` parses its arguments
    the slow way, and every step of a preview has a URN."""
    if urn[:11] != "urn:pulumi:":
        return None
    parts = urn.split("::", 3)
    if len(parts) != 4 or not parts[2] or not parts[3]:
        return None
    return parts


def is_engine_resource(type_token: str) -> bool:
    """The stack itself and providers: Pulumi's bookkeeping, not infrastructure to judge."""
    return type_token == STACK_TYPE or type_token.startswith(PROVIDER_PREFIX)


def dependency_references(deps: Any, origin: str, path: str, key: str = "") -> dict[str, str]:
    """``propertyDependencies`` (input → URNs it was computed from) → references.

    Only an input that depends on exactly one resource (providers aside) gets a link: with
    several, which one the value names is not provable. The engine writes ``null`` for an input
    without dependencies (a Go nil slice: ``{"availabilityZone": null}``, as in pulumi/pulumi's
    own ``pkg/resource/stack/testdata/checkpoint-v3.json``) and the Node.js SDK ``[]``: both
    mean "none". Messages name ``PATH`` or, given ``key``, ``PATH.KEY`` (made only for a bad
    value: a preview's states each have their own place).
    """
    if deps is None:
        return {}
    if type(deps) is not dict:
        want_obj(deps, origin, _place(path, key))
    out: dict[str, str] = {}
    linkable = _LINKABLE.get
    for name, urns in deps.items():
        if urns is None:
            continue
        targets: set[str] = set()
        if type(urns) is not list:
            fail(origin, f"{_place(path, key)}.{name}", "an array of URNs or null", urns)
        for i, urn in enumerate(urns):
            found = linkable(urn) if type(urn) is str else None
            if found is None:  # each place a message names is made only for a bad value
                if type(urn) is not str:
                    want_str(urn, origin, f"{_place(path, key)}.{name}[{i}]")
                found = _linkable(urn)
            if found:
                targets.add(urn)
        if len(targets) == 1:
            out[snake(name)] = targets.pop()
    return out


def _place(path: str, key: str) -> str:
    return f"{path}.{key}" if key else path


# URN → whether a dependency on it is a link (a resource's URN, not the stack's or a
# provider's); a plan names the same few URNs in many resources' dependencies and parents.
_LINKABLE: dict[str, bool] = {}
_PARENTS: dict[str, str | None] = {}  # a valid parent URN → what parent_link returns for it
_CACHED: Final = 65536  # URNs are user data: neither grows without bound


def _linkable(urn: str) -> bool:
    found = urn_type_name(urn)
    linkable = found is not None and not is_engine_resource(found[0])
    if len(_LINKABLE) < _CACHED:
        _LINKABLE[urn] = linkable
    return linkable


def parent_link(parent: Any, origin: str, path: str) -> str | None:
    """The parent URN, or None for top-level resources (parented to the stack itself)."""
    if parent is None or parent == "":
        return None
    if type(parent) is str and parent in _PARENTS:
        return _PARENTS[parent]
    return _parent(parent, origin, path)


def state_parent(state: dict[str, Any], origin: str, where: str) -> str | None:
    """:func:`parent_link` of a state's ``parent`` (the message names ``WHERE.parent``), the
    place made only for a parent not seen before: siblings share theirs."""
    parent = state.get("parent")
    if parent is None or parent == "":
        return None
    if type(parent) is str and parent in _PARENTS:
        return _PARENTS[parent]
    return _parent(parent, origin, f"{where}.parent")


def _parent(parent: Any, origin: str, path: str) -> str | None:
    found = urn_type_name(want_str(parent, origin, path))
    if found is None:
        fail(origin, path, "a Pulumi URN (urn:pulumi:STACK::PROJECT::TYPE::NAME)", parent)
    link = None if found[0] == STACK_TYPE else parent
    if len(_PARENTS) < _CACHED:
        _PARENTS[parent] = link
    return link

"""Pulumi previews (``pulumi preview --json``, the engine's PreviewDigest) → Plan.

The digest's ``steps[]`` are ``{op, urn, provider, oldState, newState, diffReasons,
replaceReasons, detailedDiff}`` with states in the ``apitype.ResourceV3`` shape (``type``,
``custom``, ``inputs``, ``parent``, ``propertyDependencies``, …). One resource can have several
steps: a replacement is ``create-replacement`` + ``replace`` + ``delete-replaced`` (in either
order), ``--refresh`` adds a ``refresh`` step. They merge into one change per URN, the strongest
op deciding the kind (replace > create/update/delete > the tail of a replacement > same >
read), so a replacement counts once.

The stack resource and providers are skipped (engine bookkeeping), and so are component
resources (``custom: false``): they own no infrastructure, but children keep their ``parent``.
A preview that reported an error diagnostic is incomplete and is refused, never judged.

Shapes the engine really writes are accepted as written: ``propertyDependencies`` values of
``null`` (Go nil slices) or ``[]``, states without ``inputs``, steps without ``oldState`` (a
create) or ``newState`` (a delete, or a ``same`` step of an older CLI, whose old inputs are its
new ones), ``detailedDiff: null``, sames omitted (without ``--show-sames``). The engine's event
stream (``PULUMI_ENABLE_STREAMING_JSON_PREVIEW``) goes through :mod:`pulumi_events` into the
same steps.
"""

from __future__ import annotations

from collections.abc import Iterable

import policies.sources.fields as fields
from gpupool.record import Record
from policies.deferred import pending_change
from policies.model import RESOURCE_KINDS, ChangeKind, Plan, ResourceChange, resource_kind
from policies.sources.fields import TYPED, camel_path
from policies.sources.pulumi_values import (
    _PARENTS,
    PROVIDER_PREFIX,
    STACK_TYPE,
    dependency_references,
    inputs,
    state_parent,
    urn_parts,
)
from policies.sources.reading import fail, opt_obj, problem, want_list, want_obj, want_str

TYPE_CHECKING = False  # typing's, without importing typing (not on a check's path)
if TYPE_CHECKING:
    from typing import Any, Final

SOURCE: Final = "pulumi-preview"

# op → (change kind, strength when one URN has several steps)
_OPS: Final[dict[str, tuple[ChangeKind, int]]] = {
    "read": (ChangeKind.READ, 0),
    "read-replacement": (ChangeKind.READ, 0),
    "refresh": (ChangeKind.READ, 0),
    "discard": (ChangeKind.READ, 0),  # a read resource dropped from state
    "read-discard": (ChangeKind.READ, 0),
    "same": (ChangeKind.NOOP, 1),
    "import": (ChangeKind.NOOP, 1),  # adopts an existing resource: nothing changes in the cloud
    # The tail of a replacement; alone (never seen in practice) it removes the old resource.
    "delete-replaced": (ChangeKind.DELETE, 2),
    "discard-replaced": (ChangeKind.DELETE, 2),
    "remove-pending-replace": (ChangeKind.DELETE, 2),
    "create": (ChangeKind.CREATE, 3),
    "update": (ChangeKind.UPDATE, 3),
    "delete": (ChangeKind.DELETE, 3),
    "replace": (ChangeKind.REPLACE, 4),
    "create-replacement": (ChangeKind.REPLACE, 4),
    "import-replacement": (ChangeKind.REPLACE, 4),
}
_OPS_HELP: Final = "a Pulumi step op (same, create, update, delete, replace, create-replacement, …)"
# Read per step as globals: on 3.11 a member read through its enum class is a Python-level call.
_NOOP: Final = ChangeKind.NOOP
_CREATE: Final = ChangeKind.CREATE
_DELETE: Final = ChangeKind.DELETE
_READ: Final = ChangeKind.READ
_KINDS: Final = RESOURCE_KINDS  # resource_kind's first probe, inline (most types are in it)
_TYPED: Final = TYPED
_PROVIDER_LEN: Final = len(PROVIDER_PREFIX)
# The constructor's own code, called as a function: ResourceChange(...) reaches it through the
# type's call and new slots, ~1k instructions more a change
_new_change: Final = ResourceChange.__new__
_NOTHING: Final = frozenset({type(None), list})  # a dependency on nothing: null, or [] (falsy)


class Step(Record):
    """One step of an event stream as read (the digest's are merged as they are read).

    A Record, not Frozen: its fields are set by plain slot stores (a frozen record's
    ``object.__setattr__`` costs ten times as much).
    """

    __slots__ = ("body", "where")

    body: dict[str, Any]
    where: str  # "line 12: resourcePreEvent.metadata"

    def __init__(self, body: dict[str, Any], where: str) -> None:
        self.body = body
        self.where = where


# A source's state keys and ``custom`` when a state omits it: the digest writes ``steps[i]``
# with ``oldState``/``newState`` (ResourceV3 always writes custom); the engine's event stream
# ``resourcePreEvent.metadata`` with ``old``/``new`` (and omits custom when false).
Keys = tuple[str, str, bool]
DIGEST: Final[Keys] = ("oldState", "newState", True)
EVENTS: Final[Keys] = ("old", "new", False)

# The steps of one URN so far: (name, type, change kind, strength, old state, new state,
# old place, new place); a place is (step, state key), a step its index in the digest's
# ``steps`` or an event's place, made into text (:func:`_at`) only for a message.
Place = tuple["int | str", str]
Merged = tuple[str, str, ChangeKind, int, "dict[str, Any] | None", "dict[str, Any] | None",
               "Place | None", Place]


def _at(place: Place) -> str:
    """``steps[3].newState``, ``line 12: resourcePreEvent.metadata.new``."""
    step, key = place
    return f"steps[{step}].{key}" if type(step) is int else f"{step}.{key}"


def _step_at(step: int | str) -> str:
    return f"steps[{step}]" if type(step) is int else step


def parse(doc: dict[str, Any], origin: str, defer: bool = False) -> Plan:
    """Normalise a preview digest; every shape problem is a one-line InputError. ``defer``:
    convert the inputs of kinds nothing checks on first read (``doc`` came from JSON text, its
    nesting bounded by ``json``: see :mod:`policies.deferred`)."""
    diagnostics = doc.get("diagnostics")
    if diagnostics is not None:
        for i, d in enumerate(want_list(diagnostics, origin, "diagnostics")):
            refuse_error_diagnostic(want_obj(d, origin, f"diagnostics[{i}]"), origin,
                                    f"diagnostics[{i}]")
    merged: dict[str, Merged] = {}
    raw = doc.get("steps")
    if raw is not None:
        for i, s in enumerate(want_list(raw, origin, "steps")):
            add_step(merged, s if type(s) is dict else want_obj(s, origin, f"steps[{i}]"), i,
                     origin, DIGEST)
    summary = doc.get("changeSummary")
    return plan_of(merged, origin, summary if type(summary) is dict else None, defer)


def plan_of_steps(steps: Iterable[Step], origin: str, summary: dict[str, Any] | None,
                  defer: bool = False, keys: Keys = DIGEST) -> Plan:
    """Merge steps by URN into changes (see the module docstring; ``defer``: :func:`parse`)."""
    merged: dict[str, Merged] = {}
    for step in steps:
        add_step(merged, step.body, step.where, origin, keys)
    return plan_of(merged, origin, summary, defer)


def plan_of(merged: dict[str, Merged], origin: str, summary: dict[str, Any] | None,
            defer: bool) -> Plan:
    """The plan of merged steps: one change per URN, in the order first seen."""
    changes = tuple([_change(urn, m, origin, defer) for urn, m in merged.items()])
    meta: dict[str, Any] = {}
    if summary is not None:
        meta["change_summary"] = summary
    return Plan(source=SOURCE, origin=origin, changes=changes, meta=meta)


def refuse_error_diagnostic(diag: dict[str, Any], origin: str, where: str) -> None:
    """A preview that reported an error is incomplete: refuse it, naming the first line."""
    if diag.get("severity") == "error":
        message = diag.get("message")
        first = message.strip().split("\n", 1)[0] if type(message) is str else ""
        raise problem(
            f"{origin}: {where}: expected a preview that completed, got an error "
            f"({first or 'no message'}); its steps are incomplete"
        )


def add_step(merged: dict[str, Merged], step: dict[str, Any], at: int | str, origin: str,
             keys: Keys) -> None:
    """Merge one step (``at``: its index in a digest's steps, or an event's place) into
    ``merged``; the places messages name are made only for a bad value."""
    old_key, new_key, custom_default = keys
    op = step.get("op")
    if type(op) is not str or op not in _OPS:
        fail(origin, f"{_step_at(at)}.op", _OPS_HELP, op)
    urn = step.get("urn")
    if type(urn) is not str:
        want_str(urn, origin, f"{_step_at(at)}.urn")
    parts = urn_parts(urn)
    if parts is None:
        fail(origin, f"{_step_at(at)}.urn",
             "a Pulumi URN (urn:pulumi:STACK::PROJECT::TYPE::NAME)", urn)
    old = step.get(old_key)
    if old is not None and type(old) is not dict:
        opt_obj(old, origin, f"{_step_at(at)}.{old_key}")
    new = step.get(new_key)
    if new is not None and type(new) is not dict:
        opt_obj(new, origin, f"{_step_at(at)}.{new_key}")
    rtype = None  # the states' type, else the URN's
    for state in (old, new):
        if state is None:
            continue
        if "type" in state:
            rtype = state["type"]
            if type(rtype) is not str:
                want_str(rtype, origin, f"{_at((at, old_key if state is old else new_key))}.type")
        custom = state.get("custom", custom_default or bool(state.get("provider")))
        if custom is not True:
            if type(custom) is not bool:
                fail(origin, f"{_at((at, old_key if state is old else new_key))}.custom",
                     "a boolean", custom)
            return  # a component resource: no infrastructure of its own
    if rtype is None:
        rtype = parts[2].rsplit("$", 1)[-1]
    # is_engine_resource, inline (a slice: str.startswith parses its arguments the slow way)
    if rtype == STACK_TYPE or rtype[:_PROVIDER_LEN] == PROVIDER_PREFIX:
        return
    kind, strength = _OPS[op]
    old_place = None if old is None else (at, old_key)
    new_place = (at, new_key)  # also names a missing new state
    if kind is _NOOP and new is None and old is not None:
        new, new_place = old, old_place  # a same step written with its old state only
    m = merged.get(urn)
    if m is None:
        merged[urn] = (parts[3], rtype, kind, strength, old, new, old_place, new_place)
        return
    name, rtype, m_kind, m_strength, m_old, m_new, m_old_place, m_new_place = m
    if strength >= m_strength:
        m_kind, m_strength = kind, strength
        if old is not None:
            m_old, m_old_place = old, old_place
        if new is not None:
            m_new, m_new_place = new, new_place
    else:
        if m_old is None and old is not None:
            m_old, m_old_place = old, old_place
        if m_new is None and new is not None:
            m_new, m_new_place = new, new_place
    merged[urn] = (name, rtype, m_kind, m_strength, m_old, m_new, m_old_place, m_new_place)


def _change(urn: str, m: Merged, origin: str, defer: bool) -> ResourceChange:
    name, rtype, change, _, old, new, old_place, new_place = m
    kind = _KINDS.get(rtype)
    if kind is None:
        kind = resource_kind(rtype)
    # Typed kinds' converted inputs are checked now; others' converted on first read
    eager = not defer or kind in _TYPED
    new_raw: dict[str, Any] | None = None  # raw inputs left to convert (policies.deferred)
    new_inputs: dict[str, Any] | None = None
    references: dict[str, str] = {}
    parent: str | None = None
    if change is not _DELETE:
        if new is None:
            if change is not _READ:
                fail(origin, _at(new_place), f"an object with the new inputs of this {change}",
                     None)
        else:
            new_raw = new.get("inputs")
            if new_raw is not None and type(new_raw) is not dict:
                want_obj(new_raw, origin, f"{_at(new_place)}.inputs")
            if eager or not new_raw:
                new_inputs, new_raw = ({} if new_raw is None else inputs(new_raw)), None
            deps = new.get("propertyDependencies")
            # None, {} and inputs that each depend on nothing (null or []) link nothing: only
            # others are read (and refused if bad), the place made only for them
            if deps and (type(deps) is not dict or any(deps.values())
                         or not _NOTHING.issuperset(map(type, deps.values()))):
                references = dependency_references(deps, origin, _at(new_place),
                                                   "propertyDependencies")
            elif deps is not None and type(deps) is not dict:
                want_obj(deps, origin, f"{_at(new_place)}.propertyDependencies")
            parent = new.get("parent")
            if parent is None or parent == "":
                parent = None
            elif type(parent) is not str or parent not in _PARENTS:  # state_parent, inline
                parent = state_parent(new, origin, _at(new_place))
            else:
                parent = _PARENTS[parent]
    old_raw: dict[str, Any] | None = None
    old_inputs = None
    if old is not None and change is not _CREATE:
        old_raw = old.get("inputs")
        if old_raw is not None and type(old_raw) is not dict:
            want_obj(old_raw, origin, f"{_at(old_place)}.inputs")  # type: ignore[arg-type]
        if eager or not old_raw:
            old_inputs, old_raw = ({} if old_raw is None else inputs(old_raw)), None
        if change is _DELETE:
            parent = state_parent(old, origin, _at(old_place))  # type: ignore[arg-type]
    new_side = new_inputs if new_inputs is not None or change is _DELETE else {}
    if not eager:
        if new_raw is None and old_raw is None:
            return _new_change(ResourceChange, urn, rtype, name, change, new_side, old_inputs,
                               SOURCE, kind, references, parent)
        return pending_change(inputs, new_raw, old_raw, urn, rtype, name, change, new_side,
                              old_inputs, SOURCE, kind, references, parent)
    # any other kind: check returns at once (a side without inputs is not checked)
    if new_inputs:
        fields.check(kind, new_inputs, origin,
                     lambda path: f"{_at(new_place)}.inputs.{camel_path(path)}")
    if old_inputs:
        fields.check(kind, old_inputs, origin,
                     lambda path: f"{_at(old_place)}.inputs.{camel_path(path)}")  # type: ignore[arg-type]
    return _new_change(ResourceChange, urn, rtype, name, change, new_side, old_inputs, SOURCE,
                       kind, references, parent)

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
from policies.model import ChangeKind, Plan, ResourceChange, resource_kind
from policies.sources.fields import camel_path
from policies.sources.pulumi_values import (
    PROVIDER_PREFIX,
    STACK_TYPE,
    dependency_references,
    inputs,
    state_parent,
    urn_type_name,
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


class Step(Record):
    """One step as read from a file: where it is (for messages) and what its states are called.

    A Record, not Frozen: its fields are set by plain slot stores (a frozen record's
    ``object.__setattr__`` costs ten times as much, and a preview makes one Step per step).

    The digest writes ``steps[i]`` with ``oldState``/``newState``; the engine's event stream
    ``resourcePreEvent.metadata`` with ``old``/``new``. Everything else is the same.
    """

    __slots__ = ("body", "where", "old_key", "new_key", "custom_default")

    body: dict[str, Any]
    where: str  # "steps[3]", "line 12: resourcePreEvent.metadata"
    old_key: str
    new_key: str
    custom_default: bool  # ResourceV3 always writes custom; events omit it when false

    def __init__(
        self,
        body: dict[str, Any],
        where: str,
        old_key: str = "oldState",
        new_key: str = "newState",
        custom_default: bool = True,
    ) -> None:
        self.body = body
        self.where = where
        self.old_key = old_key
        self.new_key = new_key
        self.custom_default = custom_default


class _Merged(Record):
    """The steps of one URN so far."""

    __slots__ = (
        "where", "name", "type", "kind", "strength", "old", "new", "old_where", "new_where"
    )

    where: str  # first step's place, for error messages
    name: str
    type: str
    kind: ChangeKind
    strength: int
    old: dict[str, Any] | None  # oldState
    new: dict[str, Any] | None  # newState
    old_where: str  # where the states came from, for error messages ("steps[2].oldState")
    new_where: str

    def __init__(
        self,
        where: str,
        name: str,
        type: str,
        kind: ChangeKind,
        strength: int,
        old: dict[str, Any] | None,
        new: dict[str, Any] | None,
        old_where: str,
        new_where: str,
    ) -> None:
        self.where = where
        self.name = name
        self.type = type
        self.kind = kind
        self.strength = strength
        self.old = old
        self.new = new
        self.old_where = old_where
        self.new_where = new_where


def parse(doc: dict[str, Any], origin: str, defer: bool = False) -> Plan:
    """Normalise a preview digest; every shape problem is a one-line InputError. ``defer``:
    convert the inputs of kinds nothing checks on first read (``doc`` came from JSON text, its
    nesting bounded by ``json``: see :mod:`policies.deferred`)."""
    diagnostics = doc.get("diagnostics")
    if diagnostics is not None:
        for i, d in enumerate(want_list(diagnostics, origin, "diagnostics")):
            refuse_error_diagnostic(want_obj(d, origin, f"diagnostics[{i}]"), origin,
                                    f"diagnostics[{i}]")
    raw = doc.get("steps")
    steps = (Step(s if type(s) is dict else want_obj(s, origin, f"steps[{i}]"), f"steps[{i}]")
             for i, s in enumerate([] if raw is None else want_list(raw, origin, "steps")))
    summary = doc.get("changeSummary")
    return plan_of_steps(steps, origin, summary if type(summary) is dict else None, defer)


def plan_of_steps(steps: Iterable[Step], origin: str, summary: dict[str, Any] | None,
                  defer: bool = False) -> Plan:
    """Merge steps by URN into changes (see the module docstring; ``defer``: :func:`parse`)."""
    merged: dict[str, _Merged] = {}
    for step in steps:
        _add_step(merged, step, origin)
    changes = tuple(_change(urn, m, origin, defer) for urn, m in merged.items())
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


def _add_step(merged: dict[str, _Merged], s: Step, origin: str) -> None:
    step, at = s.body, s.where
    op = step.get("op")
    if type(op) is not str or op not in _OPS:
        fail(origin, f"{at}.op", _OPS_HELP, op)
    urn = step.get("urn")
    if type(urn) is not str:  # the places messages name are made only for a bad value
        want_str(urn, origin, f"{at}.urn")
    parsed = urn_type_name(urn)
    if parsed is None:
        fail(origin, f"{at}.urn", "a Pulumi URN (urn:pulumi:STACK::PROJECT::TYPE::NAME)", urn)
    # Most steps are creates: the old state's place is made only for a state to name
    old = step.get(s.old_key)
    old_at = "" if old is None else f"{at}.{s.old_key}"
    new_at = f"{at}.{s.new_key}"  # also names a missing new state
    if old is not None:
        opt_obj(old, origin, old_at)
    new = opt_obj(step.get(s.new_key), origin, new_at)
    rtype = parsed[0]
    for label, state in ((old_at, old), (new_at, new)):
        if state is None:
            continue
        if "type" in state:
            rtype = state["type"]
            if type(rtype) is not str:
                want_str(rtype, origin, f"{label}.type")
        custom = state.get("custom", s.custom_default or bool(state.get("provider")))
        if type(custom) is not bool:
            fail(origin, f"{label}.custom", "a boolean", custom)
        if not custom:
            return  # a component resource: no infrastructure of its own
    if rtype == STACK_TYPE or rtype.startswith(PROVIDER_PREFIX):  # is_engine_resource, inline
        return
    kind, strength = _OPS[op]
    if kind is _NOOP and new is None and old is not None:
        new, new_at = old, old_at  # a same step written with its old state only
    m = merged.get(urn)
    if m is None:
        merged[urn] = _Merged(at, parsed[1], rtype, kind, strength, old, new, old_at, new_at)
        return
    if strength >= m.strength:
        m.kind, m.strength = kind, strength
        if old is not None:
            m.old, m.old_where = old, old_at
        if new is not None:
            m.new, m.new_where = new, new_at
    else:
        if m.old is None and old is not None:
            m.old, m.old_where = old, old_at
        if m.new is None and new is not None:
            m.new, m.new_where = new, new_at


def _change(urn: str, m: _Merged, origin: str, defer: bool) -> ResourceChange:
    where = m.new_where
    kind = resource_kind(m.type)
    # Typed kinds' converted inputs are checked now; others' converted on first read
    eager = not defer or kind in fields.TYPED
    new_raw: dict[str, Any] | None = None  # raw inputs left to convert (policies.deferred)
    new_inputs: dict[str, Any] | None = None
    references: dict[str, str] = {}
    parent: str | None = None
    if m.kind is not _DELETE:
        if m.new is None:
            if m.kind is not _READ:
                fail(origin, m.new_where,
                     f"an object with the new inputs of this {m.kind}", None)
        else:
            new_raw = _raw_inputs(m.new, origin, where)
            if eager or not new_raw:
                new_inputs, new_raw = ({} if new_raw is None else inputs(new_raw)), None
            deps = m.new.get("propertyDependencies")
            if deps:  # None and {} are none (the place is made only for a value to read)
                references = dependency_references(deps, origin, where,
                                                   "propertyDependencies")
            elif deps is not None:
                want_obj(deps, origin, f"{where}.propertyDependencies")
            parent = state_parent(m.new, origin, where)
    old_raw: dict[str, Any] | None = None
    old_inputs = None
    if m.old is not None and m.kind is not _CREATE:
        old_where = m.old_where
        old_raw = _raw_inputs(m.old, origin, old_where)
        if eager or not old_raw:
            old_inputs, old_raw = ({} if old_raw is None else inputs(old_raw)), None
        if m.kind is _DELETE:
            parent = state_parent(m.old, origin, old_where)
    new = new_inputs if new_inputs is not None or m.kind is _DELETE else {}
    if not eager:
        if new_raw is None and old_raw is None:
            return ResourceChange(urn, m.type, m.name, m.kind, new, old_inputs, SOURCE, kind,
                                  references, parent)
        return pending_change(inputs, new_raw, old_raw, urn, m.type, m.name, m.kind, new,
                              old_inputs, SOURCE, kind, references, parent)
    # any other kind: check returns at once (a side without inputs is not checked)
    if new_inputs:
        fields.check(kind, new_inputs, origin,
                     lambda path: f"{where}.inputs.{camel_path(path)}")
    if old_inputs:
        fields.check(kind, old_inputs, origin,
                     lambda path: f"{m.old_where}.inputs.{camel_path(path)}")
    return ResourceChange(
        address=urn,
        type=m.type,
        name=m.name,
        change=m.kind,
        new=new,
        old=old_inputs,
        source=SOURCE,
        kind=kind,
        references=references,
        parent=parent,
    )


def _raw_inputs(state: dict[str, Any], origin: str, where: str) -> dict[str, Any] | None:
    """A state's raw ``inputs`` (None when it has none: ResourceV3 omits empty inputs)."""
    raw = state.get("inputs")
    if raw is not None and type(raw) is not dict:
        want_obj(raw, origin, f"{where}.inputs")  # refuses it (the place made only then)
    return raw

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
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Final

from policies.model import ChangeKind, Plan, ResourceChange, resource_kind
from policies.sources.pulumi_values import (
    dependency_references,
    inputs,
    is_engine_resource,
    parent_link,
    urn_type_name,
)
from policies.sources.reading import fail, opt_obj, problem, want_list, want_obj, want_str

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


@dataclass(slots=True)
class _Merged:
    """The steps of one URN so far."""

    index: int  # first step's index, for error messages and order
    name: str
    type: str
    kind: ChangeKind
    strength: int
    old: dict[str, Any] | None  # oldState
    new: dict[str, Any] | None  # newState
    old_index: int  # the steps the states came from, for error messages
    new_index: int


def parse(doc: dict[str, Any], origin: str) -> Plan:
    """Normalise a preview digest; every shape problem is a one-line InputError."""
    _refuse_failed_preview(doc, origin)
    raw = doc.get("steps")
    merged: dict[str, _Merged] = {}
    for i, s in enumerate([] if raw is None else want_list(raw, origin, "steps")):
        _add_step(merged, i, s, origin)
    changes = tuple(_change(urn, m, origin) for urn, m in merged.items())
    meta: dict[str, Any] = {}
    summary = doc.get("changeSummary")
    if type(summary) is dict:
        meta["change_summary"] = summary
    return Plan(source=SOURCE, origin=origin, changes=changes, meta=meta)


def _refuse_failed_preview(doc: dict[str, Any], origin: str) -> None:
    diagnostics = doc.get("diagnostics")
    if diagnostics is None:
        return
    for i, d in enumerate(want_list(diagnostics, origin, "diagnostics")):
        diag = want_obj(d, origin, f"diagnostics[{i}]")
        if diag.get("severity") == "error":
            message = diag.get("message")
            first = message.strip().split("\n", 1)[0] if type(message) is str else ""
            raise problem(
                f"{origin}: diagnostics[{i}]: expected a preview that completed, got an error "
                f"({first or 'no message'}); its steps are incomplete"
            )


def _add_step(merged: dict[str, _Merged], i: int, s: Any, origin: str) -> None:
    step = want_obj(s, origin, f"steps[{i}]")
    op = step.get("op")
    if type(op) is not str or op not in _OPS:
        fail(origin, f"steps[{i}].op", _OPS_HELP, op)
    urn = want_str(step.get("urn"), origin, f"steps[{i}].urn")
    parsed = urn_type_name(urn)
    if parsed is None:
        fail(origin, f"steps[{i}].urn", "a Pulumi URN (urn:pulumi:STACK::PROJECT::TYPE::NAME)", urn)
    old = opt_obj(step.get("oldState"), origin, f"steps[{i}].oldState")
    new = opt_obj(step.get("newState"), origin, f"steps[{i}].newState")
    rtype = parsed[0]
    for label, state in (("oldState", old), ("newState", new)):
        if state is None:
            continue
        if "type" in state:
            rtype = want_str(state["type"], origin, f"steps[{i}].{label}.type")
        custom = state.get("custom", True)
        if type(custom) is not bool:
            fail(origin, f"steps[{i}].{label}.custom", "a boolean", custom)
        if not custom:
            return  # a component resource: no infrastructure of its own
    if is_engine_resource(rtype):
        return
    kind, strength = _OPS[op]
    m = merged.get(urn)
    if m is None:
        merged[urn] = _Merged(i, parsed[1], rtype, kind, strength, old, new, i, i)
        return
    if strength >= m.strength:
        m.kind, m.strength = kind, strength
        if old is not None:
            m.old, m.old_index = old, i
        if new is not None:
            m.new, m.new_index = new, i
    else:
        if m.old is None and old is not None:
            m.old, m.old_index = old, i
        if m.new is None and new is not None:
            m.new, m.new_index = new, i


def _change(urn: str, m: _Merged, origin: str) -> ResourceChange:
    where = f"steps[{m.new_index}].newState"
    new_inputs: dict[str, Any] | None = None
    references: dict[str, str] = {}
    parent: str | None = None
    if m.kind is not ChangeKind.DELETE:
        if m.new is None:
            if m.kind is not ChangeKind.READ:
                fail(origin, f"steps[{m.index}].newState",
                     f"an object with the new inputs of this {m.kind}", None)
        else:
            new_inputs = _inputs(m.new, origin, where)
            references = dependency_references(
                m.new.get("propertyDependencies"), origin, f"{where}.propertyDependencies"
            )
            parent = parent_link(m.new.get("parent"), origin, f"{where}.parent")
    old_inputs = None
    if m.old is not None and m.kind is not ChangeKind.CREATE:
        old_where = f"steps[{m.old_index}].oldState"
        old_inputs = _inputs(m.old, origin, old_where)
        if m.kind is ChangeKind.DELETE:
            parent = parent_link(m.old.get("parent"), origin, f"{old_where}.parent")
    return ResourceChange(
        address=urn,
        type=m.type,
        name=m.name,
        change=m.kind,
        new=new_inputs if new_inputs is not None or m.kind is ChangeKind.DELETE else {},
        old=old_inputs,
        source=SOURCE,
        kind=resource_kind(m.type),
        references=references,
        parent=parent,
    )


def _inputs(state: dict[str, Any], origin: str, where: str) -> dict[str, Any]:
    raw = state.get("inputs")
    if raw is None:
        return {}  # ResourceV3 omits empty inputs
    return inputs(want_obj(raw, origin, f"{where}.inputs"))

"""Terraform plans (``terraform show -json PLANFILE``, format_version 0.1 … 1.x) → Plan.

``change.after`` omits values unknown until apply and ``change.after_unknown`` mirrors it with
``true`` at each unknown leaf (``false`` for known list elements). The two are merged into one
value tree with :data:`UNKNOWN` at those leaves, also inside lists and nested blocks.

Attribute names in Terraform plans are already snake_case, so inputs are used as parsed:
``normalise_inputs`` would be the identity on them at the price of a deep copy per resource
(and would rewrite the keys of user maps such as ``environment`` variables). The merge works in
place on the freshly parsed ``after`` for the same reason: a 100k-resource plan stays fast.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from operator import itemgetter

import policies.sources.fields as fields
from gpupool.errors import InputError
from policies.model import UNKNOWN, ChangeKind, Plan, ResourceChange, resource_kind
from policies.sources.reading import fail, problem, want_list
from policies.sources.terraform_declared import DECLARED_TYPES, drop_undeclared, may_drop
from policies.sources.terraform_refs import References
from policies.sources.tfaddr import Segment, split_module_address

TYPE_CHECKING = False  # typing's, without importing typing (not on a check's path)
if TYPE_CHECKING:
    from typing import Any, Final

    from policies.model import ResourceKind

SOURCE: Final = "terraform"
_first: Final = itemgetter(0)
_address_of: Final = itemgetter(2)  # a row's address
DynamicBlocks = Callable[[str], "Mapping[str, tuple[str, ...] | None] | None"]

# Read per resource as globals: on 3.11 a member read through its enum class is a Python-level call.
_NOOP: Final = ChangeKind.NOOP
_CREATE: Final = ChangeKind.CREATE
_DELETE: Final = ChangeKind.DELETE
_READ: Final = ChangeKind.READ
_ACTIONS: Final[dict[tuple[str, ...], ChangeKind]] = {
    ("no-op",): ChangeKind.NOOP,
    ("create",): ChangeKind.CREATE,
    ("read",): ChangeKind.READ,
    ("update",): ChangeKind.UPDATE,
    ("delete", "create"): ChangeKind.REPLACE,
    ("create", "delete"): ChangeKind.REPLACE,
    ("delete",): ChangeKind.DELETE,
    # Terraform 1.7+ `removed` blocks: the resource leaves this configuration's management.
    ("forget",): ChangeKind.DELETE,
    ("create", "forget"): ChangeKind.REPLACE,
}
# Per resource type, worked out once (a plan repeats a few types many times): see _per_type.
_TYPES: Final[dict[str, tuple[ResourceKind, bool, bool]]] = {}
_ACTIONS_HELP: Final = (
    '["no-op"], ["create"], ["read"], ["update"], ["delete","create"], ["create","delete"], '
    '["delete"] or ["forget"]'
)


def parse(doc: dict[str, Any], origin: str, dynamic_blocks: DynamicBlocks | None = None
          ) -> Plan:
    """Normalise a Terraform JSON plan; every shape problem is a one-line InputError.

    ``dynamic_blocks`` reads a resource's ``.tf`` source (by its address, without instance
    key) for the names of the ``dynamic`` blocks it writes, None when that source is not at
    hand: Terraform's JSON configuration leaves them out (see :mod:`terraform_declared`).
    """
    meta: dict[str, Any] = {"format_version": _format_version(doc, origin)}
    if type(doc.get("terraform_version")) is str:
        meta["terraform_version"] = doc["terraform_version"]
    if doc.get("errored") is True:
        raise problem(
            f"{origin}: errored: expected a complete plan, got one Terraform could not finish "
            "(errored: true); fix the plan errors first"
        )
    if doc.get("complete") is False:
        meta["complete"] = False  # deferred changes (Terraform 1.9+): later plans will show more
    raw = doc.get("resource_changes")
    instances: dict[str, list[str]] = {}
    rows = _read_rows([] if raw is None else want_list(raw, origin, "resource_changes"), origin,
                      instances)
    _refuse_values_without_changes(doc.get("planned_values"), rows, origin)
    refs = References(doc.get("configuration"), origin, instances)
    return Plan(source=SOURCE, origin=origin, changes=_changes(rows, refs, origin, dynamic_blocks),
                meta=meta)


def _refuse_values_without_changes(planned: Any, rows: list[_Row], origin: str) -> None:
    """``planned_values`` resources that ``resource_changes`` leaves out are never judged.

    ``terraform show -json PLANFILE`` lists every managed resource in ``resource_changes``
    (no-op ones included), so a file whose ``planned_values`` holds resources that are not
    there was trimmed or made by another tool. ``planned_values`` alone cannot stand in: it
    omits values unknown until apply, so a rule would read "unknown" as "not set" (an unknown
    instance type as none at all). Such a file is refused rather than passed on 0 resources.
    """
    if type(planned) is not dict:
        return
    listed = set(map(_address_of, rows))
    if _all_listed(planned.get("root_module"), 0, listed):
        return  # the common case: one membership test per planned resource, no set of them
    missing = _planned_addresses(planned.get("root_module"), 0) - listed
    if missing:
        first = sorted(missing)[0]
        raise problem(
            f"{origin}: resource_changes: expected the planned change of every resource in "
            f"planned_values, got none for {len(missing)} of them (first: {first}); "
            "`terraform show -json PLANFILE` writes both, and planned_values alone cannot tell "
            "a value unknown until apply from an absent one, so this file is not judged"
        )


def _all_listed(module: Any, depth: int, listed: set[str]) -> bool:
    """Is every managed resource of a ``planned_values`` module tree in ``listed``?"""
    if type(module) is not dict or depth > 64:
        return True
    resources = module.get("resources")
    if type(resources) is list:
        for r in resources:
            if type(r) is dict:
                address = r.get("address")
                if type(address) is str and address not in listed and \
                        r.get("mode", "managed") == "managed":
                    return False
    children = module.get("child_modules")
    if type(children) is list:
        for child in children:
            if not _all_listed(child, depth + 1, listed):
                return False
    return True


def _planned_addresses(module: Any, depth: int) -> set[str]:
    """Addresses of the managed resources in a ``planned_values`` module tree."""
    if type(module) is not dict or depth > 64:
        return set()
    out: set[str] = set()
    resources = module.get("resources")
    if type(resources) is list:
        for r in resources:
            if type(r) is dict and r.get("mode", "managed") == "managed" and \
                    type(r.get("address")) is str:
                out.add(r["address"])
    children = module.get("child_modules")
    if type(children) is list:
        for child in children:
            out |= _planned_addresses(child, depth + 1)
    return out


def _format_version(doc: dict[str, Any], origin: str) -> str:
    # HCP Terraform's redacted JSON plan (the runs API's json-output-redacted) has the same
    # resource_changes under plan_format_version.
    version = doc.get("format_version", doc.get("plan_format_version"))
    if type(version) is not str:
        fail(origin, "format_version", 'the plan format version `terraform show -json` writes '
             '(such as "1.2")', version)
    parts = version.split(".")
    if len(parts) != 2 or not all(p.isascii() and p.isdigit() for p in parts):
        fail(origin, "format_version", 'a version like "1.2"', version)
    if int(parts[0]) not in (0, 1):
        fail(origin, "format_version", "major version 0 or 1 (formats 0.1 … 1.2)", version)
    return version


# One validated ``resource_changes[]`` entry, before its change is read: a tuple, one per
# resource (a record's __init__ cost ~2k instructions more each):
# (index, entry, address, mode, type, name, rel: the module-relative address aws_x.name or
# data.aws_x.name, module instance segments, their module call names, resource address
# without the instance key, instance key text "[0]", '["a"]' or "").
_Row = tuple[int, "dict[str, Any]", str, str, str, str, str, "tuple[Segment, ...]",
             "tuple[str, ...]", str, str]


def _read_rows(entries: list[Any], origin: str, instances: dict[str, list[str]]) -> list[_Row]:
    """The rows, and into ``instances`` each live (not deposed) resource's instance keys."""
    # Hot loop (one pass per resource): type checks are inline and key paths for messages
    # are only formatted on the error path.
    rows: list[_Row] = []
    # module address → its instance path and call names, once per module instance
    modules: dict[str, tuple[tuple[Segment, ...], tuple[str, ...]]] = {"": ((), ())}
    where = "resource_changes[{}]{}"
    for i, entry in enumerate(entries):
        if type(entry) is not dict:
            fail(origin, where.format(i, ""), "an object", entry)
        address = entry.get("address")
        if type(address) is not str:
            fail(origin, where.format(i, ".address"), "a string", address)
        mode = entry.get("mode", "managed")
        if mode != "managed" and mode != "data":
            fail(origin, where.format(i, ".mode"), '"managed" or "data"', mode)
        rtype = entry.get("type")
        if type(rtype) is not str:
            fail(origin, where.format(i, ".type"), "a string", rtype)
        name = entry.get("name")
        if type(name) is not str:
            fail(origin, where.format(i, ".name"), "a string", name)
        rel = f"{rtype}.{name}" if mode == "managed" else f"data.{rtype}.{name}"
        module_address = entry.get("module_address")
        if module_address is None:
            module_address = _module_part(address, rel)
        elif type(module_address) is not str:
            fail(origin, where.format(i, ".module_address"), "a string", module_address)
        found = modules.get(module_address)
        if found is None:
            segments = split_module_address(module_address)
            if segments is None:
                fail(origin, where.format(i, ".module_address"),
                     'a module address like module.NAME or module.NAME["KEY"]', module_address)
            found = modules[module_address] = (segments, tuple(map(_first, segments)))
        segments, names = found
        resource_address = f"{module_address}.{rel}" if module_address else rel
        key = address[len(resource_address):]
        if not address.startswith(resource_address) or (key and (key[0] != "[" or key[-1] != "]")):
            fail(origin, where.format(i, ".address"),
                 f"{resource_address} or {resource_address}[KEY] (from module_address, mode, type, "
                 "name)", address)
        deposed = entry.get("deposed")
        if deposed is not None:
            # An older object left by create_before_destroy, planned for deletion; it shares
            # the address of the live instance, so it is named as Terraform's plan shows it.
            if type(deposed) is not str:
                fail(origin, where.format(i, ".deposed"), "a string", deposed)
            address = f"{address} (deposed object {deposed})"
        else:
            known = instances.get(resource_address)
            if known is None:
                instances[resource_address] = [key]
            else:
                known.append(key)
        rows.append(
            (i, entry, address, mode, rtype, name, rel, segments, names, resource_address, key))
    return rows


def _module_part(address: str, rel: str) -> str:
    """Format 0.1 plans may lack ``module_address``: take it from the address."""
    if not address.startswith("module."):
        return ""
    cut = address.rfind("." + rel)
    return address[:cut] if cut > 0 else ""


def _changes(rows: list[_Row], refs: References, origin: str,
             dynamic_blocks: DynamicBlocks | None) -> tuple[ResourceChange, ...]:
    """Each row's change, in order (one loop: a call per resource costs ~1k instructions)."""
    out: list[ResourceChange] = []
    types = _TYPES
    for row in rows:
        i, entry, address, mode, rtype, name, rel, segments, names, _, key = row
        change = entry.get("change")
        if type(change) is not dict:
            fail(origin, _where(i, ""), "an object", change)
        actions = change.get("actions")
        kind = None
        if type(actions) is list:
            try:  # only strings equal the keys; an unhashable element is no action either
                kind = _ACTIONS.get(tuple(actions))
            except TypeError:
                kind = None
        if kind is None:
            fail(origin, _where(i, ".actions"), f"one of {_ACTIONS_HELP}", actions)
        managed = mode == "managed"
        if not managed:
            kind = _READ
        before = change.get("before")
        if before is not None and type(before) is not dict:
            fail(origin, _where(i, ".before"), "an object or null", before)
        after = change.get("after")
        if after is not None and type(after) is not dict:
            fail(origin, _where(i, ".after"), "an object or null", after)
        unknown = change.get("after_unknown")
        if unknown is not None and type(unknown) is not dict and type(unknown) is not bool:
            fail(origin, _where(i, ".after_unknown"), "an object or boolean", unknown)

        new: dict[str, Any] | None = None
        if kind is _NOOP and before is None and after is None:
            # Terraform 1.0.x writes this for a count/for_each instance that neither exists nor
            # is planned (seen in terraform-compliance's test data): nothing to judge.
            continue
        if kind is not _DELETE:
            if unknown is True:
                if managed:
                    fail(origin, _where(i, ".after_unknown"),
                         "an object (a planned resource cannot be wholly unknown)", True)
                new = {}
            elif after is None and not unknown:
                if managed:
                    fail(origin, _where(i, ".after"), f"an object for {'+'.join(actions)}", None)
                new = {}
            elif unknown:  # an object (True is above): _merge_unknown's top level, inline
                new = after if after is not None else {}
                for k, u in unknown.items():
                    if u is True:
                        new[k] = UNKNOWN
                    elif (type(u) is dict or type(u) is list) and u:
                        new[k] = _merge_unknown(new.get(k), u)
            else:
                new = after
        old = None if kind is _CREATE else before
        per_type = types.get(rtype)
        if per_type is None:
            per_type = types[rtype] = _per_type(rtype)
        rkind, typed, declared = per_type
        if managed:
            if declared and new and may_drop(new, rtype):
                drop_undeclared(new, rtype, _Config(row, refs, dynamic_blocks))
            if typed:
                try:  # inline (a call per typed resource fewer); message paths on failure
                    fields.check(rkind, new, origin, _no_where)
                    if old is not None:
                        fields.check(rkind, old, origin, _no_where)
                except InputError:
                    _check_again(rkind, new, old, origin, i)
                    raise
        # Positional: a keyword call to ResourceChange costs more, once per resource.
        out.append(ResourceChange(address, rtype, name, kind, new, old, SOURCE, rkind,
                                  refs.for_resource(segments, names, rel, key)))
    return tuple(out)


def _per_type(rtype: str) -> tuple[ResourceKind, bool, bool]:
    """A type's resource kind, whether fields.check reads its inputs, and whether
    drop_undeclared may change them (worked out once per type: a plan repeats a few)."""
    rkind = resource_kind(rtype)
    return rkind, rkind in fields.TYPED, rtype in DECLARED_TYPES


def _check_again(rkind: ResourceKind, new: dict[str, Any] | None, old: dict[str, Any] | None,
                 origin: str, index: int) -> None:
    """A check failed: the same checks again, with message paths naming the key as the file
    spells it (closures over the index, made only now)."""
    fields.check(rkind, new, origin, lambda path: f"{_where(index, '.after')}.{path}")
    fields.check(rkind, old, origin, lambda path: f"{_where(index, '.before')}.{path}")


class _Config:
    """One resource's configuration, read on demand (:class:`ResourceConfig`)."""

    __slots__ = ("_dynamic", "_refs", "_row")

    def __init__(self, row: _Row, refs: References, dynamic: DynamicBlocks | None) -> None:
        self._row, self._refs, self._dynamic = row, refs, dynamic

    def expressions(self) -> dict[str, Any] | None:
        return self._refs.expressions(self._row[7], self._row[6])

    def known_at_plan(self, key: str) -> bool:
        return self._refs.known_at_plan(self._row[7], self._row[6], key)

    def dynamic_blocks(self) -> Mapping[str, tuple[str, ...] | None] | None:
        return None if self._dynamic is None else self._dynamic(self._row[9])

    def refs_known_at_plan(self, refs: tuple[str, ...]) -> bool:
        return self._refs.refs_known_at_plan(self._row[7], refs)


def _no_where(path: str) -> str:
    """A first check's message path, never shown: a failing check runs again with the real one."""
    return path


def _where(index: int, key: str) -> str:
    return f"resource_changes[{index}].change{key}"


def _merge_unknown(after: Any, unknown: Any) -> Any:
    """Put UNKNOWN where ``after_unknown`` says ``true``; reuses ``after``'s containers."""
    if unknown is True:
        return UNKNOWN
    if type(unknown) is dict:
        target = after if type(after) is dict else {}
        for k, u in unknown.items():
            if u is True:
                target[k] = UNKNOWN
            elif (type(u) is dict or type(u) is list) and u:
                target[k] = _merge_unknown(target.get(k), u)
        return target
    if type(unknown) is list:
        items = after if type(after) is list else []
        for i, u in enumerate(unknown):
            if u is True or ((type(u) is dict or type(u) is list) and u):
                if i >= len(items):
                    items.extend([None] * (i + 1 - len(items)))
                items[i] = _merge_unknown(items[i], u)
        return items
    return after

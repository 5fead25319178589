"""Links between the resources of one plan (an ASG to its launch template, a scaling policy to its
group), built in one linear pass so rules never join resources quadratically.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from functools import cache

from gpupool.catalog import Catalog
from gpupool.record import Frozen
from policies.facts.instances import InstanceTypes, own_instance_types
from policies.facts.network.links import Link
from policies.facts.values import _GONE, Side, block, inputs_of, text
from policies.model import UNKNOWN, ResourceChange, ResourceKind

TYPE_CHECKING = False  # typing's, without importing typing (not on a check's path)
if TYPE_CHECKING:
    from typing import Any

    from policies.facts.network.tier import NetworkIndex

# Kinds tested per resource, bound once: on Python 3.11 reading an enum member through its class
# is a Python-level call (EnumType defines __getattr__), ~10x reading a global.
_LAUNCH_TEMPLATE = ResourceKind.LAUNCH_TEMPLATE
_LAUNCH_CONFIGURATION = ResourceKind.LAUNCH_CONFIGURATION
_ASG, _NODE_GROUP = ResourceKind.AUTOSCALING_GROUP, ResourceKind.EKS_NODE_GROUP
_SCALING_POLICY = ResourceKind.SCALING_POLICY
_TEMPLATES = frozenset({_LAUNCH_TEMPLATE})
_CONFIGURATIONS = frozenset({_LAUNCH_CONFIGURATION})
_GROUPS = frozenset({_ASG})


# Patterns compiled on first use (each ~0.5 M instructions of a check's start): a counted
# resource's address, a reference from inside a module.
@cache
def _index_suffix() -> re.Pattern[str]:
    return re.compile(r"\[[^\[\]]*\]$")


@cache
def _module_prefix() -> re.Pattern[str]:
    return re.compile(r"^((?:module\.[^.\[]+(?:\[[^\]]*\])?\.)*)")


def _base(address: str) -> str:
    return _index_suffix().sub("", address)


class GroupPolicies(Frozen):
    """The scaling policies of one group: proven links, and policies that might be linked."""

    __slots__ = ("linked", "possible")

    linked: tuple[ResourceChange, ...]
    possible: tuple[ResourceChange, ...]

    def __init__(
        self,
        linked: tuple[ResourceChange, ...],
        possible: tuple[ResourceChange, ...],
    ) -> None:
        object.__setattr__(self, "linked", linked)
        object.__setattr__(self, "possible", possible)


_NO_POLICIES = GroupPolicies((), ())  # (immutable: one for every group without policies)


class PlanIndex:
    """One linear pass over a plan's changes: addresses, launch templates by id and name, groups
    by name, and scaling policies per group (built on first use)."""

    def __init__(self, changes: Iterable[ResourceChange], catalog: Catalog | None = None) -> None:
        # The catalog judges instance requirements (which GPU types they can launch); their
        # attributes, not prices, so any region's catalog answers alike. None: the bundled one.
        self.catalog = catalog
        self.by_address: dict[str, ResourceChange] = {}
        self._by_base: dict[str, list[ResourceChange]] = {}
        self._templates: dict[tuple[str, str], ResourceChange] = {}
        self._configs: dict[str, ResourceChange] = {}
        self.groups: list[ResourceChange] = []
        self.policies: list[ResourceChange] = []
        self._policy_links: dict[str, GroupPolicies] | None = None
        # Facts several rules ask for, computed once per resource and side: one dict per fact
        # and side, by address, holding (change, fact) (the change: the same object asked).
        self._own_memo: dict[Side, dict[str, tuple[ResourceChange, InstanceTypes]]] = {
            "new": {}, "old": {}}
        self._types_memo: dict[Side, dict[str, tuple[ResourceChange, InstanceTypes]]] = {
            "new": {}, "old": {}}
        self._lt_memo: dict[Side, dict[str, tuple[ResourceChange, Link]]] = {"new": {}, "old": {}}
        self._unlinked_unknown: tuple[ResourceChange, ...] = ()
        self._unlinked_any: tuple[ResourceChange, ...] = ()
        self._network: NetworkIndex | None = None
        for c in changes:
            self.by_address[c.address] = c
            if c.address.endswith("]"):
                self._by_base.setdefault(_base(c.address), []).append(c)
            kind = c.kind
            if kind is _LAUNCH_TEMPLATE:
                for inputs in (c.before, c.after):
                    for key in ("id", "name"):
                        value = inputs.get(key)
                        if isinstance(value, str) and value:
                            self._templates.setdefault((key, value), c)
            elif kind is _LAUNCH_CONFIGURATION:
                for inputs in (c.before, c.after):
                    value = inputs.get("name")
                    if isinstance(value, str) and value:
                        self._configs.setdefault(value, c)
            elif c.change not in _GONE:
                if kind is _ASG:
                    self.groups.append(c)
                elif kind is _SCALING_POLICY:
                    self.policies.append(c)

    @property
    def network(self) -> NetworkIndex:
        """Placement groups, subnets, security groups and load balancer links (first use)."""
        if self._network is None:  # (its modules only the proxy-tier rules need: imported now)
            from policies.facts.network.tier import NetworkIndex

            self._network = NetworkIndex(self)
        return self._network

    # The memoised facts below each repeat the same few lines instead of sharing a helper: they
    # are asked ~1,600 times on a 1,000-resource plan, and a helper call (with its key tuple
    # and bound method) per ask cost ~3 M instructions.

    def own_types(self, change: ResourceChange, side: Side = "new") -> InstanceTypes:
        """:func:`own_instance_types`, computed once per resource and side."""
        memo = self._own_memo[side]
        hit = memo.get(change.address)
        if hit is not None and hit[0] is change:
            return hit[1]
        value = own_instance_types(change, side, self.catalog)
        memo[change.address] = (change, value)
        return value

    # -- references

    def resolve(self, ref: str, origin: ResourceChange, kinds: frozenset[ResourceKind]
                ) -> tuple[ResourceChange, ...]:
        """Changes an address reference points at (of the wanted kinds).

        A reference without a count/for_each key to a resource with several instances means
        "all of them" (Terraform's reading): every instance is returned and callers treat more
        than one as ambiguous, never as a guess. A reference missing the module path of the
        referring resource is also tried inside that module.
        """
        # (an address not starting "module." has an empty module path: nothing to try)
        address = origin.address
        prefix = _module_prefix().match(address) if address.startswith("module.") else None
        candidates = [ref]
        if prefix and prefix.group(1) and not ref.startswith(prefix.group(1)):
            candidates.append(prefix.group(1) + ref)
        for address in candidates:
            found = self.by_address.get(address)
            if found is not None and found.kind in kinds:
                return (found,)
            counted = self._by_base.get(address)  # (most addresses: none, and no generator)
            if counted:
                many = tuple(c for c in counted if c.kind in kinds)
                if many:
                    return many
        return ()

    def references(self, change: ResourceChange, key_part: str,
                   kinds: frozenset[ResourceKind]) -> tuple[ResourceChange, ...]:
        out: list[ResourceChange] = []
        for key, ref in change.references.items():
            if key_part in key:
                found = self.resolve(ref, change, kinds)
                if not out:  # (the first: nothing seen yet to leave out)
                    out.extend(found)
                elif found:
                    seen = {t.address for t in out}
                    out.extend(t for t in found if t.address not in seen)
        return tuple(out)

    # -- launch templates and configurations

    def launch_templates(self, change: ResourceChange, side: Side = "new") -> Link:
        """The launch template(s) an instance, ASG or EKS node group uses."""
        memo = self._lt_memo[side]
        hit = memo.get(change.address)
        if hit is not None and hit[0] is change:
            return hit[1]
        value = self._launch_templates(change, side)
        memo[change.address] = (change, value)
        return value

    def _launch_templates(self, change: ResourceChange, side: Side) -> Link:
        kinds = _TEMPLATES
        # Any reference to a launch template is the one it launches from, whatever the key:
        # Terraform paths name the attribute, Pulumi names only the top-level property
        # (``mixed_instances_policy``).
        refs = self.references(change, "", kinds)
        inputs = inputs_of(change, side)
        specs: list[Mapping[str, Any]] = []
        unknown: list[str] = []
        top = block(inputs.get("launch_template"))
        if top is UNKNOWN:
            unknown.append("launch template unknown until apply")
        elif top is not None:
            specs.append(top)
        mip = block(inputs.get("mixed_instances_policy"))
        if mip is UNKNOWN:
            unknown.append("mixed instances policy unknown until apply")
        elif mip is not None:
            lt = block(mip.get("launch_template"))
            if lt is UNKNOWN:
                unknown.append("mixed instances policy unknown until apply")
            elif lt is not None:
                spec = block(lt.get("launch_template_specification"))
                if spec is UNKNOWN:
                    unknown.append("launch template unknown until apply")
                elif spec is not None:
                    specs.append(spec)
        declared = bool(specs or unknown or refs)
        if len(refs) > 1 and all(_base(r.address) == _base(refs[0].address) for r in refs):
            return Link((), f"the launch template reference to {_base(refs[0].address)} is "
                            "ambiguous (several instances)", True)
        if refs:
            return Link(refs, None, True)
        targets: list[ResourceChange] = []
        for spec in specs:
            found, why = self._template_for(spec)
            if found is not None and all(t.address != found.address for t in targets):
                targets.append(found)
            elif why:
                unknown.append(why)
        return Link(tuple(targets), "; ".join(dict.fromkeys(unknown)) or None, declared)

    def _template_for(self, spec: Mapping[str, Any]) -> tuple[ResourceChange | None, str | None]:
        ident = spec.get("id", spec.get("launch_template_id"))
        name = spec.get("name", spec.get("launch_template_name"))
        for key, value in (("id", ident), ("name", name)):
            if isinstance(value, str) and value:
                found = self._templates.get((key, value))
                if found is not None:
                    return found, None
        for value in (ident, name):
            if isinstance(value, str) and value:
                return None, f"launch template {value} is not in the plan"
        if ident is UNKNOWN or name is UNKNOWN:
            return None, "launch template id unknown until apply"
        return None, None

    def launch_configuration(self, change: ResourceChange, side: Side = "new") -> Link:
        refs = self.references(change, "", _CONFIGURATIONS)
        if refs:
            return Link(refs, None, True)
        value = inputs_of(change, side).get("launch_configuration")
        if value is UNKNOWN:
            return Link((), "launch configuration unknown until apply", True)
        if isinstance(value, str) and value:
            found = self._configs.get(value)
            if found is None:
                return Link((), f"launch configuration {value} is not in the plan", True)
            return Link((found,), None, True)
        return Link()

    def instance_types(self, change: ResourceChange, side: Side = "new") -> InstanceTypes:
        """Instance types a resource launches, following an ASG's or node group's template."""
        memo = self._types_memo[side]
        hit = memo.get(change.address)
        if hit is not None and hit[0] is change:
            return hit[1]
        value = self._instance_types(change, side)
        memo[change.address] = (change, value)
        return value

    def _instance_types(self, change: ResourceChange, side: Side) -> InstanceTypes:
        own = self.own_types(change, side)
        if change.kind is _ASG:
            if own.known or own.unknown:
                return own
            result = self._linked_types(self.launch_templates(change, side), side)
            if result is not None:
                return result
            via_lc = self._linked_types(self.launch_configuration(change, side), side)
            return via_lc if via_lc is not None else InstanceTypes()
        if change.kind is _NODE_GROUP:
            if own.known:
                return own
            result = self._linked_types(self.launch_templates(change, side), side)
            if own.unknown:
                # instance_types is computed: left unset, a plan shows it unknown until apply.
                # EKS refuses a type in both the node group and its launch template, so a
                # template that names one is where the types come from.
                return result if result is not None and result.known and not result.unknown \
                    else own
            return result if result is not None else InstanceTypes()  # AWS default: t3.medium
        return own

    def _linked_types(self, link: Link, side: Side) -> InstanceTypes | None:
        if not link.declared:
            return None
        out = InstanceTypes(unknown=link.unknown)
        for target in link.targets:
            types = self.own_types(target, side)
            out = out.merge(InstanceTypes(types.known, types.unknown, target.address,
                                          types.respelled))
        return out

    # -- scaling policies

    def policies_of(self, group: ResourceChange) -> GroupPolicies:
        """Scaling policies proven to target ``group``, and those referring to it ambiguously.

        Policies whose group cannot be told at all are not repeated per group (that would be
        quadratic): see :meth:`unlinked_policies`.
        """
        if self._policy_links is None:
            self._link_policies()
        assert self._policy_links is not None
        return self._policy_links.get(group.address, _NO_POLICIES)

    def unlinked_policies(self, group: ResourceChange) -> tuple[ResourceChange, ...]:
        """Policies that might target ``group``: their group name is unknown until apply (and
        no reference says which group), or it names no group of the plan while ``group``'s own
        name is unknown. Shared tuples: the same object for every group."""
        if self._policy_links is None:
            self._link_policies()
        if isinstance(text(group.after.get("name")), str):
            return self._unlinked_unknown
        return self._unlinked_any

    def _link_policies(self) -> None:
        kinds = _GROUPS
        by_name: dict[str, ResourceChange] = {}
        for g in self.groups:
            name = g.after.get("name")
            if isinstance(name, str) and name:
                by_name.setdefault(name, g)
        linked: dict[str, list[ResourceChange]] = {}
        possible: dict[str, list[ResourceChange]] = {}
        unknown_name: list[ResourceChange] = []
        known_unmatched: list[ResourceChange] = []
        for p in self.policies:
            targets = self.references(p, "autoscaling_group_name", kinds)
            if len(targets) == 1:
                linked.setdefault(targets[0].address, []).append(p)
                continue
            if len(targets) > 1:  # a reference to a counted group without a matching key
                for t in targets:
                    possible.setdefault(t.address, []).append(p)
                continue
            name = p.after.get("autoscaling_group_name")
            if isinstance(name, str) and name:
                group = by_name.get(name)
                if group is not None:
                    linked.setdefault(group.address, []).append(p)
                else:
                    known_unmatched.append(p)
            elif name is UNKNOWN:
                unknown_name.append(p)
        addresses = set(linked) | set(possible)
        self._policy_links = {
            a: GroupPolicies(tuple(linked.get(a, ())), tuple(possible.get(a, ())))
            for a in addresses
        }
        self._unlinked_unknown = tuple(unknown_name)
        self._unlinked_any = tuple(unknown_name + known_unmatched)

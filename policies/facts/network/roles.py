"""Who a resource is in a proxy tier and what it promises: the ``gpupool:role`` and budget tags
(``gpupool/tags.py``), read on the resource or on the launch template its instances start from.
"""

from __future__ import annotations

from gpupool.record import Frozen
from gpupool.tags import CLIENT_ROLE, MAX_RTT_TAG, MIN_GBPS_TAG, PROXY_ROLE, ROLE_TAG
from policies.facts.network.links import LAUNCHERS, LinkIndex, PlanLinks
from policies.facts.tags import group_tag_items
from policies.facts.values import Maybe, Side, blocks, is_map
from policies.model import UNKNOWN, ResourceChange, ResourceKind

TYPE_CHECKING = False  # typing's, without importing typing (not on a check's path)
if TYPE_CHECKING:
    from collections.abc import Iterable, Mapping
    from typing import Any, Final

PROXY: Final = PROXY_ROLE
CLIENT: Final = CLIENT_ROLE
# Kinds tested per resource, bound once: on Python 3.11 reading an enum member through its class
# is a Python-level call (EnumType defines __getattr__), ~10x reading a global.
_ASG: Final = ResourceKind.AUTOSCALING_GROUP
_LAUNCH_TEMPLATE: Final = ResourceKind.LAUNCH_TEMPLATE
_ROLES: Final = frozenset({PROXY, CLIENT})
_CARRIERS: Final = LAUNCHERS | {_LAUNCH_TEMPLATE}  # what RoleFacts reads roles from
_UNREAD: Final = object()  # RoleFacts.own: not read yet (a tag may be None: absent)


def has_tier(changes: Iterable[ResourceChange]) -> bool:
    """Might the plan hold a GPU proxy or client? False only when no launcher and no launch
    template tags itself with either role: then :meth:`RoleFacts.proxies` and ``clients`` are
    empty (a launcher takes a role only from itself or from a template), and the engine skips
    the rules that judge a proxy tier (``proxy_tier``) without importing them. A role value that
    cannot be tested raises, as reading the roles would: the engine then runs them."""
    for c in changes:  # noqa: SIM110  (a loop: any() over a generator costs 0.2 M per 1k plan)
        if c.kind in _CARRIERS and own_tag(c, ROLE_TAG) in _ROLES:
            return True
    return False


def own_tag(change: ResourceChange, key: str, side: Side = "new") -> Any:
    """A tag's value as written on the resource itself: ``tags``/``tags_all``, an ASG's tag
    list, a launch template's instance tag specifications. None when absent, UNKNOWN when the
    plan does not know it (or does not know whether it is there)."""
    # (inputs_of and is_map's dict case inlined: asked of every launcher of every plan)
    inputs = (change.new if side == "new" else change.old) or {}
    unknown = False
    for maps_key in ("tags", "tags_all"):
        tags = inputs.get(maps_key)
        if tags is UNKNOWN:
            unknown = True
        elif (type(tags) is dict or is_map(tags)) and key in tags:
            value = tags[key]
            if value is UNKNOWN or (isinstance(value, str) and value):
                return value
    kind = change.kind
    if kind is _ASG:
        listed, value = _group_tag(inputs, key)
        if listed is UNKNOWN:
            unknown = True
        elif listed:
            return value
    if kind is _LAUNCH_TEMPLATE:
        specs = blocks(inputs.get("tag_specifications"))
        if specs is UNKNOWN:
            unknown = True
        else:
            for spec in specs:
                if not is_map(spec) or spec.get("resource_type") != "instance":
                    continue
                tags = spec.get("tags")
                if tags is UNKNOWN:
                    unknown = True
                elif is_map(tags) and key in tags:
                    return tags[key]
    return UNKNOWN if unknown else None


def _group_tag(inputs: Mapping[str, Any], key: str) -> tuple[bool | Maybe, Any]:
    """(whether an autoscaling group's tag list holds ``key``, its value): what
    :func:`group_tags` would say of that key (UNKNOWN when the list is unknown), read without
    making every tag of every group."""
    items = group_tag_items(inputs)
    if items is UNKNOWN:
        return UNKNOWN, None
    for item in items:
        if item["key"] == key:
            return True, item.get("value")
    return False, None


def budget_number(value: Any, *, zero: bool = False) -> float | Maybe | str | None:
    """A budget tag's value: a positive number (``inf`` for no bound; 0 too when ``zero``: a
    profile that moves no byte needs no bandwidth), UNKNOWN, None when absent, or the offending
    text when it is not such a number."""
    if value is None or value is UNKNOWN:
        return value
    if isinstance(value, bool):
        return repr(value)
    if isinstance(value, int | float):
        number = float(value)
    else:
        try:
            number = float(str(value).strip())
        except ValueError:
            return str(value)
    if number != number or number < 0 or (number == 0 and not zero):  # NaN, negative, zero
        return str(value)
    return number


class Budget(Frozen):
    """A proxy's budget tags: Gbps and µs, or why they cannot be read."""

    __slots__ = ("min_gbps", "max_rtt_us", "missing", "unknown", "malformed", "where")

    min_gbps: float | None
    max_rtt_us: float | None
    missing: tuple[str, ...]  # tag keys not set
    unknown: tuple[str, ...]  # tag keys whose value is unknown until apply
    malformed: tuple[tuple[str, str], ...]  # (key, value) that is not a positive number
    where: str  # the resource the tags were read from

    def __init__(
        self,
        min_gbps: float | None = None,
        max_rtt_us: float | None = None,
        missing: tuple[str, ...] = (),
        unknown: tuple[str, ...] = (),
        malformed: tuple[tuple[str, str], ...] = (),
        where: str = "",
    ) -> None:
        object.__setattr__(self, "min_gbps", min_gbps)
        object.__setattr__(self, "max_rtt_us", max_rtt_us)
        object.__setattr__(self, "missing", missing)
        object.__setattr__(self, "unknown", unknown)
        object.__setattr__(self, "malformed", malformed)
        object.__setattr__(self, "where", where)


class RoleFacts(LinkIndex):
    """Roles and budgets of the plan's launchers and templates."""

    def __init__(self, plan: PlanLinks) -> None:
        super().__init__(plan)
        self._roles: dict[str, list[ResourceChange]] | None = None
        self._own: dict[tuple[str, str], Any] = {}

    def own(self, change: ResourceChange, key: str) -> Any:
        """:func:`own_tag`, read once per resource and key: a template many launchers start
        from, and a proxy whose role, tier and budget three rules ask, are read once."""
        k = (change.address, key)
        value = self._own.get(k, _UNREAD)
        if value is _UNREAD:
            value = self._own[k] = own_tag(change, key)
        return value

    def tag(self, change: ResourceChange, key: str) -> tuple[Any, ResourceChange]:
        """A tag of a launcher, falling back on its launch template's (what instances get)."""
        value = self.own(change, key)
        if value is not None or change.kind not in LAUNCHERS:
            return value, change
        link = self.plan.launch_templates(change)
        unknown = link.unknown is not None and not link.targets
        for t in link.targets:
            found = self.own(t, key)
            if found is not None:
                return found, t
        return (UNKNOWN if unknown else None), change

    def role(self, change: ResourceChange) -> Any:
        return self.tag(change, ROLE_TAG)[0]

    def budget(self, change: ResourceChange) -> Budget:
        values: dict[str, Any] = {}
        where = change.address
        for key in (MIN_GBPS_TAG, MAX_RTT_TAG):
            value, source = self.tag(change, key)
            values[key] = budget_number(value, zero=key == MIN_GBPS_TAG)
            if value is not None and value is not UNKNOWN:
                where = source.address
        numbers = {k: v for k, v in values.items() if isinstance(v, float)}
        return Budget(
            min_gbps=numbers.get(MIN_GBPS_TAG),
            max_rtt_us=numbers.get(MAX_RTT_TAG),
            missing=tuple(k for k, v in values.items() if v is None),
            unknown=tuple(k for k, v in values.items() if v is UNKNOWN),
            malformed=tuple((k, v) for k, v in values.items() if isinstance(v, str)),
            where=where,
        )

    def proxies(self) -> list[ResourceChange]:
        """Groups and instances whose instances are GPU proxies, and proxy launch templates that
        nothing in the plan launches from (judged on their own)."""
        return self._with_role(PROXY)

    def clients(self) -> list[ResourceChange]:
        return self._with_role(CLIENT)

    def _with_role(self, role: str) -> list[ResourceChange]:
        if self._roles is None:  # once per plan: three rules ask
            self._roles = self._find_roles()
        return list(self._roles[role])

    def _find_roles(self) -> dict[str, list[ResourceChange]]:
        roles: dict[str, list[ResourceChange]] = {PROXY: [], CLIENT: []}
        if not any(self.own(t, ROLE_TAG) in roles for t in self.any_templates()):
            # A launcher with no role of its own takes its launch template's (:meth:`tag`):
            # when no template in the plan has one, its own tag says it all, and no
            # launcher's templates need resolving.
            for launcher in self.launchers:
                found = self.own(launcher, ROLE_TAG)
                if found in roles:
                    roles[found].append(launcher)
            return roles
        used: set[str] = set()
        for launcher in self.launchers:
            found = self.tag(launcher, ROLE_TAG)[0]
            if found in roles:
                roles[found].append(launcher)
            used.update(t.address for t in self.plan.launch_templates(launcher).targets)
        for t in self.templates:
            if t.address not in used and self.own(t, ROLE_TAG) in roles:
                roles[self.own(t, ROLE_TAG)].append(t)  # nothing launches from it
        return roles

"""What "known after apply" means for an argument the configuration never sets.

Terraform shows an Optional+Computed argument as "known after apply" when the configuration does
not declare it: the provider will read back whatever AWS holds after the apply. Read as unknown,
the rules could only say "cannot verify" (advisory by default) where the same resource in a
Pulumi preview, whose inputs hold only what the program declares, is judged. With the plan's
``configuration`` at hand (the arguments and blocks each resource declares), an undeclared one
is dropped from the inputs: "not set", as in Pulumi, and judged as such.

Only where that is what AWS does, and per resource type (tables below, each with its reason):

- :data:`AWS_DEFAULT_WHEN_UNDECLARED`: AWS's default applies (IMDS options, block devices,
  EBS encryption; an autoscaling group's load balancers, which ``CreateAutoScalingGroup`` is
  sent only when the configuration sets them).
- :data:`EXCLUDED_BY_DECLARED`: the provider refuses the argument beside another one that the
  configuration declares (``ConflictsWith`` / ``ExactlyOneOf`` in its schema), so it is not set.
- :data:`NESTED_DEFAULTS`: the same inside blocks the configuration declares.
- :data:`NOT_SET_UNLESS_DYNAMIC`: blocks that a ``dynamic`` block could write, which
  Terraform's JSON configuration leaves out: dropped only when the resource's ``.tf`` source is
  at hand and writes no ``dynamic`` block of the name, or one whose ``for_each`` is known at
  plan time (a known number of blocks shows in the plan; wholly unknown, it was zero).

An argument declared from values Terraform knows at plan time (constants, variables given
constants or left at their default: a module's ``target_group_arns = var.target_group_arns``
with its default ``[]``) that the plan still shows unknown was null or empty: not set either.
An argument declared from a value unknown until apply stays unknown ("cannot verify").
"""

from __future__ import annotations

from collections.abc import Mapping

from policies.model import UNKNOWN

TYPE_CHECKING = False  # typing's, without importing typing (not on a check's path)
if TYPE_CHECKING:
    from typing import Any, Final, Protocol
else:
    Protocol = object  # a structural type to the type checker, a plain class at run time

AWS_DEFAULT_WHEN_UNDECLARED: Final[dict[str, tuple[str, ...]]] = {
    "aws_instance": ("metadata_options", "root_block_device", "ebs_block_device"),
    "aws_launch_template": ("metadata_options",),
    "aws_launch_configuration": ("metadata_options", "root_block_device", "ebs_block_device"),
    "aws_ebs_volume": ("encrypted",),
    # Provider 5.x plans a new group's target_group_arns and load_balancers as "known after
    # apply" (they are Computed so that attachment resources do not show as drift) and sends
    # them to CreateAutoScalingGroup only when the configuration sets them: undeclared, the
    # group has none. Attachment resources in the plan are judged on their own. These two are
    # arguments, never blocks, so a `dynamic` block cannot hide them.
    "aws_autoscaling_group": ("target_group_arns", "load_balancers"),
}

# The same inside blocks the configuration declares: a root_block_device without encrypted.
NESTED_DEFAULTS: Final[dict[str, tuple[tuple[str, str], ...]]] = {
    "aws_instance": (("root_block_device", "encrypted"), ("ebs_block_device", "encrypted")),
    "aws_launch_configuration": (("root_block_device", "encrypted"),
                                 ("ebs_block_device", "encrypted")),
}

# Optional+Computed arguments that a declared alternative excludes, as the provider's schema
# says (hashicorp/terraform-provider-aws, internal/service/autoscaling/group.go):
# - a group launches from exactly one of launch_configuration, launch_template or
#   mixed_instances_policy (ExactlyOneOf), and provider 5.x plans an undeclared
#   mixed_instances_policy as "known after apply": a new group with a plain
#   `launch_template { id = … }` (the most common shape) was never followed to its template;
# - availability_zones and vpc_zone_identifier conflict (ConflictsWith, both ways): with
#   subnets declared AWS takes the zones from them, which is what the placement rule reads;
# - traffic_source ConflictsWith load_balancers and target_group_arns.
# Declaring no alternative statically may mean a `dynamic` block (which the JSON configuration
# leaves out): then the value stays unknown.
EXCLUDED_BY_DECLARED: Final[dict[str, dict[str, tuple[str, ...]]]] = {
    "aws_autoscaling_group": {
        "mixed_instances_policy": ("launch_template", "launch_configuration"),
        "availability_zones": ("vpc_zone_identifier",),
        "vpc_zone_identifier": ("availability_zones",),
        "traffic_source": ("load_balancers", "target_group_arns"),
    },
}

# Optional+Computed blocks with no AWS default but none: an undeclared one is not set, but a
# `dynamic` block is invisible in the JSON configuration, and one over values unknown until
# apply (`for_each = <unknown>`) plans exactly as an undeclared block does. So these are dropped
# only when the resource's own .tf source is at hand and writes no `dynamic` block of the name
# (``dynamic_of``); without the source they stay unknown. A dynamic block over known values
# plans its blocks, which the rules then judge.
# - traffic_source: CreateAutoScalingGroup is sent TrafficSources only when the configuration
#   sets them;
# - a security group's ingress: a new group starts with no ingress rule, and the provider
#   authorises only the inline rules the configuration writes (rules written as their own
#   resources, aws_vpc_security_group_ingress_rule and the like, are judged on their own).
NOT_SET_UNLESS_DYNAMIC: Final[dict[str, tuple[str, ...]]] = {
    "aws_autoscaling_group": ("traffic_source",),
    "aws_security_group": ("ingress",),
}

class ResourceConfig(Protocol):
    """What the plan's configuration (and the resource's ``.tf`` source) says of one resource;
    asked only when a wholly unknown value is in question, which keeps large plans fast."""

    def expressions(self) -> dict[str, Any] | None:
        """The arguments and blocks it declares; None when the configuration does not
        describe it (then every value stays unknown)."""

    def known_at_plan(self, key: str) -> bool:
        """Is ``key`` written from values known at plan time (constants, variables given
        constants)? Wholly unknown in the plan, it was then null or empty: not set."""

    def dynamic_blocks(self) -> Mapping[str, tuple[str, ...] | None] | None:
        """The ``dynamic`` blocks its ``.tf`` source writes, by name, with what each one's
        ``for_each`` refers to (None: not readable); None without the source."""

    def refs_known_at_plan(self, refs: tuple[str, ...]) -> bool:
        """Are these references (a dynamic block's for_each) all known at plan time?"""


# The resource types drop_undeclared may change (a table names them): for any other it returns
# at once, so the reader does not make a resource's configuration view for it.
DECLARED_TYPES: Final = frozenset(
    t for table in (AWS_DEFAULT_WHEN_UNDECLARED, EXCLUDED_BY_DECLARED, NOT_SET_UNLESS_DYNAMIC)
    for t, wanted in table.items() if wanted)


# Per resource type: the top-level keys tested, and the (block, key) pairs inside blocks.
_TESTED: dict[str, tuple[tuple[str, ...], tuple[tuple[str, str], ...]]] = {}


def may_drop(new: dict[str, Any], rtype: str) -> bool:
    """Is anything wholly unknown where the tables look? Only then can :func:`drop_undeclared`
    change ``new``, and only then is the resource's configuration read (or its view made).

    One pass over a type's keys, no lists and no calls per key: most resources return False.
    """
    tested = _TESTED.get(rtype)
    if tested is None:
        tested = _TESTED[rtype] = (
            (*AWS_DEFAULT_WHEN_UNDECLARED.get(rtype, ()), *EXCLUDED_BY_DECLARED.get(rtype, {}),
             *NOT_SET_UNLESS_DYNAMIC.get(rtype, ())),
            NESTED_DEFAULTS.get(rtype, ()))
    get = new.get
    for k in tested[0]:
        value = get(k)
        if value is UNKNOWN or (type(value) is list and len(value) == 1 and value[0] is UNKNOWN):
            return True
    for block, k in tested[1]:
        value = get(block)
        for element in (value,) if type(value) is dict else value if type(value) is list else ():
            if type(element) is dict:
                inner = element.get(k)
                if inner is UNKNOWN or (type(inner) is list and len(inner) == 1
                                        and inner[0] is UNKNOWN):
                    return True
    return False


def drop_undeclared(new: dict[str, Any], rtype: str, config: ResourceConfig) -> None:
    """Drop from ``new`` (in place) what the tables say is not set when undeclared."""
    if not may_drop(new, rtype):
        return  # most resources: nothing wholly unknown, no list made, no configuration read
    keys = AWS_DEFAULT_WHEN_UNDECLARED.get(rtype, ())
    excluded = EXCLUDED_BY_DECLARED.get(rtype, {})
    maybe_dynamic = NOT_SET_UNLESS_DYNAMIC.get(rtype, ())
    unknown = [k for k in keys if _wholly_unknown(new.get(k))]
    alternatives = [k for k in excluded if _wholly_unknown(new.get(k))]
    nested = [(b, k) for b, k in NESTED_DEFAULTS.get(rtype, ())
              if any(_wholly_unknown(e.get(k)) for e in _block_list(new.get(b)))]
    blocks = [k for k in maybe_dynamic if _wholly_unknown(new.get(k))]
    if not unknown and not nested and not alternatives and not blocks:
        return
    declared = config.expressions()
    if declared is None:
        return  # no configuration for it: the values stay unknown ("cannot verify")

    was = dict(new)  # as planned: what is dropped below is still judged as the plan had it

    def sets(key: str) -> bool:
        """Declared, and not from values known at plan time that the plan shows unknown (a
        module's `target_group_arns = var.target_group_arns` left at null or [])."""
        return declares(declared, key) and not (
            _wholly_unknown(was.get(key)) and config.known_at_plan(key))

    for key in unknown:
        if not sets(key):
            del new[key]
    for key in alternatives:
        if not sets(key) and (declares(declared, key) or any(sets(o) for o in excluded[key])):
            del new[key]
    for block, key in nested:
        written = _block_list(declared.get(block))
        if written and not any(declares(w, key) for w in written):
            for element in _block_list(new.get(block)):
                if _wholly_unknown(element.get(key)):
                    del element[key]
    blocks = [k for k in blocks if k in new and not sets(k)]
    if blocks:
        dynamic = None if all(declares(declared, k) for k in blocks) else config.dynamic_blocks()
        for key in blocks:
            if declares(declared, key) or (dynamic is not None and (
                    key not in dynamic or _writes_none(dynamic[key], config))):
                del new[key]


def _writes_none(for_each: tuple[str, ...] | None, config: ResourceConfig) -> bool:
    """A dynamic block whose for_each is known at plan time writes a known number of blocks,
    which the plan then shows (with unknown values inside, if any): wholly unknown, that
    number was zero. Over anything unknown until apply it may write some: not judged."""
    return for_each is not None and config.refs_known_at_plan(for_each)


def declares(expressions: dict[str, Any], key: str) -> bool:
    """Terraform 1.0 writes an undeclared block as ``null``; later versions leave it out."""
    return expressions.get(key) not in (None, [], {})


def _block_list(value: Any) -> list[dict[str, Any]]:
    if type(value) is dict:
        return [value]
    if type(value) is list:
        return [v for v in value if type(v) is dict]
    return []


def _wholly_unknown(value: Any) -> bool:
    return value is UNKNOWN or (type(value) is list and len(value) == 1 and value[0] is UNKNOWN)

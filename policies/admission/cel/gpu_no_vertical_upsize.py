# ruff: noqa: RUF001, RUF003  (× and → are the signs users read in messages)
"""gpu-no-vertical-upsize at admission: an UPDATE whose pod templates' GPUs per pod go up.

The rule's Kubernetes part (:mod:`policies.rules._pod_upsize`) compares each pod template of
the old object with the one of the same name in the new: GPUs per pod are the larger of the
app containers' sum and the largest init container (init containers run one at a time, before
the others), each container's GPUs the sum of its GPU resources (the limit, else the request).
At admission the old object is the request's ``oldObject``, so the policy matches UPDATE only:
a CREATE has no baseline and is never denied here (the PR check says "cannot verify" when it
has none). A delete and re-create is a CREATE: only the PR check sees it as a change.

Counts are read with the quantity library's ``asApproximateFloat`` and added with the lists
library's ``sum()`` and ``max()`` in the order the rule adds them, so the doubles are the
rule's own. A count that is not a quantity cannot be compared: refused, as the rule's
"cannot verify". Messages write numbers as the rule does (:func:`policies.rules._pod_upsize.
shown` and ``times``: the same float operations on the same doubles). No parameters:
allowGpuPacking is about instance types, not pods.
"""

from __future__ import annotations

from policies.admission.cel._gpu import (
    DENOMINATORS,
    GPUS,
    asks,
    counted,
    double_shown,
    first_d,
    in_side,
    is_q,
    q,
    who,
    whole_double,
)
from policies.admission.kinds import KINDS
from policies.admission.spec import AdmissionRule, Validation


def _gpus_of(c: str) -> str:
    """Container ``c``'s GPUs: its limits' GPU resources, then those only in requests."""
    limits = (f"variables.gpus.filter(g, {in_side(c, 'g', 'limits')})"
              f".map(g, {q(f'{c}.resources.limits[g]')}.asApproximateFloat())")
    requests = (f"variables.gpus.filter(g, !{in_side(c, 'g', 'limits')} && "
                f"{in_side(c, 'g', 'requests')})"
                f".map(g, {q(f'{c}.resources.requests[g]')}.asApproximateFloat())")
    return f"([0.0] + {limits} + {requests}).sum()"


def _readable(r: str) -> str:
    """Every GPU count of role ``r`` reads as a quantity."""
    return (f"!{r}.containers.exists(c, variables.gpus.exists(g, {asks('c', 'g')} && "
            f"!{is_q(counted('c', 'g'))}))")


def _sums(roles: str) -> str:
    """Each role's name, whether its counts read, the app containers' sum and the largest
    init container (0.0 when none: the rule starts both from 0.0)."""
    app = f"([0.0] + r.app.map(c, {_gpus_of('c')})).sum()"
    init = f"([0.0] + r.init.map(c, {_gpus_of('c')})).max()"
    return (f"{roles}.map(r, {_readable('r')} ? {{'name': r.name, 'ok': true, 'app': {app}, "
            f"'init': {init}}} : {{'name': r.name, 'ok': false, 'app': 0.0, 'init': 0.0}})")


def _per_pod(sums: str) -> str:
    return (f"{sums}.map(p, {{'name': p.name, 'ok': p.ok, "
            "'gpus': p.app >= p.init ? p.app : p.init})")


_SAME = "variables.oldPods.filter(o, o.name == n.name)"
# a role the old object did not have had no GPUs; of two roles of one name, the last counts
_PAIRED = (f"variables.newPods.map(n, {{'name': n.name, 'new': n, 'old': size({_SAME}) > 0 ? "
           f"{_SAME}[size({_SAME}) - 1] : {{'name': n.name, 'ok': true, 'gpus': 0.0}}}})")
_BASE = "(j.old.gpus == 0.0 ? 1.0 : j.old.gpus)"  # no GPUs before: one GPU per pod
_BAD = ("(!j.new.ok || (!j.old.ok && j.new.gpus > 0.0) || (j.old.ok && "
        f"j.new.gpus > j.old.gpus && j.new.gpus > {_BASE}))")


def times(n: str, m: str) -> str:
    """``n / m`` as the rule's ``times()`` writes it: ``4``, ``3/2``, ``1006/1000``."""
    return (f"({whole_double(f'{n} / {m}')} ? string(int({n} / {m})) : " + first_d(
        f"{n} * double(d) / {m}", f"string(int({n} * double(@D) / {m})) + '/' + string(@D)",
        f"{double_shown(n)} + '/' + {double_shown(m)}") + ")")


_F = "variables.first"
_WHO = who(f"{_F}.new")
_A, _B = double_shown(f"{_F}.old.gpus"), double_shown(f"{_F}.new.gpus")
_KEEP = f"({_F}.old.gpus == 0.0 ? 1.0 : {_F}.old.gpus)"
_FACTOR = f"({_F}.old.gpus == 0.0 ? {_B} : {times(f'{_F}.new.gpus', f'{_F}.old.gpus')})"
_UNREAD = "' cannot be read (a GPU count is not a number)'"
_MESSAGE = (
    f"(!{_F}.new.ok ? 'cannot verify: the new GPUs per pod of ' + {_WHO} + {_UNREAD} : "
    f"!{_F}.old.ok ? 'cannot verify: the old GPUs per pod of ' + {_WHO} + {_UNREAD} : "
    f"{_WHO} + ': GPUs per pod ' + {_A} + ' → ' + {_B} + ' is vertical scaling (each pod now "
    f"needs a node with ' + {_B} + ' free GPUs, and holds them busy or idle); keep ' + "
    f"{double_shown(_KEEP)} + ' GPU' + ({_KEEP} != 1.0 ? 's' : '') + ' per pod and run ' + "
    f"{_FACTOR} + ' × the replicas')")

ADMISSION = AdmissionRule(
    rule_id="gpu-no-vertical-upsize",
    kinds=tuple(KINDS),
    variables=(
        ("gpus", GPUS),
        DENOMINATORS,
        ("newPods", _per_pod(_sums("variables.roles"))),
        ("oldPods", _per_pod(_sums("variables.oldRoles"))),
        ("upsized", f"{_PAIRED}.filter(j, {_BAD})"),
        ("first", "variables.upsized[0]"),  # the first offence, for the message only
    ),
    validations=(Validation(
        expression="oldObject == null || size(variables.upsized) == 0",
        message=("gpu-no-vertical-upsize: GPUs per pod went up (vertical scaling); keep the "
                 "GPUs per pod and run more replicas"),
        message_expression=f"'gpu-no-vertical-upsize: ' + {_MESSAGE}"),),
    operations=("UPDATE",),
    uses_old_roles=True,
)

# ruff: noqa: RUF001, RUF003  (× is the multiplication sign users read in messages)
"""karpenter-gpu-smallest at admission: a NodePool allows only the smallest size per GPU.

The rule judges requirements against the GPU catalog; so does the policy, with the catalog
compiled into it at render time (``types``: every GPU type's Karpenter labels, whether it is
too big at the configured maxPerGpuPremiumPct, its smallest size and price): the parameter
and the catalog are data the kit owns, read when the policy is rendered (re-render after
changing either). Requirement keys outside the modelled labels exclude nothing, as in the rule.
"""

from __future__ import annotations

import json

from gpupool.catalog import Catalog
from policies.admission.kinds import guard
from policies.admission.spec import AdmissionRule, Validation
from policies.rules.base import RuleParams
from policies.rules.karpenter_gpu_smallest import (
    MODELLED,
    Params,
    _premium,
    _price,
    _too_big,
    labels_of,
)

_KEYS = sorted(k for k in MODELLED if k.startswith(("node.", "karpenter.k8s.aws/", "kubernetes")))
# EKS Auto Mode's keys and the beta.kubernetes.io ones read as the label they mirror
_ALIASES = {**{f"eks.amazonaws.com/{k.removeprefix('karpenter.k8s.aws/')}": k
               for k in _KEYS if k.startswith("karpenter.k8s.aws/")},
            "beta.kubernetes.io/instance-type": "node.kubernetes.io/instance-type",
            "beta.kubernetes.io/arch": "kubernetes.io/arch"}


def _cel(value: object) -> str:
    """JSON literals are CEL literals (strings, numbers, true/false, lists, maps)."""
    return json.dumps(value, ensure_ascii=False)


def _compiled(p: RuleParams, catalog: Catalog) -> tuple[tuple[str, str], ...]:
    assert isinstance(p, Params)
    index = {k: i for i, k in enumerate(_KEYS)}
    index.update({a: index[k] for a, k in _ALIASES.items()})
    assert set(index) == set(MODELLED), "every modelled label has a place"
    rows = []
    for t in catalog:
        big = _too_big(t, catalog, p.max_per_gpu_premium_pct)
        floor = catalog.smallest_like(t.instance_type)
        premium = _premium(t, catalog)
        cost = "" if not big or floor is None or premium in (0, float("inf")) else (
            f"; {t.instance_type} costs {premium:.2f}× {floor.instance_type} per GPU-hour "
            f"({_price(t)} against {_price(floor)})")
        rows.append((-premium if big else 1.0, len(rows), {
            "t": t.instance_type, "l": [labels_of(t)[k] for k in _KEYS], "big": big,
            "small": floor.instance_type if floor is not None else "", "cost": cost}))
    ranked = [r for _, _, r in sorted(rows, key=lambda x: (x[0], x[1]))]
    smallest = sorted({r["small"] for r in ranked if r["small"]})
    return (("keyIndex", _cel(index)), ("types", _cel(ranked)), ("smallestNames", _cel(smallest)))


_V = "t.l[variables.keyIndex[r.key]]"
_OP = "(has(r.operator) ? r.operator : '')"
_VALS = "(has(r.values) ? r.values : [])"
_INT = "'^[+-]?[0-9]+$'"
_MATCH = (
    f"({_OP} == 'In' ? {_VALS}.exists(x, x == {_V}) : {_OP} == 'NotIn' ? "
    f"!{_VALS}.exists(x, x == {_V}) : {_OP} == 'Exists' ? {_V} != '' : "
    f"{_OP} == 'DoesNotExist' ? {_V} == '' : "
    f"({_OP} in ['Gt', 'Lt', 'Gte', 'Lte'] && size({_VALS}) > 0) ? "
    f"({_V}.matches({_INT}) && {_VALS}[0].matches({_INT}) && "
    f"({_OP} == 'Gt' ? int({_V}) > int({_VALS}[0]) : {_OP} == 'Lt' ? "
    f"int({_V}) < int({_VALS}[0]) : {_OP} == 'Gte' ? int({_V}) >= int({_VALS}[0]) : "
    f"int({_V}) <= int({_VALS}[0]))) : true)")
_REQS = (f"(object.kind == 'Provisioner' ? ({guard('object', 'spec.requirements')} ? "
         "object.spec.requirements : []) : "
         f"({guard('object', 'spec.template.spec.requirements')} ? "
         "object.spec.template.spec.requirements : []))")
_N = "size(variables.tooBig)"
_MESSAGE = (
    "object.kind + ' ' + (has(object.metadata.name) ? object.metadata.name : '?') + "
    f"' can launch ' + string({_N}) + ' GPU instance type' + ({_N} != 1 ? 's' : '') + "
    "' that are not the smallest size for their GPU (' + "
    "variables.tooBig.map(t, t.t).join(', ') + variables.tooBig[0].cost + '): restrict ' + "
    "(object.kind == 'Provisioner' ? 'spec.requirements' : 'spec.template.spec.requirements')"
    " + ' to the smallest size per GPU (' + variables.smallestNames.filter(s, "
    "variables.allowed.exists(t, t.small == s)).join(', ') + ') with "
    "node.kubernetes.io/instance-type In, and scale out with more nodes'")

ADMISSION = AdmissionRule(
    rule_id="karpenter-gpu-smallest",
    kinds=(("karpenter.sh", "NodePool"), ("karpenter.sh", "Provisioner")),
    variables=(
        ("reqs", f"{_REQS}.filter(r, has(r.key) && r.key in variables.keyIndex)"),
        ("allowed", f"variables.types.filter(t, variables.reqs.all(r, {_MATCH}))"),
        ("tooBig", "variables.allowed.filter(t, t.big)"),
    ),
    validations=(Validation(
        expression="size(variables.tooBig) == 0",
        message=("karpenter-gpu-smallest: the NodePool can launch GPU instance types that are "
                 "not the smallest size for their GPU; restrict its requirements"),
        message_expression=f"'karpenter-gpu-smallest: ' + {_MESSAGE}"),),
    uses_roles=False,
    compiled=_compiled,
)

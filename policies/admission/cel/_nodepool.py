# ruff: noqa: RUF001, RUF003  (× is the multiplication sign users read in messages)
"""CEL for Karpenter NodePools (karpenter.sh v1, v1beta1; Provisioner v1alpha5): which GPU
instance types their requirements let Karpenter launch, as the Python rules judge it
(:func:`policies.rules.karpenter_gpu_smallest.allowed_types`).

The GPU catalog is compiled into the policy at render time as CEL literals (``types``: each
GPU type's Karpenter labels in ``keyIndex`` order, whether it is too big at the configured
maxPerGpuPremiumPct, its smallest size, its price note): the catalog is the kit's data, read
when the policy is rendered. ``reqs`` are the requirements whose keys the catalog models (EKS
Auto Mode's ``eks.amazonaws.com/instance-*`` and the ``beta.kubernetes.io`` keys read as the
labels they mirror); the others exclude nothing, as in the rules.
"""

from __future__ import annotations

import json

from gpupool.catalog import Catalog
from policies.admission.kinds import guard
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


def compiled_types(p: RuleParams, catalog: Catalog) -> tuple[tuple[str, str], ...]:
    """``keyIndex``, ``types`` (every GPU type: its labels, too big at the karpenter-gpu-
    smallest parameter, its smallest size, its price note) and ``smallestNames``."""
    premium = p.max_per_gpu_premium_pct if isinstance(p, Params) else 0.0
    index = {k: i for i, k in enumerate(_KEYS)}
    index.update({a: index[k] for a, k in _ALIASES.items()})
    assert set(index) == set(MODELLED), "every modelled label has a place"
    rows = []
    for t in catalog:
        big = _too_big(t, catalog, premium)
        floor = catalog.smallest_like(t.instance_type)
        ratio = _premium(t, catalog)
        cost = "" if not big or floor is None or ratio in (0, float("inf")) else (
            f"; {t.instance_type} costs {ratio:.2f}× {floor.instance_type} per GPU-hour "
            f"({_price(t)} against {_price(floor)})")
        rows.append((-ratio if big else 1.0, len(rows), {
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
REQUIREMENTS = f"{_REQS}.filter(r, has(r.key) && r.key in variables.keyIndex)"
ALLOWED = f"variables.types.filter(t, variables.reqs.all(r, {_MATCH}))"

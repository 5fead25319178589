# ruff: noqa: RUF003  (× is the multiplication sign users read in messages)
"""karpenter-gpu-smallest at admission: a NodePool allows only the smallest size per GPU.

The rule judges requirements against the GPU catalog; so does the policy, with the catalog
compiled into it at render time (``types``: every GPU type's Karpenter labels, whether it is
too big at the configured maxPerGpuPremiumPct, its smallest size and price): the parameter
and the catalog are data the kit owns, read when the policy is rendered (re-render after
changing either). Requirement keys outside the modelled labels exclude nothing, as in the rule.
"""

from __future__ import annotations

from policies.admission.cel._nodepool import ALLOWED, REQUIREMENTS, compiled_types
from policies.admission.spec import AdmissionRule, Validation

_N = "size(variables.tooBig)"
_MESSAGE = (
    "object.kind + ' ' + (has(object.metadata.name) ? object.metadata.name : '?') + "
    f"' can launch ' + string({_N}) + ' GPU instance type' + ({_N} != 1 ? 's' : '') + "
    "' that are not the smallest size for their GPU (' + "
    "variables.tooBig.filter(t, variables.tooBig.indexOf(t) < 6).map(t, t.t).join(', ') + "
    f"({_N} > 6 ? ' and ' + string({_N} - 6) + ' more' : '') + "  # six named, as the rule
    "variables.tooBig[0].cost + '): restrict ' + "
    "(object.kind == 'Provisioner' ? 'spec.requirements' : 'spec.template.spec.requirements')"
    " + ' to the smallest size per GPU (' + variables.smallest.filter(s, "
    "variables.smallest.indexOf(s) < 8).join(', ') + ') with "
    "node.kubernetes.io/instance-type In, and scale out with more nodes'")

ADMISSION = AdmissionRule(
    rule_id="karpenter-gpu-smallest",
    kinds=(("karpenter.sh", "NodePool"), ("karpenter.sh", "Provisioner")),
    variables=(
        ("reqs", REQUIREMENTS),
        ("allowed", ALLOWED),
        ("tooBig", "variables.allowed.filter(t, t.big)"),
        ("smallest", "variables.smallestNames.filter(s, variables.allowed.exists(t, "
                     "t.small == s))"),
    ),
    validations=(Validation(
        expression="size(variables.tooBig) == 0",
        message=("karpenter-gpu-smallest: the NodePool can launch GPU instance types that are "
                 "not the smallest size for their GPU; restrict its requirements"),
        message_expression=f"'karpenter-gpu-smallest: ' + {_MESSAGE}"),),
    uses_roles=False,
    compiled=compiled_types,
)

"""gpu-nodes-tainted at admission: a NodePool that can launch GPU nodes taints them.

Params (ConfigMap data): ``taintKeys`` (one a line). Which GPU types a NodePool can launch is
judged as karpenter-gpu-smallest judges it: its requirements against the GPU catalog compiled
into the policy (:mod:`._nodepool`). As in the rule, the last taint of a key is the one that
counts, and NoSchedule or NoExecute keep pods off. (The rule's EKS managed node groups are AWS
resources, judged by the PR check and the CrossGuard pack, not at Kubernetes admission.)
"""

from __future__ import annotations

from collections.abc import Mapping

from policies.admission.cel._gpu import lines
from policies.admission.cel._nodepool import ALLOWED, REQUIREMENTS, compiled_types
from policies.admission.kinds import guard
from policies.admission.spec import AdmissionRule, Validation
from policies.rules.base import RuleParams
from policies.rules.gpu_nodes_tainted import Params


def _params(p: RuleParams) -> Mapping[str, str]:
    assert isinstance(p, Params)
    return {"taintKeys": "\n".join(p.taint_keys)}


_TAINTS = (f"(object.kind == 'Provisioner' ? ({guard('object', 'spec.taints')} ? "
           "object.spec.taints : []) : "
           f"({guard('object', 'spec.template.spec.taints')} ? "
           "object.spec.template.spec.taints : []))")
_KEY = "(has(t.key) ? t.key : '')"
_EFFECT = "(has(t.effect) ? t.effect : '')"
_LAST = "variables.taints.filter(t, {key} == k)[size(variables.taints.filter(t, {key} == k)) - 1]"
_KEPT = ("variables.keys.exists(k, variables.taints.exists(t, {key} == k) && "
         "(has(LAST.effect) ? LAST.effect : '') in ['NoSchedule', 'NoExecute'])"
         ).replace("LAST", _LAST).format(key=_KEY)
_PATH = ("(object.kind == 'Provisioner' ? 'spec.taints' : 'spec.template.spec.taints')")
# A taint of one of the keys that does not keep pods off: the first key among the taints, with
# the effect of its last taint (the first entry of the rule's {key: effect} of the taints).
_KEYED = f"variables.taints.filter(t, {_KEY} in variables.keys)"
_ITS = _LAST.replace("== k)", "== variables.firstKey)").format(key=_KEY)
_PROBLEM = (
    "(size(variables.keyed) > 0 ? 'but its ' + variables.firstKey + ' taint has effect ' + "
    f"(has({_ITS}.effect) && {_ITS}.effect != '' ? {_ITS}.effect : '(none)') + "
    "', which does not keep pods off (NoSchedule or NoExecute does)' : "
    "'but no taint keeps pods off them (' + variables.keys.join(' or ') + ' NoSchedule)')")
_MESSAGE = (
    "object.kind + ' ' + (has(object.metadata.name) ? object.metadata.name : '?') + "
    "' can launch GPU nodes (' + variables.allowed[0].t + (size(variables.allowed) > 1 ? "
    "' and ' + string(size(variables.allowed) - 1) + ' more' : '') + ') ' + " + _PROBLEM + " + "
    "': add ' + " + _PATH + " + "
    "' {key: ' + variables.keys[0] + ', value: \"true\", effect: NoSchedule} so CPU-only "
    "pods never hold a GPU node up (GPU pods tolerate it)'")

ADMISSION = AdmissionRule(
    rule_id="gpu-nodes-tainted",
    kinds=(("karpenter.sh", "NodePool"), ("karpenter.sh", "Provisioner")),
    variables=(
        ("reqs", REQUIREMENTS),
        ("allowed", ALLOWED),
        ("keys", lines("taintKeys")),
        ("taints", _TAINTS),
        ("keyed", _KEYED),  # for the message only (variables are evaluated when used)
        ("firstKey", "(has(variables.keyed[0].key) ? variables.keyed[0].key : '')"),
    ),
    validations=(Validation(
        expression=f"size(variables.allowed) == 0 || {_KEPT}",
        message=("gpu-nodes-tainted: a NodePool that can launch GPU nodes must taint them "
                 "(nvidia.com/gpu NoSchedule)"),
        message_expression=f"'gpu-nodes-tainted: ' + {_MESSAGE}"),),
    params=_params,
    uses_roles=False,
    compiled=compiled_types,
)

"""karpenter-gpu-consolidation at admission: a GPU NodePool consolidates empty nodes, soon.

Params (ConfigMap data): ``maxConsolidateAfterSeconds``. Which GPU types a NodePool can launch
is judged as karpenter-gpu-smallest judges it (the catalog compiled into the policy,
:mod:`._nodepool`); ``catalogOrder`` lists them in the catalog's order for the message. As in
the rule: a NodePool's consolidationPolicy (unset: its version's default) must be one that
removes empty nodes; then consolidateAfter, when set, must be a Go duration no longer than the
bound (``Never`` fails), read with CEL's ``duration()`` (Go's ``time.ParseDuration``), and no
disruption budget may hold ``nodes: "0"`` without a schedule for empty nodes. A Provisioner
(v1alpha5) needs ``spec.consolidation.enabled`` or ``spec.ttlSecondsAfterEmpty`` within the
bound. One validation per problem, each with the PR check's message; a NodePool whose policy
fails is judged on that alone, as the rule does.

Where the CEL reads less than the rule: the rule strips spaces around a duration, the CEL does
not (Karpenter's CRD pattern refuses them before validating admission runs), and a message
gives seconds as a whole number (the rule prints ``7200``, and ``8.64e+06`` for 100 days).
"""

from __future__ import annotations

import json
from collections.abc import Mapping

from gpupool.catalog import Catalog
from policies.admission.cel._nodepool import ALLOWED, REQUIREMENTS, compiled_types
from policies.admission.spec import AdmissionRule, Validation
from policies.rules.base import RuleParams
from policies.rules.karpenter_gpu_consolidation import Params

_GO_DURATION = r"'^(0|((\\d+(\\.\\d*)?|\\.\\d+)(h|ms|us|µs|ns|m|s))+)$'"


def _params(p: RuleParams) -> Mapping[str, str]:
    assert isinstance(p, Params)
    return {"maxConsolidateAfterSeconds": str(p.max_consolidate_after_seconds)}


def _compiled(p: RuleParams, catalog: Catalog) -> tuple[tuple[str, str], ...]:
    order = [t.instance_type for t in catalog]
    return (*compiled_types(p, catalog), ("catalogOrder", json.dumps(order)))


_NAME = "object.kind + ' ' + (has(object.metadata.name) ? object.metadata.name : '?')"
_SHOWN = ("(size(variables.launches) > 4 ? variables.launches.filter(n, "
          "variables.launches.indexOf(n) < 4).join(', ') + ' and ' + "
          "string(size(variables.launches) - 4) + ' more' : variables.launches.join(', '))")


def _said(where: str, problem: str) -> str:
    """The PR check's message for ``problem`` at ``where`` (CEL strings)."""
    return (f"'karpenter-gpu-consolidation: ' + {_NAME} + ' can launch GPU nodes (' + {_SHOWN} "
            f"+ ') but ' + {where} + ' ' + {problem} + ': empty GPU nodes would stay up, billed, "
            "running nothing; let Karpenter consolidate them within ' + "
            "string(variables.limit) + ' s (consolidationPolicy WhenEmpty or "
            "WhenEmptyOrUnderutilized, consolidateAfter 5m)'")


_A = "variables.after"
_AFTER_PROBLEM = (
    f"({_A} == 'Never' ? 'is Never' : !{_A}.matches({_GO_DURATION}) ? "
    f"\"is '\" + {_A} + \"', not a duration (Karpenter takes 30s, 5m, 1h or Never)\" : "
    f"'is ' + {_A} + ' (' + string(duration({_A}).getSeconds()) + ' s), longer than "
    "maxConsolidateAfterSeconds ' + string(variables.limit))")
_BUDGET = "variables.budgets.indexOf(variables.blocking[0])"
_TTL = "object.spec.ttlSecondsAfterEmpty"
_NODE_POOL = "(variables.gpu && object.kind == 'NodePool')"

ADMISSION = AdmissionRule(
    rule_id="karpenter-gpu-consolidation",
    kinds=(("karpenter.sh", "NodePool"), ("karpenter.sh", "Provisioner")),
    variables=(
        ("reqs", REQUIREMENTS),
        ("allowed", ALLOWED),
        ("gpu", "size(variables.allowed) > 0"),
        ("launches", "variables.catalogOrder.filter(n, variables.allowed.exists(t, t.t == n))"),
        ("limit", "int(params.data.maxConsolidateAfterSeconds)"),
        ("version", "object.apiVersion.endsWith('v1beta1') ? 'v1beta1' : 'v1'"),
        ("disruption", "has(object.spec) && has(object.spec.disruption) ? "
                       "object.spec.disruption : {}"),
        ("policies", "variables.version == 'v1beta1' ? ['WhenEmpty', 'WhenUnderutilized'] : "
                     "['WhenEmpty', 'WhenEmptyOrUnderutilized']"),
        ("policy", "has(variables.disruption.consolidationPolicy) ? "
                   "string(variables.disruption.consolidationPolicy) : "
                   "variables.version == 'v1beta1' ? 'WhenUnderutilized' : "
                   "'WhenEmptyOrUnderutilized'"),
        ("policyOk", "variables.policy in variables.policies"),
        ("after", "has(variables.disruption.consolidateAfter) ? "
                  "string(variables.disruption.consolidateAfter) : ''"),
        ("afterOk", f"{_A} == '' || ({_A} != 'Never' && {_A}.matches({_GO_DURATION}) && "
                    f"duration({_A}) <= duration(string(variables.limit) + 's'))"),
        ("budgets", "has(variables.disruption.budgets) ? variables.disruption.budgets : []"),
        ("blocking", "variables.budgets.filter(b, !has(b.schedule) && has(b.nodes) && "
                     "string(b.nodes).matches('^\\\\s*0%?\\\\s*$') && (!has(b.reasons) || "
                     "type(b.reasons) != list || size(b.reasons) == 0 || "
                     "'Empty' in b.reasons))"),
        ("consolidates", "has(object.spec) && has(object.spec.consolidation) && "
                         "has(object.spec.consolidation.enabled) && "
                         "object.spec.consolidation.enabled == true"),
        ("ttlSet", f"has(object.spec) && has({_TTL})"),
    ),
    validations=(
        Validation(
            expression=f"!{_NODE_POOL} || variables.policyOk",
            message=("karpenter-gpu-consolidation: a GPU NodePool must consolidate empty nodes "
                     "(consolidationPolicy WhenEmpty or WhenEmptyOrUnderutilized)"),
            message_expression=_said(
                "'spec.disruption.consolidationPolicy'",
                "'is ' + variables.policy + ' (Karpenter ' + variables.version + ' consolidates "
                "empty nodes with ' + variables.policies.join(' or ') + ')'")),
        Validation(
            expression=f"!{_NODE_POOL} || !variables.policyOk || variables.afterOk",
            message=("karpenter-gpu-consolidation: a GPU NodePool's consolidateAfter must be a "
                     "duration within maxConsolidateAfterSeconds"),
            message_expression=_said("'spec.disruption.consolidateAfter'", _AFTER_PROBLEM)),
        Validation(
            expression=(f"!{_NODE_POOL} || !variables.policyOk || "
                        "size(variables.blocking) == 0"),
            message=("karpenter-gpu-consolidation: a disruption budget of 0 nodes without a "
                     "schedule keeps empty GPU nodes"),
            message_expression=_said(
                f"'spec.disruption.budgets[' + string({_BUDGET}) + ']'",
                "'holds nodes \"0\" at all times for empty nodes (no schedule)'")),
        Validation(
            expression=("!(variables.gpu && object.kind == 'Provisioner') || "
                        f"variables.consolidates || (variables.ttlSet && !(type({_TTL}) == int "
                        f"&& {_TTL} > variables.limit))"),
            message=("karpenter-gpu-consolidation: a GPU Provisioner must enable consolidation "
                     "or set ttlSecondsAfterEmpty within maxConsolidateAfterSeconds"),
            message_expression=_said(
                "'spec.ttlSecondsAfterEmpty'",
                f"(!variables.ttlSet ? 'is unset and spec.consolidation is not enabled' : "
                f"'is ' + string({_TTL}) + ' s, longer than maxConsolidateAfterSeconds ' + "
                "string(variables.limit))")),
    ),
    params=_params,
    uses_roles=False,
    compiled=_compiled,
)

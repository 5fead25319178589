"""The admission objects of the kit's per-object Kubernetes rules, from one policy config.

For each rule of :data:`policies.admission.cel.ADMISSION_RULES` whose configured enforcement
is not ``disabled``: a ValidatingAdmissionPolicy (admissionregistration.k8s.io/v1: its
matchConstraints from the kinds the rule reads, its CEL variables and validations, its
waivers as matchConditions), a ValidatingAdmissionPolicyBinding (``validationActions``:
mandatory → [Deny], advisory → [Warn, Audit]; ``paramRef`` to the ConfigMap) and, for a rule
with parameters, a ConfigMap holding them as the policy config file sets them. The settings
are the ones ``gpupool check --config FILE --waivers FILE`` reads, so a pull request, the
CrossGuard pack and the cluster judge with the same parameters and exceptions.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import date
from typing import Any, Final

from gpupool.catalog import Catalog
from policies.admission.cel import ADMISSION_RULES
from policies.admission.kinds import GROUP_KIND, plural, roles_cel
from policies.admission.spec import AdmissionRule
from policies.admission.waivers import conditions
from policies.rules import get_rule
from policies.rules.base import Enforcement
from policies.settings import Settings

API: Final = "admissionregistration.k8s.io/v1"
NAMESPACE: Final = "gpupool-system"
PREFIX: Final = "gpupool-"
MANAGED: Final = {"app.kubernetes.io/managed-by": "gpupool", "app.kubernetes.io/part-of": "gpupool"}
ACTIONS: Final = {Enforcement.MANDATORY: ["Deny"], Enforcement.ADVISORY: ["Warn", "Audit"]}


def admission_objects(settings: Settings, catalog: Catalog, *, today: date | None = None,
                      namespace: str = NAMESPACE) -> list[dict[str, Any]]:
    """Every object to apply, the params namespace first; none when every rule is disabled."""
    today = today or date.today()
    out: list[dict[str, Any]] = []
    for spec in ADMISSION_RULES:
        if settings.enforcement(spec.rule_id) is Enforcement.DISABLED:
            continue
        out.extend(rule_objects(spec, settings, catalog, today, namespace))
    if out and any(o["kind"] == "ConfigMap" for o in out):
        out.insert(0, {"apiVersion": "v1", "kind": "Namespace",
                       "metadata": {"name": namespace, "labels": dict(MANAGED)}})
    return out


def rule_objects(spec: AdmissionRule, settings: Settings, catalog: Catalog, today: date,
                 namespace: str = NAMESPACE) -> list[dict[str, Any]]:
    """The policy, binding and (if the rule has parameters) ConfigMap of one rule."""
    rule = get_rule(spec.rule_id)
    level = settings.enforcement(spec.rule_id)
    params = settings.params(spec.rule_id)
    name = f"{PREFIX}{spec.rule_id}"
    matched, carried, left = conditions(spec.rule_id, settings.waivers, today)
    variables = [("gk", GROUP_KIND)]
    if spec.uses_roles:
        variables.append(("roles", roles_cel(list(spec.kinds))))
    if spec.uses_old_roles:
        variables.append(("oldRoles", roles_cel(list(spec.kinds), "oldObject")))
    if spec.compiled is not None:
        variables.extend(spec.compiled(params, catalog))
    variables.extend(spec.variables)
    notes = {"gpupool.io/policy": spec.rule_id, "gpupool.io/title": rule.meta.title,
             "gpupool.io/enforcement": level.value}
    if carried:
        notes["gpupool.io/waivers"] = "\n".join(carried)
    if left:
        notes["gpupool.io/waivers-left-out"] = "\n".join(left)
    policy_spec: dict[str, Any] = {
        "failurePolicy": "Fail",  # fail closed: an object the CEL cannot judge is refused
        "matchConstraints": {"resourceRules": resource_rules(spec.kinds, spec.operations)},
        **({"matchConditions": matched} if matched else {}),
        "variables": [{"name": n, "expression": e} for n, e in variables],
        "validations": [{"expression": v.expression, "message": v.message,
                         "messageExpression": v.message_expression, "reason": v.reason}
                        for v in spec.validations],
    }
    binding_spec: dict[str, Any] = {"policyName": name, "validationActions": ACTIONS[level]}
    out: list[dict[str, Any]] = []
    if spec.params is not None:
        policy_spec["paramKind"] = {"apiVersion": "v1", "kind": "ConfigMap"}
        binding_spec["paramRef"] = {"name": name, "namespace": namespace,
                                    "parameterNotFoundAction": "Deny"}
        out.append({"apiVersion": "v1", "kind": "ConfigMap",
                    "metadata": {"name": name, "namespace": namespace,
                                 "labels": dict(MANAGED), "annotations": {
                                     "gpupool.io/policy": spec.rule_id}},
                    "data": dict(spec.params(params))})
    out.append({"apiVersion": API, "kind": "ValidatingAdmissionPolicy",
                "metadata": {"name": name, "labels": dict(MANAGED), "annotations": notes},
                "spec": policy_spec})
    out.append({"apiVersion": API, "kind": "ValidatingAdmissionPolicyBinding",
                "metadata": {"name": name, "labels": dict(MANAGED),
                             "annotations": {"gpupool.io/policy": spec.rule_id}},
                "spec": binding_spec})
    return out


def resource_rules(kinds: Sequence[tuple[str, str]],
                   operations: Sequence[str] = ("CREATE", "UPDATE")) -> list[dict[str, Any]]:
    """One rule per API group: its resources, every version, on ``operations``."""
    by_group: dict[str, list[str]] = {}
    for group, kind in kinds:
        by_group.setdefault(group, []).append(plural(kind))
    return [{"apiGroups": [g], "apiVersions": ["*"], "resources": sorted(set(r)),
             "operations": list(operations), "scope": "*"}
            for g, r in sorted(by_group.items())]

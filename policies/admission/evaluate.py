"""Judge an object with the rendered admission policies, as the API server would.

What the API server does for a ValidatingAdmissionPolicy, in order: match the request
against ``matchConstraints`` (group, resource, operation); find the bindings and their params
(a missing ConfigMap with ``parameterNotFoundAction: Deny`` refuses); evaluate
``matchConditions`` (all must hold, else the policy does not apply); bind ``variables``; each
validation that is false fails with its ``messageExpression`` (its ``message`` when that
cannot be evaluated); an expression that errors falls to ``failurePolicy`` (Fail: refused).

The object is the one the API server passes: :func:`api_object` applies what it does before
validating admission that the rules can see (a Pod's requests default to its limits; a
built-in kind's quantities are strings). CEL runs on cel-python with Kubernetes' library
functions (:mod:`policies.admission.library`). Used by the tests (every rule example, the
hypothesis comparison, the kit's own render) and documented as how they were checked.
"""

from __future__ import annotations

import copy
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from functools import cache
from typing import Any, Final

import celpy
from celpy import celtypes

from policies.admission.kinds import plural
from policies.admission.library import FUNCTIONS

_BUILTIN: Final = frozenset({"", "apps", "batch"})


@dataclass(frozen=True)
class Verdict:
    """One policy's answer: ``applies`` (matched and its conditions held), the messages of
    the validations that failed, and what the binding does with them."""

    policy: str
    applies: bool
    failures: tuple[str, ...] = ()
    actions: tuple[str, ...] = ()

    @property
    def denied(self) -> bool:
        return bool(self.failures) and "Deny" in self.actions


@dataclass
class Decision:
    verdicts: list[Verdict] = field(default_factory=list)

    @property
    def denied(self) -> bool:
        return any(v.denied for v in self.verdicts)

    def failures(self, policy: str | None = None) -> list[str]:
        return [m for v in self.verdicts if policy in (None, v.policy) for m in v.failures]


def group_of(obj: Mapping[str, Any]) -> tuple[str, str]:
    api = str(obj.get("apiVersion", ""))
    return (api.rsplit("/", 1)[0], api.rsplit("/", 1)[1]) if "/" in api else ("", api)


def api_object(obj: Mapping[str, Any]) -> dict[str, Any]:
    """The object as validating admission sees it (the defaulting the rules can tell)."""
    out = copy.deepcopy(dict(obj))
    group, _ = group_of(out)
    if group not in _BUILTIN:
        return out  # a custom resource is passed as stored: no conversion of quantities
    for c in _containers(out):
        res = c.get("resources")
        if not isinstance(res, dict):
            continue
        for side in ("limits", "requests"):
            if isinstance(res.get(side), dict):
                res[side] = {k: v if isinstance(v, str) else _number(v)
                             for k, v in res[side].items()}
        if out.get("kind") == "Pod" and isinstance(res.get("limits"), dict):
            requests = res.setdefault("requests", {})  # SetDefaults_Pod
            for k, v in res["limits"].items():
                requests.setdefault(k, v)
    return out


def _number(v: Any) -> str:
    return str(int(v)) if isinstance(v, float) and v.is_integer() else str(v)


def _containers(obj: dict[str, Any]) -> list[dict[str, Any]]:
    spec: Any = obj.get("spec") or {}
    if obj.get("kind") != "Pod":
        for key in (("jobTemplate", "spec", "template", "spec") if obj.get("kind") == "CronJob"
                    else ("template", "spec")):
            spec = spec.get(key) if isinstance(spec, dict) else None
    if not isinstance(spec, dict):
        return []
    return [c for k in ("containers", "initContainers") for c in spec.get(k) or []
            if isinstance(c, dict)]


def request_of(obj: Mapping[str, Any], operation: str = "CREATE") -> dict[str, Any]:
    group, version = group_of(obj)
    meta = obj.get("metadata") or {}
    kind = str(obj.get("kind", ""))
    return {"kind": {"group": group, "version": version, "kind": kind},
            "resource": {"group": group, "version": version, "resource": plural(kind)},
            "namespace": str(meta.get("namespace") or ""), "name": str(meta.get("name") or ""),
            "operation": operation, "userInfo": {"username": "gpupool-test"}}


@cache
def _program(expression: str) -> Any:
    env = celpy.Environment()
    return env.program(env.compile(expression), functions=FUNCTIONS)


def _eval(expression: str, activation: Mapping[str, Any]) -> Any:
    """The value, or the error (as the API server would see an evaluation error)."""
    try:
        return _program(expression).evaluate(dict(activation))
    except Exception as e:  # cel-python raises its own errors and plain ones
        return e if isinstance(e, celpy.CELEvalError) else celpy.CELEvalError(str(e))


def judge(policies: Sequence[Mapping[str, Any]], obj: Mapping[str, Any], *,
          namespace_object: Mapping[str, Any] | None = None,
          old: Mapping[str, Any] | None = None, operation: str | None = None) -> Decision:
    """Every policy of the rendered set (policies, bindings, ConfigMaps) on ``obj``: a CREATE,
    or with ``old`` (the stored object, passed as ``oldObject``) an UPDATE."""
    passed = api_object(obj)
    before = api_object(old) if old is not None else None
    request = request_of(passed, operation or ("UPDATE" if old is not None else "CREATE"))
    by_kind: dict[str, list[Mapping[str, Any]]] = {}
    for o in policies:
        by_kind.setdefault(str(o.get("kind")), []).append(o)
    decision = Decision()
    for policy in by_kind.get("ValidatingAdmissionPolicy", []):
        name = policy["metadata"]["name"]
        for binding in by_kind.get("ValidatingAdmissionPolicyBinding", []):
            if binding["spec"]["policyName"] == name:
                decision.verdicts.append(_one(policy, binding, by_kind.get("ConfigMap", []),
                                              passed, before, request, namespace_object))
    return decision


def _matches(policy: Mapping[str, Any], request: Mapping[str, Any]) -> bool:
    res = request["resource"]
    for rule in policy["spec"]["matchConstraints"]["resourceRules"]:
        if (res["group"] in rule["apiGroups"] and res["resource"] in rule["resources"]
                and request["operation"] in rule["operations"]):
            return True
    return False


def _one(policy: Mapping[str, Any], binding: Mapping[str, Any],
         config_maps: Sequence[Mapping[str, Any]], obj: Mapping[str, Any],
         old: Mapping[str, Any] | None, request: Mapping[str, Any],
         namespace_object: Mapping[str, Any] | None) -> Verdict:
    name = policy["metadata"]["name"]
    spec = policy["spec"]
    actions = tuple(binding["spec"]["validationActions"])
    if not _matches(policy, request):
        return Verdict(name, False)
    params: Any = None
    ref = binding["spec"].get("paramRef")
    if ref is not None:
        params = next((c for c in config_maps if c["metadata"]["name"] == ref["name"]
                       and c["metadata"].get("namespace") == ref.get("namespace")), None)
        if params is None:
            return Verdict(name, True, (f"failed to find params {ref['name']}",), actions)
    activation: dict[str, Any] = {
        "object": celpy.json_to_cel(obj), "oldObject": celpy.json_to_cel(old),
        "request": celpy.json_to_cel(request), "params": celpy.json_to_cel(params),
        "namespaceObject": celpy.json_to_cel(namespace_object)}
    for cond in spec.get("matchConditions", []):
        held = _eval(cond["expression"], activation)
        if isinstance(held, Exception):
            return Verdict(name, True, (f"matchCondition {cond['name']} failed: {held}",),
                           actions)
        if not bool(held):
            return Verdict(name, False)
    values: dict[celtypes.StringType, Any] = {}
    for v in spec.get("variables", []):
        activation["variables"] = celtypes.MapType(values)
        values[celtypes.StringType(v["name"])] = _eval(v["expression"], activation)
    activation["variables"] = celtypes.MapType(values)
    failures = []
    for check in spec["validations"]:
        held = _eval(check["expression"], activation)
        if isinstance(held, Exception):
            failures.append(f"expression could not be evaluated ({held}): failurePolicy Fail")
        elif not bool(held):
            said = _eval(check.get("messageExpression", "''"), activation)
            failures.append(str(said) if isinstance(said, str) and str(said).strip()
                            else check.get("message", "failed"))
    return Verdict(name, True, tuple(failures), actions)

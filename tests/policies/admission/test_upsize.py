"""gpu-no-vertical-upsize at admission: an UPDATE (oldObject against object) gets the PR
check's verdict and, word for word, its first message; a CREATE is never denied.

The hypothesis test builds old and new objects of eight kinds the rule reads (Pods,
Deployments, CronJobs, PyTorchJobs, RayClusters, Argo Workflows, KServe InferenceServices,
Volcano Jobs), whose pod templates keep, change, gain or lose roles, with app, init and
(for Argo) sidecar containers asking for GPUs in limits, requests or both, counts written as
integers, strings, milli-units, suffixes, exponents, and text that is not a number.
"""

from __future__ import annotations

from typing import Any

import celpy
from celpy import celtypes
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from policies.admission.cel import gpu_no_vertical_upsize as cel
from policies.admission.cel._gpu import double_shown
from policies.admission.evaluate import judge
from policies.admission.library import FUNCTIONS
from policies.model import ChangeKind, ResourceChange, normalise_inputs, resource_kind
from policies.rules import get_rule
from policies.rules._pod_upsize import DENOMINATORS, shown, times

RULE = "gpu-no-vertical-upsize"
POLICY = f"gpupool-{RULE}"


def _change(old: dict[str, Any] | None, new: dict[str, Any]) -> ResourceChange:
    kind = f"kubernetes:{new['apiVersion']}:{new['kind']}"
    return ResourceChange(f"{new['kind']}/{new['metadata'].get('namespace', '')}/w", kind, "w",
                          ChangeKind.UPDATE if old is not None else ChangeKind.CREATE,
                          normalise_inputs(new),
                          None if old is None else normalise_inputs(old), "generated",
                          resource_kind(kind))


def _ours(harness: Any) -> list[dict[str, Any]]:
    """This rule's policy and binding alone (judging the others too only costs time)."""
    return [o for o in harness.objects_for(RULE)
            if o["metadata"].get("annotations", {}).get("gpupool.io/policy") == RULE]


def _both(harness: Any, old: dict[str, Any], new: dict[str, Any]) -> tuple[list[str], list[str]]:
    python = [f"{RULE}: {f.message}" for f in harness.python_findings(RULE, [_change(old, new)])]
    cel = judge(_ours(harness), new, old=old).failures(POLICY)
    return python, cel


def test_every_kubernetes_example_says_what_the_pr_check_says(harness: Any) -> None:
    judged = 0
    for example in get_rule(RULE).examples:
        for r in example.resources:
            if not str(r["type"]).startswith("kubernetes:"):
                continue
            python, cel = _both(harness, r["old"], r["new"])
            assert bool(cel) == (not example.allowed), (example.title, cel)
            assert cel == python[:1], (example.title, cel, python)  # the first, word for word
            judged += 1
    assert judged >= 7


def test_a_create_has_no_baseline_and_is_never_denied_here(harness: Any) -> None:
    objects = _ours(harness)
    assert [o["kind"] for o in objects] == ["ValidatingAdmissionPolicy",
                                            "ValidatingAdmissionPolicyBinding"]  # no params
    policy = objects[0]
    assert {op for r in policy["spec"]["matchConstraints"]["resourceRules"]
            for op in r["operations"]} == {"UPDATE"}
    example = next(e for e in get_rule(RULE).examples if e.title.startswith("Deployment's"))
    new = example.resources[0]["new"]
    (verdict,) = [v for v in judge(objects, new).verdicts if v.policy == POLICY]
    assert not verdict.applies and not verdict.failures  # a CREATE is not matched
    assert judge(objects, new, old=example.resources[0]["old"]).failures(POLICY)
    assert not judge(objects, new, old=new).failures(POLICY)  # an UPDATE that changes nothing


COUNTS = st.one_of(st.integers(0, 9), st.sampled_from(
    ["0", "1", "2", "4", "8", "500m", "1500m", "2000m", "1k", "1e1", "1.0", "3", "two", ""]))
RESOURCES = st.sampled_from(["nvidia.com/gpu", "amd.com/gpu", "nvidia.com/gpu.shared"])


@st.composite
def containers(draw: Any) -> dict[str, Any]:
    res: dict[str, Any] = {}
    for side in ("limits", "requests"):
        if draw(st.integers(0, 3)):  # mostly set: GPUs are what this compares
            chosen = draw(st.dictionaries(RESOURCES, COUNTS, max_size=2))
            if draw(st.booleans()):
                chosen["cpu"] = "2"
            res[side] = chosen
    return {"name": draw(st.sampled_from(["main", "side", "init"])), "image": "x",
            "resources": res}


@st.composite
def pod_specs(draw: Any) -> dict[str, Any]:
    spec: dict[str, Any] = {"containers": draw(st.lists(containers(), min_size=1, max_size=2))}
    if draw(st.booleans()):
        spec["initContainers"] = draw(st.lists(containers(), min_size=1, max_size=2))
    return spec


def _template(spec: dict[str, Any]) -> dict[str, Any]:
    return {"metadata": {"labels": {"app": "w"}}, "spec": spec}


def _argo(spec: dict[str, Any]) -> dict[str, Any]:
    """An Argo template: its first container as ``container``, the rest as sidecars."""
    first, *rest = spec["containers"]
    out = {"container": first, **({"sidecars": rest} if rest else {})}
    return out | ({"initContainers": spec["initContainers"]} if "initContainers" in spec else {})


def _kserve(spec: dict[str, Any]) -> dict[str, Any]:
    """A predictor: its first container as the model spec, the rest as containers."""
    first, *rest = spec["containers"]
    out: dict[str, Any] = {"model": {"modelFormat": {"name": "x"}, **first}}
    return out | ({"containers": rest} if rest else {})


KINDS = ("Pod", "Deployment", "CronJob", "PyTorchJob", "RayCluster", "Workflow",
         "InferenceService", "VolcanoJob")
ROLES = {"Pod": [""], "Deployment": [""], "CronJob": [""], "PyTorchJob": ["Master", "Worker"],
         "RayCluster": ["head", "a", "b"], "Workflow": ["t1", "t2"],
         "InferenceService": ["predictor", "worker"], "VolcanoJob": ["t0", "t1", None]}


def build(kind: str, roles: dict[Any, dict[str, Any]]) -> dict[str, Any]:
    """An object of ``kind`` whose pod templates are ``roles`` (name → pod spec)."""
    meta = {"name": "w", "namespace": "ml"}
    one = roles.get("", {"containers": [{"name": "main", "image": "x"}]})
    if kind == "Pod":
        return {"apiVersion": "v1", "kind": "Pod", "metadata": meta, "spec": one}
    if kind == "Deployment":
        return {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": meta, "spec": {
            "selector": {"matchLabels": {"app": "w"}}, "template": _template(one)}}
    if kind == "CronJob":
        return {"apiVersion": "batch/v1", "kind": "CronJob", "metadata": meta, "spec": {
            "schedule": "@daily", "jobTemplate": {"spec": {"template": _template(
                one | {"restartPolicy": "Never"})}}}}
    if kind == "PyTorchJob":
        return {"apiVersion": "kubeflow.org/v1", "kind": "PyTorchJob", "metadata": meta,
                "spec": {"pytorchReplicaSpecs": {n: {"replicas": 2, "template": _template(s)}
                                                 for n, s in roles.items()}}}
    if kind == "RayCluster":
        spec: dict[str, Any] = {"workerGroupSpecs": [
            {"groupName": n, "replicas": 1, "template": _template(s)}
            for n, s in roles.items() if n != "head"]}
        if "head" in roles:
            spec["headGroupSpec"] = {"template": _template(roles["head"])}
        return {"apiVersion": "ray.io/v1", "kind": "RayCluster", "metadata": meta, "spec": spec}
    if kind == "Workflow":
        return {"apiVersion": "argoproj.io/v1alpha1", "kind": "Workflow", "metadata": meta,
                "spec": {"entrypoint": "t1", "templates": [{"name": n, **_argo(s)}
                                                           for n, s in roles.items()]}}
    if kind == "InferenceService":
        predictor = _kserve(roles.get("predictor", {"containers": [{"name": "kserve"}]}))
        if "worker" in roles:
            predictor["workerSpec"] = roles["worker"]
        return {"apiVersion": "serving.kserve.io/v1beta1", "kind": "InferenceService",
                "metadata": meta, "spec": {"predictor": predictor}}
    tasks = [{"replicas": 1, "template": _template(s), **({"name": n} if n else {})}
             for n, s in roles.items()]
    return {"apiVersion": "batch.volcano.sh/v1alpha1", "kind": "Job", "metadata": meta,
            "spec": {"tasks": tasks}}


@st.composite
def updates(draw: Any) -> tuple[dict[str, Any], dict[str, Any]]:
    """(old, new) of one kind: each role of the new kept from the old, changed, or added."""
    kind = draw(st.sampled_from(KINDS))
    names = ROLES[kind]
    fixed = kind in ("Pod", "Deployment", "CronJob")
    old_names = names if fixed else draw(st.lists(st.sampled_from(names), min_size=1,
                                                  max_size=len(names), unique=True))
    old = {n: draw(pod_specs()) for n in old_names}
    new_names = names if fixed else draw(st.lists(st.sampled_from(names), min_size=1,
                                                  max_size=len(names), unique=True))
    new = {n: old[n] if n in old and draw(st.booleans()) else draw(pod_specs())
           for n in new_names}
    return build(kind, old), build(kind, new)


# 100: each draw is judged twice by cel-python (an UPDATE, then the unchanged UPDATE)
@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(pair=updates())
def test_upsize_cel_agrees_with_the_rule_on_generated_updates(harness: Any,
                                                              pair: tuple[dict[str, Any],
                                                                          dict[str, Any]]
                                                              ) -> None:
    old, new = pair
    python, cel = _both(harness, old, new)
    assert bool(python) == bool(cel), (python, cel)
    assert cel == python[:1], (python, cel)
    same, unchanged = _both(harness, new, new)  # oldRoles reads oldObject as roles reads object
    assert same == unchanged, (same, unchanged)


def test_numbers_in_messages_are_written_the_same_from_the_same_doubles() -> None:
    """shown() and times() of the rule against their CEL (double_shown, shared with
    k8s-gpu-per-container's counts, and times), over whole counts, small fractions,
    values no fraction up to /64 is (1/65, milli-units) and counts in the thousands (1006/1000:
    no fraction up to /64)."""
    env = celpy.Environment()

    def program(text: str) -> Any:
        return env.program(env.compile(text), functions=FUNCTIONS)

    one, two = program(double_shown("variables.x")), program(cel.times("variables.x",
                                                                          "variables.y"))
    denominators = celtypes.ListType([celtypes.IntType(d) for d in DENOMINATORS])
    values = [*map(float, range(13)), 1 / 2, 3 / 2, 1 / 3, 2 / 3, 5 / 7, 1 / 64, 63 / 64,
              1 / 65, 0.001, 0.333, 1.001, 65.0, 1000.0, 1006.0]
    said = 0
    for x in values:
        for y in (1.0, 2.0, 3.0, 65.0, 1000.0):
            act = {"variables": celtypes.MapType({
                celtypes.StringType("x"): celtypes.DoubleType(x),
                celtypes.StringType("y"): celtypes.DoubleType(y),
                celtypes.StringType("denominators"): denominators})}
            assert str(two.evaluate(act)) == times(x, y), (x, y)
            said += 1
        assert str(one.evaluate({"variables": celtypes.MapType({
            celtypes.StringType("x"): celtypes.DoubleType(x),
            celtypes.StringType("denominators"): denominators})})) == shown(x), x
    assert said == 5 * len(values)

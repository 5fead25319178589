"""Node hygiene judged both ways: generated objects get the same verdict from the Python rule
and from the generated CEL.

k8s-cpu-pods-off-gpu-nodes: Pods, Deployments, DaemonSets, PyTorchJobs and Volcano Jobs with
tolerations (keyed, keyless, every effect), nodeSelectors and required node-affinity terms
drawn from GPU and ordinary node labels (every operator), containers asking for a GPU or not,
under both allowNodeAgents values and a second taint key. karpenter-gpu-consolidation:
NodePools (v1, v1beta1) and Provisioners, GPU or not, with every consolidation policy,
durations written every way Go reads them (and some it does not), budgets and TTLs.
"""

from __future__ import annotations

from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from policies.admission.evaluate import judge
from policies.sources.kubernetes import Manifest, to_changes

_LABELS = ["nvidia.com/gpu.present", "gpupool.io/pool", "karpenter.k8s.aws/instance-gpu-count",
           "eks.amazonaws.com/instance-gpu-name", "node.kubernetes.io/instance-type",
           "karpenter.k8s.aws/instance-family", "kubernetes.io/os", "topology.kubernetes.io/zone"]
_VALUES = ["true", "false", "0", "1", "g6.xlarge", "g5", "m5.large", "m5", "linux", ""]
_OPS = ["In", "NotIn", "Exists", "DoesNotExist", "Gt", "Lt", "Gte"]


@st.composite
def tolerations(draw: Any) -> dict[str, Any]:
    t: dict[str, Any] = {}
    for key, values in (("key", ["nvidia.com/gpu", "example.com/gpu", "other", ""]),
                        ("operator", ["Exists", "Equal"]),
                        ("effect", ["NoSchedule", "NoExecute", "PreferNoSchedule", ""]),
                        ("value", ["true", ""])):
        if draw(st.booleans()):
            t[key] = draw(st.sampled_from(values))
    return t


@st.composite
def requirement(draw: Any) -> dict[str, Any]:
    op = draw(st.sampled_from(_OPS))
    out: dict[str, Any] = {"key": draw(st.sampled_from(_LABELS)), "operator": op}
    if op not in ("Exists", "DoesNotExist"):
        out["values"] = draw(st.lists(st.sampled_from(_VALUES), min_size=1, max_size=2))
    return out


@st.composite
def pod_specs(draw: Any) -> dict[str, Any]:
    gpus = draw(st.sampled_from([None, 0, 1, "0", "1"]))
    main: dict[str, Any] = {"name": "main", "image": "x"}
    if gpus is not None:
        main["resources"] = {"limits": {"nvidia.com/gpu": gpus}}
    spec: dict[str, Any] = {"containers": [main, {"name": "side", "image": "y"}]}
    if draw(st.booleans()):
        spec["tolerations"] = draw(st.lists(tolerations(), max_size=2))
    if draw(st.booleans()):
        spec["nodeSelector"] = draw(st.dictionaries(st.sampled_from(_LABELS),
                                                    st.sampled_from(_VALUES), max_size=2))
    if draw(st.booleans()):
        terms = draw(st.lists(st.lists(requirement(), max_size=2), max_size=2))
        spec["affinity"] = {"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {
            "nodeSelectorTerms": [{"matchExpressions": t} for t in terms]}}}
    return spec


@st.composite
def workloads(draw: Any) -> dict[str, Any]:
    meta = {"name": "w", "namespace": "ml"}
    kind = draw(st.sampled_from(["Pod", "Deployment", "DaemonSet", "PyTorchJob", "Volcano"]))
    template = {"metadata": {"labels": {"app": "w"}}, "spec": draw(pod_specs())}
    if kind == "Pod":
        return {"apiVersion": "v1", "kind": "Pod", "metadata": meta, "spec": template["spec"]}
    if kind in ("Deployment", "DaemonSet"):
        return {"apiVersion": "apps/v1", "kind": kind, "metadata": meta,
                "spec": {"selector": {"matchLabels": {"app": "w"}}, "template": template}}
    if kind == "PyTorchJob":
        return {"apiVersion": "kubeflow.org/v1", "kind": "PyTorchJob", "metadata": meta,
                "spec": {"pytorchReplicaSpecs": {"Master": {"template": template},
                                                 "Worker": {"template": {
                                                     "spec": draw(pod_specs())}}}}}
    return {"apiVersion": "batch.volcano.sh/v1alpha1", "kind": "Job", "metadata": meta,
            "spec": {"tasks": [{"name": "a", "template": template},
                               {"template": {"spec": draw(pod_specs())}}]}}


CPU_PARAMS = st.fixed_dictionaries({}, optional={
    "allowNodeAgents": st.booleans(),
    "taintKeys": st.sampled_from([["nvidia.com/gpu"], ["nvidia.com/gpu", "example.com/gpu"]])})


def _both(harness: Any, rule_id: str, obj: dict[str, Any], params: dict[str, Any]
          ) -> tuple[bool, list[str]]:
    changes = to_changes([Manifest("gen:1", "generated", obj)])
    python = [f.message for f in harness.python_findings(rule_id, changes, params)]
    cel = judge(harness.objects_for(rule_id, params), obj).failures(f"gpupool-{rule_id}")
    cores = [m.removeprefix(f"{rule_id}: ") for m in cel]
    return bool(python) == bool(cel) and all(c in python for c in cores), [*python, *cel]


# 60 and 25 examples: the CEL runs in cel-python, tens of ms (pods) to half a CPU-second
# (NodePools: every catalog type against the requirements) per object; five suites sharing two
# cores pushed 200 past the 300 s timeout
@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(obj=workloads(), params=CPU_PARAMS)
def test_cpu_pods_cel_agrees_with_the_rule(harness: Any, obj: dict[str, Any],
                                           params: dict[str, Any]) -> None:
    same, said = _both(harness, "k8s-cpu-pods-off-gpu-nodes", obj, params)
    assert same, said


_DURATIONS = ["5m", "30s", "0", "0s", "1h", "1h30m", "2h", "1800s", "1801s", "29m59s", "1.5h",
              ".5h", "300000ms", "Never", "5 m", "5d", "-5m", "5", "m", "1h0m0s", "90us"]


@st.composite
def node_pools(draw: Any) -> dict[str, Any]:
    kind = draw(st.sampled_from(["NodePool", "NodePool-v1beta1", "Provisioner"]))
    types = draw(st.sampled_from([["g6.xlarge"], ["m5.large"], ["g4dn.xlarge", "g5.xlarge"]]))
    reqs = [{"key": "node.kubernetes.io/instance-type", "operator": "In", "values": types}]
    if kind == "Provisioner":
        spec: dict[str, Any] = {"requirements": reqs}
        if draw(st.booleans()):
            spec["consolidation"] = {"enabled": draw(st.booleans())}
        if draw(st.booleans()):
            spec["ttlSecondsAfterEmpty"] = draw(st.sampled_from([30, 1800, 1801, 86400]))
        return {"apiVersion": "karpenter.sh/v1alpha5", "kind": "Provisioner",
                "metadata": {"name": "gpu"}, "spec": spec}
    d: dict[str, Any] = {}
    if draw(st.booleans()):
        d["consolidationPolicy"] = draw(st.sampled_from(
            ["WhenEmpty", "WhenEmptyOrUnderutilized", "WhenUnderutilized"]))
    if draw(st.booleans()):
        d["consolidateAfter"] = draw(st.sampled_from(_DURATIONS))
    if draw(st.booleans()):
        d["budgets"] = draw(st.lists(st.fixed_dictionaries(
            {"nodes": st.sampled_from(["0", "0%", "10%", "1"])},
            optional={"schedule": st.just("0 9 * * mon-fri"), "duration": st.just("8h"),
                      "reasons": st.lists(st.sampled_from(["Empty", "Drifted",
                                                           "Underutilized"]), max_size=2)}),
            max_size=2))
    spec = {"template": {"spec": {"requirements": reqs}}}
    if d or draw(st.booleans()):
        spec["disruption"] = d
    api = "karpenter.sh/v1beta1" if kind.endswith("v1beta1") else "karpenter.sh/v1"
    return {"apiVersion": api, "kind": "NodePool", "metadata": {"name": "gpu"}, "spec": spec}


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(obj=node_pools(), limit=st.sampled_from([None, 60, 1800, 7200]))
def test_consolidation_cel_agrees_with_the_rule(harness: Any, obj: dict[str, Any],
                                                limit: int | None) -> None:
    params = {"maxConsolidateAfterSeconds": limit} if limit is not None else {}
    same, said = _both(harness, "karpenter-gpu-consolidation", obj, params)
    assert same, said

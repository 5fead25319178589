# ruff: noqa: RUF001, RUF003  (× is the multiplication sign users read in messages)
"""The Kubernetes rules on every source: manifests, a Terraform plan with kubernetes_* resources,
a Pulumi preview with kubernetes:apps/v1:Deployment, and the CrossGuard pack over gRPC."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from gpupool.catalog import load_catalog
from policies.engine import evaluate
from policies.model import UNKNOWN, ChangeKind, ResourceChange, normalise_inputs, resource_kind
from policies.rules import get_rule
from policies.settings import load_settings
from policies.sources import load_plans
from policies.testing import PolicyPackHarness, Resource

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures"
PACK_DIR = Path(__file__).resolve().parents[3] / "policies"
DEPLOY = "kubernetes:apps/v1:Deployment"


def findings(*paths: Path) -> dict[tuple[str, str], str]:
    result = evaluate(load_plans([str(p) for p in paths]), load_settings(None, None))
    assert not result.errors
    return {(v.policy, v.resource): v.enforcement.value for v in result.violations}


def deployment(gpus: Any, *, name: str = "llm", namespace: str | None = "ml",
               requests: Any = None) -> dict[str, Any]:
    resources: dict[str, Any] = {"limits": {"nvidia.com/gpu": gpus}}
    if requests is not None:
        resources["requests"] = {"nvidia.com/gpu": requests}
    meta: dict[str, Any] = {"name": name, **({"namespace": namespace} if namespace else {})}
    return {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": meta,
            "spec": {"selector": {"matchLabels": {"app": name}}, "template": {
                "metadata": {"labels": {"app": name}},
                "spec": {"containers": [{"name": "server", "image": "vllm/vllm-openai:v0.6.3",
                                         "resources": resources}]}}}}


def change(obj: dict[str, Any], old: dict[str, Any] | None = None, *,
           type_: str = DEPLOY, address: str = "Deployment/ml/llm",
           references: dict[str, str] | None = None) -> ResourceChange:
    return ResourceChange(address=address, type=type_, name=address.rsplit("/", 1)[-1],
                          change=ChangeKind.UPDATE if old else ChangeKind.CREATE,
                          new=normalise_inputs(obj), old=normalise_inputs(old) if old else None,
                          source="test", kind=resource_kind(type_),
                          references=references or {})


def messages(rule: str, *changes: ResourceChange, **params: Any) -> list[str]:
    return [f.message for f in get_rule(rule).run(list(changes), load_catalog(), params)]


def test_terraform_plan_kubernetes_resources() -> None:
    found = findings(FIXTURES / "terraform" / "kubernetes-deployment.json")
    assert found == {
        ("gpu-no-vertical-upsize", "kubernetes_deployment_v1.llm"): "mandatory",
        ("k8s-gpu-per-container", "kubernetes_deployment_v1.llm"): "mandatory",
        ("k8s-gpu-namespace-quota", "kubernetes_deployment_v1.llm"): "advisory",
        ("karpenter-gpu-smallest", "kubernetes_manifest.gpu_nodepool"): "mandatory",
        ("gpu-nodes-tainted", "kubernetes_manifest.gpu_nodepool"): "mandatory",  # no taints
    }  # the HPA v2 on DCGM_FI_DEV_GPU_UTIL satisfies k8s-gpu-workload-autoscaled


def test_pulumi_preview_deployment_upsize() -> None:
    found = findings(FIXTURES / "pulumi" / "preview-k8s-deployment.json")
    urn = "urn:pulumi:prod::serving::kubernetes:apps/v1:Deployment::llm"
    assert found == {
        ("gpu-no-vertical-upsize", urn): "mandatory",
        ("k8s-gpu-per-container", urn): "mandatory",
        ("k8s-gpu-namespace-quota", urn): "advisory",
        ("k8s-gpu-workload-autoscaled", urn): "mandatory",
    }


def test_manifest_fixtures() -> None:
    found = findings(FIXTURES / "kubernetes")
    assert found == {
        ("k8s-gpu-per-container", "Deployment/llm/llm-serving"): "mandatory",
        ("k8s-gpu-workload-autoscaled", "Deployment/llm/llm-serving"): "mandatory",  # CPU HPA
        ("k8s-gpu-limits", "Deployment/speech/whisper"): "mandatory",  # requests only
        ("k8s-gpu-workload-autoscaled", "Deployment/speech/whisper"): "mandatory",
        ("k8s-gpu-namespace-quota", "Pod/gpu-operator-test"): "advisory",
        ("k8s-gpu-workload-autoscaled", "Deployment/nvidia-plugin-test"): "mandatory",
        ("k8s-gpu-namespace-quota", "Deployment/nvidia-plugin-test"): "advisory",
    }  # the device plugin and DCGM exporter ask for no GPU: nothing to say


def test_helm_rendered_gpu_operator_passes_and_says_why() -> None:
    # the GPU Operator's own chart (real `helm template` output): the operator, NFD and their
    # RBAC ask for no GPU; the NFD worker tolerates the nvidia.com/gpu taint (to label GPU
    # nodes), which is not a GPU request; the ClusterPolicy is a custom resource no rule reads
    path = FIXTURES / "kubernetes" / "helm-template-gpu-operator-v1.10.1.yaml"
    assert findings(path) == {}
    from policies.sources import load_plans

    (plan,) = load_plans([str(path)])
    from policies.facts import k8s as k8s_facts

    worker = next(c for c in plan.changes if c.type == "kubernetes:apps/v1:DaemonSet")
    assert worker.after["spec"]["template"]["spec"]["tolerations"][-1]["key"] == "nvidia.com/gpu"
    obj = k8s_facts.k8s_object(worker)
    assert obj is not None
    wl = k8s_facts.workload(obj)
    assert wl is not None and wl.roles[0].pods.containers and not wl.gpu


@pytest.mark.parametrize(("gpus", "expected"), [
    ("1", []), (1, []), ("2", ["asks for 2 × nvidia.com/gpu"]),
    ("1e1", ["asks for 10 × nvidia.com/gpu"]),
])
def test_per_container_reads_quantities(gpus: Any, expected: list[str]) -> None:
    found = messages("k8s-gpu-per-container", change(deployment(gpus)))
    assert len(found) == len(expected) and all(e in m for e, m in zip(expected, found,
                                                                          strict=True))


def _pod_template(gpus: Any) -> dict[str, Any]:
    return {"spec": {"containers": [{"name": "c", "image": "x",
                                     "resources": {"limits": {"nvidia.com/gpu": gpus}}}]}}


@pytest.mark.parametrize(("kind", "spec", "said"), [
    # the Ray autoscaler on: not "the workerGroupSpecs[0]"
    ("ray.io/v1:RayCluster", {"enableInTreeAutoscaling": True,
                              "headGroupSpec": {"template": _pod_template(0)},
                              "workerGroupSpecs": [{"groupName": "g", "minReplicas": 1,
                                                    "maxReplicas": 4,
                                                    "template": _pod_template(2)}]},
     "2 × nvidia.com/gpu (spec.workerGroupSpecs[0].template.spec.containers[0].resources."
     "limits); at most 1 per container: run 2 × the replicas with"),
    # spec.scaling set: not "the scaling"; 1333m is no small fraction: not limit_denominator's 4/3
    ("serving.kserve.io/v1alpha1:LLMInferenceService", {
        "scaling": {"minReplicas": 1, "maxReplicas": 4, "wva": {}},
        "template": _pod_template("1333m")["spec"]},
     "1333m × nvidia.com/gpu (spec.template.containers[0].resources.limits); at most 1 per "
     "container: run 1333m × the replicas with"),
    # the same word whether numNodes is set or not: numNodes adds nodes
    ("trainer.kubeflow.org/v1alpha1:TrainJob", {"trainer": {"resourcesPerNode": {
        "limits": {"nvidia.com/gpu": "1500m"}}}},
     "3/2 × nvidia.com/gpu (spec.trainer.resourcesPerNode.limits); at most 1 per container: "
     "run 3/2 × the numNodes with"),
])
def test_per_container_says_what_to_multiply_per_kind_and_the_count_exactly(
        kind: str, spec: dict[str, Any], said: str) -> None:
    api, name = kind.rsplit(":", 1)
    obj = {"apiVersion": api, "kind": name, "metadata": {"name": "w", "namespace": "ml"},
           "spec": spec}
    (msg,) = messages("k8s-gpu-per-container", change(
        obj, type_=f"kubernetes:{kind}", address=f"{name}/ml/w"))
    assert said in msg, msg


def test_per_container_multi_gpu_label() -> None:
    obj = deployment(4)
    obj["spec"]["template"]["metadata"]["labels"]["gpupool.io/multi-gpu"] = "true"
    assert messages("k8s-gpu-per-container", change(obj),
                    multiGpuLabels={"gpupool.io/multi-gpu": "true"}) == []
    assert messages("k8s-gpu-per-container", change(obj), multiGpuLabels={
        "gpupool.io/multi-gpu": "true"}, multiGpuMax=2)  # still above the multi-GPU maximum


def test_init_container_counts_towards_the_pod() -> None:
    obj = deployment(1)
    obj["spec"]["template"]["spec"]["initContainers"] = [
        {"name": "warmup", "image": "busybox:1.36", "resources": {"limits": {"nvidia.com/gpu": 2}}}]
    (msg,) = messages("k8s-gpu-per-container", change(obj))
    assert "container warmup asks for 2" in msg and "initContainers[0]" in msg
    # init containers run before the app containers: the pod holds max(2, 1) = 2 GPUs
    up = messages("gpu-no-vertical-upsize", change(obj, deployment(1)))
    assert up and "GPUs per pod 1 → 2" in up[0]


def test_limits_rule_on_unreadable_quantity() -> None:
    (msg,) = messages("k8s-gpu-limits", change(deployment("one")))
    assert "'one' is not a whole number of GPUs" in msg


def test_upsize_needs_old_inputs_and_says_so() -> None:
    (msg,) = [f for f in get_rule("gpu-no-vertical-upsize").run(
        [ResourceChange("Deployment/ml/llm", DEPLOY, "llm", ChangeKind.UPDATE,
                        normalise_inputs(deployment(2)), None, "crossguard",
                        resource_kind(DEPLOY))], load_catalog())]
    assert msg.unknown and "no baseline" in msg.message


def test_upsize_down_or_equal_passes() -> None:
    assert messages("gpu-no-vertical-upsize", change(deployment(1), deployment(2))) == []
    assert messages("gpu-no-vertical-upsize", change(deployment(1), deployment(1))) == []


def test_quota_through_a_pulumi_namespace_reference() -> None:
    """Pulumi autonames namespaces: the name is unknown at preview, the reference is not."""
    ns_urn = "urn:pulumi:prod::p::kubernetes:core/v1:Namespace::team"
    ns = change({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": UNKNOWN}},
                type_="kubernetes:core/v1:Namespace", address=ns_urn)
    quota = change({"apiVersion": "v1", "kind": "ResourceQuota",
                    "metadata": {"name": "gpu", "namespace": UNKNOWN},
                    "spec": {"hard": {"requests.nvidia.com/gpu": "4"}}},
                   type_="kubernetes:core/v1:ResourceQuota", address="q",
                   references={"metadata": ns_urn})
    workload = change(deployment(1, namespace=None) | {"metadata": {
        "name": "llm", "namespace": UNKNOWN}}, address="d", references={"metadata": ns_urn})
    assert messages("k8s-gpu-namespace-quota", ns, quota, workload) == []
    (msg,) = messages("k8s-gpu-namespace-quota", ns, workload)
    assert f"namespace declared by {ns_urn} runs" in msg


def test_scoped_quota_cannot_be_proven() -> None:
    ns = change({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "ml"}},
                type_="kubernetes:core/v1:Namespace", address="Namespace/ml")
    quota = change({"apiVersion": "v1", "kind": "ResourceQuota",
                    "metadata": {"name": "gpu", "namespace": "ml"},
                    "spec": {"hard": {"requests.nvidia.com/gpu": "4"},
                             "scopes": ["BestEffort"]}},
                   type_="kubernetes:core/v1:ResourceQuota", address="ResourceQuota/ml/gpu")
    found = get_rule("k8s-gpu-namespace-quota").run([ns, quota, change(deployment(1))],
                                                    load_catalog())
    assert len(found) == 1 and found[0].unknown and "scoped" in found[0].message


def test_karpenter_provisioner_v1alpha5_and_gt_lt() -> None:
    prov = {"apiVersion": "karpenter.sh/v1alpha5", "kind": "Provisioner",
            "metadata": {"name": "gpu"}, "spec": {"requirements": [
                {"key": "karpenter.k8s.aws/instance-family", "operator": "In",
                 "values": ["g6"]},
                {"key": "karpenter.k8s.aws/instance-cpu", "operator": "Lt", "values": ["5"]}]}}
    token = "kubernetes:karpenter.sh/v1alpha5:Provisioner"
    assert messages("karpenter-gpu-smallest", change(prov, type_=token, address="p")) == []
    prov["spec"]["requirements"][1]["values"] = ["9"]  # lets g6.2xlarge (8 vCPU) in
    (msg,) = messages("karpenter-gpu-smallest", change(prov, type_=token, address="p"))
    assert "g6.2xlarge" in msg and "spec.requirements" in msg


def test_the_kit_karpenter_nodepool_passes() -> None:
    from gpupool.catalog import load_catalog as catalog
    from gpupool.config.kubernetes import KarpenterConfig
    from infra.k8s.karpenter import node_requirements

    itype = catalog().get("g5.xlarge")
    assert itype is not None
    reqs = node_requirements(itype, KarpenterConfig(cluster_name="c", node_role="r", max_gpus=4))
    pool = {"apiVersion": "karpenter.sh/v1", "kind": "NodePool", "metadata": {"name": "gpu"},
            "spec": {"template": {"spec": {"requirements": reqs}}}}
    assert messages("karpenter-gpu-smallest", change(
        pool, type_="kubernetes:karpenter.sh/v1:NodePool", address="n")) == []


# -- the CrossGuard pack over gRPC ---------------------------------------------------------


@pytest.fixture(scope="module")
def pack() -> Any:
    with PolicyPackHarness(PACK_DIR, stack="prod", project="gpupool") as h:
        h.configure({})
        yield h


def test_pack_blocks_a_four_gpu_container(pack: PolicyPackHarness) -> None:
    result = pack.analyze(DEPLOY, "llm", deployment(4))
    (d,) = result.mandatory
    assert d.policy_name == "k8s-gpu-per-container"
    assert d.detail == messages("k8s-gpu-per-container", change(deployment(4)))[0].replace(
        "Deployment/ml/llm", d.urn)


def test_pack_stack_policies_see_autoscalers_and_quotas(pack: PolicyPackHarness) -> None:
    ns = Resource("kubernetes:core/v1:Namespace", "ml",
                  {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "ml"}})
    quota = Resource("kubernetes:core/v1:ResourceQuota", "gpu", {
        "apiVersion": "v1", "kind": "ResourceQuota",
        "metadata": {"name": "gpu", "namespace": "ml"},
        "spec": {"hard": {"requests.nvidia.com/gpu": "8"}}})
    dep = Resource(DEPLOY, "llm", deployment(1))
    result = pack.analyze_stack([ns, dep])
    assert {d.policy_name for d in result.mandatory} == {
        "k8s-gpu-namespace-quota", "k8s-gpu-workload-autoscaled"}
    scaler = Resource("kubernetes:keda.sh/v1alpha1:ScaledObject", "llm", {
        "apiVersion": "keda.sh/v1alpha1", "kind": "ScaledObject",
        "metadata": {"name": "llm", "namespace": "ml"},
        "spec": {"scaleTargetRef": {"name": "llm"}, "maxReplicaCount": 4, "triggers": [{
            "type": "prometheus", "metadata": {"query": "sum(DCGM_FI_DEV_GPU_UTIL)",
                                               "threshold": "70"}}]}})
    assert pack.analyze_stack([ns, quota, dep, scaler]).mandatory == []

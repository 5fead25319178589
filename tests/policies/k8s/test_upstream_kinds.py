# ruff: noqa: RUF001, RUF003  (× is the multiplication sign users read in messages)
"""Every GPU workload kind, read from verbatim upstream manifests (tests/fixtures/README.md):
each file checked alone gives the findings a user of that kind depends on. Before issue 15 every
one of these custom kinds passed silently (their GPUs were never looked at)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml

from policies.engine import evaluate
from policies.facts import k8s
from policies.model import ChangeKind, ResourceChange, normalise_inputs, resource_kind
from policies.settings import load_settings
from policies.sources import load_plans

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures" / "kubernetes-workloads"
PER, LIMITS, QUOTA, SCALED = ("k8s-gpu-per-container", "k8s-gpu-limits",
                              "k8s-gpu-namespace-quota", "k8s-gpu-workload-autoscaled")
DEADLINE, OFF_GPU = "k8s-gpu-job-deadline", "k8s-cpu-pods-off-gpu-nodes"
M, A = "mandatory", "advisory"


def findings(*paths: Path) -> dict[tuple[str, str], str]:
    result = evaluate(load_plans([str(p) for p in paths]), load_settings(None, None))
    assert not result.errors
    return {(v.policy, v.resource): v.enforcement.value for v in result.violations}


def messages(path: Path, policy: str) -> list[str]:
    result = evaluate(load_plans([str(path)]), load_settings(None, None))
    return [v.message for v in result.violations if v.policy == policy]


@pytest.mark.parametrize(("name", "expected"), [
    ("kubeflow-paddlejob-simple-gpu.yaml", {  # 2 GPUs per container (the PaddleJob)
        (PER, "PaddleJob/kubeflow/paddle-simple-gpu"): M,
        (QUOTA, "PaddleJob/kubeflow/paddle-simple-gpu"): A,
        (DEADLINE, "PaddleJob/kubeflow/paddle-simple-gpu"): M}),  # no runPolicy deadline
    ("kubeflow-pytorchjob-deepspeed-demo.yaml", {
        (QUOTA, "PyTorchJob/pytorch-deepspeed-demo"): A,
        (DEADLINE, "PyTorchJob/pytorch-deepspeed-demo"): M}),
    ("kubeflow-tfjob-multi-worker.yaml", {(QUOTA, "TFJob/multi-worker"): A,
                                          (DEADLINE, "TFJob/multi-worker"): M}),
    ("trainer-clustertrainingruntime-torchtune-llama3.2-1b.yaml", {  # a template: no quota
        (PER, "ClusterTrainingRuntime/torchtune-llama3.2-1b"): M}),
    ("trainer-trainjob-lammps-gpus.yaml", {(QUOTA, "TrainJob/lammps-flux"): A,
                                           (DEADLINE, "TrainJob/lammps-flux"): M}),
    ("lws-vllm-gpu.yaml", {  # 8 GPUs per container, fixed replicas
        (PER, "LeaderWorkerSet/vllm"): M, (SCALED, "LeaderWorkerSet/vllm"): M,
        (QUOTA, "LeaderWorkerSet/vllm"): A}),
    ("kuberay-rayservice-llm-serve.yaml", {  # 4 GPUs per worker, the autoscaler off
        (PER, "RayService/ray-serve-llm"): M, (SCALED, "RayService/ray-serve-llm"): M,
        (QUOTA, "RayService/ray-serve-llm"): A}),
    ("kuberay-raycluster-verl.yaml", {  # a head with 4 GPUs never scales
        (PER, "RayCluster/verl-cluster"): M, (SCALED, "RayCluster/verl-cluster"): M,
        (QUOTA, "RayCluster/verl-cluster"): A}),
    ("kuberay-rayjob-text-classifier.yaml", {(QUOTA, "RayJob/pytorch-text-classifier-*"): A,
                                             (DEADLINE, "RayJob/pytorch-text-classifier-*"): M}),
    # Ray's own GPU: "1", no device: its A100 worker group holds a GPU node without a GPU
    ("kuberay-raycluster-autoscaler-label-selector.yaml", {
        (OFF_GPU, "RayCluster/ray-label-cluster"): M}),
    ("kserve-isvc-autoscale-gpu.yaml", {(QUOTA, "InferenceService/flowers-sample-gpu"): A}),
    ("kserve-isvc-hf-llama2.yaml", {(QUOTA, "InferenceService/huggingface-llama2"): A}),
    ("kserve-llmisvc-qwen2-7b-gpu.yaml", {  # three fixed replicas, no spec.scaling
        (SCALED, "LLMInferenceService/qwen2-7b-instruct-single"): M,
        (QUOTA, "LLMInferenceService/qwen2-7b-instruct-single"): A}),
    ("kserve-llmisvc-deepseek-dp-ep.yaml", {  # 8 GPUs per container (the LLMISVC)
        (PER, "LLMInferenceService/deepseek-coder-v2"): M,
        (SCALED, "LLMInferenceService/deepseek-coder-v2"): M,
        (QUOTA, "LLMInferenceService/deepseek-coder-v2"): A}),
    ("kserve-isvc-multinode-mp.yaml", {  # 4 GPUs per worker; KServe never scales multi-node
        (PER, "InferenceService/llama3-multinode-mp"): M,
        (SCALED, "InferenceService/llama3-multinode-mp"): M,
        (QUOTA, "InferenceService/llama3-multinode-mp"): A}),
    ("kserve-llmisvc-multinode-autoscaled.yaml", {  # the workload variant autoscaler scales it
        (PER, "LLMInferenceService/llama3-70b-autoscaled"): M,
        (QUOTA, "LLMInferenceService/llama3-70b-autoscaled"): A}),
    ("volcano-job-mindspore-gpu.yaml", {(QUOTA, "Job/mindspore-gpu"): A,
                                        (DEADLINE, "Job/mindspore-gpu"): M}),
    ("volcano-argo-workflowtemplate-mpi.yaml", {}),  # nvidia.com/gpu: 0 in a manifest string
    ("nim-nimservice-autoscaling.yaml", {  # the operator's HPA on gpu_cache_usage_perc
        (QUOTA, "NIMService/nim-service/meta-llama-3-2-1b-instruct"): A}),
    ("nim-nimservice-multi-node.yaml", {
        (PER, "NIMService/nim-service/deepseek-r1"): M,
        (SCALED, "NIMService/nim-service/deepseek-r1"): M,
        (QUOTA, "NIMService/nim-service/deepseek-r1"): A}),
    ("nim-nimpipeline-rag.yaml", {
        (SCALED, "NIMPipeline/nim-service/rag-pipeline"): M,
        (QUOTA, "NIMPipeline/nim-service/rag-pipeline"): A}),
    ("katib-experiment-darts-gpu.yaml", {  # no reader: cannot verify, never a pass
        (PER, "Experiment/kubeflow/darts-gpu"): A, (QUOTA, "Experiment/kubeflow/darts-gpu"): A}),
    ("eks-auto-mode-gpu-nodepool.yaml", {("karpenter-gpu-smallest", "NodePool/gpu-nodepool"): M}),
    ("eks-auto-mode-nodepool-cpu.yaml", {}),  # c, m, r only: before, every GPU type "allowed"
    # Karpenter's own examples: a pool open to every type larger than 3 vCPUs / 8 GiB can
    # launch 72 GPU types, untainted
    ("karpenter-v1-large-instances.yaml", {
        ("karpenter-gpu-smallest", "NodePool/large-instances"): M,
        ("gpu-nodes-tainted", "NodePool/large-instances"): M}),
    ("karpenter-workload-gpu-nvidia.yaml", {(QUOTA, "Deployment/gpu-nvidia"): A}),
])
def test_each_upstream_kind_alone(name: str, expected: dict[tuple[str, str], str]) -> None:
    assert findings(FIXTURES / name) == expected


def test_messages_name_the_role_the_path_and_the_fix() -> None:
    (paddle,) = messages(FIXTURES / "kubeflow-paddlejob-simple-gpu.yaml", PER)
    assert paddle.startswith("PaddleJob kubeflow/paddle-simple-gpu, Worker: container paddle asks "
                             "for 2 × nvidia.com/gpu (spec.paddleReplicaSpecs.Worker.template."
                             "spec.containers[0].resources.limits); at most 1 per container: "
                             "run 2 × the replicas with 1 GPU each")
    assert "multiGpuNamespaces: [kubeflow]" in paddle and "gpupool estimate" in paddle
    leader, worker = messages(FIXTURES / "lws-vllm-gpu.yaml", PER)
    assert "LeaderWorkerSet vllm, leader: container vllm-leader asks for 8" in leader
    assert "leaderWorkerTemplate.workerTemplate.spec.containers[0]" in worker
    (nim,) = messages(FIXTURES / "nim-nimservice-multi-node.yaml", PER)
    assert "container nim asks for 8 × nvidia.com/gpu (spec.resources.limits)" in nim
    (ray,) = messages(FIXTURES / "kuberay-rayservice-llm-serve.yaml", SCALED)
    assert ray.startswith("RayService ray-serve-llm, worker group gpu-group runs GPUs but the "
                          "RayCluster autoscaler is off (spec.rayClusterConfig."
                          "enableInTreeAutoscaling)")
    (head,) = messages(FIXTURES / "kuberay-raycluster-verl.yaml", SCALED)
    assert head.startswith("RayCluster verl-cluster, head runs GPUs but nothing scales it")
    (katib,) = messages(FIXTURES / "katib-experiment-darts-gpu.yaml", PER)
    assert katib == (
        "cannot verify: Experiment kubeflow/darts-gpu (kubeflow.org/v1beta1) asks for "
        "nvidia.com/gpu at spec.trialTemplate.trialSpec.spec.template.spec.containers[0]."
        "resources.limits, but no reader understands kind Experiment: its GPUs per container, "
        "limits, quota and autoscaling cannot be judged (check the pods it creates, or render "
        "it to built-in kinds)")


def test_the_directory_together_and_its_census() -> None:
    result = evaluate(load_plans([str(FIXTURES)]), load_settings(None, None))
    summary = result.to_json()["summary"]["kubernetes"]
    assert summary == {"objects": 40, "gpu_objects_judged": 20, "gpu_objects_not_understood": 1,
                       "kinds_not_understood": [{"kind": "Experiment",
                                                 "api_version": "kubeflow.org/v1beta1",
                                                 "objects": 1}]}
    from policies.reports import render

    text = render(result, "text")
    assert ("Kubernetes: 20 GPU objects judged (of 40 objects); 1 not understood: Experiment "
            "kubeflow.org/v1beta1)") in text.splitlines()[-1]
    assert "Kubernetes: 20 GPU objects judged (of 40 objects); 1 not understood" in render(
        result, "markdown")
    # a check of a Terraform plan says nothing about Kubernetes; one of manifests always does
    tf = evaluate(load_plans([str(FIXTURES.parent / "terraform" / "upsize-g4dn.json")]),
                  load_settings(None, None))
    assert "Kubernetes" not in render(tf, "text")
    assert tf.to_json()["summary"]["kubernetes"]["objects"] == 0
    plugin = evaluate(load_plans([str(FIXTURES.parent / "kubernetes" /
                                      "nvidia-device-plugin-v0.20.0.yml")]),
                      load_settings(None, None))
    assert "PASS: no violations (1 resource evaluated in" in render(plugin, "text")
    assert "Kubernetes: 0 GPU objects judged (of 1 object))" in render(plugin, "text")


# ------------------------------------------------------------------ the reader API, per kind


def read_file(name: str, kind: str) -> k8s.Workload:
    (plan,) = load_plans([str(FIXTURES / name)])
    for change in plan.changes:
        found = k8s.read(change)
        if found is not None and found.obj.kind == kind:
            assert found.workload is not None
            return found.workload
    raise AssertionError(kind)


def roles(wl: k8s.Workload) -> list[tuple[str, int | None, int | None, float | None]]:
    return [(r.name, r.replicas.min, r.replicas.max, r.pods.per_pod) for r in wl.roles]


def test_training_jobs_read_every_replica_spec() -> None:
    mpi = read_file("kubeflow-mpijob-tensorflow-mnist.yaml", "MPIJob")
    assert roles(mpi) == [("Launcher", 1, 1, 0), ("Worker", 2, 2, 0)]
    assert mpi.batch and mpi.deadlines[0].path == "spec.run_policy.active_deadline_seconds"
    xgb = read_file("kubeflow-xgboostjob.yaml", "XGBoostJob")
    assert roles(xgb) == [("Master", 1, 1, 0), ("Worker", 2, 2, 0)]
    jax = read_file("kubeflow-jaxjob-mnist-gloo.yaml", "JAXJob")
    assert roles(jax) == [("Worker", 2, 2, 0)]
    elastic = read_file("kubeflow-pytorchjob-elastic-imagenet.yaml", "PyTorchJob")
    scaler = elastic.roles[0].autoscaler
    assert scaler is not None and (scaler.min, scaler.max) == (1, 3)
    deepspeed = read_file("kubeflow-pytorchjob-deepspeed-demo.yaml", "PyTorchJob")
    assert roles(deepspeed) == [("Master", 1, 1, 1), ("Worker", 1, 1, 1)]


def test_trainer_jobset_lws_ray_kserve_nim_read_their_pods() -> None:
    runtime = read_file("trainer-clustertrainingruntime-torchtune-llama3.2-1b.yaml",
                        "ClusterTrainingRuntime")
    assert roles(runtime)[-1] == ("node", 1, 1, 2)  # mlPolicy.numNodes × 2 GPUs
    assert runtime.lifecycle is k8s.Lifecycle.TEMPLATE
    train = read_file("trainer-trainjob-lammps-gpus.yaml", "TrainJob")
    assert roles(train) == [("trainer", 2, 2, 1)]
    assert train.roles[0].pods.containers[0].resources_path == "spec.trainer.resources_per_node"
    jobset = read_file("jobset-pytorch-resnet.yaml", "JobSet")
    assert roles(jobset) == [("workers", 4, 4, 0)]  # replicas 1 × parallelism 4
    lws = read_file("lws-vllm-gpu.yaml", "LeaderWorkerSet")
    assert roles(lws) == [("leader", 2, 2, 8), ("worker", 2, 2, 8)]  # 2 groups of size 2
    assert lws.scale_target
    ray = read_file("kuberay-raycluster-autoscaler-label-selector.yaml", "RayCluster")
    assert [r[:3] for r in roles(ray)] == [("head", 1, 1), ("worker group large-cpu-group", 1, 10),
                                           ("worker group accelerator-group", 0, 10),
                                           ("worker group spot-group", 0, 5)]
    isvc = read_file("kserve-isvc-hf-llama2.yaml", "InferenceService")
    (predictor,) = isvc.roles
    assert predictor.pods.gpu_containers[0].resources_path == "spec.predictor.model.resources"
    assert predictor.autoscaler is not None and predictor.autoscaler.on_load
    multi = read_file("kserve-isvc-multinode-mp.yaml", "InferenceService")
    # the head at minReplicas (1), pipelineParallelSize - 1 workers: one group, never scaled
    assert roles(multi) == [("predictor", 1, 1, 0), ("predictor worker", 1, 1, 4)]
    assert all(r.autoscaler is not None and r.autoscaler.never for r in multi.roles)
    deepseek = read_file("kserve-llmisvc-deepseek-dp-ep.yaml", "LLMInferenceService")
    assert roles(deepseek) == [("decode", 1, 1, 8), ("decode worker", 1, 1, 8)]  # 16 / 8 ranks
    nim = read_file("nim-nimservice-multi-node.yaml", "NIMService")
    assert roles(nim) == [("", 2, 2, 8)]  # 1 replica × pipeline 2
    volcano = read_file("volcano-job-mindspore-gpu.yaml", "Job")
    assert roles(volcano) == [("task mpimaster", 1, 1, 0), ("task mpiworker", 2, 2, 1)]


# ---------------------------------- CPU-only upstream manifests, given GPUs: now they are judged


def _with_gpus(folder: Path, name: str, path: list[Any], gpus: int = 2) -> Path:
    docs = _docs(name)
    node: Any = docs[0]
    for key in path:
        node = node[key]
    node["resources"] = {"limits": {"nvidia.com/gpu": gpus}}
    return _write(folder, name, docs)


def _docs(name: str) -> list[Any]:
    return list(yaml.safe_load_all((FIXTURES / name).read_text()))


def _write(folder: Path, name: str, docs: list[Any]) -> Path:
    target = folder / name
    target.write_text(yaml.safe_dump_all(docs))
    return target


@pytest.mark.parametrize(("name", "path", "where"), [
    ("kubeflow-mpijob-tensorflow-mnist.yaml",
     ["spec", "mpiReplicaSpecs", "Worker", "template", "spec", "containers", 0],
     "spec.mpiReplicaSpecs.Worker.template.spec.containers[0].resources.limits"),
    ("kubeflow-xgboostjob.yaml",
     ["spec", "xgbReplicaSpecs", "Master", "template", "spec", "containers", 0],
     "spec.xgbReplicaSpecs.Master.template.spec.containers[0].resources.limits"),
    ("kubeflow-jaxjob-mnist-gloo.yaml",
     ["spec", "jaxReplicaSpecs", "Worker", "template", "spec", "containers", 0],
     "spec.jaxReplicaSpecs.Worker.template.spec.containers[0].resources.limits"),
    ("jobset-pytorch-resnet.yaml",
     ["spec", "replicatedJobs", 0, "template", "spec", "template", "spec", "containers", 0],
     "spec.replicatedJobs[0].template.spec.template.spec.containers[0].resources.limits"),
    ("argo-workflow-pod-spec-patch.yaml", ["spec", "templates", 0, "container"],
     "spec.templates[0].container.resources.limits"),
    ("argo-cronworkflow.yaml", ["spec", "workflowSpec", "templates", 0, "container"],
     "spec.workflowSpec.templates[0].container.resources.limits"),
])
def test_cpu_only_upstream_kinds_given_two_gpus(name: str, path: list[Any], where: str,
                                                tmp_path: Path) -> None:
    (msg,) = messages(_with_gpus(tmp_path, name, path), PER)
    assert f"asks for 2 × nvidia.com/gpu ({where})" in msg


def test_requests_the_reader_does_not_read_are_cannot_verify(tmp_path: Path) -> None:
    # the RayCluster autoscaler's own container is not a pod template of the cluster
    docs = _docs("kuberay-raycluster-autoscaler-label-selector.yaml")
    docs[0]["spec"]["autoscalerOptions"]["resources"]["limits"]["nvidia.com/gpu"] = "1"
    (msg,) = messages(_write(tmp_path, "ray.yaml", docs), PER)
    assert msg == ("cannot verify: RayCluster ray-label-cluster (ray.io/v1) asks for "
                   "nvidia.com/gpu at spec.autoscalerOptions.resources.limits, which the ray "
                   "reader does not read as a pod's containers: those GPUs cannot be judged")
    # Argo's podSpecPatch is text: a GPU in it cannot be read as resources
    docs = _docs("argo-workflow-pod-spec-patch.yaml")
    docs[0]["spec"]["templates"][0]["podSpecPatch"] = (
        '{"containers":[{"name":"main","resources":{"limits":{"nvidia.com/gpu": 4}}}]}')
    (msg,) = messages(_write(tmp_path, "argo.yaml", docs), PER)
    assert msg.startswith("cannot verify: Workflow pod-spec-patch-*, template hello-world: "
                          "spec.templates[0].podSpecPatch asks for nvidia.com/gpu: 4 in text")


def test_own_autoscalers_count_as_autoscaling(tmp_path: Path) -> None:
    docs = _docs("kuberay-rayservice-llm-serve.yaml")
    cluster = docs[0]["spec"]["rayClusterConfig"]
    cluster["enableInTreeAutoscaling"] = True
    cluster["workerGroupSpecs"][0]["maxReplicas"] = 4
    assert (SCALED, "RayService/ray-serve-llm") not in findings(_write(tmp_path, "ray.yaml", docs))
    docs = _docs("kserve-llmisvc-qwen2-7b-gpu.yaml")
    docs[0]["spec"]["scaling"] = {"minReplicas": 1, "maxReplicas": 6, "wva": {}}
    assert (SCALED, "LLMInferenceService/qwen2-7b-instruct-single") not in findings(
        _write(tmp_path, "llm.yaml", docs))
    # KServe in Standard (raw) mode scales on CPU by default: not GPU utilisation
    docs = _docs("kserve-isvc-hf-llama2.yaml")
    docs[0]["metadata"]["annotations"] = {"serving.kserve.io/deploymentMode": "RawDeployment"}
    docs[0]["spec"]["predictor"]["maxReplicas"] = 4
    (msg,) = messages(_write(tmp_path, "isvc.yaml", docs), SCALED)
    assert "scales on cpu, not on GPU utilisation or load" in msg
    # a LeaderWorkerSet is scaled by an HPA naming it, as a Deployment is
    lws = _docs("lws-vllm-gpu.yaml")
    hpa = next(yaml.safe_load_all((FIXTURES / "lws-hpa.yaml").read_text()))
    hpa["spec"]["scaleTargetRef"]["name"] = "vllm"
    hpa["spec"]["metrics"] = [{"type": "Pods", "pods": {
        "metric": {"name": "DCGM_FI_DEV_GPU_UTIL"},
        "target": {"type": "AverageValue", "averageValue": "70"}}}]
    both = _write(tmp_path, "lws.yaml", [*lws, hpa])
    assert (SCALED, "LeaderWorkerSet/vllm") not in findings(both)


def test_terraform_kubernetes_manifest_of_a_custom_kind() -> None:
    obj = next(yaml.safe_load_all((FIXTURES / "kuberay-rayservice-llm-serve.yaml").read_text()))
    change = ResourceChange("kubernetes_manifest.llm", "kubernetes_manifest", "llm",
                            ChangeKind.CREATE, {"manifest": obj}, None, "terraform",
                            resource_kind("kubernetes_manifest"))
    from gpupool.catalog import load_catalog
    from policies.rules import get_rule

    (msg,) = [f.message for f in get_rule(PER).run([change], load_catalog())]
    assert "(manifest.spec.rayClusterConfig.workerGroupSpecs[0].template.spec.containers[0]" \
           ".resources.limits)" in msg
    pulumi = ResourceChange("urn:x", "kubernetes:ray.io/v1:RayService", "llm", ChangeKind.CREATE,
                            normalise_inputs(obj), None, "pulumi",
                            resource_kind("kubernetes:ray.io/v1:RayService"))
    assert len(get_rule(PER).run([pulumi], load_catalog())) == 1

"""The rendered pool on a cluster: every GPU workload schedules on a node the kit provides (or
lists as a prerequisite), and no CPU-only container gets a GPU, for a cluster without the GPU
Operator, one with it, and EKS with Karpenter (tests/infra/kube_model.py: what the API server
and the scheduler do)."""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import pytest
import yaml

from gpupool.cli import main
from gpupool.config import load_stack
from gpupool.yamlio import read_yaml_documents
from tests.infra.kube_model import Node, admit, gpus, limit_range_defaults, unschedulable

from .conftest import ROOT

GPU = "nvidia.com/gpu"
TAINT = {"key": GPU, "value": "true", "effect": "NoSchedule"}

OPERATOR_STACK = """\
config:
  gpupool:environment: staging
  gpupool:team: ml-platform
  gpupool:costCenter: cc-ml-1042
  gpupool:kubernetes:
    - name: lab
      cluster: {context: lab}
      gpu: A100
      gpus: 8
      gpuOperator: true
      teams:
        - {name: vision, gpuQuota: 4}
      workloads:
        - {name: detect, team: vision, image: nvcr.io/nvidia/tritonserver:24.08-py3}
        - {name: train, team: vision, type: batch, image: nvcr.io/nvidia/pytorch:24.08-py3,
           command: [python, -c, "import torch"], parallelism: 2}
      remoteGpu: {team: vision, image: ghcr.io/example/gpu-remoting-server:1.4.2}
"""

KARPENTER_STACK = """\
config:
  gpupool:environment: staging
  gpupool:team: ml-platform
  gpupool:costCenter: cc-ml-1042
  gpupool:kubernetes:
    - name: eks-gpu
      cluster: {context: arn:aws:eks:us-east-1:123456789012:cluster/ml, distribution: eks}
      gpu: A10G
      gpuOperator: OPERATOR
      karpenter: {clusterName: ml, nodeRole: KarpenterNodeRole-ml, maxGpus: 12}
      teams:
        - {name: vision, gpuQuota: 6}
      workloads:
        - {name: detect, team: vision, image: nvcr.io/nvidia/tritonserver:24.08-py3}
        - {name: train, team: vision, type: batch, image: nvcr.io/nvidia/pytorch:24.08-py3,
           command: [python, -c, "import torch"]}
      remoteGpu: {team: vision, image: ghcr.io/example/gpu-remoting-server:1.4.2}
"""


def render(stack: str, tmp_path: Path) -> tuple[Any, list[dict[str, Any]]]:
    if not stack.startswith("/"):
        path = tmp_path / "Pulumi.s.yaml"
        path.write_text(stack)
        stack = str(path)
    out = tmp_path / "out"
    assert main(["render", stack, "--out", str(out)]) == 0
    objs = [d.value for f in sorted(out.rglob("*.yaml")) for d in read_yaml_documents(f)]
    (pool,) = load_stack(stack).config.kubernetes
    return pool, objs


def karpenter_node(pool: dict[str, Any]) -> Node:
    """The node a NodePool launches: its template's labels and taints, the labels its
    single-valued requirements fix, Karpenter's own, and the instance type's GPUs."""
    template = pool["spec"]["template"]
    labels = dict(template["metadata"]["labels"])
    for r in template["spec"]["requirements"]:
        labels[r["key"]] = r["values"][0]
    labels["karpenter.sh/nodepool"] = pool["metadata"]["name"]
    return Node("karpenter", labels, template["spec"]["taints"],
                {GPU: int(labels["karpenter.k8s.aws/instance-gpu-count"])})


def provided_nodes(pool: Any, objs: list[dict[str, Any]]) -> list[Node]:
    """The GPU nodes the kit launches (Karpenter) or lists as the cluster's prerequisite."""
    node_pools = [o for o in objs if o["kind"] == "NodePool"]
    if node_pools:
        return [karpenter_node(p) for p in node_pools]
    if pool.gpu_operator:  # the GPU Operator labels every GPU node
        labels = {"nvidia.com/gpu.present": "true"}
    else:  # docs/kubernetes.md: label the GPU nodes (validate prints the label)
        key, _, value = pool.node_label_prerequisite.partition("=")
        labels = {key: value}
    # the taint is recommended, not required: both kinds of node must take the pool's pods
    return [Node("tainted", labels, [TAINT], {GPU: 1}), Node("untainted", labels, [], {GPU: 1})]


CPU_NODE = Node("cpu", {"kubernetes.io/os": "linux"}, [], {})


def pod_templates(objs: list[dict[str, Any]]) -> list[tuple[dict[str, Any], dict[str, Any]]]:
    return [(o, o["spec"]["template"]["spec"]) for o in objs
            if o["kind"] in ("Deployment", "Job", "DaemonSet")]


def limit_ranges(objs: list[dict[str, Any]], namespace: str) -> list[dict[str, Any]]:
    return [o for o in objs
            if o["kind"] == "LimitRange" and o["metadata"]["namespace"] == namespace]


SIDECAR_POD = {  # a team's CPU-only pod: an init container and two plain containers
    "initContainers": [{"name": "fetch", "image": "busybox:1.36"}],
    "containers": [{"name": "web", "image": "nginx:1.27"},
                   {"name": "log", "image": "fluent/fluent-bit:3.1",
                    "resources": {"requests": {"cpu": "50m"}}}],
}


@pytest.mark.parametrize("stack", ["prod", "operator", "karpenter", "karpenter+operator"])
def test_every_gpu_workload_schedules_and_no_cpu_container_gets_a_gpu(
    stack: str, tmp_path: Path
) -> None:
    text = {"prod": str(ROOT / "stacks" / "Pulumi.prod.yaml"), "operator": OPERATOR_STACK,
            "karpenter": KARPENTER_STACK.replace("OPERATOR", "false"),
            "karpenter+operator": KARPENTER_STACK.replace("OPERATOR", "true")}[stack]
    pool, objs = render(text, tmp_path)
    nodes = provided_nodes(pool, objs)
    workloads = 0
    for obj, spec in pod_templates(objs):
        where = f"{obj['kind']} {obj['metadata']['name']}"
        admitted, refused = admit(spec, limit_ranges(objs, obj["metadata"]["namespace"]))
        assert refused == [], where
        held = [gpus(c) for c in admitted["containers"]]
        asked = [gpus(c) for c in spec["containers"]]
        assert held == asked, where  # admission hands no container a GPU it did not ask for
        fits = [n.name for n in nodes if not unschedulable(admitted, n)]
        if any(asked):
            workloads += 1
            assert fits == [n.name for n in nodes], (where, [unschedulable(admitted, n)
                                                             for n in nodes])
            assert unschedulable(admitted, CPU_NODE), where
        else:  # the device plugin and the exporter: GPU nodes only, and every one of them
            assert obj["kind"] == "DaemonSet" and obj["metadata"]["namespace"] == "gpupool-system"
            assert fits == [n.name for n in nodes], where
            assert unschedulable(admitted, CPU_NODE), where  # they select the GPU label
    assert workloads == len(pool.workloads) + (pool.remote_gpu is not None)  # + the proxy
    for team in pool.teams:  # a team's CPU-only pod keeps its containers GPU-free
        admitted, refused = admit(SIDECAR_POD, limit_ranges(objs, team.namespace_name))
        assert refused == []
        assert [gpus(c) for c in admitted["initContainers"] + admitted["containers"]] == [0] * 3


def test_a_limit_range_with_only_max_would_give_every_container_a_gpu() -> None:
    """Why the kit's LimitRange writes an explicit zero default: the API server fills a missing
    default from max, and LimitRanger hands it to every container."""
    only_max = {"spec": {"limits": [{"type": "Container", "max": {GPU: "1"}}]}}
    assert limit_range_defaults(only_max["spec"]["limits"][0])["defaultRequest"] == {GPU: "1"}
    admitted, refused = admit(SIDECAR_POD, [only_max])
    assert refused == [] and [gpus(c) for c in admitted["containers"]] == [1, 1]


def test_the_node_label_prerequisite_is_documented_and_printed(
    capsys: pytest.CaptureFixture[str],
) -> None:
    pool = load_stack(str(ROOT / "stacks" / "Pulumi.prod.yaml")).config.kubernetes[0]
    assert pool.node_label_prerequisite == "gpupool.io/pool=onprem"
    docs = (ROOT / "docs" / "kubernetes.md").read_text()
    assert "kubectl label nodes" in docs and "gpupool.io/pool=<pool>" in docs
    assert main(["validate", "prod"]) == 0
    assert ("GPU pods select gpupool.io/pool=onprem, which the cluster's GPU nodes must carry"
            in capsys.readouterr().out)


NEW_RULES = ("gpu-nodes-tainted", "k8s-cpu-pods-off-gpu-nodes", "k8s-gpu-job-deadline",
             "karpenter-gpu-consolidation")


def violations(objs: list[dict[str, Any]], tmp_path: Path) -> list[tuple[str, str]]:
    """Every rule's findings over the objects, as ``gpupool check`` judges rendered files."""
    folder, report = tmp_path / "judged", tmp_path / "report.json"
    folder.mkdir(exist_ok=True)
    for old in folder.glob("*.yaml"):
        old.unlink()
    for i, obj in enumerate(objs):
        (folder / f"{i:03d}.yaml").write_text(yaml.safe_dump(obj))
    assert main(["check", str(folder), "--format", f"json={report}", "--soft-fail"]) == 0
    result = json.loads(report.read_text())
    assert {p["id"] for p in result["policies"]} >= set(NEW_RULES)
    return sorted((v["policy"], v["resource"]) for v in result["violations"])


@pytest.mark.parametrize("stack", ["prod", "operator", "karpenter", "karpenter+operator"])
def test_every_configuration_passes_every_rule_and_the_node_hygiene_rules_read_it(
    stack: str, tmp_path: Path
) -> None:
    text = {"prod": str(ROOT / "stacks" / "Pulumi.prod.yaml"), "operator": OPERATOR_STACK,
            "karpenter": KARPENTER_STACK.replace("OPERATOR", "false"),
            "karpenter+operator": KARPENTER_STACK.replace("OPERATOR", "true")}[stack]
    _, objs = render(text, tmp_path)
    assert violations(objs, tmp_path) == []
    # the same objects with the hygiene undone: each new rule sees what the kit guards
    broken = copy.deepcopy(objs)
    expected: set[str] = set()
    for obj in broken:
        if obj["kind"] == "NodePool":
            del obj["spec"]["template"]["spec"]["taints"]
            obj["spec"]["disruption"] = {"consolidationPolicy": "WhenEmpty",
                                         "consolidateAfter": "Never"}
            expected |= {"gpu-nodes-tainted", "karpenter-gpu-consolidation"}
        elif obj["kind"] == "Job":
            del obj["spec"]["activeDeadlineSeconds"]
            expected.add("k8s-gpu-job-deadline")
        elif obj["kind"] == "Deployment" and not any(
                gpus(c) for c in obj["spec"]["template"]["spec"]["containers"]):
            expected.add("k8s-cpu-pods-off-gpu-nodes")
    for obj in broken:  # a CPU-only pod that tolerates the GPU taint
        if obj["kind"] == "Deployment":
            cpu = copy.deepcopy(obj)
            cpu["metadata"]["name"] = "cpu-only"
            for c in cpu["spec"]["template"]["spec"]["containers"]:
                c.pop("resources", None)
            broken.append(cpu)
            expected.add("k8s-cpu-pods-off-gpu-nodes")
            break
    assert {policy for policy, _ in violations(broken, tmp_path)} == expected

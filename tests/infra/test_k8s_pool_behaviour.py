"""What the rendered pool does on a cluster beyond scheduling: how long `pulumi up` waits for
each kind, how metrics reach the autoscaler, and the settings the kit used to accept and ignore
(issue 15 §2). Objects from the Pulumi mock runtime (the offline plan), as `pulumi up` sends
them."""

from __future__ import annotations

from pathlib import Path

import pytest

from gpupool.config import LoadedStack, load_stack
from infra.offline import OfflinePlan, PlannedResource, run_offline
from tests.infra.test_k8s_pool import EKS_STACK, k8s_children, objects, pod_spec

from .conftest import ROOT

SKIP_AWAIT = {"pulumi.com/skipAwait": "true"}


@pytest.fixture(scope="module")
def prod() -> tuple[LoadedStack, OfflinePlan]:
    loaded = load_stack(str(ROOT / "stacks" / "Pulumi.prod.yaml"))
    return loaded, run_offline(loaded)


@pytest.fixture(scope="module")
def eks(tmp_path_factory: pytest.TempPathFactory) -> OfflinePlan:
    path = tmp_path_factory.mktemp("eks") / "Pulumi.eks.yaml"
    path.write_text(EKS_STACK)
    return run_offline(load_stack(str(path)))


def resources(plan: OfflinePlan, component: str) -> dict[tuple[str, str], PlannedResource]:
    return {(r.inputs["kind"], r.inputs["metadata"]["name"]): r
            for r in k8s_children(plan, component) if "kind" in r.inputs}


def test_pulumi_up_waits_per_kind(prod: tuple[LoadedStack, OfflinePlan],
                                  eks: OfflinePlan, tmp_path: Path) -> None:
    """Jobs are not awaited (their work takes hours); Deployments and their Services are, for
    readyTimeoutMinutes (a GPU node, a big image, a model outlast the 10-minute default); the
    exporter's Service has endpoints only once a GPU node runs it, so it is not awaited."""
    res = resources(prod[1], "prod-onprem")
    job = res[("Job", "nightly-eval")]
    assert job.inputs["metadata"]["annotations"] == SKIP_AWAIT
    for key in (("Deployment", "embeddings"), ("Service", "embeddings")):
        assert res[key].custom_timeouts == {"create": "30m", "update": "30m"}, key
        assert "annotations" not in res[key].inputs["metadata"], key
    assert res[("Service", "dcgm-exporter")].inputs["metadata"]["annotations"] == SKIP_AWAIT
    for key in (("DaemonSet", "dcgm-exporter"), ("DaemonSet", "nvidia-device-plugin")):
        assert res[key].custom_timeouts == {} and "annotations" not in res[key].inputs[
            "metadata"], key  # the default: they run within minutes on the nodes there are
    proxy = resources(eks, "eks-eks-gpu")
    for key in (("Deployment", "gpu-proxy"), ("Service", "gpu-proxy")):
        assert proxy[key].custom_timeouts == {"create": "30m", "update": "30m"}, key
    # the timeout is the workload's own
    path = tmp_path / "Pulumi.slow.yaml"
    path.write_text(EKS_STACK.replace("      remoteGpu:", "      workloads:\n"
                                      "        - {name: llm, team: vision, readyTimeoutMinutes: 45,"
                                      " image: vllm/vllm-openai:v0.6.3}\n      remoteGpu:"))
    slow = resources(run_offline(load_stack(str(path))), "slow-eks-gpu")
    assert slow[("Deployment", "llm")].custom_timeouts == {"create": "45m", "update": "45m"}


def test_readiness_is_reachable_and_the_examples_run_as_written(
    prod: tuple[LoadedStack, OfflinePlan],
) -> None:
    objs = objects(prod[1], "prod-onprem")
    triton = pod_spec(objs[("Deployment", "gpu-ml-platform", "embeddings")])
    (container,) = triton["containers"]
    assert container["args"] == ["tritonserver", "--model-repository=/models"]
    # the model repository is mounted where the command reads it
    assert container["volumeMounts"] == [{"name": "models", "mountPath": "/models",
                                           "readOnly": True}]
    assert triton["volumes"] == [{"name": "models", "persistentVolumeClaim": {
        "claimName": "triton-models", "readOnly": True}}]
    assert container["readinessProbe"]["httpGet"] == {"path": "/v2/health/ready",
                                                      "port": "serve"}
    job = pod_spec(objs[("Job", "gpu-research", "nightly-eval")])
    command = job["containers"][0]["command"]
    assert command[:2] == ["python", "-c"]  # python and torch: what the PyTorch image holds
    compile(command[2], "nightly-eval", "exec")
    assert command[2].startswith("import torch;")


def test_metrics_reach_the_autoscaler(prod: tuple[LoadedStack, OfflinePlan]) -> None:
    objs = objects(prod[1], "prod-onprem")
    monitor = objs[("ServiceMonitor", "gpupool-system", "dcgm-exporter")]
    # kube-prometheus-stack's Prometheus selects ServiceMonitors labelled with its release
    assert monitor["metadata"]["labels"]["release"] == "kube-prometheus-stack"
    (trigger,) = objs[("ScaledObject", "gpu-ml-platform", "embeddings")]["spec"]["triggers"]
    assert trigger["metadata"]["ignoreNullValues"] == "false"  # no data is not "0 % used"
    exporter = pod_spec(objs[("DaemonSet", "gpupool-system", "dcgm-exporter")])
    env = {e["name"]: e for e in exporter["containers"][0]["env"]}
    assert env["NODE_NAME"] == {"name": "NODE_NAME", "valueFrom": {
        "fieldRef": {"fieldPath": "spec.nodeName"}}}  # as upstream: its own node's pods


def test_proxy_rolls_without_surging_and_batch_pods_are_not_disrupted(
    eks: OfflinePlan, prod: tuple[LoadedStack, OfflinePlan],
) -> None:
    proxy = objects(eks, "eks-eks-gpu")[("Deployment", "vision", "gpu-proxy")]
    assert proxy["spec"]["strategy"] == {"type": "RollingUpdate", "rollingUpdate": {
        "maxSurge": 0, "maxUnavailable": 1}}
    assert pod_spec(proxy)["containers"][0]["readinessProbe"]["tcpSocket"] == {"port": "serve"}
    job = objects(prod[1], "prod-onprem")[("Job", "gpu-research", "nightly-eval")]
    assert job["spec"]["template"]["metadata"]["annotations"] == {
        "karpenter.sh/do-not-disrupt": "true"}
    assert job["spec"]["activeDeadlineSeconds"] == 21_600  # configured; a day by default


def test_karpenter_nodes_carry_what_pods_select_and_nothing_in_kubernetes_io(
    eks: OfflinePlan,
) -> None:
    objs = objects(eks, "eks-eks-gpu")
    node_pool = objs[("NodePool", None, "gpupool-eks-gpu")]
    labels = node_pool["spec"]["template"]["metadata"]["labels"]
    assert not [k for k in labels if k.split("/")[0].endswith("kubernetes.io")]
    assert labels["gpupool.io/pool"] == "eks-gpu" and labels["team"] == "ml-platform"
    proxy = pod_spec(objs[("Deployment", "vision", "gpu-proxy")])
    assert proxy["nodeSelector"] == {"gpupool.io/pool": "eks-gpu"}  # not gpu.present
    assert node_pool["spec"]["template"]["spec"]["taints"] == [
        {"key": "nvidia.com/gpu", "value": "true", "effect": "NoSchedule"}]
    assert node_pool["spec"]["disruption"] == {"consolidationPolicy": "WhenEmptyOrUnderutilized",
                                               "consolidateAfter": "5m"}


def test_a_kubernetes_only_stack_plans_without_network_or_pools(tmp_path: Path) -> None:
    path = tmp_path / "Pulumi.lab.yaml"
    path.write_text("config:\n  gpupool:environment: dev\n  gpupool:team: ml\n"
                    "  gpupool:costCenter: cc-1\n  gpupool:kubernetes:\n"
                    "    - {name: lab, gpus: 2, teams: [{name: research, gpuQuota: 2}]}\n")
    plan = run_offline(load_stack(str(path)))
    types = {r.type for r in plan.resources}
    assert not [t for t in types if t.startswith("aws:")]  # nothing on AWS, no AWS call
    assert "kubernetes:core/v1:LimitRange" in types
    assert plan.outputs["groupNames"] == {} and plan.outputs["gpuMax"] == 2


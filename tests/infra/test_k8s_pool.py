"""The Kubernetes GPU pool under the mock runtime: every object it declares and the fields its
users (and the policies) rely on."""

from __future__ import annotations

from collections import Counter
from pathlib import Path
from typing import Any

import pytest

from gpupool.config import LoadedStack, load_stack
from infra.k8s.images import DCGM_EXPORTER_IMAGE, DEVICE_PLUGIN_IMAGE
from infra.offline import OfflinePlan, PlannedResource, run_offline

from .conftest import ROOT

POOL = "gpupool:k8s:KubernetesGpuPool"
PROVIDER = "pulumi:providers:kubernetes"
CHARGEBACK = ("team", "cost-center", "environment")

EKS_STACK = """\
config:
  aws:region: us-east-1
  gpupool:environment: staging
  gpupool:team: ml-platform
  gpupool:costCenter: cc-ml-1042
  gpupool:network: {createVpc: true}
  gpupool:pools:
    - {name: inference, gpu: T4, minSize: 1, maxSize: 2}
  gpupool:kubernetes:
    - name: eks-gpu
      cluster: {context: arn:aws:eks:us-east-1:123456789012:cluster/ml, distribution: eks}
      gpu: A10G
      gpuOperator: true
      karpenter:
        clusterName: ml
        nodeRole: KarpenterNodeRole-ml
        maxGpus: 12
        capacityTypes: [on-demand, spot]
      teams:
        - {name: vision, gpuQuota: 6, maxGpusPerContainer: 2}
      remoteGpu:
        team: vision
        image: ghcr.io/example/gpu-remoting-server:1.4.2
        port: 14833
        budget: {minGbps: 2.5, maxRttUs: 150}
"""


@pytest.fixture(scope="module")
def prod() -> tuple[LoadedStack, OfflinePlan]:
    loaded = load_stack(str(ROOT / "stacks" / "Pulumi.prod.yaml"))
    return loaded, run_offline(loaded)


@pytest.fixture(scope="module")
def eks(tmp_path_factory: pytest.TempPathFactory) -> tuple[LoadedStack, OfflinePlan]:
    path = tmp_path_factory.mktemp("eks") / "Pulumi.eks.yaml"
    path.write_text(EKS_STACK)
    loaded = load_stack(str(path))
    return loaded, run_offline(loaded)


def k8s_children(plan: OfflinePlan, component: str) -> list[PlannedResource]:
    comp = next(r for r in plan.resources if r.type == POOL and r.name == component)
    return [r for r in plan.resources if r.parent == comp.urn]


def objects(plan: OfflinePlan, component: str) -> dict[tuple[str, str | None, str], dict[str, Any]]:
    """(kind, namespace, name) → the object as registered (camelCase inputs)."""
    out = {}
    for r in k8s_children(plan, component):
        if r.type == PROVIDER:
            continue
        meta = r.inputs["metadata"]
        out[(r.inputs["kind"], meta.get("namespace"), meta["name"])] = dict(r.inputs)
    return out


def pod_spec(obj: dict[str, Any]) -> dict[str, Any]:
    return dict(obj["spec"]["template"]["spec"])


def test_prod_pool_declares_exactly_these_objects(prod: tuple[LoadedStack, OfflinePlan]) -> None:
    _, plan = prod
    kinds = Counter(kind for kind, _, _ in objects(plan, "prod-onprem"))
    assert kinds == {
        "Namespace": 3, "ResourceQuota": 2, "LimitRange": 2,  # two teams + gpupool-system
        "DaemonSet": 2, "ServiceAccount": 1, "ClusterRole": 1, "ClusterRoleBinding": 1,
        "Service": 2, "ServiceMonitor": 1,  # DCGM exporter; embeddings' Service
        "Deployment": 1, "ScaledObject": 1, "Job": 1,
        "ConfigMap": 1,  # the pool's Grafana dashboard
    }


def test_one_explicit_provider_from_config_carries_every_object(
    prod: tuple[LoadedStack, OfflinePlan],
) -> None:
    _, plan = prod
    children = k8s_children(plan, "prod-onprem")
    providers = [r for r in children if r.type == PROVIDER]
    assert len(providers) == 1
    assert providers[0].inputs["kubeconfig"] == "~/.kube/onprem-gpu.yaml"
    assert providers[0].inputs["context"] == "onprem-gpu"
    # every Kubernetes object is a child of the component: none escapes to the ambient cluster
    k8s_types = [r for r in plan.resources if r.type.startswith("kubernetes:")]
    assert k8s_types and all(r in children for r in k8s_types)


def test_everything_is_labelled_for_chargeback(prod: tuple[LoadedStack, OfflinePlan]) -> None:
    _, plan = prod
    for (kind, _ns, name), obj in objects(plan, "prod-onprem").items():
        labels = obj["metadata"]["labels"]
        assert all(labels.get(k) for k in CHARGEBACK), (kind, name)
        assert labels["environment"] == "prod" and labels["gpupool.io/pool"] == "onprem"
        if "template" in obj.get("spec", {}):  # pods carry them too (DCGM copies them to metrics)
            tmpl = obj["spec"]["template"]["metadata"]["labels"]
            assert all(tmpl.get(k) for k in CHARGEBACK), (kind, name)
    research = objects(plan, "prod-onprem")[("Namespace", None, "gpu-research")]
    assert research["metadata"]["labels"]["cost-center"] == "cc-research-2001"
    assert research["metadata"]["labels"]["team"] == "research"


def test_team_namespaces_have_gpu_quota_and_one_gpu_per_container(
    prod: tuple[LoadedStack, OfflinePlan],
) -> None:
    objs = objects(prod[1], "prod-onprem")
    for ns, quota in (("gpu-ml-platform", "8"), ("gpu-research", "8")):
        hard = objs[("ResourceQuota", ns, "gpu-quota")]["spec"]["hard"]
        assert hard == {"requests.nvidia.com/gpu": quota, "limits.nvidia.com/gpu": quota}
        (item,) = objs[("LimitRange", ns, "gpu-per-container")]["spec"]["limits"]
        assert item["type"] == "Container"
        assert item["max"] == {"nvidia.com/gpu": "1"}
        # an explicit zero, never left out: the API server would fill it from max (one GPU
        # to every container; tests/infra/test_k8s_scheduling.py)
        assert item["default"] == item["defaultRequest"] == {"nvidia.com/gpu": "0"}


def test_device_plugin_pinned_critical_on_gpu_nodes(prod: tuple[LoadedStack, OfflinePlan]) -> None:
    ds = objects(prod[1], "prod-onprem")[("DaemonSet", "gpupool-system", "nvidia-device-plugin")]
    spec = pod_spec(ds)
    assert spec["priorityClassName"] == "system-node-critical"
    assert spec["nodeSelector"] == {"gpupool.io/pool": "onprem"}  # GPU nodes' prerequisite
    assert {"key": "nvidia.com/gpu", "operator": "Exists", "effect": "NoSchedule"} in spec[
        "tolerations"]
    (container,) = spec["containers"]
    assert container["image"] == DEVICE_PLUGIN_IMAGE == "nvcr.io/nvidia/k8s-device-plugin:v0.20.0"
    assert "args" not in container  # no time-slicing in prod


def test_dcgm_exporter_publishes_utilisation_per_pod_and_team(
    prod: tuple[LoadedStack, OfflinePlan],
) -> None:
    objs = objects(prod[1], "prod-onprem")
    ds = objs[("DaemonSet", "gpupool-system", "dcgm-exporter")]
    (container,) = pod_spec(ds)["containers"]
    assert container["image"] == DCGM_EXPORTER_IMAGE
    assert container["ports"] == [{"name": "metrics", "containerPort": 9400}]
    env = {e["name"]: e.get("value", e.get("valueFrom")) for e in container["env"]}
    assert env["DCGM_EXPORTER_KUBERNETES"] == "true"  # pod and namespace labels on each GPU
    assert env["DCGM_EXPORTER_KUBERNETES_ENABLE_POD_LABELS"] == "true"
    assert "team" in env["DCGM_EXPORTER_KUBERNETES_POD_LABEL_ALLOWLIST_REGEX"]
    service = objs[("Service", "gpupool-system", "dcgm-exporter")]
    assert service["spec"]["ports"][0]["port"] == 9400
    monitor = objs[("ServiceMonitor", "gpupool-system", "dcgm-exporter")]
    assert monitor["apiVersion"] == "monitoring.coreos.com/v1"
    assert monitor["spec"]["endpoints"][0]["honorLabels"] is True
    assert monitor["spec"]["selector"] == {"matchLabels": service["spec"]["selector"]}
    rules = objs[("ClusterRole", None, "gpupool-onprem-dcgm-read-pods")]["rules"]
    assert rules == [{"apiGroups": [""], "resources": ["pods"], "verbs": ["get", "list", "watch"]}]


def test_inference_has_one_gpu_per_container_and_scales_on_gpu_utilisation(
    prod: tuple[LoadedStack, OfflinePlan],
) -> None:
    objs = objects(prod[1], "prod-onprem")
    dep = objs[("Deployment", "gpu-ml-platform", "embeddings")]
    assert "replicas" not in dep["spec"]  # KEDA owns replicas; an apply never resets them
    (container,) = pod_spec(dep)["containers"]
    assert container["resources"]["limits"]["nvidia.com/gpu"] == "1"
    assert container["resources"]["requests"]["nvidia.com/gpu"] == "1"
    scaler = objs[("ScaledObject", "gpu-ml-platform", "embeddings")]
    spec = scaler["spec"]
    assert spec["scaleTargetRef"] == {"apiVersion": "apps/v1", "kind": "Deployment",
                                      "name": "embeddings"}
    assert (spec["minReplicaCount"], spec["maxReplicaCount"]) == (2, 6)
    (trigger,) = spec["triggers"]
    assert trigger["type"] == "prometheus"
    assert trigger["metadata"]["threshold"] == "70"
    assert 'DCGM_FI_DEV_GPU_UTIL{namespace="gpu-ml-platform"' in trigger["metadata"]["query"]
    assert objs[("Service", "gpu-ml-platform", "embeddings")]["spec"]["ports"][0]["port"] == 8000


def test_batch_job_takes_one_gpu_per_pod(prod: tuple[LoadedStack, OfflinePlan]) -> None:
    job = objects(prod[1], "prod-onprem")[("Job", "gpu-research", "nightly-eval")]
    assert (job["spec"]["parallelism"], job["spec"]["completions"]) == (2, 4)
    spec = pod_spec(job)
    assert spec["restartPolicy"] == "Never"
    assert spec["containers"][0]["resources"]["limits"]["nvidia.com/gpu"] == "1"


def test_eks_karpenter_allows_only_the_smallest_size(eks: tuple[LoadedStack, OfflinePlan]) -> None:
    objs = objects(eks[1], "eks-eks-gpu")
    pool = objs[("NodePool", None, "gpupool-eks-gpu")]
    assert pool["apiVersion"] == "karpenter.sh/v1"
    reqs = {r["key"]: r for r in pool["spec"]["template"]["spec"]["requirements"]}
    assert reqs["node.kubernetes.io/instance-type"]["values"] == ["g5.xlarge"]  # smallest A10G
    assert reqs["karpenter.k8s.aws/instance-gpu-count"]["values"] == ["1"]
    assert reqs["karpenter.sh/capacity-type"]["values"] == ["on-demand", "spot"]
    assert pool["spec"]["limits"] == {"nvidia.com/gpu": "12"}
    node_class = objs[("EC2NodeClass", None, "gpupool-eks-gpu")]["spec"]
    assert node_class["metadataOptions"]["httpTokens"] == "required"
    assert node_class["metadataOptions"]["httpPutResponseHopLimit"] == 1
    assert node_class["blockDeviceMappings"][0]["ebs"]["encrypted"] is True
    assert all(node_class["tags"].get(k) for k in CHARGEBACK)


def test_gpu_operator_skips_the_device_plugin(eks: tuple[LoadedStack, OfflinePlan]) -> None:
    kinds = Counter(k for k, _, _ in objects(eks[1], "eks-eks-gpu"))
    assert kinds["DaemonSet"] == 1  # DCGM exporter only
    assert kinds["ServiceMonitor"] == 0  # serviceMonitor: false (the default)
    assert kinds["ConfigMap"] == 1  # the Grafana dashboard; no time-slicing config


def test_remote_gpu_proxy_admits_only_labelled_clients(
    eks: tuple[LoadedStack, OfflinePlan],
) -> None:
    objs = objects(eks[1], "eks-eks-gpu")
    dep = objs[("Deployment", "vision", "gpu-proxy")]
    assert dep["metadata"]["labels"]["gpupool.io/role"] == "gpu-proxy"
    service = objs[("Service", "vision", "gpu-proxy")]["spec"]
    assert service["type"] == "ClusterIP" and service["ports"][0]["port"] == 14833
    policy = objs[("NetworkPolicy", "vision", "gpu-proxy-clients-only")]["spec"]
    assert policy["policyTypes"] == ["Ingress"]
    (rule,) = policy["ingress"]
    assert rule["from"] == [{"namespaceSelector": {},
                             "podSelector": {"matchLabels": {"gpupool.io/gpu-client": "true"}}}]
    assert rule["ports"] == [{"port": 14833, "protocol": "TCP"}]
    assert objs[("ScaledObject", "vision", "gpu-proxy")]["spec"]["scaleTargetRef"]["name"] == (
        "gpu-proxy")


def test_remote_gpu_proxy_carries_its_budget_as_the_aws_tier_does(
    eks: tuple[LoadedStack, OfflinePlan], tmp_path: Path,
) -> None:
    """Same figures, same spelling of the numbers as the AWS tier's budget tags."""
    objs = objects(eks[1], "eks-eks-gpu")
    budget = {"gpupool.io/remoting-min-gbps": "2.5", "gpupool.io/remoting-max-rtt-us": "150"}
    dep = objs[("Deployment", "vision", "gpu-proxy")]
    assert dep["metadata"]["annotations"] == budget
    assert dep["spec"]["template"]["metadata"]["annotations"] == budget
    assert objs[("Service", "vision", "gpu-proxy")]["metadata"]["annotations"] == budget
    # a profile budget names the profile and its overhead; no budget, no annotations
    (tmp_path / "p.yaml").write_text(
        "name: p\nlocal_time_s: 1\nsync_calls: 10\nbytes_to_gpu: 0\nbytes_from_gpu: 0\n")
    for key, expected in ((f"budget: {{profile: {tmp_path}/p.yaml}}",
                           {"gpupool.io/remoting-profile": f"{tmp_path}/p.yaml",
                            "gpupool.io/remoting-max-overhead": "0.05"}), ("", None)):
        path = tmp_path / "Pulumi.b.yaml"
        path.write_text(EKS_STACK.replace("budget: {minGbps: 2.5, maxRttUs: 150}", key))
        dep = objects(run_offline(load_stack(str(path))), "b-eks-gpu")[
            ("Deployment", "vision", "gpu-proxy")]
        assert dep["metadata"].get("annotations") == expected


def test_time_slicing_config_when_the_kit_runs_the_device_plugin(
    tmp_path: Path,
) -> None:
    text = EKS_STACK.replace("gpuOperator: true",
                             "gpuOperator: false\n      timeSlicingReplicas: 4")
    path = tmp_path / "Pulumi.ts.yaml"
    path.write_text(text)
    plan = run_offline(load_stack(str(path)))
    objs = objects(plan, "ts-eks-gpu")
    config = objs[("ConfigMap", "gpupool-system", "nvidia-device-plugin-config")]
    assert "replicas: 4" in config["data"]["config.yaml"]
    ds = objs[("DaemonSet", "gpupool-system", "nvidia-device-plugin")]
    assert pod_spec(ds)["containers"][0]["args"] == ["--config-file=/config/config.yaml"]


def test_eks_envelope_prices_karpenter_nodes(eks: tuple[LoadedStack, OfflinePlan]) -> None:
    env = eks[1].envelope
    pool = next(p for p in env.pools if p.pool == "eks-gpu")
    assert (pool.instance_type, pool.platform) == ("g5.xlarge", "kubernetes")
    assert (pool.gpus_min, pool.gpus_max) == (1, 6)  # proxy minimum; the team quota caps at 6
    assert pool.per_hour_max == pytest.approx(6 * 1.006)
    assert pool.upper_bound  # spot allowed

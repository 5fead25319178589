"""``gpupool:kubernetes``: what a stack may say about its Kubernetes pools, and the one-line
problems ``gpupool validate`` prints when it says something wrong."""

from __future__ import annotations

import copy
from typing import Any

import pytest

from gpupool.cli import main
from gpupool.config import parse_flat_config
from gpupool.errors import InputError

POOL: dict[str, Any] = {
    "name": "onprem",
    "cluster": {"kubeconfig": "/etc/kube/gpu.yaml", "version": "1.31"},
    "gpu": "L40S",
    "teams": [{"name": "research", "gpuQuota": 4}],
    "workloads": [{"name": "serve", "team": "research",
                   "image": "nvcr.io/nvidia/tritonserver:24.08-py3"}],
}


def flat(*pools: dict[str, Any], **top: Any) -> dict[str, Any]:
    return {
        "gpupool:environment": "dev",
        "gpupool:team": top.get("team", "ml-platform"),
        "gpupool:costCenter": "cc-1",
        "gpupool:network": {"createVpc": True},
        "gpupool:pools": [{"name": "inference", "gpu": "T4", "maxSize": 4}],
        "gpupool:kubernetes": list(pools),
    }


def problems(config: dict[str, Any]) -> list[str]:
    with pytest.raises(InputError) as info:
        parse_flat_config(config, "s.yaml")
    return info.value.problems


def pool(**changes: Any) -> dict[str, Any]:
    out = copy.deepcopy(POOL)
    out.update(changes)
    return out


def test_a_minimal_pool_validates_with_defaults() -> None:
    config, _ = parse_flat_config(flat(POOL), "s.yaml")
    (k,) = config.kubernetes
    assert k.gpu_hourly_cost == 0 and not k.gpu_operator
    assert k.teams[0].namespace_name == "research" and k.teams[0].max_gpus_per_container == 1
    assert k.workloads[0].type == "inference" and k.workloads[0].min_replicas == 1
    assert k.node_selector is None  # the label the kit guarantees: the pool's own, here
    assert k.gpu_node_selector == {"gpupool.io/pool": "onprem"}
    assert k.node_label_prerequisite == "gpupool.io/pool=onprem"


def test_stacks_without_the_key_still_validate() -> None:
    config = flat()
    del config["gpupool:kubernetes"]
    assert parse_flat_config(config, "s.yaml")[0].kubernetes == []


@pytest.mark.parametrize(
    ("changes", "expected"),
    [
        ({"teams": [{"name": "research", "gpuQouta": 4}]},
         "gpupool:kubernetes[0].teams[0].gpuQouta: expected a known key, not this one "
         "(did you mean gpuQuota?)"),
        ({"workloads": [{"name": "x", "team": "research", "image": "pytorch:latest"}]},
         "gpupool:kubernetes[0].workloads[0].image: expected an image pinned to a version, "
         "not :latest"),
        ({"workloads": [{"name": "x", "team": "research", "image": "pytorch"}]},
         "gpupool:kubernetes[0].workloads[0].image: expected a container image pinned to a "
         "version tag or digest"),
        ({"workloads": [{"name": "x", "team": "vision", "image": "a/b:1"}]},
         "gpupool:kubernetes[0].workloads: expected workloads[0].team to be one of the pool's "
         "teams (research), got 'vision'"),
        ({"cluster": {"version": 1.31}},
         "gpupool:kubernetes[0].cluster.version: expected text, got 1.31"),
        ({"cluster": {"version": "1.9"}},
         "gpupool:kubernetes[0].cluster.version: expected a Kubernetes minor version"),
        ({"karpenter": {"clusterName": "ml", "nodeRole": "r", "maxGpus": 4}},
         "gpupool:kubernetes[0].karpenter: expected cluster.distribution: eks for Karpenter"),
        ({"teams": [{"name": "Research!", "gpuQuota": 1}]},
         "gpupool:kubernetes[0].teams[0].name: expected a Kubernetes name"),
        ({"workloads": [{"name": "x", "team": "research", "image": "a/b:1", "minReplicas": 3,
                         "maxReplicas": 2}]},
         "gpupool:kubernetes[0].workloads[0].maxReplicas: expected at least minReplicas (3)"),
        ({"nodeSelector": {"gpu": "yes please"}},
         "gpupool:kubernetes[0].nodeSelector: expected Kubernetes label values"),
        # accepted-then-ignored before: the GPU Operator's device plugin never read it
        ({"gpuOperator": True, "timeSlicingReplicas": 4},
         "gpupool:kubernetes[0].timeSlicingReplicas: expected no timeSlicingReplicas with "
         "gpuOperator: true: the GPU Operator runs its own device plugin"),
        # a NodePool cannot set it on its nodes (Karpenter v1.0-v1.8): pods would stay Pending
        ({"cluster": {"distribution": "eks"}, "nodeSelector": {"node.kubernetes.io/gpu": "yes"},
          "karpenter": {"clusterName": "ml", "nodeRole": "r", "maxGpus": 4}},
         "gpupool:kubernetes[0].nodeSelector: expected node labels the Karpenter NodePool can "
         "set on its nodes (Karpenter v1.0-v1.8 refuse the kubernetes.io and k8s.io domains, "
         "every v1 release karpenter.sh and karpenter.k8s.aws), got 'node.kubernetes.io/gpu'"),
        ({"workloads": [{"name": "x", "team": "research", "image": "a/b:1", "parallelism": 4}]},
         "gpupool:kubernetes[0].workloads[0].parallelism: expected parallelism only on a batch "
         "workload (type: batch); this one is inference, which would ignore it"),
        ({"workloads": [{"name": "x", "team": "research", "image": "a/b:1", "type": "batch",
                         "minReplicas": 2}]},
         "gpupool:kubernetes[0].workloads[0].minReplicas: expected minReplicas only on an "
         "inference workload (type: inference); this one is batch"),
        ({"workloads": [{"name": "x", "team": "research", "image": "a/b:1", "volumes": [
            {"name": "models", "mountPath": "/models"}]}]},
         "gpupool:kubernetes[0].workloads[0].volumes[0]: expected exactly one of "
         "persistentVolumeClaim or emptyDir, got neither"),
        ({"workloads": [{"name": "x", "team": "research", "image": "a/b:1", "volumes": [
            {"name": "models", "mountPath": "models", "emptyDir": {}}]}]},
         "gpupool:kubernetes[0].workloads[0].volumes[0].mountPath: expected an absolute path"),
        ({"monitoring": {"serviceMonitorLabels": {"release": "kube prometheus"}}},
         "gpupool:kubernetes[0].monitoring.serviceMonitorLabels: expected Kubernetes label "
         "values"),
    ],
)
def test_each_problem_is_one_line_at_its_key(changes: dict[str, Any], expected: str) -> None:
    lines = problems(flat(pool(**changes)))
    assert any(line.startswith(f"s.yaml: {expected}") for line in lines), lines
    assert all("\n" not in line for line in lines)


def test_a_kubernetes_only_stack_needs_no_network_or_pools() -> None:
    config = flat(POOL)
    del config["gpupool:network"], config["gpupool:pools"]
    parsed, _ = parse_flat_config(config, "s.yaml")
    assert parsed.network is None and parsed.pools == [] and len(parsed.kubernetes) == 1
    del config["gpupool:kubernetes"]  # ... but a stack needs something to run
    assert problems(config) == ["s.yaml: gpupool:pools: expected at least one pool (or a "
                                "remoteGpu tier or kubernetes pool), got none"]
    aws = flat()  # AWS pools still need their network
    del aws["gpupool:network"]
    assert problems(aws) == ["s.yaml: gpupool:network: expected a network (createVpc, or vpcId "
                             "and subnetIds) for the stack's AWS pools and tiers"]


def test_pool_names_are_unique_across_aws_and_kubernetes() -> None:
    (line,) = problems(flat(pool(name="inference")))
    assert "gpupool:kubernetes: expected pool names unique across pools and kubernetes" in line


def test_chargeback_values_must_be_usable_as_labels() -> None:
    (line,) = problems(flat(POOL, team="ML Platform"))
    assert "expected gpupool:team to be usable as a Kubernetes label value" in line


def test_karpenter_gpu_must_be_in_the_catalog() -> None:
    eks = pool(cluster={"distribution": "eks"}, gpu="H900",
               karpenter={"clusterName": "ml", "nodeRole": "r", "maxGpus": 4})
    (line,) = problems(flat(eks))
    assert line.startswith("s.yaml: gpupool:kubernetes[0].gpu: expected a GPU model or family")


def test_validate_cli_lists_kubernetes_pools(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["validate", "prod"]) == 0
    out = capsys.readouterr().out
    assert "onprem: Kubernetes (context onprem-gpu, 1.31), L40S, 2 teams, 2 workloads" in out


# --------------------------------------------------------------------------- remote-GPU proxy
# Its port and budget are the AWS tier's keys (gpupool.config.remoting_keys): same spelling,
# same bounds, same problems, word for word.

PROXY: dict[str, Any] = {"team": "research", "image": "ghcr.io/example/remoting:1.4.2"}
AWS_TIER: dict[str, Any] = {"name": "tier", "gpu": "T4", "maxSize": 2, "port": 18515,
                            "budget": {"minGbps": 4, "maxRttUs": 200}}


def both(proxy: dict[str, Any], tier: dict[str, Any]) -> tuple[list[str], list[str]]:
    """The problems of the same keys on a Kubernetes proxy and on an AWS tier, without the
    part of each line that names where they are."""
    k8s = problems(flat(pool(remoteGpu={**PROXY, **proxy})))
    aws_flat = flat()
    del aws_flat["gpupool:kubernetes"]
    aws_flat["gpupool:remoteGpu"] = [{**AWS_TIER, **tier}]
    aws = problems(aws_flat)
    return ([line.split("remoteGpu.", 1)[1] for line in k8s],
            [line.split("remoteGpu[0].", 1)[1] for line in aws])


@pytest.mark.parametrize("keys", [
    {"port": 80},
    {"port": 70000},
    {"budget": {"minGbps": 4}},
    {"budget": {"profile": "p.yaml", "maxRttUs": 100}},
    {"budget": {"minGbps": 4, "maxRttUs": 2e6}},
    {"budget": {"minGbps": 4, "maxRttUs": 100, "maxOverhead": 0.1}},
    {"budget": {"profile": "p.yaml", "maxOverhead": 2}},
    {"budget": {"minGbps": 4, "maxRttUs": 100, "minGpbs": 1}},
])
def test_proxy_port_and_budget_mean_the_same_on_kubernetes_and_aws(keys: dict[str, Any]) -> None:
    k8s, aws = both(keys, keys)
    assert k8s and k8s == aws


def test_a_kubernetes_proxy_budget_from_a_profile(tmp_path: Any) -> None:
    (tmp_path / "p.yaml").write_text(
        "name: p\nlocal_time_s: 1\nsync_calls: 10\nbytes_to_gpu: 0\nbytes_from_gpu: 0\n")
    config, _ = parse_flat_config(flat(pool(remoteGpu={**PROXY, "budget": {
        "profile": "p.yaml", "maxOverhead": 0.1}})), "s.yaml", base_dir=tmp_path)
    budget = config.kubernetes[0].remote_gpu.budget  # type: ignore[union-attr]
    assert budget is not None and budget.epsilon == 0.1
    # a profile that is not there is the same one line as on an AWS tier, at the proxy's key
    with pytest.raises(InputError) as info:
        parse_flat_config(flat(pool(remoteGpu={**PROXY, "budget": {"profile": "none.yaml"}})),
                          "s.yaml", base_dir=tmp_path)
    assert info.value.problems == [
        f"s.yaml: gpupool:kubernetes[0].remoteGpu.budget.profile: expected a valid application "
        f"profile ({tmp_path}/none.yaml: no such file)"]


def test_existing_proxies_without_a_budget_still_validate() -> None:
    config, _ = parse_flat_config(flat(pool(remoteGpu=PROXY)), "s.yaml")
    proxy = config.kubernetes[0].remote_gpu
    assert proxy is not None and proxy.budget is None and proxy.port == 14833


def test_validate_says_what_the_proxy_serves_and_its_budget(
        tmp_path: Any, capsys: pytest.CaptureFixture[str]) -> None:
    import yaml

    for budget, said in (
            ({"minGbps": 2.5, "maxRttUs": 150}, "budget 2.5 Gbps, 150 us (carried, not sized)"),
            (None, "no budget (gpupool netcheck probe --profile measures one")):
        proxy = {**PROXY, "port": 18515, **({"budget": budget} if budget else {})}
        path = tmp_path / "Pulumi.k.yaml"
        path.write_text(yaml.safe_dump({"config": flat(pool(remoteGpu=proxy))}))
        assert main(["validate", str(path)]) == 0
        out = capsys.readouterr().out
        assert ("onprem: remote GPU proxy gpu-proxy.research:18515, 1..4 replicas; " + said
                ) in out, out

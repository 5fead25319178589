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
    assert k.node_selector == {"nvidia.com/gpu.present": "true"}


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
    ],
)
def test_each_problem_is_one_line_at_its_key(changes: dict[str, Any], expected: str) -> None:
    lines = problems(flat(pool(**changes)))
    assert any(line.startswith(f"s.yaml: {expected}") for line in lines), lines
    assert all("\n" not in line for line in lines)


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
    assert "onprem: Kubernetes (context onprem-gpu, 1.31), L40S, 2 team(s), 2 workload(s)" in out

# ruff: noqa: RUF001  (the multiplication sign users read in messages)
"""gpu-no-vertical-upsize's pod part beyond its examples: the baseline of a pod template that
had no GPUs, a role that is new, why a count cannot be compared, and how numbers are written
(the admission CEL writes them the same way: tests/policies/admission/test_upsize.py)."""

from __future__ import annotations

from typing import Any

import pytest

from gpupool.catalog import load_catalog
from policies.model import UNKNOWN, ChangeKind, ResourceChange, normalise_inputs, resource_kind
from policies.rules import get_rule
from policies.rules._pod_upsize import shown, times

DEPLOY = "kubernetes:apps/v1:Deployment"


def _deployment(gpus: Any) -> dict[str, Any]:
    container: dict[str, Any] = {"name": "server", "image": "x"}
    if gpus is not None:
        container["resources"] = {"limits": {"nvidia.com/gpu": gpus}}
    return {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "llm",
                                                                        "namespace": "ml"},
            "spec": {"selector": {"matchLabels": {"app": "llm"}}, "template": {
                "metadata": {"labels": {"app": "llm"}}, "spec": {"containers": [container]}}}}


def _findings(old: dict[str, Any], new: dict[str, Any], type_: str = DEPLOY) -> list[Any]:
    change = ResourceChange("Deployment/ml/llm", type_, "llm", ChangeKind.UPDATE,
                            normalise_inputs(new), normalise_inputs(old), "test",
                            resource_kind(type_))
    return list(get_rule("gpu-no-vertical-upsize").run([change], load_catalog()))


def test_a_pod_without_gpus_is_measured_against_one_gpu_per_pod() -> None:
    assert _findings(_deployment(None), _deployment(1)) == []
    (f,) = _findings(_deployment(None), _deployment(4))
    assert f.message.endswith("GPUs per pod 0 → 4 is vertical scaling (each pod now needs a "
                              "node with 4 free GPUs, and holds them busy or idle); keep 1 GPU "
                              "per pod and run 4 × the replicas"), f.message


def test_a_new_role_is_a_role_that_had_no_gpus() -> None:
    def job(**gpus: int) -> dict[str, Any]:
        return {"apiVersion": "kubeflow.org/v1", "kind": "PyTorchJob",
                "metadata": {"name": "ft", "namespace": "ml"},
                "spec": {"pytorchReplicaSpecs": {n: {"replicas": 1, "template": {"spec": {
                    "containers": [{"name": "c", "image": "x", "resources": {
                        "limits": {"nvidia.com/gpu": g}}}]}}} for n, g in gpus.items()}}}
    kind = "kubernetes:kubeflow.org/v1:PyTorchJob"
    assert _findings(job(Master=1), job(Master=1, Worker=1), kind) == []
    (f,) = _findings(job(Master=1), job(Master=1, Worker=2), kind)
    assert "PyTorchJob ml/ft, Worker: GPUs per pod 0 → 2" in f.message


@pytest.mark.parametrize(("count", "why"), [
    (UNKNOWN, "are unknown until apply"),
    ("two", "cannot be read (a GPU count is not a number)"),
])
def test_a_count_that_cannot_be_compared_says_why(count: Any, why: str) -> None:
    (f,) = _findings(_deployment(1), _deployment(count))
    assert f.unknown and f.message.endswith(f"the new GPUs per pod of Deployment ml/llm {why}")
    (f,) = _findings(_deployment(count), _deployment(2))
    assert f.unknown and f.message.endswith(f"the old GPUs per pod of Deployment ml/llm {why}")
    assert _findings(_deployment(count), _deployment(0)) == []  # nothing asked: no upsize


@pytest.mark.parametrize(("x", "text"), [
    (4.0, "4"), (0.0, "0"), (0.5, "1/2"), (1.5, "3/2"), (2 / 3, "2/3"), (1 / 65, "15m"),
    (0.333, "333m"),
])
def test_numbers_are_whole_small_fractions_or_milli_units(x: float, text: str) -> None:
    assert shown(x) == text


@pytest.mark.parametrize(("new", "old", "text"), [
    (4.0, 1.0, "4"), (3.0, 2.0, "3/2"), (8.0, 6.0, "4/3"), (1006.0, 1000.0, "1006/1000"),
    (1.0, 0.5, "2"), (0.75, 0.5, "3/2"),
])
def test_factors_are_in_lowest_terms_up_to_64(new: float, old: float, text: str) -> None:
    assert times(new, old) == text

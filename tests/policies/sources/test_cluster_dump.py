"""``gpupool check --cluster-dump FILE``: what runs on a cluster (kubectl get … -A -o json),
judged with the same rules, a line per namespace of what Deny would refuse; a file that is
not a List is one line of bad input."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from gpupool.cli import main

DUMP = Path(__file__).resolve().parents[2] / "fixtures" / "cluster-dump" / "kubectl-get-all.json"


def test_a_dump_is_judged_per_object_and_summarised_per_namespace(
        capsys: pytest.CaptureFixture[str]) -> None:
    code = main(["check", "--cluster-dump", str(DUMP), "--format", "json"])
    out = capsys.readouterr()
    report = json.loads(out.out)
    assert code == 1 and report["verdict"] == "fail"
    by_policy: dict[str, set[str]] = {}
    for v in report["violations"]:
        by_policy.setdefault(v["policy"], set()).add(v["resource"])
    # the Deployment, its ReplicaSet and its Pod each ask for 4 GPUs per container
    assert by_policy["k8s-gpu-per-container"] >= {
        "Deployment/ml/llm", "ReplicaSet/ml/llm-7c9d8f6b5d", "Pod/ml/llm-7c9d8f6b5d-x2k9p",
        "RayCluster/research/serve"}
    assert "Deployment/web/embeddings" not in by_policy["k8s-gpu-per-container"]
    assert by_policy["k8s-gpu-limits"] == {"Pod/research/notebook-ana"}  # requests only
    note = [line for line in out.err.splitlines() if "cluster dump" in line]
    assert len(note) == 1, out.err
    assert "8 objects in 3 namespaces" in note[0]
    assert "ml 3 of 3" in note[0] and "research 2 of 2" in note[0] and "web 0 of 2" in note[0]
    # a Deployment no autoscaler names: the PR check's finding, never refused at admission
    # (k8s-gpu-workload-autoscaled's policy matches only the kinds that scale themselves)
    assert "Deployment/web/embeddings" in by_policy["k8s-gpu-workload-autoscaled"]
    assert "web 0 of 2 (1 with other findings)" in note[0]


@pytest.mark.parametrize(("text", "expected"), [
    ('{"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "x"}}',
     "kind: expected List (kubectl get <kinds> -A -o json), got kind 'Deployment'"),
    ('[1, 2]', "expected a List (kubectl get <kinds> -A -o json), got array"),
    ('{"apiVersion": "v1", "kind": "List", "items": {"a": 1}}',
     "items: expected a list of Kubernetes objects"),
    ('{"apiVersion": "v1", "kind": "List", "items": [{"kind": "Pod"}]}',
     "items[0]: apiVersion: expected a Kubernetes object"),
    ('{"kind": "List", "items": [', "JSON"),
])
def test_a_file_that_is_not_a_list_is_one_line_and_exit_2(
        tmp_path: Path, capsys: pytest.CaptureFixture[str], text: str, expected: str) -> None:
    path = tmp_path / "dump.json"
    path.write_text(text)
    assert main(["check", "--cluster-dump", str(path)]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and str(path) in err[0] and expected in err[0], err


def test_an_empty_dump_is_said_out_loud(tmp_path: Path, capsys: pytest.CaptureFixture[str]
                                        ) -> None:
    path = tmp_path / "dump.json"
    path.write_text('{"apiVersion": "v1", "kind": "List", "items": []}')
    assert main(["check", "--cluster-dump", str(path)]) == 0
    assert "no resources to judge" in capsys.readouterr().err

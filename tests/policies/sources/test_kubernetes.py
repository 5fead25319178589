"""Kubernetes manifests as a plan source: real files from upstream repositories, multi-document
streams, Lists, directories; bad input refused in one line, never a pass."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from gpupool.cli import main
from gpupool.errors import InputError
from policies.engine import evaluate
from policies.model import ChangeKind, ResourceKind
from policies.settings import load_settings
from policies.sources import load_plans

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures"
K8S = FIXTURES / "kubernetes"
BAD = FIXTURES / "kubernetes-bad"


def one_plan(*paths: Path | str) -> list:
    plans = load_plans([str(p) for p in paths])
    assert len(plans) == 1
    return list(plans[0].changes)


def test_upstream_device_plugin_manifest_is_one_daemonset() -> None:
    (c,) = one_plan(K8S / "nvidia-device-plugin-v0.20.0.yml")
    assert (c.type, c.kind, c.change) == ("kubernetes:apps/v1:DaemonSet",
                                          ResourceKind.K8S_WORKLOAD, ChangeKind.CREATE)
    assert c.address == "DaemonSet/kube-system/nvidia-device-plugin-daemonset"
    assert c.origin.endswith("nvidia-device-plugin-v0.20.0.yml:15")  # after the licence header
    # keys are snake_case like every source; label keys stay as written
    assert c.after["spec"]["selector"]["match_labels"] == {"name": "nvidia-device-plugin-ds"}


GPU_OPERATOR = K8S / "helm-template-gpu-operator-v1.10.1.yaml"


def test_helm_rendered_gpu_operator_chart_is_read_whole() -> None:
    # real `helm template gpu-operator nvidia/gpu-operator --version 1.10.1` output, as
    # kubernetes-sigs/cluster-api-provider-azure committed it (tests/fixtures/README.md)
    changes = one_plan(GPU_OPERATOR)
    assert [(c.address, c.origin.rsplit(":", 1)[1]) for c in changes][:3] == [
        ("Namespace/gpu-operator-resources", "3"),  # after `---` and `# Source: …`
        ("ClusterRole/gpu-operator-resources/gpu-operator-node-feature-discovery", "12"),
        ("ClusterRoleBinding/gpu-operator-node-feature-discovery", "46")]
    assert [c.type.split(":")[1] for c in changes] == [
        "core/v1", "rbac.authorization.k8s.io/v1", "rbac.authorization.k8s.io/v1", "apps/v1",
        "core/v1", "apiextensions.k8s.io/v1", "core/v1", "core/v1", "apps/v1", "nvidia.com/v1",
        "apps/v1", "rbac.authorization.k8s.io/v1", "rbac.authorization.k8s.io/v1", "core/v1"]
    policy = next(c for c in changes if c.type == "kubernetes:nvidia.com/v1:ClusterPolicy")
    assert policy.after["spec"]["device_plugin"]["version"] == "v0.11.0-ubi8"
    # a CRD's schema (`{}` values, 400 lines of nested openAPIV3Schema) is read as it is
    crd = next(c for c in changes if c.type.endswith(":CustomResourceDefinition"))
    assert crd.after["spec"]["names"]["kind"] == "NodeFeatureRule"


def test_gpupool_check_passes_the_gpu_operator_chart(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["check", str(GPU_OPERATOR), "--format", "json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc["verdict"] == "pass" and doc["violations"] == [] and doc["errors"] == []
    assert doc["summary"]["resources_evaluated"] == 14


def test_multi_document_file_keeps_order_and_lines() -> None:
    changes = one_plan(K8S / "dcgm-exporter-4.5.3-4.8.2.yaml")
    assert [(c.type, c.origin.rsplit(":", 1)[1]) for c in changes] == [
        ("kubernetes:apps/v1:DaemonSet", "15"), ("kubernetes:core/v1:Service", "80")]


def test_list_kinds_are_unwrapped() -> None:
    changes = one_plan(K8S / "kubectl-list.yaml")
    assert [c.address for c in changes] == ["Deployment/speech/whisper", "ResourceQuota/speech/gpu"]
    assert all(c.origin.endswith("kubectl-list.yaml:1") for c in changes)


def test_json_list_from_kubectl_get_o_json(tmp_path: Path) -> None:
    items = [{"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": f"team-{i}"}}
             for i in range(3)]
    path = tmp_path / "ns.json"
    path.write_text(json.dumps({"apiVersion": "v1", "kind": "List", "items": items}))
    assert [c.address for c in one_plan(path)] == ["Namespace/team-0", "Namespace/team-1",
                                                   "Namespace/team-2"]


def test_a_directory_and_files_form_one_plan(tmp_path: Path) -> None:
    (tmp_path / "hpa.yaml").write_text(
        "apiVersion: autoscaling/v2\nkind: HorizontalPodAutoscaler\n"
        "metadata: {name: nvidia-plugin-test}\n"
        "spec: {scaleTargetRef: {kind: Deployment, name: nvidia-plugin-test}, maxReplicas: 9,"
        " metrics: [{type: Pods, pods: {metric: {name: DCGM_FI_DEV_GPU_UTIL}}}]}\n")
    changes = one_plan(K8S / "gpu-operator-plugin-test.yaml", tmp_path)
    assert [c.address for c in changes] == ["Deployment/nvidia-plugin-test",
                                            "HorizontalPodAutoscaler/nvidia-plugin-test"]
    result = evaluate(load_plans([str(K8S / "gpu-operator-plugin-test.yaml"), str(tmp_path)]),
                      load_settings(None, None))
    # the HPA in another file targets the Deployment: the two files are judged together
    assert not [v for v in result.violations if v.policy == "k8s-gpu-workload-autoscaled"]


def test_directory_is_read_in_path_order_and_every_file_is_one_plan() -> None:
    changes = one_plan(K8S)
    files = [c.origin.rsplit(":", 1)[0].rsplit("/", 1)[1] for c in changes]
    assert files == sorted(files)
    assert len(changes) == 26


def test_plan_files_stay_separate_plans() -> None:
    plans = load_plans([str(K8S / "gpu-operator-gpu-pod.yaml"),
                        str(FIXTURES / "terraform" / "kubernetes-deployment.json")])
    assert [p.source for p in plans] == ["terraform", "kubernetes"]


@pytest.mark.parametrize(("name", "expected"), [
    ("not-kubernetes.yaml", "not-kubernetes.yaml: document 1 (line 2): apiVersion: expected a "
                            "Kubernetes object with apiVersion and kind, got a mapping with keys: "
                            "services"),
    ("no-kind.yaml", "no-kind.yaml: document 2 (line 6): kind: expected a Kubernetes object"),
    ("alias-bomb.yaml", "alias-bomb.yaml: expected YAML whose aliases expand to at most 10,000 "
                        "values (refused: an alias bomb)"),
    ("latin1.yaml", "latin1.yaml: expected UTF-8 text (byte 52 is not)"),
    # KubeRay's chart template, verbatim: before issue 15 a YAML parser's error about a flow
    # mapping; now what to do about it
    ("helm-unrendered-kuberay-raycluster.yaml",
     "helm-unrendered-kuberay-raycluster.yaml: expected Kubernetes manifests, got an unrendered "
     "Helm template (line 4: {{ include \"ray-cluster.fullname\" . }}): run `helm template`"),
])
def test_bad_input_is_one_line_and_exit_2(name: str, expected: str,
                                          capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["check", str(BAD / name), "--format", "json"]) == 2
    captured = capsys.readouterr()
    assert captured.out == ""  # no verdict at all: never a pass
    (line,) = captured.err.splitlines()
    assert expected in line and line.startswith("gpupool check: ")


def test_every_bad_file_is_reported_at_once(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["check", str(BAD)]) == 2
    lines = capsys.readouterr().err.splitlines()
    assert len(lines) == 5


def test_helm_template_on_standard_input_and_yaml_that_parses(
        tmp_path: Path, capsys: pytest.CaptureFixture[str],
        monkeypatch: pytest.MonkeyPatch) -> None:
    import io
    import sys

    text = (BAD / "helm-unrendered-kuberay-raycluster.yaml").read_bytes()
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(text)))
    assert main(["check", "-"]) == 2
    (line,) = capsys.readouterr().err.splitlines()
    assert "<stdin>: expected Kubernetes manifests, got an unrendered Helm template" in line
    # a template that happens to parse as YAML but is no object: still told to render it
    (tmp_path / "values-only.yaml").write_text('{{- if .Values.enabled }}\n')
    assert main(["check", str(tmp_path / "values-only.yaml")]) == 2
    assert "unrendered Helm template (line 1: {{- if .Values.enabled }})" in capsys.readouterr().err
    # Argo Workflows' own {{inputs.parameters.x}} in a rendered manifest is not Helm: judged
    volcano = FIXTURES / "kubernetes-workloads" / "volcano-argo-workflowtemplate-mpi.yaml"
    assert main(["check", str(volcano), "--format", "json"]) in (0, 1)


def test_the_same_object_twice_is_refused(tmp_path: Path) -> None:
    text = (K8S / "gpu-operator-gpu-pod.yaml").read_text()
    (tmp_path / "a.yaml").write_text(text)
    (tmp_path / "b.yaml").write_text(text)
    with pytest.raises(InputError, match="expected each Kubernetes object once, "
                                         "Pod/gpu-operator-test is also at"):
        load_plans([str(tmp_path)])


def test_empty_directory_and_empty_file_are_refused(tmp_path: Path) -> None:
    with pytest.raises(InputError, match="found none"):
        load_plans([str(tmp_path)])
    (tmp_path / "empty.yaml").write_text("---\n# nothing\n")
    with pytest.raises(InputError, match="expected Kubernetes manifests, got no documents"):
        load_plans([str(tmp_path / "empty.yaml")])


def test_findings_name_the_file_and_line_they_came_from() -> None:
    plans = load_plans([str(K8S)])
    result = evaluate(plans, load_settings(None, None))
    sources = {v.resource: v.source for v in result.violations}
    assert sources["Deployment/llm/llm-serving"].endswith("helm-template-llm-chart.yaml:50")
    assert sources["Deployment/nvidia-plugin-test"].endswith("gpu-operator-plugin-test.yaml:1")


def test_sarif_points_at_the_manifest_line(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["check", str(K8S / "helm-template-llm-chart.yaml"), "--format", "sarif"]) == 1
    sarif = json.loads(capsys.readouterr().out)
    locations = [r["locations"][0]["physicalLocation"] for r in sarif["runs"][0]["results"]]
    assert {loc["artifactLocation"]["uri"].rsplit("/", 1)[1] for loc in locations} == {
        "helm-template-llm-chart.yaml"}
    assert {loc["region"]["startLine"] for loc in locations} == {50}


def test_gpupool_offline_plan_carries_kubernetes_resources() -> None:
    from gpupool.config import load_stack
    from infra.offline import run_offline
    from policies.sources import parse_document

    loaded = load_stack(str(Path(__file__).resolve().parents[3] / "stacks" / "Pulumi.prod.yaml"))
    plan = parse_document(run_offline(loaded).to_document(), "prod.json")
    kinds = {c.type: c.kind for c in plan.changes if c.type.startswith("kubernetes:")}
    assert kinds["kubernetes:apps/v1:Deployment"] is ResourceKind.K8S_WORKLOAD
    assert kinds["kubernetes:keda.sh/v1alpha1:ScaledObject"] is ResourceKind.K8S_AUTOSCALER
    assert kinds["kubernetes:core/v1:ResourceQuota"] is ResourceKind.K8S_RESOURCE_QUOTA

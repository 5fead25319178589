"""``gpupool render``: the stack's Kubernetes objects as YAML, each valid against the real
Kubernetes schema of its cluster version (custom resources: their vendored CRDs' schemas)."""

from __future__ import annotations

import copy
import resource
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml

from gpupool.cli import main
from gpupool.k8s import render, schemas
from gpupool.yamlio import read_yaml_documents
from tests.infra.test_k8s_pool import EKS_STACK

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def prod_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("render")
    assert main(["render", str(ROOT / "stacks" / "Pulumi.prod.yaml"), "--out", str(out)]) == 0
    return out


def objects(folder: Path) -> list[dict[str, Any]]:
    return [d.value for f in sorted(folder.glob("*.yaml")) for d in read_yaml_documents(f)]


def test_one_file_per_object_in_apply_order(prod_dir: Path) -> None:
    files = sorted(p.name for p in (prod_dir / "onprem").iterdir())
    assert len(files) == 19
    assert files[0] == "001-namespace-cluster-gpu-ml-platform.yaml"
    kinds = [o["kind"] for o in objects(prod_dir / "onprem")]
    assert kinds.index("Namespace") < kinds.index("ResourceQuota") < kinds.index("Deployment")
    assert kinds.index("Deployment") < kinds.index("ScaledObject")  # custom resources last
    first = (prod_dir / "onprem" / files[0]).read_text().splitlines()
    assert first[0].startswith("# Rendered by gpupool render from stack prod")
    assert first[1:3] == ["apiVersion: v1", "kind: Namespace"]


def test_every_rendered_object_validates_against_its_schema(prod_dir: Path) -> None:
    objs = objects(prod_dir / "onprem")
    assert {o["kind"] for o in objs} >= {"ScaledObject", "ServiceMonitor", "DaemonSet"}
    for o in objs:
        assert list(schemas.problems(o, "1.31")) == [], o["kind"]


def test_rerender_is_byte_identical_and_removes_only_its_own_stale_files(
    prod_dir: Path, tmp_path: Path
) -> None:
    out = tmp_path / "out"
    assert main(["render", "prod", "--out", str(out)]) == 0
    before = {p.name: p.read_bytes() for p in (out / "onprem").iterdir()}
    assert before == {p.name: p.read_bytes() for p in (prod_dir / "onprem").iterdir()}
    (out / "onprem" / "999-stale.yaml").write_text(f"{render.HEADER} from an older stack\n")
    (out / "onprem" / "kustomization.yaml").write_text("resources: []\n")  # not ours: kept
    assert main(["render", "prod", "--out", str(out)]) == 0
    after = {p.name: p.read_bytes() for p in (out / "onprem").iterdir()}
    assert after == {**before, "kustomization.yaml": b"resources: []\n"}


def test_rendered_manifests_pass_the_kit_policies(prod_dir: Path) -> None:
    assert main(["check", str(prod_dir)]) == 0


def test_karpenter_and_proxy_objects_validate_against_their_crds(tmp_path: Path) -> None:
    stack = tmp_path / "Pulumi.eks.yaml"
    stack.write_text(EKS_STACK)
    assert main(["render", str(stack), "--out", str(tmp_path / "out")]) == 0
    objs = {o["kind"]: o for o in objects(tmp_path / "out" / "eks-gpu")}
    assert {"NodePool", "EC2NodeClass", "NetworkPolicy", "ScaledObject"} <= set(objs)
    bad = copy.deepcopy(objs["NodePool"])
    bad["spec"]["template"]["spec"]["requirements"][0]["operator"] = "Equals"
    problems = list(schemas.problems(bad, "1.31"))
    assert len(problems) == 2  # the oldest and the newest Karpenter v1 release's CRD
    operators = ("'Gte', 'Lte', 'In'", "'In'")  # later releases add Gte and Lte
    for problem, release, ops in zip(problems, ("v1.14.1", "v1.0.0"), operators, strict=True):
        assert problem.startswith("spec.template.spec.requirements[0].operator: 'Equals' is not "
                                  f"one of [{ops}, 'NotIn', 'Exists', 'DoesNotExist', 'Gt', 'Lt']")
        assert f"NodePool CRD's schema (karpenter.sh/v1, Karpenter {release})" in problem


def test_nodepool_labels_hold_to_every_karpenter_v1_release(tmp_path: Path) -> None:
    """Karpenter v1.0-v1.8 refuse node labels in the kubernetes.io domain (a CEL rule of their
    NodePool CRD, which no JSON schema check sees): the kit's NodePool passes v1.0.0's rules,
    and the labels it used to set there fail them."""
    stack = tmp_path / "Pulumi.eks.yaml"
    stack.write_text(EKS_STACK)
    assert main(["render", str(stack), "--out", str(tmp_path / "out")]) == 0
    (pool,) = [o for o in objects(tmp_path / "out" / "eks-gpu") if o["kind"] == "NodePool"]
    assert list(schemas.problems(pool, "1.31")) == []
    pool["spec"]["template"]["metadata"]["labels"]["app.kubernetes.io/managed-by"] = "gpupool"
    assert list(schemas.problems(pool, "1.31")) == [
        'spec.template.metadata.labels: label domain "kubernetes.io" is restricted (the '
        "NodePool CRD's schema (karpenter.sh/v1, Karpenter v1.0.0), CEL rule)"]


def test_a_cel_rule_that_cannot_be_evaluated_is_a_problem() -> None:
    from gpupool.k8s import cel

    schema = {"type": "object", "properties": {"a": {"type": "string", "x-kubernetes-validations": [
        {"rule": "self.nosuch() == 1", "message": "m"}, {"rule": "self.size() < 3"},
        {"rule": "self != oldSelf", "message": "transition rules need the stored object"}]}}}
    found = list(cel.problems(schema, {"a": "abcd"}))
    assert [path for path, _ in found] == ["a", "a"]
    assert found[0][1].startswith("rule could not be evaluated")
    assert found[1][1] == "failed rule: self.size() < 3"
    assert list(cel.problems(schema, {})) == []  # absent values are not judged


def test_an_invalid_manifest_is_caught_with_a_clear_message(prod_dir: Path) -> None:
    deployment = next(o for o in objects(prod_dir / "onprem") if o["kind"] == "Deployment")
    deployment["spec"]["replicas"] = "two"
    deployment["spec"]["template"]["spec"]["containers"][0]["imagePullPolcy"] = "Always"
    assert list(schemas.problems(deployment, "1.31")) == [
        "spec.replicas: 'two' is not of type 'integer', 'null' "
        "(the Kubernetes 1.31 schema of apps/v1 Deployment)",
        "spec.template.spec.containers[0]: Additional properties are not allowed "
        "('imagePullPolcy' was unexpected) (the Kubernetes 1.31 schema of apps/v1 Deployment)",
    ]
    obj = render.RenderedObject("onprem", deployment)
    (line, _) = render.validate([obj], {"onprem": "1.31"}, "stacks/Pulumi.prod.yaml")
    assert line.startswith("stacks/Pulumi.prod.yaml: pool onprem: Deployment "
                           "gpu-ml-platform/embeddings: spec.replicas:")


def test_a_kind_without_schema_is_refused() -> None:
    thing = {"apiVersion": "example.com/v1", "kind": "Widget", "metadata": {"name": "w"}}
    (line,) = render.validate([render.RenderedObject("p", thing)], {"p": "1.31"}, "s.yaml")
    assert "no schema for example.com/v1 Widget" in line


def test_the_cluster_version_picks_the_schema(prod_dir: Path) -> None:
    hpa = {"apiVersion": "autoscaling/v2beta2", "kind": "HorizontalPodAutoscaler",
           "metadata": {"name": "x"}, "spec": {"scaleTargetRef": {"kind": "Deployment",
                                                                  "name": "x"},
                                               "maxReplicas": 2}}
    assert list(schemas.problems(hpa, "1.25")) == []  # still served in 1.25
    with pytest.raises(schemas.SchemaMissing):
        list(schemas.problems(hpa, "1.31"))  # removed in 1.26


def test_a_stack_without_kubernetes_pools_is_refused(capsys: pytest.CaptureFixture[str],
                                                     tmp_path: Path) -> None:
    assert main(["render", "dev", "--out", str(tmp_path)]) == 2
    (line,) = capsys.readouterr().err.splitlines()
    assert "gpupool:kubernetes: expected at least one Kubernetes pool to render" in line


RENDER_ALONE = """
import sys
from gpupool.cli import main
assert main(["render", "prod", "--out", sys.argv[1]]) == 0
print("pulumi_aws" in sys.modules)
"""


def test_render_of_prod_takes_bounded_cpu(tmp_path: Path) -> None:
    # the whole command in a fresh process, as a user runs it. About 1.5 s of CPU on an idle
    # core, but CPU time too grows on a loaded machine (shared caches, frequency, a sibling
    # hyperthread: it passed 3 s at load 26), so the bound is generous: it catches the
    # whole Pulumi program being imported or run, not a slow day. The figure itself is
    # bench/'s (wall time on this shared machine depends on everyone else)
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    run = subprocess.run([sys.executable, "-c", RENDER_ALONE, str(tmp_path)], cwd=ROOT,
                         capture_output=True, text=True, timeout=120)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    assert run.returncode == 0, run.stderr
    assert run.stdout.splitlines()[-1] == "False"  # only the Kubernetes part of the program ran
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    assert cpu < 12.0


@pytest.mark.parametrize("stack", [str(ROOT / "stacks" / "Pulumi.prod.yaml"), "eks"])
def test_render_declares_exactly_what_the_whole_program_declares(stack: str,
                                                                 tmp_path: Path) -> None:
    from gpupool.config import load_stack
    from infra.offline import run_offline

    if stack == "eks":
        path = tmp_path / "Pulumi.eks.yaml"
        path.write_text(EKS_STACK)
        (tmp_path / "Pulumi.yaml").write_text((ROOT / "Pulumi.yaml").read_text())
        stack = str(path)
    loaded = load_stack(stack)

    def declared(plan: Any) -> dict[str, tuple[Any, ...]]:
        return {r.urn: (r.type, r.parent, r.custom, r.inputs, r.property_dependencies)
                for r in plan.resources if r.type != "pulumi:pulumi:Stack"}

    alone = declared(run_offline(loaded, kubernetes_only=True))
    whole = declared(run_offline(loaded))
    kubernetes = {urn for urn, (t, *_) in whole.items()
                  if t.startswith(("kubernetes:", "gpupool:k8s:", "pulumi:providers:kubernetes"))}
    # every Kubernetes resource of the whole program, and nothing else, each one the same
    assert len(kubernetes) > 15 and set(alone) == kubernetes
    assert alone == {urn: whole[urn] for urn in kubernetes}


def test_yaml_written_is_plain(prod_dir: Path) -> None:
    text = (prod_dir / "onprem" / "016-deployment-gpu-ml-platform-embeddings.yaml").read_text()
    assert "!!" not in text and "&" not in text  # no tags, no anchors: any tool reads it
    assert yaml.safe_load(text)["metadata"]["labels"]["team"] == "ml-platform"

"""``gpupool render`` writes the admission policies beside a pool's objects (unless the pool
says ``admissionPolicies: false``), the kit's own workloads pass them, and ``gpupool
admission render`` writes them alone, from the policy config and waivers check reads."""

from __future__ import annotations

import copy
import shutil
from pathlib import Path
from typing import Any

import pytest
import yaml

from gpupool.cli import main
from gpupool.config import load_stack
from gpupool.errors import InputError
from gpupool.yamlio import read_yaml_documents
from policies.admission.cel import ADMISSION_RULES
from policies.admission.evaluate import judge

ROOT = Path(__file__).resolve().parents[2]
ADMISSION_KINDS = ("ValidatingAdmissionPolicy", "ValidatingAdmissionPolicyBinding")


def _objects(folder: Path) -> list[dict[str, Any]]:
    return [d.value for f in sorted(folder.rglob("*.yaml")) for d in read_yaml_documents(f)]


@pytest.fixture(scope="module")
def prod(tmp_path_factory: pytest.TempPathFactory) -> list[dict[str, Any]]:
    out = tmp_path_factory.mktemp("render")
    assert main(["render", str(ROOT / "stacks" / "Pulumi.prod.yaml"), "--out", str(out)]) == 0
    assert sorted(p.name for p in out.iterdir()) == ["onprem", "onprem-admission"]
    return _objects(out)


def test_render_prod_includes_the_policies_and_the_kits_workloads_pass_them(
        prod: list[dict[str, Any]]) -> None:
    policies = [o for o in prod if o["kind"] == "ValidatingAdmissionPolicy"]
    assert {p["metadata"]["name"] for p in policies} == {
        f"gpupool-{r.rule_id}" for r in ADMISSION_RULES}  # every admission rule, mandatory
    admission = [o for o in prod if o["kind"] in ADMISSION_KINDS or o["kind"] == "ConfigMap"]
    judged = 0
    for o in prod:
        if o["kind"] in ADMISSION_KINDS:
            continue
        decision = judge(admission, o)
        judged += any(v.applies for v in decision.verdicts)
        assert decision.failures() == [], (o["kind"], o["metadata"]["name"])
    assert judged >= 4  # the Deployment, Job and DaemonSets were matched, not skipped


def test_the_kits_workloads_pass_as_updates_and_an_upsize_of_one_is_denied(
        prod: list[dict[str, Any]]) -> None:
    """gpu-no-vertical-upsize matches UPDATE only: re-applying the kit's own objects passes
    every policy; raising a GPU Deployment's GPUs per pod is refused by that policy alone."""
    admission = [o for o in prod if o["kind"] in ADMISSION_KINDS or o["kind"] == "ConfigMap"]
    workloads = [o for o in prod if o["kind"] not in ADMISSION_KINDS]
    updated = 0
    for o in workloads:
        decision = judge(admission, o, old=o)
        assert decision.failures() == [], (o["kind"], o["metadata"]["name"])
        updated += any(v.applies and v.policy == "gpupool-gpu-no-vertical-upsize"
                       for v in decision.verdicts)
    assert updated >= 4
    gpu = next(o for o in workloads if o["kind"] == "Deployment" and any(
        "nvidia.com/gpu" in (c.get("resources") or {}).get("limits", {})
        for c in o["spec"]["template"]["spec"]["containers"]))
    bigger = copy.deepcopy(gpu)
    for c in bigger["spec"]["template"]["spec"]["containers"]:
        limits = (c.get("resources") or {}).get("limits", {})
        if "nvidia.com/gpu" in limits:
            limits["nvidia.com/gpu"] = int(limits["nvidia.com/gpu"]) * 2
            (c.get("resources") or {}).get("requests", {}).pop("nvidia.com/gpu", None)
    denied = {v.policy for v in judge(admission, bigger, old=gpu).verdicts if v.denied}
    assert "gpupool-gpu-no-vertical-upsize" in denied, denied
    assert not judge(admission, bigger).failures("gpupool-gpu-no-vertical-upsize")  # CREATE


def test_a_pool_can_opt_out_and_an_old_cluster_must(tmp_path: Path) -> None:
    text = (ROOT / "stacks" / "Pulumi.prod.yaml").read_text()
    doc = yaml.safe_load(text)
    doc["config"]["gpupool:kubernetes"][0]["admissionPolicies"] = False
    stack = tmp_path / "Pulumi.optout.yaml"
    shutil.copytree(ROOT / "stacks" / "profiles", tmp_path / "stacks" / "profiles")
    stack.write_text(yaml.safe_dump(doc))
    out = tmp_path / "out"
    assert main(["render", str(stack), "--out", str(out)]) == 0
    assert not [o for o in _objects(out) if o["kind"] in ADMISSION_KINDS]
    old = doc["config"]["gpupool:kubernetes"][0]
    old.pop("admissionPolicies")
    old.setdefault("cluster", {})["version"] = "1.29"
    stack.write_text(yaml.safe_dump(doc))
    with pytest.raises(InputError, match=r"kubernetes\[0\]\.cluster: expected version 1\.30 "
                                         r"or later, or the pool's admissionPolicies: false"):
        load_stack(str(stack))


def test_admission_render_writes_them_alone_from_the_policy_config(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    config = tmp_path / "policy.yaml"
    config.write_text("k8s-gpu-limits: disabled\nk8s-gpu-per-container:\n"
                      "  enforcementLevel: advisory\n  multiGpuNamespaces: [research]\n")
    waivers = tmp_path / "waivers.yaml"
    waivers.write_text("waivers:\n  - {id: W-7, policy: k8s-gpu-per-container, resource: "
                       "'Pod/ml/bench-*', owner: ml, reason: NVLink, expires: 2099-01-31}\n")
    out = tmp_path / "admission"
    assert main(["admission", "render", "--config", str(config), "--waivers", str(waivers),
                 "--out", str(out)]) == 0
    found = _objects(out)
    names = {(o["kind"], o["metadata"]["name"]) for o in found}
    assert ("ValidatingAdmissionPolicy", "gpupool-k8s-gpu-limits") not in names
    binding = next(o for o in found if o["kind"] == "ValidatingAdmissionPolicyBinding"
                   and o["metadata"]["name"] == "gpupool-k8s-gpu-per-container")
    assert binding["spec"]["validationActions"] == ["Warn", "Audit"]
    cm = next(o for o in found if o["kind"] == "ConfigMap"
              and o["metadata"]["name"] == "gpupool-k8s-gpu-per-container")
    assert cm["data"]["multiGpuNamespaces"] == "research"
    policy = next(o for o in found if o["kind"] == "ValidatingAdmissionPolicy"
                  and o["metadata"]["name"] == "gpupool-k8s-gpu-per-container")
    assert [c["name"] for c in policy["spec"]["matchConditions"]] == ["waiver-W-7"]
    capsys.readouterr()
    assert main(["admission", "render", "--config", str(config)]) == 0
    streamed = [d for d in yaml.safe_load_all(capsys.readouterr().out) if d]
    assert {(o["kind"], o["metadata"]["name"]) for o in streamed} == names


def test_admission_render_bad_config_is_one_line_and_exit_2(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    config = tmp_path / "policy.yaml"
    config.write_text("k8s-gpu-per-container:\n  maxGpusPerContainer: zero\n")
    assert main(["admission", "render", "--config", str(config)]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "maxGpusPerContainer" in err[0] and str(config) in err[0]


KARPENTER_STACK = """\
config:
  gpupool:environment: staging
  gpupool:team: ml-platform
  gpupool:costCenter: cc-ml-1042
  gpupool:kubernetes:
    - name: eks-gpu
      cluster: {context: arn:aws:eks:us-east-1:123456789012:cluster/ml, distribution: eks}
      gpu: A10G
      karpenter: {clusterName: ml, nodeRole: KarpenterNodeRole-ml, maxGpus: 12}
      teams:
        - {name: vision, gpuQuota: 6}
      workloads:
        - {name: detect, team: vision, image: nvcr.io/nvidia/tritonserver:24.08-py3}
        - {name: train, team: vision, type: batch, image: nvcr.io/nvidia/pytorch:24.08-py3,
           command: [python, -c, "import torch"]}
"""


def test_the_kits_karpenter_pool_passes_the_node_hygiene_policies_and_undoing_it_is_denied(
        tmp_path: Path) -> None:
    stack = tmp_path / "Pulumi.eks.yaml"
    stack.write_text(KARPENTER_STACK)
    out = tmp_path / "out"
    assert main(["render", str(stack), "--out", str(out)]) == 0
    objs = _objects(out)
    admission = [o for o in objs if o["kind"] in ADMISSION_KINDS or o["kind"] == "ConfigMap"]
    applied: set[str] = set()
    for o in objs:
        if o["kind"] not in ADMISSION_KINDS:
            decision = judge(admission, o)
            assert decision.failures() == [], (o["kind"], o["metadata"]["name"])
            applied |= {v.policy for v in decision.verdicts if v.applies}
    assert applied >= {"gpupool-gpu-nodes-tainted", "gpupool-karpenter-gpu-consolidation",
                       "gpupool-karpenter-gpu-smallest", "gpupool-k8s-gpu-job-deadline",
                       "gpupool-k8s-cpu-pods-off-gpu-nodes"}

    def denied_by(obj: dict[str, Any]) -> set[str]:
        return {v.policy for v in judge(admission, obj).verdicts if v.denied}

    pool = next(o for o in objs if o["kind"] == "NodePool")
    pool["spec"]["disruption"] = {"consolidationPolicy": "WhenEmpty",
                                  "consolidateAfter": "Never"}
    del pool["spec"]["template"]["spec"]["taints"]
    assert denied_by(pool) == {"gpupool-karpenter-gpu-consolidation",
                               "gpupool-gpu-nodes-tainted"}
    job = next(o for o in objs if o["kind"] == "Job")
    del job["spec"]["activeDeadlineSeconds"]
    assert denied_by(job) == {"gpupool-k8s-gpu-job-deadline"}
    cpu = next(o for o in objs if o["kind"] == "Deployment"
               and o["spec"]["template"]["spec"].get("tolerations"))
    for c in cpu["spec"]["template"]["spec"]["containers"]:
        c.pop("resources", None)
    assert denied_by(cpu) == {"gpupool-k8s-cpu-pods-off-gpu-nodes"}

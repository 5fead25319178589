"""Issue 19's promises between the places a rule runs.

- The audit of a cluster dump (``gpupool check --cluster-dump``) says what the admission
  policies would refuse: per object of the dump, the admission rules the check flags are the
  policies whose CEL fails on it (§3: "sees what the new admission policies would refuse
  before it switches them to Deny").
- One policy config file drives the PR check, the CrossGuard pack and the cluster (§1: "the
  same policy config file drives PR checks, the pack and the cluster"): the same levels and
  parameters give the same findings at the same levels in all three.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import yaml

from gpupool.cli import main
from policies.admission.cel import ADMISSION_RULES
from policies.admission.evaluate import group_of, judge
from policies.sources.kubernetes import address
from policies.testing import PolicyPackHarness

ROOT = Path(__file__).resolve().parents[3]
DUMP = ROOT / "tests" / "fixtures" / "cluster-dump" / "kubectl-get-all.json"
AT_ADMISSION = {r.rule_id for r in ADMISSION_RULES}
# the kinds each rule's policy matches (k8s-gpu-workload-autoscaled's: only the kinds that
# scale themselves; a Deployment's missing HPA is a PR-check finding, never refused)
MATCHES = {r.rule_id: set(r.kinds) for r in ADMISSION_RULES}


def test_the_audit_of_a_dump_flags_what_the_policies_would_refuse(
        harness: Any, tmp_path: Path) -> None:
    report = tmp_path / "report.json"
    assert main(["check", "--cluster-dump", str(DUMP), "--format", f"json={report}",
                 "--soft-fail"]) == 0
    kinds = {address(i): (group_of(i)[0], i["kind"]) for i in json.loads(DUMP.read_text())["items"]}
    flagged: dict[str, set[str]] = {}
    for v in json.loads(report.read_text())["violations"]:
        if v["policy"] in AT_ADMISSION and kinds[v["resource"]] in MATCHES[v["policy"]]:
            flagged.setdefault(v["resource"], set()).add(v["policy"])
    objects = harness.objects_for("k8s-gpu-per-container")  # every rule, default settings
    refused: dict[str, set[str]] = {}
    for item in json.loads(DUMP.read_text())["items"]:
        decision = judge(objects, item)
        policies = {v.policy.removeprefix("gpupool-") for v in decision.verdicts if v.failures}
        if policies:
            refused[address(item)] = policies
    assert refused == flagged
    assert len(refused) >= 4  # the dump's GPU objects: Deployment, ReplicaSet, Pods, RayCluster


CONFIG = {"k8s-gpu-per-container": {"enforcementLevel": "advisory", "maxGpusPerContainer": 2},
          "k8s-gpu-job-deadline": {"maxDeadlineSeconds": 3600}}


def _deployment(name: str, gpus: int) -> dict[str, Any]:
    return {"apiVersion": "apps/v1", "kind": "Deployment",
            "metadata": {"name": name, "namespace": "ml"},
            "spec": {"selector": {"matchLabels": {"app": name}}, "template": {
                "metadata": {"labels": {"app": name}}, "spec": {"containers": [{
                    "name": "s", "image": "x",
                    "resources": {"limits": {"nvidia.com/gpu": gpus}}}]}}}}


def _job(deadline: int) -> dict[str, Any]:
    return {"apiVersion": "batch/v1", "kind": "Job", "metadata": {"name": "train",
                                                                  "namespace": "ml"},
            "spec": {"activeDeadlineSeconds": deadline, "template": {"spec": {
                "restartPolicy": "Never", "containers": [{
                    "name": "t", "image": "x", "resources": {"limits": {"nvidia.com/gpu": 1}}}]}}}}


OBJECTS = [_deployment("two", 2), _deployment("three", 3), _job(7200)]
EXPECTED = {("k8s-gpu-per-container", "three", "advisory"),
            ("k8s-gpu-job-deadline", "train", "mandatory")}


def test_one_policy_config_file_drives_the_check_the_pack_and_the_cluster(
        tmp_path: Path) -> None:
    config = tmp_path / "policy-config.json"  # the pack's --policy-pack-config takes JSON
    config.write_text(json.dumps(CONFIG))
    folder = tmp_path / "manifests"
    folder.mkdir()
    for i, o in enumerate(OBJECTS):
        (folder / f"{i}.yaml").write_text(yaml.safe_dump(o))

    report = tmp_path / "report.json"
    assert main(["check", str(folder), "--config", str(config), "--format",
                 f"json={report}"]) == 1  # the Job's deadline is mandatory
    checked = {(v["policy"], v["resource"].rsplit("/", 1)[-1], v["enforcement"])
               for v in json.loads(report.read_text())["violations"]}

    out = tmp_path / "admission"
    assert main(["admission", "render", "--config", str(config), "--out", str(out)]) == 0
    rendered = [d for f in sorted(out.rglob("*.yaml")) for d in yaml.safe_load_all(f.read_text())
                if d]
    cluster = set()
    for o in OBJECTS:
        for v in judge(rendered, o).verdicts:
            if v.failures:
                level = "mandatory" if v.denied else "advisory"
                cluster.add((v.policy.removeprefix("gpupool-"), o["metadata"]["name"], level))

    with PolicyPackHarness(ROOT / "policies", stack="prod", project="gpupool") as pack:
        pack.configure(json.loads(config.read_text()))
        packed = set()
        for o in OBJECTS:
            result = pack.analyze(f"kubernetes:{o['apiVersion']}:{o['kind']}",
                                  o["metadata"]["name"], o)
            packed |= {(d.policy_name, o["metadata"]["name"],
                        "mandatory" if d.mandatory else "advisory") for d in result
                       if d.policy_name in AT_ADMISSION}

    kinds = {o["metadata"]["name"]: (group_of(o)[0], o["kind"]) for o in OBJECTS}
    assert {e for e in checked  # the findings of the policies that match the object's kind
            if e[0] in AT_ADMISSION and kinds[e[1]] in MATCHES[e[0]]} == EXPECTED
    assert cluster == EXPECTED
    assert packed == EXPECTED

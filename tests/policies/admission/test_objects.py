"""The generated objects: valid for every Kubernetes version from 1.30 to the newest schemas
kubernetes-validate ships, shaped by the config (enforcement → validationActions, disabled →
absent, params → ConfigMap, waivers → matchConditions), and a waiver's exception honoured as
the PR check honours it."""

from __future__ import annotations

from datetime import date
from typing import Any

import pytest

from gpupool.errors import InputError
from gpupool.k8s import schemas
from policies.admission.evaluate import judge
from policies.admission.generate import admission_objects
from policies.rules.base import Enforcement
from policies.settings import PolicySettings, Settings, Waiver

NEWEST = schemas.supported_versions()[-1]
# Every version the policies support: ValidatingAdmissionPolicy v1 is served from 1.30 on.
SUPPORTED = [v for v in schemas.supported_versions() if tuple(map(int, v.split("."))) >= (1, 30)]


def _deployment(ns: str, name: str, gpus: int) -> dict[str, Any]:
    return {"apiVersion": "apps/v1", "kind": "Deployment",
            "metadata": {"name": name, "namespace": ns},
            "spec": {"selector": {"matchLabels": {"app": name}}, "template": {
                "metadata": {"labels": {"app": name}},
                "spec": {"containers": [{"name": "s", "image": "x",
                                         "resources": {"limits": {"nvidia.com/gpu": gpus}}}]}}}}


def _settings(level: Enforcement, waivers: tuple[Waiver, ...] = ()) -> Settings:
    base = Settings.default()
    policies = dict(base.policies)
    rule = "k8s-gpu-per-container"
    policies[rule] = PolicySettings(level, policies[rule].params)
    return Settings(policies, waivers)


def test_every_supported_version_is_judged_from_1_30_to_the_newest() -> None:
    assert SUPPORTED[0] == "1.30" and SUPPORTED[-1] == NEWEST and len(SUPPORTED) >= 2


@pytest.mark.parametrize("version", SUPPORTED)
def test_every_object_validates_against_the_kubernetes_schema(harness: Any,
                                                              version: str) -> None:
    waiver = Waiver(id="W-1", policy="k8s-gpu-per-container", resource="Deployment/ml/*",
                    owner="ml", reason="NVLink benchmark", expires=date(2026, 12, 31))
    objects = admission_objects(_settings(Enforcement.ADVISORY, (waiver,)), harness.catalog,
                                today=harness.today)
    assert {o["kind"] for o in objects} >= {"ValidatingAdmissionPolicy",
                                            "ValidatingAdmissionPolicyBinding", "ConfigMap"}
    problems = [p for o in objects for p in schemas.problems(o, version)]
    assert problems == []


def test_enforcement_gives_the_binding_its_actions(harness: Any) -> None:
    def actions(level: Enforcement) -> list[list[str]]:
        return [o["spec"]["validationActions"]
                for o in admission_objects(_settings(level), harness.catalog)
                if o["kind"] == "ValidatingAdmissionPolicyBinding"
                and o["metadata"]["name"] == "gpupool-k8s-gpu-per-container"]
    assert actions(Enforcement.MANDATORY) == [["Deny"]]
    assert actions(Enforcement.ADVISORY) == [["Warn", "Audit"]]
    assert actions(Enforcement.DISABLED) == []


def test_an_advisory_policy_warns_and_does_not_deny(harness: Any) -> None:
    objects = admission_objects(_settings(Enforcement.ADVISORY), harness.catalog)
    decision = judge(objects, _deployment("ml", "llm", 4))
    assert decision.failures("gpupool-k8s-gpu-per-container") and not decision.denied


def test_the_configmap_holds_the_configured_params(harness: Any) -> None:
    objects = harness.objects_for("k8s-gpu-per-container",
                                  {"multiGpuNamespaces": ["ml", "research"],
                                   "multiGpuLabels": {"gpupool.io/multi-gpu": "true"},
                                   "multiGpuMax": 4})
    cm = next(o for o in objects if o["kind"] == "ConfigMap")
    assert cm["data"] == {"maxGpusPerContainer": "1", "multiGpuMax": "4",
                          "multiGpuNamespaces": "ml\nresearch",
                          "multiGpuLabels": "gpupool.io/multi-gpu=true"}
    assert not judge(objects, _deployment("research", "llm", 4)).denied
    assert judge(objects, _deployment("research", "llm", 5)).denied
    assert judge(objects, _deployment("web", "llm", 2)).denied
    labelled = _deployment("web", "llm", 2)
    labelled["spec"]["template"]["metadata"]["labels"]["gpupool.io/multi-gpu"] = "true"
    assert not judge(objects, labelled).denied
    missing = [o for o in objects if o["kind"] != "ConfigMap"]
    assert judge(missing, _deployment("web", "llm", 1)).denied  # params not found: Deny


def test_waivers_become_match_conditions_and_lapsed_ones_are_listed(harness: Any) -> None:
    active = Waiver(id="W-1", policy="k8s-gpu-per-container", resource="Deployment/ml/ll?",
                    owner="ml", reason="NVLink benchmark", expires=date(2026, 12, 31))
    lapsed = Waiver(id="W-2", policy="k8s-gpu-per-container", resource="Deployment/web/*",
                    owner="web", reason="old", expires=date(2026, 11, 30))
    objects = admission_objects(_settings(Enforcement.MANDATORY, (active, lapsed)),
                                harness.catalog, today=harness.today)
    policy = next(o for o in objects if o["kind"] == "ValidatingAdmissionPolicy"
                  and o["metadata"]["name"] == "gpupool-k8s-gpu-per-container")
    assert [c["name"] for c in policy["spec"]["matchConditions"]] == ["waiver-W-1"]
    notes = policy["metadata"]["annotations"]
    assert "W-1 Deployment/ml/ll? until 2026-12-31" in notes["gpupool.io/waivers"]
    assert "W-2 (expired" in notes["gpupool.io/waivers-left-out"]
    assert not judge(objects, _deployment("ml", "llm", 4)).denied
    assert judge(objects, _deployment("ml", "llama", 4)).denied
    assert judge(objects, _deployment("web", "llm", 4)).denied


def test_too_many_waivers_for_one_policy_is_bad_input(harness: Any) -> None:
    many = tuple(Waiver(id=f"W-{i}", policy="k8s-gpu-per-container",
                        resource=f"Deployment/ml/x{i}", owner="o", reason="r",
                        expires=date(2026, 12, 31)) for i in range(65))
    with pytest.raises(InputError, match="at most 64"):
        admission_objects(_settings(Enforcement.MANDATORY, many), harness.catalog,
                          today=harness.today)

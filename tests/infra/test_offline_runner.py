"""The offline runner: engine-style URNs and parents, isolation between runs, loud failures."""

from __future__ import annotations

import json
import re
import runpy
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import pulumi
import pulumi_aws as aws
import pytest

from gpupool.config import load_stack
from infra.offline import OfflinePlan, UnansweredCall, load_fixture, run_offline, run_program
from infra.offline.answers import answer
from infra.offline.monitor import Recording

from .conftest import ROOT, STACKS

URN = re.compile(
    r"^urn:pulumi:(?P<stack>[^:]+)::(?P<project>[^:]+)::(?P<chain>.+)::(?P<name>[^:]+)$"
)


def _doc(plan: OfflinePlan) -> str:
    return json.dumps(plan.to_document(), sort_keys=True)


@pytest.mark.parametrize("stack", STACKS)
def test_urns_follow_the_engine_scheme(stack: str, stack_plans: dict[str, Any]) -> None:
    _, plan = stack_plans[stack]
    index = plan.by_urn()
    assert len(index) == len(plan.resources)
    (root,) = [r for r in plan.resources if r.parent is None]
    assert root.urn == f"urn:pulumi:{stack}::gpupool::pulumi:pulumi:Stack::gpupool-{stack}"
    assert not root.custom
    for r in plan.resources:
        m = URN.match(r.urn)
        assert m, r.urn
        assert (m["stack"], m["project"], m["name"]) == (stack, "gpupool", r.name)
        if r is root:
            continue
        assert r.parent in index, r.urn
        # the type chain names every ancestor's type except the root stack, outermost first
        chain = [*[a.type for a in plan.ancestors(r) if a is not root][::-1], r.type]
        assert m["chain"] == "$".join(chain)


@pytest.mark.parametrize("stack", STACKS)
def test_components_parent_their_resources(stack: str, stack_plans: dict[str, Any]) -> None:
    loaded, plan = stack_plans[stack]
    root_urn = plan.resources[0].urn
    components = [r for r in plan.resources if not r.custom and r.parent is not None]
    assert sorted(c.type for c in components) == sorted(
        ["gpupool:aws:GpuNetwork", "gpupool:aws:GpuMonitoring"]
        + ["gpupool:aws:GpuPool"] * len(loaded.config.pools)
        + ["gpupool:k8s:KubernetesGpuPool"] * len(loaded.config.kubernetes)
        + ["gpupool:aws:RemoteGpuTier"] * len(loaded.config.remote_gpu)
    )
    assert all(c.parent == root_urn for c in components)
    # every custom resource lives inside a component, none directly under the stack
    assert all(r.parent != root_urn for r in plan.resources if r.custom)
    assert plan.resources[0].type == "pulumi:pulumi:Stack"  # parents come before children
    seen: set[str] = set()
    for r in plan.resources:
        assert r.parent is None or r.parent in seen
        seen.add(r.urn)


def test_plans_are_deterministic_and_runs_do_not_leak(stack_plans: dict[str, Any]) -> None:
    dev_loaded, dev_first = stack_plans["dev"]
    prod_loaded, prod_first = stack_plans["prod"]
    again = run_offline(dev_loaded)
    assert _doc(again) == _doc(dev_first)
    assert not any(":prod::" in r.urn for r in again.resources)
    # two stacks planned at the same time in two threads each get only their own resources
    with ThreadPoolExecutor(max_workers=2) as pool:
        dev_f, prod_f = pool.submit(run_offline, dev_loaded), pool.submit(run_offline, prod_loaded)
        assert _doc(dev_f.result()) == _doc(dev_first)
        assert _doc(prod_f.result()) == _doc(prod_first)
    # and nothing of the runs is left behind in this thread's Pulumi runtime
    from pulumi.runtime import settings

    assert settings.get_root_resource() is None


def test_stack_outputs(stack_plans: dict[str, Any]) -> None:
    loaded, plan = stack_plans["prod"]
    out = plan.outputs
    assert set(out["groupNames"]) == {p.name for p in loaded.config.pools}
    asg_names = {r.name: r for r in plan.of_type("aws:autoscaling/group:Group")}
    for pool, group_name in out["groupNames"].items():
        assert re.fullmatch(rf"prod-{pool}-asg-[0-9a-f]{{7}}", group_name)
        assert f"prod-{pool}-asg" in asg_names
    env = plan.envelope
    # AWS pools 4-52 GPUs, the on-premises Kubernetes pool 2-16, the remote-GPU tier 2-8
    assert (out["gpuMin"], out["gpuMax"]) == (env.gpus_min, env.gpus_max) == (8, 76)
    assert out["pricePerHourMin"] == pytest.approx(3 * 0.526 + 0.8048 + 2 * 0.752)
    assert out["pricePerHourMax"] == pytest.approx(
        24 * 0.526 + 16 * 1.006 + 12 * 0.8048 + 8 * 0.752)
    assert out["pools"]["training"]["instanceType"] == "g5.xlarge"
    assert out["priceIsUpperBound"] is True


def test_main_program_reads_the_engine_config_like_pulumi_up(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """infra/__main__.py with the config the engine passes (object values as JSON text)."""
    monkeypatch.chdir(ROOT)  # where `pulumi up` runs it: budget profiles are found from here
    loaded = load_stack(str(ROOT / "stacks" / "Pulumi.staging.yaml"))
    engine_config = {
        k: json.dumps(v) if isinstance(v, dict | list) else str(v) for k, v in loaded.flat.items()
    }
    recording = run_program(
        lambda: runpy.run_module("infra.__main__", run_name="__main__"),
        project="gpupool",
        stack="staging",
        fixture=load_fixture("us-east-1"),
        config=engine_config,
    )
    via_main = sorted(r.urn for r in recording.registrations)
    via_runner = sorted(r.urn for r in run_offline(loaded).resources)
    assert via_main == via_runner
    assert recording.outputs["gpuMax"] == 16  # 12 in the pools, 4 in the remote-GPU tier


def test_main_program_stops_on_bad_config_before_declaring_anything(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.chdir(ROOT)  # where `pulumi up` runs it: messages name the stack file
    bad = {
        "aws:region": "us-east-1",
        "gpupool:environment": "dev",
        "gpupool:team": "t",
        "gpupool:costCenter": "c",
        "gpupool:network": json.dumps({"createVpc": True}),
        "gpupool:pools": json.dumps([{"name": "pool-a", "gpu": "T4", "maxSize": 2, "maxSzie": 3}]),
    }
    recording = Recording()
    with pytest.raises(pulumi.RunError) as e:
        run_program(
            lambda: runpy.run_module("infra.__main__", run_name="__main__"),
            project="gpupool",
            stack="dev",
            fixture=load_fixture("us-east-1"),
            config=bad,
            recording=recording,
        )
    (line,) = str(e.value).splitlines()  # one line per problem, naming file and key
    assert line.startswith("stacks/Pulumi.dev.yaml: gpupool:pools[0].maxSzie: ")
    assert [r.type for r in recording.registrations] == ["pulumi:pulumi:Stack"]
    with pytest.raises(pulumi.RunError) as e:  # no config at all: every required key named
        run_program(
            lambda: runpy.run_module("infra.__main__", run_name="__main__"),
            project="gpupool",
            stack="dev",
            fixture=load_fixture("us-east-1"),
        )
    lines = str(e.value).splitlines()
    # (no network asked for: a stack of Kubernetes pools alone needs none)
    for key in ("environment", "team", "costCenter", "pools"):
        assert any(line.startswith(f"stacks/Pulumi.dev.yaml: gpupool:{key}: ") for line in lines)


def test_unanswered_data_source_call_fails_loudly() -> None:
    def program() -> None:
        aws.ec2.get_key_pair(key_name="ops")

    with pytest.raises(UnansweredCall,
                       match=r"no offline answer for aws:ec2/getKeyPair:getKeyPair"):
        run_program(program, project="p", stack="s", fixture=load_fixture("us-east-1"))


def test_image_search_is_not_answered_from_recorded_images() -> None:
    def program() -> None:
        aws.ec2.get_ami(most_recent=True, owners=["amazon"])

    with pytest.raises(UnansweredCall, match=r"only images named by image-id or name"):
        run_program(program, project="p", stack="s", fixture=load_fixture("us-east-1"))


def test_unsupported_filter_is_not_answered_with_an_empty_list() -> None:
    def program() -> None:
        aws.get_availability_zones(
            filters=[aws.GetAvailabilityZonesFilterArgs(name="region-name", values=["x"])]
        )

    with pytest.raises(UnansweredCall, match=r"filter 'region-name' is not evaluated offline"):
        run_program(program, project="p", stack="s", fixture=load_fixture("us-east-1"))


def test_reading_an_existing_resource_is_refused() -> None:
    def program() -> None:
        aws.ec2.Vpc.get("existing", "vpc-0123456789abcdef0")

    with pytest.raises(UnansweredCall, match=r"reading existing resources is not supported"):
        run_program(program, project="p", stack="s", fixture=load_fixture("us-east-1"))


def test_region_without_fixture_is_a_clear_input_error(tmp_path: Path) -> None:
    from infra.offline import OfflineError

    text = (ROOT / "stacks" / "Pulumi.dev.yaml").read_text().replace("us-east-1", "ap-east-2")
    path = tmp_path / "Pulumi.far.yaml"
    path.write_text(text)
    with pytest.raises(OfflineError) as e:
        run_offline(load_stack(str(path)))
    (line,) = e.value.problems
    assert line.startswith(f"{path}: aws:region: expected a region the offline plan answers, "
                           "got ap-east-2 (no offline answers for ap-east-2")
    assert "python -m infra.offline.record --region ap-east-2" in line


def test_fixture_answers_follow_the_api() -> None:
    fx = load_fixture("us-east-1")
    zones = answer(
        fx, "aws:index/getAvailabilityZones:getAvailabilityZones", {"state": "available"}
    )
    assert zones["names"][:2] == ["us-east-1a", "us-east-1b"]
    assert len(zones["names"]) == len(zones["zoneIds"])
    offers = answer(
        fx,
        "aws:ec2/getInstanceTypeOfferings:getInstanceTypeOfferings",
        {
            "locationType": "availability-zone",
            "filters": [{"name": "instance-type", "values": ["g5g.xlarge"]}],
        },
    )
    assert set(offers["instanceTypes"]) == {"g5g.xlarge"}
    assert offers["locations"] == ["us-east-1a", "us-east-1b", "us-east-1c", "us-east-1d"]
    with pytest.raises(UnansweredCall, match="asked about region eu-west-1"):
        answer(fx, "aws:index/getPartition:getPartition", {"region": "eu-west-1"})
    with pytest.raises(UnansweredCall, match="no SSM parameter '/nope'"):
        answer(fx, "aws:ssm/getParameter:getParameter", {"name": "/nope"})

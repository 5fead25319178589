"""The kit's own stacks pass its own pack: every resource of the dev, staging and prod offline
plans, sent as the CLI would (Analyze per resource, then AnalyzeStack), gets no mandatory
diagnostic. A stack the kit ships must deploy under ``pulumi up --policy-pack policies``; and
what the pack says about it is word for word what ``gpupool check`` says about the same plan.
"""

from __future__ import annotations

import contextlib
import io
import json
from pathlib import Path
from typing import Any

import pytest

from gpupool.cli import main
from policies.engine import evaluate
from policies.settings import Settings
from policies.sources import parse_document
from policies.testing import UNKNOWN, PolicyPackHarness, Resource

PACK_DIR = Path(__file__).resolve().parents[3] / "policies"

STACKS = ("dev", "staging", "prod")


def offline_plan(stack: str) -> dict[str, Any]:
    """`gpupool plan STACK --format json` through the CLI's entry point, in this process (the
    interpreter around it adds nothing here; tests/gpupool/test_plan_cli.py runs it as a
    subprocess)."""
    out, err = io.StringIO(), io.StringIO()
    with contextlib.chdir(PACK_DIR.parent), contextlib.redirect_stdout(out), \
            contextlib.redirect_stderr(err):
        code = main(["plan", stack, "--format", "json"])
    assert code == 0, err.getvalue()
    plan = json.loads(out.getvalue())
    assert plan["kind"] == "gpupool-plan" and plan["resources"]
    return plan


def resources(plan: dict[str, Any], *, preview: bool = False) -> list[Resource]:
    """Plan resources as AnalyzerResources. ``preview``: every input computed from another
    resource is unknown, as in the first `pulumi preview` of a new stack (the worst case)."""
    out = []
    for r in plan["resources"]:
        deps = r.get("propertyDependencies") or {}
        inputs = dict(r["inputs"])
        if preview:
            inputs.update({k: UNKNOWN for k in deps if k in inputs})
        out.append(Resource(
            type=r["type"], name=r["name"], properties=inputs, urn=r["urn"],
            parent=r.get("parent") or "",
            dependencies=sorted({u for urns in deps.values() for u in urns}),
            property_dependencies=deps,
        ))
    return out


@pytest.fixture(scope="module")
def plans() -> dict[str, dict[str, Any]]:
    return {s: offline_plan(s) for s in STACKS}


@pytest.fixture(scope="module")
def kit_pack() -> Any:
    with PolicyPackHarness(PACK_DIR, stack="kit", project="gpupool") as h:
        h.configure({})
        yield h


def _show(diags: list[Any]) -> str:
    return "\n".join(f"{d.policy_name} {d.enforcement_level} {d.urn}: {d.detail}" for d in diags)


@pytest.mark.parametrize("stack", STACKS)
def test_every_resource_of_the_kit_passes_analyze_and_analyze_stack(
    kit_pack: PolicyPackHarness, plans: dict[str, dict[str, Any]], stack: str
) -> None:
    rs = resources(plans[stack])
    gpu = [r for r in rs if r.type == "aws:ec2/launchTemplate:LaunchTemplate"]
    assert gpu and any(r.type == "aws:autoscaling/group:Group" for r in rs)
    per_resource = [d for r in rs for d in kit_pack.analyze_resource(r)]
    whole = list(kit_pack.analyze_stack(rs))
    assert [d for d in per_resource + whole if d.mandatory] == [], _show(per_resource + whole)

    engine = evaluate([parse_document(plans[stack], f"{stack}.json")], Settings.default())
    assert engine.verdict == "pass" and not engine.errors
    # the engine names a group and its launch template in one finding when they share the
    # cause; the pack reports each resource it judges
    said_by_engine = sorted((v.policy, str(v.enforcement), r.address, v.message)
                            for v in engine.violations for r in v.resources)
    said_by_pack = sorted((d.policy_name, d.enforcement_level, d.urn, d.detail)
                          for d in per_resource + whole)
    assert said_by_pack == said_by_engine


@pytest.mark.parametrize("stack", STACKS)
def test_a_first_preview_with_unknown_links_never_blocks_or_crashes(
    kit_pack: PolicyPackHarness, plans: dict[str, dict[str, Any]], stack: str
) -> None:
    rs = resources(plans[stack], preview=True)
    diags = [d for r in rs for d in kit_pack.analyze_resource(r)]
    diags += list(kit_pack.analyze_stack(rs))
    assert [d for d in diags if d.mandatory] == [], _show(diags)
    # "cannot verify" only, and the note that says why a proxy is above the smallest size
    assert all(d.detail.startswith("cannot verify") or "for bandwidth, not GPU" in d.detail
               for d in diags), _show(diags)


def test_a_baseline_from_the_same_plan_is_an_update_without_findings(
    kit_pack: PolicyPackHarness, plans: dict[str, dict[str, Any]], tmp_path: Any
) -> None:
    """`pulumi stack export` after deploying prod, then `pulumi up` of the same code."""
    plan = plans["prod"]
    export = {"version": 3, "deployment": {"resources": [
        {"urn": r["urn"], "type": r["type"], "custom": r.get("custom", True),
         "inputs": r["inputs"]} for r in plan["resources"]]}}
    path = tmp_path / "prod-export.json"
    path.write_text(json.dumps(export))
    kit_pack.configure({"gpu-no-vertical-upsize": {"baseline": str(path),
                                                   "requireBaseline": True}})
    try:
        rs = resources(plan)
        diags = [d for r in rs for d in kit_pack.analyze_resource(r)]
        # gpu-smallest-instance has no baseline here, so every resource is new to it, and it
        # says (advisory) why the prod proxy is above the smallest size: bandwidth, not GPU
        notes = [d for d in diags if d.policy_name == "gpu-smallest-instance"
                 and not d.mandatory and "for bandwidth, not GPU" in d.detail]
        assert [d for d in diags if d not in notes] == [], _show(diags)
    finally:
        kit_pack.configure({})


@pytest.mark.parametrize("clients", ["outside", None])
def test_prod_proxies_with_their_clients_outside_the_group_are_blocked(
    kit_pack: PolicyPackHarness, plans: dict[str, dict[str, Any]], clients: str | None
) -> None:
    """Issue 16 item 16 through the pack: prod's proxies need 6.4 Gbps per flow, which only a
    client in their cluster placement group gets. The same plan with the proxies saying their
    clients are outside (or not saying where they are) is a mandatory AnalyzeStack diagnostic
    at the 5 Gbps cap, on the proxy group and its launch template."""
    plan = json.loads(json.dumps(plans["prod"]))
    changed = 0
    for r in plan["resources"]:
        inputs = r["inputs"]
        if "prod-llm-decode-client" in r["name"]:
            continue
        tag_lists = [inputs["tags"]] if isinstance(inputs.get("tags"), list) else []
        maps = [inputs["tags"]] if isinstance(inputs.get("tags"), dict) else []
        maps += [s["tags"] for s in inputs.get("tagSpecifications") or []]
        for tags in maps:
            if "gpupool:remoting-clients" in tags:
                changed += 1
                tags.pop("gpupool:remoting-clients")
                if clients is not None:
                    tags["gpupool:remoting-clients"] = clients
        for tags in tag_lists:
            for t in list(tags):
                if t["key"] == "gpupool:remoting-clients":
                    changed += 1
                    tags.remove(t)
                    if clients is not None:
                        tags.append({**t, "value": clients})
    assert changed >= 3  # the proxy group, its template and the template's instance tags
    rs = resources(plan)
    whole = [d for d in kit_pack.analyze_stack(rs) if d.mandatory]
    assert {d.policy_name for d in whole} == {"gpu-proxy-network-budget"}, _show(whole)
    why = ("gpupool:remoting-clients = outside" if clients else
           "gpupool:remoting-clients is not set, so the clients are taken to be outside")
    for d in whole:
        assert ("one flow of TCP over ENA to clients outside the placement group is capped at 5 "
                "Gbps (g4dn.2xlarge has 10 Gbps baseline), below the budget's 6.4 Gbps") in d.detail
        assert why in d.detail
    assert any(d.urn.endswith("::prod-llm-decode-asg") for d in whole), _show(whole)

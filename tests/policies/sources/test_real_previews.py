"""Pulumi previews as the engine really writes them (issue 7, item 1).

The fixtures under ``tests/fixtures/pulumi/real/`` are verbatim files from public repositories
(source, path and commit in tests/fixtures/README.md): ``pulumi preview --json`` digests written
by Pulumi 3.x CLIs, an engine event stream and the Pulumi Cloud API's events document. Before
this change a ``null`` in ``propertyDependencies`` (what the engine writes for an input without
dependencies) made every such preview bad input, so a GPU upsize in it was never reported.
"""

from __future__ import annotations

import copy
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from gpupool.errors import InputError
from policies.engine import evaluate
from policies.model import ChangeKind, Plan, ResourceKind
from policies.settings import Settings
from policies.sources import detect, load_plan, parse_document
from policies.sources.reading import read_json

Write = Callable[[Any, str], Path]
REAL = Path(__file__).resolve().parents[2] / "fixtures" / "pulumi" / "real"

# file → (changes, {change kind: count}) as read: stack, providers and components are skipped.
REAL_PREVIEWS: dict[str, tuple[int, dict[ChangeKind, int]]] = {
    # --show-sames: the stack and two components are in the steps but are not changes
    "stratify-sample-preview-creates.json": (14, {ChangeKind.CREATE: 14}),
    "stratify-sample-preview-update.json": (14, {ChangeKind.NOOP: 13, ChangeKind.UPDATE: 1}),
    "stratify-sample-preview-deletes.json": (14, {ChangeKind.NOOP: 1, ChangeKind.DELETE: 13}),
    # sames omitted (the default): the summary counts them, the steps do not hold them
    "drift-adopter-aws_cascading_deps.json": (4, {ChangeKind.UPDATE: 4}),
    "drift-adopter-aws_tags_and_sets.json": (4, {ChangeKind.UPDATE: 3, ChangeKind.REPLACE: 1}),
    "drift-adopter-small_scale_10_replace.json": (5, {
        ChangeKind.CREATE: 1, ChangeKind.REPLACE: 2, ChangeKind.UPDATE: 1, ChangeKind.DELETE: 1}),
    # trimmed by their authors: no changeSummary
    "drift-adopter-standard_json_replace.json": (3, {
        ChangeKind.REPLACE: 1, ChangeKind.UPDATE: 1, ChangeKind.CREATE: 1}),
    "drift-adopter-command_with_triggers.json": (3, {ChangeKind.REPLACE: 2, ChangeKind.UPDATE: 1}),
    # engine events: the Cloud API document and a JSON-lines stream
    "drift-adopter-engine_events_update.json": (1, {ChangeKind.UPDATE: 1}),
    "pulumi-display-webserver-userdata.json": (2, {ChangeKind.NOOP: 1, ChangeKind.REPLACE: 1}),
}


def _kinds(plan: Plan) -> dict[ChangeKind, int]:
    out: dict[ChangeKind, int] = {}
    for c in plan.changes:
        out[c.change] = out.get(c.change, 0) + 1
    return out


@pytest.mark.parametrize("name", sorted(REAL_PREVIEWS))
def test_every_real_preview_is_read(name: str) -> None:
    plan = load_plan(REAL / name)
    count, kinds = REAL_PREVIEWS[name]
    assert plan.source == "pulumi-preview"
    assert (len(plan.changes), _kinds(plan)) == (count, kinds)
    for change in plan.changes:  # every change kept its new inputs (or old, for deletes)
        assert change.new is not None or change.change is ChangeKind.DELETE


def test_real_preview_keeps_a_single_dependency_as_a_reference() -> None:
    plan = load_plan(REAL / "drift-adopter-aws_cascading_deps.json")
    param = next(c for c in plan.changes if c.name == "db-password")
    assert param.references == {
        "key_id": "urn:pulumi:test-d67e0b53::aws-cascading-deps::aws:kms/key:Key::app-key"}


def _checkpoint_as_preview() -> dict[str, Any]:
    """Pulumi's own checkpoint test data, its ResourceV3 states (``propertyDependencies``
    values ``null``) placed in a digest as ``same`` steps: the states a preview embeds."""
    doc = json.loads((REAL / "pulumi-stack-checkpoint-v3.json").read_text())
    resources = doc["checkpoint"]["latest"]["resources"]
    steps = [{"op": "same", "urn": r["urn"], "oldState": r, "newState": r} for r in resources]
    return {"steps": steps, "changeSummary": {"same": len(steps)}}


def test_null_property_dependencies_from_pulumis_own_test_data(write: Write) -> None:
    doc = _checkpoint_as_preview()
    nulls = [k for s in doc["steps"] for k, v in
             (s["newState"].get("propertyDependencies") or {}).items() if v is None]
    assert len(nulls) > 20  # the real file does write null, many times
    plan = load_plan(write(doc, "preview.json"))
    assert len(plan.changes) == 23  # 30 resources, 7 of them components
    topic = plan.by_address()["urn:pulumi:foo::countdown::aws:sns/topic:Topic::countDown"]
    assert topic.change is ChangeKind.NOOP and topic.references == {}


def test_the_checkpoint_itself_is_named_as_state_not_a_preview() -> None:
    with pytest.raises(InputError, match="got a Pulumi checkpoint"):
        load_plan(REAL / "pulumi-stack-checkpoint-v3.json")


# --- a GPU upsize in a preview of the real shape ---------------------------------------------

GPU_PREVIEW = REAL.parent / "preview-gpu-upsize-null-deps.json"


def test_gpu_upsize_in_a_python_program_preview_is_reported() -> None:
    """The preview a Python program's ``pulumi preview --json`` writes (null dependencies):
    the upsizes are mandatory violations, not bad input."""
    plan = load_plan(GPU_PREVIEW)
    result = evaluate([plan], Settings.default())
    upsizes = {v.resource.rsplit("::", 1)[-1] for v in result.violations
               if v.policy == "gpu-no-vertical-upsize" and v.blocking}
    assert upsizes == {"trainer", "notebook"}
    lt = next(c for c in plan.changes if c.kind is ResourceKind.LAUNCH_TEMPLATE)
    assert (lt.old["instance_type"], lt.new["instance_type"]) == ("g4dn.xlarge", "g4dn.16xlarge")
    asg = next(c for c in plan.changes if c.kind is ResourceKind.AUTOSCALING_GROUP)
    assert asg.references == {"launch_template": lt.address}  # the one non-null dependency
    assert result.exit_code == 1


# --- engine event streams ---------------------------------------------------------------------


def test_streamed_preview_json_lines_are_judged() -> None:
    """pulumi/pulumi's display test data: an engine event stream replacing an EC2 instance
    that sets neither metadata options nor its root volume."""
    path = REAL / "pulumi-display-webserver-userdata.json"
    assert detect(read_json(path, str(path)), str(path)) == "pulumi-events"
    plan = load_plan(path)
    web = plan.by_address()["urn:pulumi:dev::aws-ts-webserver::aws:ec2/instance:Instance::"
                            "web-server-www"]
    assert web.change is ChangeKind.REPLACE and web.new["instance_type"] == "t2.micro"
    result = evaluate([plan], Settings.default())
    assert {(v.policy, v.blocking) for v in result.violations} == {
        ("imdsv2-required", True), ("ebs-encrypted", True)}


def _events(*events: dict[str, Any], summary: bool = True) -> dict[str, Any]:
    out = [{"type": "preludeEvent", "preludeEvent": {"config": {}}}, *events]
    if summary:
        out.append({"type": "summaryEvent", "summaryEvent": {"resourceChanges": {"update": 1}}})
    return {"events": out}


URN = "urn:pulumi:dev::p::aws:ec2/launchTemplate:LaunchTemplate::lt"


def _pre(op: str, old: str | None, new: str | None, kind: str = "resourcePreEvent",
         **extra: Any) -> dict[str, Any]:
    meta: dict[str, Any] = {"op": op, "urn": URN, "type": "aws:ec2/launchTemplate:LaunchTemplate",
                            "provider": "urn:pulumi:dev::p::pulumi:providers:aws::default::1",
                            **extra}
    for key, itype in (("old", old), ("new", new)):
        if itype is not None:
            meta[key] = {"type": meta["type"], "urn": URN, "custom": True, "id": "",
                         "parent": "", "inputs": {"instanceType": itype}, "outputs": {},
                         "provider": meta["provider"]}
    return {"type": kind, kind: {"metadata": meta, "planning": True}}


def test_events_document_of_the_cloud_api(write: Write) -> None:
    plan = load_plan(write(_events(_pre("update", "g4dn.xlarge", "g4dn.2xlarge")), "ev.json"))
    (change,) = plan.changes
    assert (change.old, change.new) == ({"instance_type": "g4dn.xlarge"},
                                        {"instance_type": "g4dn.2xlarge"})
    assert plan.meta["change_summary"] == {"update": 1}


def test_a_stream_cut_short_is_refused(write: Write) -> None:
    doc = _events(_pre("update", "g4dn.xlarge", "g4dn.2xlarge"), summary=False)
    with pytest.raises(InputError, match="ending with a summaryEvent"):
        load_plan(write(doc, "ev.json"))


def test_an_error_diagnostic_event_is_refused(write: Write) -> None:
    diag = {"type": "diagnosticEvent", "diagnosticEvent": {
        "message": "error: update failed\nmore", "severity": "error", "urn": URN}}
    with pytest.raises(InputError) as err:
        load_plan(write(_events(_pre("update", "a", "b"), diag), "ev.json"))
    (line,) = err.value.problems
    assert "events[2]: diagnosticEvent: expected a preview that completed, got an error " \
           "(error: update failed)" in line


def test_a_refresh_that_found_drift_becomes_the_update(write: Write) -> None:
    doc = _events(_pre("refresh", "g4dn.xlarge", "g4dn.xlarge"),
                  _pre("update", "g4dn.xlarge", "g4dn.8xlarge", kind="resOutputsEvent",
                       detailedDiff={"instanceType": {"diffKind": "update"}}))
    (change,) = load_plan(write(doc, "ev.json")).changes
    assert change.change is ChangeKind.UPDATE and change.new == {"instance_type": "g4dn.8xlarge"}


def test_json_lines_errors_name_the_line(write: Write) -> None:
    lines = [json.dumps({"sequence": 0, "timestamp": 1, "preludeEvent": {"config": {}}}),
             "",
             json.dumps({"sequence": 1, "timestamp": 1, "resourcePreEvent": {"metadata": {
                 "op": "explode", "urn": URN}}})]
    with pytest.raises(InputError) as err:
        load_plan(write("\n".join(lines) + "\n", "ev.json"))
    assert "line 3: resourcePreEvent.metadata.op: expected a Pulumi step op" in \
        err.value.problems[0]


def test_event_state_without_custom_but_with_a_provider_is_a_resource(write: Write) -> None:
    event = _pre("create", None, "g4dn.xlarge")
    del event["resourcePreEvent"]["metadata"]["new"]["custom"]
    (change,) = load_plan(write(_events(event), "ev.json")).changes
    assert change.new == {"instance_type": "g4dn.xlarge"}


# --- shapes: null or [] dependencies, absent states -------------------------------------------


def test_a_same_step_with_its_old_state_only(write: Write) -> None:
    state = {"urn": URN, "custom": True, "type": "aws:ec2/launchTemplate:LaunchTemplate",
             "inputs": {"instanceType": "g5.xlarge"}}
    plan = load_plan(write({"steps": [{"op": "same", "urn": URN, "oldState": state}]}, "p.json"))
    (change,) = plan.changes
    assert change.change is ChangeKind.NOOP and change.new == change.old == {
        "instance_type": "g5.xlarge"}


_DEP_VALUES = st.one_of(
    st.none(), st.just([]),
    st.lists(st.sampled_from([
        "urn:pulumi:dev::p::aws:autoscaling/group:Group::a",
        "urn:pulumi:dev::p::aws:autoscaling/group:Group::b",
        "urn:pulumi:dev::p::pulumi:providers:aws::default"]), max_size=3))


@given(st.dictionaries(st.sampled_from(["instanceType", "autoscalingGroupName", "tags", "x"]),
                       _DEP_VALUES, max_size=4))
def test_null_and_empty_dependencies_mean_the_same(deps: dict[str, Any]) -> None:
    """Whatever mixture of null, [] and URN lists the engine writes, a null reads as []."""
    state = {"urn": URN, "custom": True, "type": "aws:ec2/launchTemplate:LaunchTemplate",
             "inputs": {"instanceType": "g4dn.xlarge"}, "propertyDependencies": deps}
    doc = {"steps": [{"op": "create", "urn": URN, "newState": state}]}
    as_empty = copy.deepcopy(doc)
    pd = as_empty["steps"][0]["newState"]["propertyDependencies"]
    for key, value in pd.items():
        if value is None:
            pd[key] = []
    (a,) = parse_document(doc, "a.json").changes
    (b,) = parse_document(as_empty, "b.json").changes
    assert a == b

"""Argo Workflows (``argoproj.io``): Workflow, CronWorkflow (``spec.workflowSpec``),
WorkflowTemplate and ClusterWorkflowTemplate. Each container, script or containerSet template
runs pods: one role per such template (its container, init containers and sidecars), and one
for ``templateDefaults``. GPUs asked for in text (``podSpecPatch``, a resource template's
``manifest``) cannot be read as resources: that template's pods are unknown."""

from __future__ import annotations

from policies.facts.k8s.objects import K8sObject
from policies.facts.k8s.pods import ContainerGpus, PodGpus, container
from policies.facts.k8s.readers._base import Reader, deadline_at, spec_of
from policies.facts.k8s.scan import text_requests
from policies.facts.k8s.workload import Lifecycle, Replicas, Role, Workload
from policies.facts.values import block, blocks, is_map
from policies.model import UNKNOWN

TYPE_CHECKING = False  # typing's, without importing typing (not on a check's path)
if TYPE_CHECKING:
    from typing import Any

_FAN_OUT = Replicas(1, None)  # steps and DAG tasks may run a template many times at once


def _workflow(obj: K8sObject) -> Workload:
    spec: Any = spec_of(obj)
    base = "spec"
    if obj.kind == "CronWorkflow":
        spec, base = block(spec.get("workflow_spec")), "spec.workflow_spec"
    lifecycle = Lifecycle.TEMPLATE if obj.kind.endswith("WorkflowTemplate") else Lifecycle.BATCH
    if spec is UNKNOWN:
        return Workload(obj, "argo", lifecycle, unknown="workflow_spec unknown until apply")
    spec = spec or {}
    deadline = deadline_at(spec, "active_deadline_seconds", f"{base}.active_deadline_seconds")
    roles: list[Role] = []
    defaults = block(spec.get("template_defaults"))
    if defaults is not None:
        roles.append(_template("template defaults", defaults, f"{base}.template_defaults"))
    templates = blocks(spec.get("templates"))
    if templates is UNKNOWN:
        return Workload(obj, "argo", lifecycle, tuple(roles), (deadline,),
                        unknown="templates unknown until apply")
    for i, t in enumerate(templates):
        path = f"{base}.templates[{i}]"
        name = t.get("name") if is_map(t) and isinstance(t.get("name"), str) else f"#{i}"
        role = _template(f"template {name}", t, path)
        if role.pods.containers or role.pods.unknown:
            roles.append(role)
    return Workload(obj, "argo", lifecycle, tuple(roles), (deadline,))


def _template(name: str, t: Any, path: str) -> Role:
    if t is UNKNOWN:
        return Role(name, PodGpus(unknown=f"{path.rsplit('.', 1)[-1]} unknown until apply",
                                  path=path))
    if not is_map(t):
        return Role(name, PodGpus(path=path))
    for key, text in (("podSpecPatch", t.get("pod_spec_patch")),
                      ("resource.manifest", (block(t.get("resource")) or {}).get("manifest"))):
        if isinstance(text, str) and (found := text_requests(text)):
            resource, count = found[0]
            return Role(name, PodGpus(unknown=(
                f"{path}.{key} asks for {resource}: {count} in text gpupool does not read as "
                "resources"), path=path), _FAN_OUT, _labels(t), t)
    out: list[ContainerGpus] = []
    for key in ("container", "script"):
        if t.get(key) is not None:
            out.append(container(t.get(key), f"{path}.{key}", default_name="main"))
    cset = block(t.get("container_set"))
    lists: list[tuple[str, Any, bool]] = [
        ("container_set.containers", cset.get("containers") if is_map(cset) else None, False),
        ("init_containers", t.get("init_containers"), True),
        ("sidecars", t.get("sidecars"), False)]
    for key, items, init in lists:
        found = blocks(items)
        if found is UNKNOWN:
            return Role(name, PodGpus(unknown=f"{key} unknown until apply", path=path))
        for j, c in enumerate(found):
            out.append(container(c, f"{path}.{key}[{j}]", init, default_name=f"#{j}"))
    return Role(name, PodGpus(tuple(out), None, path), _FAN_OUT, _labels(t), t)


def _labels(t: Any) -> Any:
    meta = block(t.get("metadata"))
    labels = meta.get("labels") if is_map(meta) else None
    return labels if is_map(labels) else {}


READERS = (
    Reader("argo", (("argoproj.io", "Workflow"), ("argoproj.io", "CronWorkflow")),
           Lifecycle.BATCH, _workflow,
           "spec.templates[*] (CronWorkflow: spec.workflowSpec.templates): container, script, "
           "containerSet.containers, initContainers, sidecars; spec.templateDefaults; GPUs in "
           "podSpecPatch or a resource manifest are cannot verify",
           "out of scope (runs to completion)", "spec.activeDeadlineSeconds"),
    Reader("argo", (("argoproj.io", "WorkflowTemplate"),
                    ("argoproj.io", "ClusterWorkflowTemplate")),
           Lifecycle.TEMPLATE, _workflow, "as Workflow",
           "out of scope (a template workflows run)", "spec.activeDeadlineSeconds"),
)

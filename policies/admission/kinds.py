"""Where each kind keeps its pods, as CEL: the admission twin of policies/facts/k8s/readers.

The API server hands a ValidatingAdmissionPolicy one object of whatever kind it matched. The
``roles`` variable this module generates turns it into the shape every rule's CEL reads, the
same for every kind (as :class:`policies.facts.k8s.Workload` is for the Python rules): a list
of ``{'name', 'labels', 'spec', 'containers', 'app', 'init', 'path'}`` maps, one per pod
template (a Deployment's ``spec.template``, each of a PyTorchJob's replica specs, a RayCluster's
head and each worker group, a NIMService's ``spec.resources`` as one container). ``app`` holds
the containers that run together (a kind's other container lists that run beside them
included: Argo's sidecars, KServe's model specs), ``init`` the init containers, which run one
at a time before them (as :class:`policies.facts.k8s.ContainerGpus`'s ``init``), and
``containers`` both, app first; each is a map with ``resources`` as the object has it.
``path`` is where the pod spec is, as the
PR check names it (``spec.template.spec``, ``spec.tasks[1].template.spec``: an item's index from
the lists library's ``indexOf``).

Each kind's sources are written in camelCase, as the API server passes the object; every step
is guarded with ``has()`` so an absent field is an empty list, never an evaluation error.
tests/policies/admission/test_kinds.py holds this table to the reader table: every kind a
reader reads pods of is here, or in :data:`NOT_AT_ADMISSION` with the reason.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Final


def guard(root: str, path: str) -> str:
    """``has(root.a) && has(root.a.b)`` for ``path`` ``a.b``."""
    out, at = [], root
    for part in path.split("."):
        at = f"{at}.{part}"
        out.append(f"has({at})")
    return " && ".join(out)


def _opt_list(root: str, path: str) -> str:
    return f"({guard(root, path)} ? {root}.{path} : [])"


def _opt_one(root: str, path: str) -> str:
    return f"({guard(root, path)} ? [{root}.{path}] : [])"


def app_containers(spec: str) -> str:
    """The app containers of the pod spec at ``spec`` (which is present)."""
    return _opt_list(spec, "containers")


def init_containers(spec: str) -> str:
    """The init containers of the pod spec (or Argo template) at ``spec`` (present)."""
    return _opt_list(spec, "initContainers")


def _labels(root: str, path: str) -> str:
    return f"({guard(root, path)} ? {root}.{path} : {{}})"


def role(name: str, labels: str, spec: str, app: str, path: str, init: str = "[]",
         containers: str = "") -> str:
    """A ``roles`` item; ``containers`` is ``app + init`` unless a kind's reader reads its
    lists in another order (Argo: init containers before sidecars)."""
    return (f"{{'name': {name}, 'labels': {labels}, 'spec': {spec}, "
            f"'containers': {containers or f'{app} + {init}'}, 'app': {app}, 'init': {init}, "
            f"'path': {path}}}")


def template_role(template: str, name: str, path: str) -> str:
    """A role from the pod template (``{metadata, spec}``) at ``template`` (present), whose
    pod spec the PR check names ``path`` (a CEL string)."""
    spec = f"{template}.spec"
    return role(name, _labels(template, "metadata.labels"), f"(has({spec}) ? {spec} : {{}})",
                f"(has({spec}) ? {app_containers(spec)} : [])", path,
                f"(has({spec}) ? {init_containers(spec)} : [])")


def spec_role(spec: str, name: str, path: str, labels: str = "{}") -> str:
    """A role from a bare pod spec at ``spec`` (present)."""
    return role(name, labels, spec, app_containers(spec), path, init_containers(spec))


def _indexed(root: str, path: str, item: str) -> str:
    """``'spec.tasks[' + index + ']'`` of ``item`` in the list at ``root.path``."""
    return f"'{path}[' + string({root}.{path}.indexOf({item})) + ']'"


@dataclass(frozen=True)
class At:
    """The pod template at ``path`` (a bare pod spec when ``spec``)."""

    path: str
    name: str = ""
    spec: bool = False

    def cel(self) -> str:
        at = f"object.{self.path}"
        made = (spec_role(at, repr(self.name), repr(self.path)) if self.spec
                else template_role(at, repr(self.name), repr(f"{self.path}.spec")))
        return f"({guard('object', self.path)} ? [{made}] : [])"


@dataclass(frozen=True)
class Each:
    """Each item of the list at ``path``, its pod template at ``sub`` (its name at ``key``)."""

    path: str
    sub: str
    prefix: str = ""
    key: str = "name"
    skip_disabled: bool = False

    def cel(self) -> str:
        name = (f"'{self.prefix}' + (has(e.{self.key}) ? string(e.{self.key}) : "
                f"'#' + string(object.{self.path}.indexOf(e)))")
        keep = guard("e", self.sub)
        path = f"{_indexed('object', self.path, 'e')} + '.{self.sub}.spec'"
        if self.skip_disabled:
            keep = f"!(has(e.enabled) && e.enabled == false) && {keep}"
        return (f"({guard('object', self.path)} ? object.{self.path}.filter(e, {keep})"
                f".map(e, {template_role(f'e.{self.sub}', name, path)}) : [])")


@dataclass(frozen=True)
class Values:
    """Each value of the map at ``path`` (Kubeflow's replica specs), its template at ``sub``."""

    path: str
    sub: str = "template"

    def cel(self) -> str:
        m = f"object.{self.path}"
        path = f"'{self.path}.' + k + '.{self.sub}.spec'"
        return (f"({guard('object', self.path)} ? {m}.filter(k, {guard(f'{m}[k]', self.sub)})"
                f".map(k, {template_role(f'{m}[k].{self.sub}', 'k', path)}) : [])")


@dataclass(frozen=True)
class Pod:
    """The object itself is the pod."""

    def cel(self) -> str:
        app = f"(has(object.spec) ? {app_containers('object.spec')} : [])"
        made = role("''", _labels("object", "metadata.labels"),
                    "(has(object.spec) ? object.spec : {})", app, "'spec'",
                    f"(has(object.spec) ? {init_containers('object.spec')} : [])")
        return f"[{made}]"


@dataclass(frozen=True)
class Resources:
    """A kind that keeps one resources block instead of a pod template (NIMService's
    ``spec.resources``): one container named ``container``; its labels at ``labels``; the
    role named ``name`` (as the reader names it: a TrainJob's ``trainer``)."""

    path: str
    container: str
    labels: str = ""
    each: str = ""  # a list whose enabled items each hold the block at ``path`` (NIMPipeline)
    name: str = ""

    def cel(self) -> str:
        if self.each:
            one = role("'service ' + (has(e.name) ? e.name : '#')",
                       _labels("e", "spec.labels"), "{}",
                       f"[{{'name': '{self.container}', 'resources': e.{self.path}}}]",
                       f"{_indexed('object', self.each, 'e')} + '.{self.path}'")
            keep = f"has(e.enabled) && e.enabled == true && {guard('e', self.path)}"
            return (f"({guard('object', self.each)} ? object.{self.each}.filter(e, {keep})"
                    f".map(e, {one}) : [])")
        labels = _labels("object", self.labels) if self.labels else "{}"
        one = role(repr(self.name), labels, "{}",
                   f"[{{'name': '{self.container}', 'resources': object.{self.path}}}]",
                   repr(self.path))
        return f"({guard('object', self.path)} ? [{one}] : [])"


@dataclass(frozen=True)
class Argo:
    """Argo Workflows templates (and templateDefaults) under ``base``: container, script,
    containerSet.containers, sidecars and initContainers of each."""

    base: str

    def cel(self) -> str:
        def one(t: str, name: str, path: str) -> str:
            main = " + ".join((_opt_one(t, "container"), _opt_one(t, "script"),
                               _opt_list(t, "containerSet.containers")))
            app, init = f"({main} + {_opt_list(t, 'sidecars')})", init_containers(t)
            return role(name, _labels(t, "metadata.labels"), t, app, path, init,
                        f"{main} + {init} + {_opt_list(t, 'sidecars')}")  # the reader's order
        b = f"object.{self.base}"
        named = "'template ' + (has(e.name) ? e.name : '#')"
        defaults = f"{b}.templateDefaults"
        at = repr(f"{self.base}.templateDefaults")
        return (f"({guard('object', f'{self.base}.templateDefaults')} ? "
                f"[{one(defaults, repr('template defaults'), at)}]"
                f" : []) + ({guard('object', f'{self.base}.templates')} ? {b}.templates.map(e, "
                f"{one('e', named, _indexed('object', f'{self.base}.templates', 'e'))}) : [])")


_MODEL_SPECS: Final = ("model", "sklearn", "xgboost", "tensorflow", "pytorch", "triton", "onnx",
                       "huggingface", "pmml", "lightgbm", "paddle", "alibi", "art")


@dataclass(frozen=True)
class KServe:
    """An InferenceService component (predictor, transformer, explainer): its own containers
    and model or framework specs (one container each), and its workerSpec (multi-node)."""

    component: str

    def cel(self) -> str:
        c = f"object.spec.{self.component}"
        models = " + ".join(_opt_one(c, m) for m in _MODEL_SPECS)
        at = f"spec.{self.component}"
        main = role(repr(self.component), _labels(c, "labels"), c,  # model specs first, as
                    f"({models} + {app_containers(c)})", repr(at), init_containers(c))  # the reader
        worker = spec_role(f"{c}.workerSpec", repr(f"{self.component} worker"),
                           repr(f"{at}.workerSpec"), _labels(c, "labels"))
        return (f"({guard('object', f'spec.{self.component}')} ? [{main}] : []) + "
                f"({guard('object', f'spec.{self.component}.workerSpec')} ? [{worker}] : [])")


Source = At | Each | Values | Pod | Resources | Argo | KServe


def _ray(base: str) -> tuple[Source, ...]:
    return (At(f"{base}.headGroupSpec.template", "head"),
            Each(f"{base}.workerGroupSpecs", "template", "worker group ", "groupName"))


_KUBEFLOW: Final = {"PyTorchJob": "pytorchReplicaSpecs", "TFJob": "tfReplicaSpecs",
                    "MPIJob": "mpiReplicaSpecs", "PaddleJob": "paddleReplicaSpecs",
                    "XGBoostJob": "xgbReplicaSpecs", "JAXJob": "jaxReplicaSpecs",
                    "MXJob": "mxReplicaSpecs"}
_ARGO: Final = {k: Argo("spec") for k in ("Workflow", "WorkflowTemplate",
                                          "ClusterWorkflowTemplate")}

# (API group, kind) → where its pods are. Groups as the API server names them ("" is core).
KINDS: Final[dict[tuple[str, str], tuple[Source, ...]]] = {
    ("", "Pod"): (Pod(),),
    ("", "ReplicationController"): (At("spec.template"),),
    **{("apps", k): (At("spec.template"),) for k in ("Deployment", "StatefulSet", "ReplicaSet",
                                                      "DaemonSet")},
    ("batch", "Job"): (At("spec.template"),),
    ("batch", "CronJob"): (At("spec.jobTemplate.spec.template"),),
    **{("kubeflow.org", k): (Values(f"spec.{key}"),) for k, key in _KUBEFLOW.items()},
    ("trainer.kubeflow.org", "TrainJob"): (Resources("spec.trainer.resourcesPerNode", "node",
                                                     name="trainer"),),
    **{("trainer.kubeflow.org", k): (Each("spec.template.spec.replicatedJobs",
                                          "template.spec.template"),)
       for k in ("TrainingRuntime", "ClusterTrainingRuntime")},
    ("jobset.x-k8s.io", "JobSet"): (Each("spec.replicatedJobs", "template.spec.template"),),
    ("leaderworkerset.x-k8s.io", "LeaderWorkerSet"): (
        At("spec.leaderWorkerTemplate.leaderTemplate", "leader"),
        At("spec.leaderWorkerTemplate.workerTemplate", "worker")),
    ("ray.io", "RayCluster"): _ray("spec"),
    ("ray.io", "RayService"): _ray("spec.rayClusterConfig"),
    ("ray.io", "RayJob"): (*_ray("spec.rayClusterSpec"),
                           At("spec.submitterPodTemplate", "submitter")),
    ("serving.kserve.io", "InferenceService"): tuple(
        KServe(c) for c in ("predictor", "transformer", "explainer")),
    **{("serving.kserve.io", k): (
        At("spec.template", "decode", spec=True), At("spec.worker", "decode worker", spec=True),
        At("spec.prefill.template", "prefill", spec=True),
        At("spec.prefill.worker", "prefill worker", spec=True))
       for k in ("LLMInferenceService", "LLMInferenceServiceConfig")},
    **{("argoproj.io", k): (v,) for k, v in _ARGO.items()},
    ("argoproj.io", "CronWorkflow"): (Argo("spec.workflowSpec"),),
    ("batch.volcano.sh", "Job"): (Each("spec.tasks", "template", "task "),),
    ("apps.nvidia.com", "NIMService"): (Resources("spec.resources", "nim", "spec.labels"),),
    ("apps.nvidia.com", "NIMPipeline"): (Resources("spec.resources", "nim",
                                                   each="spec.services"),),
    ("keda.sh", "ScaledJob"): (At("spec.jobTargetRef.template"),),
}

# Reader kinds that are not matched at admission, and why (docs/kubernetes.md lists them).
NOT_AT_ADMISSION: Final = {
    ("apps.nvidia.com", "NIMCache"): "its caching job asks for CPU and memory only",
    ("extensions", "Deployment"): "extensions/v1beta1 is no longer served (Kubernetes 1.16)",
    ("extensions", "StatefulSet"): "never served under extensions",
    ("extensions", "ReplicaSet"): "extensions/v1beta1 is no longer served (Kubernetes 1.16)",
    ("extensions", "DaemonSet"): "extensions/v1beta1 is no longer served (Kubernetes 1.16)",
}


def plural(kind: str) -> str:
    """The resource name the API serves a kind under (every kind above: lower case + s)."""
    return f"{kind.lower()}s"


_OBJECT: Final = re.compile(r"(?<![\w.])object\.")


def roles_cel(kinds: list[tuple[str, str]], root: str = "object") -> str:
    """The ``roles`` variable for a policy matching ``kinds``: one branch per kind. ``root``
    ``oldObject`` reads the object before an UPDATE the same way (every source reads from
    ``object.``; the kind is the request's, the same for both)."""
    out = "[]"
    for group, kind in reversed(kinds):
        body = " + ".join(s.cel() for s in KINDS[(group, kind)])
        if root != "object":
            body = _OBJECT.sub(f"{root}.", body)
        out = f"variables.gk == '{group}/{kind}' ? ({body}) : ({out})"
    return out


GROUP_KIND: Final = "request.kind.group + '/' + request.kind.kind"


def _index(lst: str, c: str, key: str) -> str:
    return f"'.{key}[' + string({lst}.indexOf({c})) + ']'"


def _in(root: str, path: str, c: str) -> str:
    return f"({guard(root, path)} && {c} in {root}.{path})"


def _pod_at(r: str, c: str) -> str:
    """Container ``c`` of the pod spec ``r.spec``: in containers, else in initContainers (a
    container in both is the first, as the reader reads containers first)."""
    return (f"({_in(r, 'spec.containers', c)} ? {_index(f'{r}.spec.containers', c, 'containers')}"
            f" : {_index(f'{r}.spec.initContainers', c, 'initContainers')})")


def _kserve_at(r: str, c: str) -> str:
    """A component's model or framework specs first (as the reader), then its pod spec."""
    specs = "[" + ", ".join(repr(m) for m in _MODEL_SPECS) + "]"
    found = f"{specs}.filter(m, m in {r}.spec && {r}.spec[m] == {c})"
    return f"(size({found}) > 0 ? '.' + {found}[0] : {_pod_at(r, c)})"


def _argo_at(r: str, c: str) -> str:
    """An Argo template's container, script, containerSet, initContainers, sidecars (the
    reader's order)."""
    t = f"{r}.spec"
    return (f"({guard(t, 'container')} && {t}.container == {c} ? '.container' : "
            f"{guard(t, 'script')} && {t}.script == {c} ? '.script' : "
            f"{_in(t, 'containerSet.containers', c)} ? "
            f"'.containerSet' + {_index(f'{t}.containerSet.containers', c, 'containers')} : "
            f"{_in(t, 'initContainers', c)} ? {_index(f'{t}.initContainers', c, 'initContainers')}"
            f" : {_index(f'{t}.sidecars', c, 'sidecars')})")


def resources_at(kinds: list[tuple[str, str]], r: str, c: str) -> str:
    """Where container ``c`` (an item of ``r.containers``) of role ``r`` has its resources
    block, as the PR check names it (``spec.template.spec.initContainers[0].resources``,
    ``spec.predictor.model.resources``; a kind that keeps one block: the role's own path)."""
    layouts: dict[str, list[str]] = {}
    for group, kind in kinds:
        sources = KINDS[(group, kind)]
        layout = ("resources" if all(isinstance(s, Resources) for s in sources) else
                  "argo" if all(isinstance(s, Argo) for s in sources) else
                  "kserve" if all(isinstance(s, KServe) for s in sources) else "pod")
        layouts.setdefault(layout, []).append(f"{group}/{kind}")
    at = {"argo": _argo_at(r, c), "kserve": _kserve_at(r, c)}
    out = f"{r}.path + {_pod_at(r, c)} + '.resources'"
    for layout in ("argo", "kserve"):
        if layouts.get(layout):
            out = (f"(variables.gk in {layouts[layout]!r} ? {r}.path + {at[layout]} + "
                   f"'.resources' : {out})")
    if layouts.get("resources"):
        out = f"(variables.gk in {layouts['resources']!r} ? {r}.path : {out})"
    return out


def container_name(c: str, where: str) -> str:
    """Container ``c``'s name as the reader gives it: its own, else ``#i`` (its index in its
    list, from ``where``: :func:`resources_at`), ``kserve-container`` for a KServe model spec
    and ``main`` for an Argo container or script."""
    parts = f"{where}.split('[')"
    index = f"{parts}[size({parts}) - 1].split(']')[0]"
    return (f"(has({c}.name) ? {c}.name : {where}.endsWith('].resources') ? '#' + {index} : "
            "variables.gk == 'serving.kserve.io/InferenceService' ? 'kserve-container' : "
            "'main')")

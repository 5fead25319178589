"""Each kind's own autoscaler, in CEL: the admission twin of the readers' ``Autoscaler``.

The functions here give, for the kinds that scale themselves (RayCluster and RayService worker
groups, KServe InferenceService components, LLMInferenceService decode and prefill, NIMService,
NIMPipeline services), one map per role, in the reader's role order: ``containers`` (as the
``roles`` variable has them), ``own`` (the role has the kind's own autoscaler), ``parked`` (the
reader's ``replicas.max == 0``: the role holds no GPU) and ``msg``, what the PR check says
about it (``''`` when it scales). Each kind mirrors its reader in
``policies/facts/k8s/readers/`` (ray.py, kserve.py, kserve_llm.py, nim.py) step by step, with
the readers' defaults; a count that is not a whole number is ``-1`` here where the reader has
None.

Python's ``texts()`` (every string under a value, at any depth) is a bounded search here
(:func:`deep`, :data:`DEPTH` levels): CEL has no recursion. No schema of these kinds nests
strings that deep under an autoscaler (an HPA metric's ``matchExpressions`` values are 8 levels
under ``metrics``); a string deeper is not seen, which fails closed (no GPU metric found).
"""

from __future__ import annotations

from collections.abc import Callable
from string import Formatter
from typing import Final

from policies.admission.cel._gpu import q, whole
from policies.admission.kinds import app_containers, guard, init_containers
from policies.facts.k8s.autoscalers import GPU_METRIC
from policies.facts.k8s.readers import TABLE
from policies.facts.k8s.readers.kserve import (
    CLASS,
    MODE,
    MODEL_SPECS,
    MULTI_NODE,
    MULTI_NODE_NEVER,
)
from policies.rules._common import CANNOT_VERIFY
from policies.rules.k8s_gpu_workload_autoscaled import (
    NOT_PLAIN,
    OWN_FIXED,
    OWN_METRIC,
    OWN_NEVER,
    OWN_OFF,
    OWN_UNKNOWN,
    PLAIN,
    UNSCALED,
)

DEPTH: Final = 10
RAY_MAX: Final = 2147483647  # KubeRay's default maxReplicas (ray.py's _MAX): no bound
_GPU_RE: Final = "(?i)" + GPU_METRIC.pattern
_WHO: Final = ("object.kind + ' ' + (request.namespace != '' ? request.namespace + '/' : '') + "
               "(has(object.metadata.name) ? object.metadata.name : '?')")


def pod_containers(spec: str) -> str:
    """App and init containers of the pod spec at ``spec`` (present): a role asks for a GPU
    when any of them does, as the reader's ``Role.gpu`` reads both."""
    return f"{app_containers(spec)} + {init_containers(spec)}"


def lit(text: str) -> str:
    """``text`` as a CEL string literal."""
    return "'" + text.replace("\\", "\\\\").replace("'", "\\'") + "'"


def said(template: str, **parts: str) -> str:
    """A rule message template (``{who} runs GPUs …``) as CEL: literal text, and each field
    the CEL string expression ``parts[field]``."""
    out = []
    for text, field, _, _ in Formatter().parse(template):
        if text:
            out.append(lit(text))
        if field is not None:
            out.append(f"({parts[field]})")
    return " + ".join(out)


def who(name: str) -> str:
    """``RayService ml/llm, worker group gpu`` (``name`` a CEL string; '' for none)."""
    return f"{_WHO} + ({name} != '' ? ', ' + {name} : '')"


def deep(value: str, test: Callable[[str], str], depth: int = DEPTH) -> str:
    """Does a string at most ``depth`` levels under ``value`` pass ``test`` (CEL of a name)?"""
    if depth == 0:
        return f"(type({value}) == string && {test(value)})"
    t, k = f"t{depth}", f"k{depth}"
    kids = (f"(type({value}) == map ? {value}.map({k}, {value}[{k}]) : "
            f"type({value}) == list ? {value} : [])")
    return (f"(type({value}) == string ? {test(value)} : "
            f"{kids}.exists({t}, {deep(t, test, depth - 1)}))")


def gpu_text(value: str) -> str:
    return deep(value, lambda s: f"{s}.matches({lit(_GPU_RE)})")


def text_is(value: str, wanted: str) -> str:
    return deep(value, lambda s: f"{s} == {lit(wanted)}")


def num(parent: str, key: str, default: int) -> str:
    """The reader's ``whole_number(parent.key, default)``: -1 where it has None."""
    v = f"{parent}.{key}"
    return f"(has({v}) ? ({whole(v)} ? {q(v)}.asInteger() : -1) : {default})"


def plain(cpu: str, memory: str) -> str:
    """The rule's ``_plain``: the CPU and memory metrics named, in PLAIN's order."""
    a, b = PLAIN
    return (f"({cpu} && {memory} ? {lit(f'{a}, {b}')} : {cpu} ? {lit(a)} : "
            f"{memory} ? {lit(b)} : {lit(NOT_PLAIN)})")


def own_msg(name: str, role: str, where: str, *, lo: str, hi: str, unknown: str = "false",
            enabled: str = "true", on_load: str = "false", gpu: str = "false",
            cpu: str = "false", memory: str = "false") -> str:
    """The rule's ``_own``: '' when the autoscaler (``name``, CEL) is on, with room (``hi``
    above ``lo``, -1 for none) and on GPU utilisation or load; ``where`` (CEL) is where it is
    switched on or bounded."""
    w, at = who(role), where
    return (f"({unknown} ? {lit(CANNOT_VERIFY + ': ')} + "
            f"{said(OWN_UNKNOWN, who=w, name=name, where=at)} : "
            f"!({enabled}) ? {said(OWN_OFF, who=w, name=name, where=at)} : "
            f"!({hi} == -1 || {lo} == -1 || {hi} > {lo}) ? "
            f"{said(OWN_FIXED, who=w, name=name, min=f'string({lo})')} : "
            f"!({on_load} || {gpu}) ? "
            f"{said(OWN_METRIC, who=w, name=name, metrics=plain(cpu, memory))} : '')")


def unscaled(group: str, kind: str, role: str) -> str:
    """The rule's message for a GPU role nothing scales (its reader says what would)."""
    return said(UNSCALED, who=who(role), kind=lit(kind), what=lit(TABLE[(group, kind)].autoscaled))


def unit(containers: str, own: str, parked: str, msg: str) -> str:
    return f"{{'containers': {containers}, 'own': {own}, 'parked': {parked}, 'msg': {msg}}}"


def _spec_containers(template: str) -> str:
    return f"(has({template}.spec) ? {pod_containers(f'{template}.spec')} : [])"


def ray(kind: str, base: str) -> str:
    """ray.py's cluster_roles for the cluster spec at ``base``: the head (nothing scales it)
    and each worker group with the cluster's autoscaler."""
    c = f"object.{base}"
    on = f"(has({c}.enableInTreeAutoscaling) && {c}.enableInTreeAutoscaling == true)"
    head = unit(_spec_containers(f"{c}.headGroupSpec.template"), "false", "false",
                unscaled("ray.io", kind, "'head'"))
    groups = f"{c}.workerGroupSpecs"
    facts = (f"{{'e': e, 'hosts': {num('e', 'numOfHosts', 1)}, "
             f"'lo': {num('e', 'minReplicas', 0)}, 'hi': {num('e', 'maxReplicas', RAY_MAX)}, "
             f"'n': {num('e', 'replicas', -2)}, "
             f"'suspended': has(e.suspend) && e.suspend == true}}")
    # top: maxReplicas, no bound when unset or KubeRay's default; fixed: replicas (unset, -2:
    # minReplicas), 0 when suspended; pods = (top with the autoscaler on, else fixed) times hosts
    sized = ("{'e': f.e, 'hosts': f.hosts, 'lo': f.lo, "
             f"'top': f.hi == -1 || f.hi == {RAY_MAX} ? -1 : f.hi, "
             "'fixed': f.suspended ? 0 : f.n == -2 ? f.lo : f.n}")
    runs = f"({on} ? g.top : g.fixed)"
    parked = f"(({runs} == 0 && g.hosts != -1) || (g.hosts == 0 && {runs} != -1))"
    name = ("'worker group ' + (has(g.e.groupName) ? string(g.e.groupName) : "
            f"'#' + string({groups}.indexOf(g.e)))")
    msg = own_msg(lit("RayCluster autoscaler"), name, lit(f"{base}.enableInTreeAutoscaling"),
                  lo="g.lo", hi="g.top", enabled=on, on_load="true")
    worker = unit(_spec_containers("g.e.template"), "true", parked, msg)
    return (f"({guard('object', f'{base}.headGroupSpec.template')} ? [{head}] : []) + "
            f"({guard('object', f'{base}.workerGroupSpecs')} ? {groups}.filter(e, "
            f"has(e.template)).map(e, {facts}).map(f, {sized}).map(g, {worker}) : [])")


def _note(key: str, default: str) -> str:
    notes = "object.metadata.annotations"
    return (f"(has(object.metadata.annotations) && {lit(key)} in {notes} && "
            f"{notes}[{lit(key)}] != '' ? string({notes}[{lit(key)}]) : {lit(default)})")


# The variables the InferenceService components share: its deployment mode and autoscaler class
# (annotations; KServe's defaults), and the autoscaler's name as the reader gives it.
KSERVE: Final = (
    ("kserveMode", _note(MODE, "Serverless")),
    ("kserveClass", _note(CLASS, "hpa")),
    ("kserveKnative", "variables.kserveMode in ['Serverless', 'Knative']"),
    ("kserveScaler", "variables.kserveKnative ? 'KServe autoscaler (Knative)' : "
                     "'KServe autoscaler (' + variables.kserveMode + ', ' + "
                     "variables.kserveClass + ')'"))


def kserve(component: str) -> str:
    """kserve.py's _scaling for one component, and its workerSpec: multi-node serving, which
    KServe never scales (the head at minReplicas, the workers pipelineParallelSize - 1 pods
    whatever the replicas), said of the component and of its workers."""
    c = f"object.spec.{component}"
    knative = "variables.kserveKnative"
    metric = (f"(has({c}.scaleMetric) && string({c}.scaleMetric) != '' ? "
              f"string({c}.scaleMetric) : {knative} ? 'concurrency' : 'cpu')")
    named = f"has({c}.autoScaling)"
    facts = (f"{{'lo': {num(c, 'minReplicas', 1)}, 'hi': {num(c, 'maxReplicas', 0)}, "
             f"'metric': {metric}, 'gpu': {named} && {gpu_text(f'{c}.autoScaling')}, "
             f"'cpu': {named} && {text_is(f'{c}.autoScaling', 'cpu')}, "
             f"'memory': {named} && {text_is(f'{c}.autoScaling', 'memory')}}}")
    # Knative: minReplicas to maxReplicas (0 or unset: no bound); Standard: an HPA from
    # minReplicas to max(minReplicas, maxReplicas)
    lo0, hi0 = "(f.lo > 0 ? f.lo : 0)", "(f.hi > 0 ? f.hi : 0)"
    sized = (f"{{'lo': f.lo, 'metric': f.metric, 'gpu': f.gpu, 'cpu': f.cpu, "
             f"'memory': f.memory, 'max': {knative} ? (f.hi == 0 ? -1 : f.hi) : "
             f"({lo0} > {hi0} ? {lo0} : {hi0})}}")
    msg = own_msg(
        "variables.kserveScaler", lit(component), lit(f"spec.{component}.maxReplicas"),
        lo="g.lo", hi="g.max",
        unknown=f"(!({knative}) && variables.kserveClass == 'external')",
        enabled=f"({knative} || variables.kserveClass != 'none')",
        on_load=f"({knative} && !(g.metric in ['cpu', 'memory']))",
        gpu=f"(g.metric.matches({lit(_GPU_RE)}) || g.gpu)", cpu="(g.metric == 'cpu' || g.cpu)",
        memory="(g.metric == 'memory' || g.memory)")
    models = " + ".join(f"({guard(c, m)} ? [{c}.{m}] : [])" for m in MODEL_SPECS)
    multi = f"has({c}.workerSpec)"

    def never(role: str) -> str:
        return said(OWN_NEVER, who=who(lit(role)), name=lit(MULTI_NODE),
                    where=lit(f"spec.{component}.workerSpec"), never=lit(MULTI_NODE_NEVER))

    main = unit(f"{pod_containers(c)} + {models}", "true",
                f"({multi} ? g.lo == 0 : g.max == 0)", f"({multi} ? {never(component)} : {msg})")
    size = num(f"{c}.workerSpec", "pipelineParallelSize", -1)
    # multi-node: pipelineParallelSize - 1 workers whatever the replicas, none when it is 0 or 1
    worker = unit(pod_containers(f"{c}.workerSpec"), "true", f"({size} != -1 && {size} <= 1)",
                  never(f"{component} worker"))
    return (f"({guard('object', f'spec.{component}')} ? [{facts}].map(f, {sized}).map(g, "
            f"[{main}] + (has({c}.workerSpec) ? [{worker}] : [])) : [[]])[0]")


def llm(base: str, name: str) -> str:
    """kserve_llm.py's _part for the decode (``spec``) or prefill (``spec.prefill``) pods:
    the template and worker pods, with ``scaling`` (KEDA or the workload variant
    autoscaler) or a fixed ``replicas``."""
    p, s = f"object.{base}", f"object.{base}.scaling"
    par, keda = f"{p}.parallelism", f"(has({s}) && has({s}.keda))"
    facts = (f"{{'scaled': has({s}), 'lo': has({s}) ? {num(s, 'minReplicas', 1)} : 0, "
             f"'hi': has({s}) ? {num(s, 'maxReplicas', -1)} : 0, 'n': {num(p, 'replicas', 1)}, "
             f"'wva': has({s}) && has({s}.wva), "
             f"'d': has({par}) ? {num(par, 'data', -1)} : -1, "
             f"'l': has({par}) ? {num(par, 'dataLocal', -1)} : -1, "
             f"'pipe': has({par}) ? {num(par, 'pipeline', -1)} : -1, "
             f"'gpu': {keda} && {gpu_text(f'{s}.keda')}, "
             f"'cpu': {keda} && {text_is(f'{s}.keda', 'cpu')}, "
             f"'memory': {keda} && {text_is(f'{s}.keda', 'memory')}}}")
    # replicas: scaling's range when set, else replicas; a worker group spans data / dataLocal
    # nodes (at least 1), else pipeline stages (unset: unknown size, never parked)
    sized = ("{'scaled': f.scaled, 'lo': f.lo, 'hi': f.hi, 'wva': f.wva, 'gpu': f.gpu, "
             "'cpu': f.cpu, 'memory': f.memory, "
             "'max': f.scaled ? f.hi : f.n, "
             "'size': f.d > 0 && f.l > 0 ? (f.d / f.l > 1 ? f.d / f.l : 1) : f.pipe}")
    scaler = ("'LLMInferenceService scaling (' + (g.wva ? 'workload variant autoscaler' : "
              "'KEDA') + ')'")

    def msg(role: str) -> str:
        return ("(g.scaled ? " + own_msg(
            scaler, lit(role), lit(f"{base}.scaling.maxReplicas"), lo="g.lo", hi="g.hi",
            on_load="g.wva", gpu="g.gpu", cpu="g.cpu", memory="g.memory")
            + f" : {unscaled('serving.kserve.io', 'LLMInferenceService', lit(role))})")

    template = unit(pod_containers(f"{p}.template"), "g.scaled", "g.max == 0", msg(name))
    worker = unit(pod_containers(f"{p}.worker"), "g.scaled",
                  "(g.size != -1 && g.max != -1 && (g.max == 0 || g.size == 1))",
                  msg(f"{name} worker"))
    body = (f"(has({p}.template) ? [{template}] : []) + "
            f"(has({p}.worker) ? [{worker}] : [])")
    return f"({guard('object', base)} ? [{facts}].map(f, {sized}).map(g, {body}) : [[]])[0]"


def nim_service(p: str, kind: str, path: str, role: str) -> str:
    """nim.py's service_role for the NIMService spec at ``p`` (present), which the PR check
    names ``path`` (CEL): ``resources`` as one container, and the operator's HPA (``scale``;
    its default metric CPU) or a fixed ``replicas``, times the multi-node pipeline size."""
    s, hpa, par = f"{p}.scale", f"{p}.scale.hpa", f"{p}.multiNode.parallelism"
    facts = (f"{{'scaled': has({s}), 'on': has({s}) && has({s}.enabled) && {s}.enabled == true, "
             f"'lo': has({s}) && has({hpa}) ? {num(hpa, 'minReplicas', 1)} : 1, "
             f"'hi': has({s}) && has({hpa}) ? {num(hpa, 'maxReplicas', -1)} : -1, "
             f"'n': {num(p, 'replicas', 1)}, "
             f"'size': has({p}.multiNode) && has({par}) ? {num(par, 'pipeline', 1)} : 1, "
             f"'metrics': has({s}) && has({hpa}) && has({hpa}.metrics) ? {hpa}.metrics : []}}")
    max_ = "(f.on ? f.hi : f.n)"
    parked = f"({max_} != -1 && f.size != -1 && ({max_} == 0 || f.size == 0))"
    # no metric text at all: the operator's default, CPU
    cpu = f"({text_is('f.metrics', 'cpu')} || !{deep('f.metrics', lambda _: 'true')})"
    msg = own_msg("'NIM operator HPA'", role, f"{path} + '.scale.enabled'", lo="f.lo",
                  hi="f.hi", enabled="f.on", gpu=gpu_text("f.metrics"), cpu=cpu,
                  memory=text_is("f.metrics", "memory"))
    containers = f"(has({p}.resources) ? [{{'name': 'nim', 'resources': {p}.resources}}] : [])"
    nothing = unscaled("apps.nvidia.com", kind, role)
    one = unit(containers, "f.scaled", parked, f"(f.scaled ? {msg} : {nothing})")
    return f"[{facts}].map(f, {one})[0]"


def nim() -> str:
    """A NIMService: its spec is the one service."""
    one = nim_service("object.spec", "NIMService", lit("spec"), lit(""))
    return f"(has(object.spec) ? [{one}] : [])"


def nim_pipeline() -> str:
    """nim.py's _pipeline_services: each service enabled (``enabled: true``, as the reader
    keeps it) with a spec, named ``service NAME`` (``#i`` unnamed) at ``spec.services[i].spec``."""
    services = "object.spec.services"
    i = f"string({services}.indexOf(e))"
    role = f"'service ' + (has(e.name) ? string(e.name) : '#' + {i})"
    one = nim_service("e.spec", "NIMPipeline", f"'spec.services[' + {i} + '].spec'", f"({role})")
    return (f"({guard('object', 'spec.services')} ? {services}.filter(e, has(e.enabled) && "
            f"e.enabled == true && has(e.spec)).map(e, {one}) : [])")

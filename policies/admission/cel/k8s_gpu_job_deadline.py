"""k8s-gpu-job-deadline at admission: a GPU batch workload bounds its run time.

Params (ConfigMap data): ``maxDeadlineSeconds`` (empty: any deadline will do). The batch kinds
and where each keeps its deadline are the readers' (``Reader.deadline``). A JobSet (several
replicated jobs) is bounded by the shortest one set: it fails as a whole when one job passes
its deadline. A kind whose deadline lives in each role's own pod spec (:data:`PER_ROLE`: a
Volcano Job's tasks) is judged per role, as the rule does since 19aa6ab: a task's deadline ends
only its own pods, so each task that asks for a GPU needs its own, within the bound.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Final

from policies.admission.cel._gpu import GPUS, q, role_asks_gpu, whole
from policies.admission.kinds import guard
from policies.admission.spec import AdmissionRule, Validation
from policies.rules.base import RuleParams
from policies.rules.k8s_gpu_job_deadline import Params


def _at(path: str) -> str:
    return f"({guard('object', path)} ? [object.{path}] : [])"


def _each(path: str, sub: str) -> str:
    return (f"({guard('object', path)} ? object.{path}.filter(e, {guard('e', sub)})"
            f".map(e, e.{sub}) : [])")


# (group, kind) → (CEL list of the deadlines set, the path to set as the PR check names it)
DEADLINES: Final[dict[tuple[str, str], tuple[str, str]]] = {
    ("batch", "Job"): (_at("spec.activeDeadlineSeconds"), "spec.activeDeadlineSeconds"),
    ("batch", "CronJob"): (_at("spec.jobTemplate.spec.activeDeadlineSeconds"),
                           "spec.jobTemplate.spec.activeDeadlineSeconds"),
    **{("kubeflow.org", k): (_at("spec.runPolicy.activeDeadlineSeconds"),
                             "spec.runPolicy.activeDeadlineSeconds")
       for k in ("PyTorchJob", "TFJob", "MPIJob", "PaddleJob", "XGBoostJob", "JAXJob",
                 "MXJob")},
    ("trainer.kubeflow.org", "TrainJob"): (_at("spec.activeDeadlineSeconds"),
                                           "spec.activeDeadlineSeconds"),
    ("jobset.x-k8s.io", "JobSet"): (
        _each("spec.replicatedJobs", "template.spec.activeDeadlineSeconds"),
        "spec.replicatedJobs[0].template.spec.activeDeadlineSeconds"),
    ("ray.io", "RayJob"): (_at("spec.activeDeadlineSeconds"), "spec.activeDeadlineSeconds"),
    ("argoproj.io", "Workflow"): (_at("spec.activeDeadlineSeconds"),
                                  "spec.activeDeadlineSeconds"),
    ("argoproj.io", "CronWorkflow"): (_at("spec.workflowSpec.activeDeadlineSeconds"),
                                      "spec.workflowSpec.activeDeadlineSeconds"),
    ("batch.volcano.sh", "Job"): (
        _each("spec.tasks", "template.spec.activeDeadlineSeconds"),
        "spec.tasks[0].template.spec.activeDeadlineSeconds"),
    ("keda.sh", "ScaledJob"): (_at("spec.jobTargetRef.activeDeadlineSeconds"),
                               "spec.jobTargetRef.activeDeadlineSeconds"),
}


# Kinds whose deadline is each role's pod spec's activeDeadlineSeconds (no workload-wide one).
PER_ROLE: Final = frozenset({("batch.volcano.sh", "Job")})


def _params(p: RuleParams) -> Mapping[str, str]:
    assert isinstance(p, Params)
    limit = p.max_deadline_seconds
    return {"maxDeadlineSeconds": "" if limit is None else str(limit)}


def _chain(pick: int) -> str:
    """The deadlines (``pick`` 0) or the path to set (1) of whichever kind was matched."""
    out = "[]" if pick == 0 else "''"
    for (group, kind), entry in reversed(DEADLINES.items()):
        value = entry[0] if pick == 0 else repr(entry[1])
        out = f"variables.gk == '{group}/{kind}' ? {value} : ({out})"
    return out


def _span(d: str) -> str:
    return (f"({d} % 86400 == 0 ? string({d} / 86400) + ' day' + ({d} == 86400 ? '' : 's') : "
            f"{d} % 3600 == 0 ? string({d} / 3600) + ' hour' + ({d} == 3600 ? '' : 's') : "
            f"string({d}) + ' s')")


_WHO = ("object.kind + ' ' + (request.namespace != '' ? request.namespace + '/' : '') + "
        "(has(object.metadata.name) ? object.metadata.name : '?')")
_D = "variables.shortest"
_LIMIT = "variables.limit"


def _said(unset: str, who: str, where: str, d: str) -> str:
    """The PR check's message: ``unset`` (no deadline) or deadline ``d`` over the limit."""
    return (
        f"{unset} ? {who} + ' asks for GPUs but sets no deadline: a run "
        f"that hangs holds its GPUs until someone deletes it; set ' + {where} + "
        f"(variables.limited ? ' (at most ' + string({_LIMIT}) + ' s)' : '') + ' so the "
        f"controller ends it and releases them' : {who} + ': ' + {where} + ' is ' + "
        f"string({d}) + "
        f"' s (' + {_span(d)} + '), longer than maxDeadlineSeconds ' + string({_LIMIT}) + "
        f"' (' + {_span(_LIMIT)} + '): a hung run holds its GPUs that long; lower it'")


_R = "variables.late[0]"
_OWN = f"{_R}.spec.activeDeadlineSeconds"
_OWN_SET = f"(has({_OWN}) && {whole(_OWN)})"
_ROLE_SAID = _said(f"!{_OWN_SET}", f"{_WHO} + ', ' + {_R}.name",
                   f"{_R}.path + '.activeDeadlineSeconds'", f"{q(_OWN)}.asInteger()")
_MESSAGE = (f"variables.perRole ? ({_ROLE_SAID}) : "
            f"({_said('size(variables.deadlines) == 0', _WHO, 'variables.where', _D)})")
_D_OF = "r.spec.activeDeadlineSeconds"
_SET = f"(has({_D_OF}) && {whole(_D_OF)})"


ADMISSION = AdmissionRule(
    rule_id="k8s-gpu-job-deadline",
    kinds=tuple(DEADLINES),
    variables=(
        ("gpus", GPUS),
        ("gpuRoles", f"variables.roles.filter(r, {role_asks_gpu('r')})"),
        ("asksGpu", "size(variables.gpuRoles) > 0"),
        ("perRole", " || ".join(f"variables.gk == '{g}/{k}'" for g, k in sorted(PER_ROLE))),
        # a deadline counts when it is a whole number (as the rule's whole_number reads it)
        ("deadlines", f"({_chain(0)}).filter(d, {whole('d')}).map(d, {q('d')}.asInteger())"),
        ("where", _chain(1)),
        ("limited", "params.data.maxDeadlineSeconds != ''"),
        ("limit", "variables.limited ? int(params.data.maxDeadlineSeconds) : 0"),
        ("shortest", "variables.deadlines.filter(d, variables.deadlines.all(e, d <= e))[0]"),
        # per-role kinds: the GPU roles whose own deadline is unset or over the bound
        ("late", f"variables.gpuRoles.filter(r, !({_SET} && (!variables.limited || "
                 f"{q(_D_OF)}.asInteger() <= variables.limit)))"),
    ),
    validations=(Validation(
        expression=("!variables.asksGpu || (variables.perRole ? size(variables.late) == 0 : "
                    "(size(variables.deadlines) > 0 && "
                    "(!variables.limited || variables.shortest <= variables.limit)))"),
        message=("k8s-gpu-job-deadline: a GPU batch workload must set activeDeadlineSeconds "
                 "(or its kind's equivalent) within maxDeadlineSeconds"),
        message_expression=f"'k8s-gpu-job-deadline: ' + ({_MESSAGE})"),),
    params=_params,
)

"""k8s-gpu-job-deadline at admission: a GPU batch workload bounds its run time.

Params (ConfigMap data): ``maxDeadlineSeconds`` (empty: any deadline will do). The batch kinds
and where each keeps its deadline are the readers' (``Reader.deadline``); a kind with several
(a JobSet's replicated jobs, a Volcano Job's tasks) is bounded by the shortest one set.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Final

from policies.admission.cel._gpu import GPUS, asks, counted, is_q, q
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


def _asks_gpu(c: str, g: str) -> str:
    v = counted(c, g)
    return f"({asks(c, g)} && (!{is_q(v)} || {q(v)}.sign() > 0))"


def _span(d: str) -> str:
    return (f"({d} % 86400 == 0 ? string({d} / 86400) + ' day' + ({d} == 86400 ? '' : 's') : "
            f"{d} % 3600 == 0 ? string({d} / 3600) + ' hour' + ({d} == 3600 ? '' : 's') : "
            f"string({d}) + ' s')")


_WHO = ("object.kind + ' ' + (request.namespace != '' ? request.namespace + '/' : '') + "
        "(has(object.metadata.name) ? object.metadata.name : '?')")
_D = "variables.shortest"
_LIMIT = "variables.limit"
_MESSAGE = (
    f"size(variables.deadlines) == 0 ? {_WHO} + ' asks for GPUs but sets no deadline: a run "
    "that hangs holds its GPUs until someone deletes it; set ' + variables.where + "
    f"(variables.limited ? ' (at most ' + string({_LIMIT}) + ' s)' : '') + ' so the "
    f"controller ends it and releases them' : {_WHO} + ': ' + variables.where + ' is ' + "
    f"string({_D}) + "
    f"' s (' + {_span(_D)} + '), longer than maxDeadlineSeconds ' + string({_LIMIT}) + ' (' + "
    f"{_span(_LIMIT)} + '): a hung run holds its GPUs that long; lower it'")


ADMISSION = AdmissionRule(
    rule_id="k8s-gpu-job-deadline",
    kinds=tuple(DEADLINES),
    variables=(
        ("gpus", GPUS),
        ("asksGpu", "variables.roles.exists(r, r.containers.exists(c, variables.gpus.exists(g, "
                    f"{_asks_gpu('c', 'g')})))"),
        ("deadlines", f"({_chain(0)}).filter(d, type(d) == int)"),
        ("where", _chain(1)),
        ("limited", "params.data.maxDeadlineSeconds != ''"),
        ("limit", "variables.limited ? int(params.data.maxDeadlineSeconds) : 0"),
        ("shortest", "variables.deadlines.filter(d, variables.deadlines.all(e, d <= e))[0]"),
    ),
    validations=(Validation(
        expression=("!variables.asksGpu || (size(variables.deadlines) > 0 && "
                    "(!variables.limited || variables.shortest <= variables.limit))"),
        message=("k8s-gpu-job-deadline: a GPU batch workload must set activeDeadlineSeconds "
                 "(or its kind's equivalent) within maxDeadlineSeconds"),
        message_expression=f"'k8s-gpu-job-deadline: ' + ({_MESSAGE})"),),
    params=_params,
)

# ruff: noqa: RUF001, RUF003  (× is the multiplication sign users read in messages)
"""k8s-gpu-per-container at admission: no container asks for more GPUs than allowed.

Params (ConfigMap data, from the rule's parameters): ``maxGpusPerContainer``, ``multiGpuMax``
(numbers), ``multiGpuNamespaces`` (one namespace a line), ``multiGpuLabels`` (one
``key=value`` a line). A role may have multiGpuMax when its namespace is listed or all the
labels are on the object or its pod template (the template's value wins), as in the rule.
"""

from __future__ import annotations

from collections.abc import Mapping

from policies.admission.cel._gpu import (
    DENOMINATORS,
    GPUS,
    asks,
    counted,
    double_shown,
    first_gpu,
    is_q,
    lines,
    q,
    side_of,
    who,
    whole,
)
from policies.admission.kinds import KINDS, container_name, resources_at
from policies.admission.spec import AdmissionRule, Validation
from policies.facts.k8s.readers import TABLE
from policies.rules.base import RuleParams
from policies.rules.k8s_gpu_per_container import SCALE_BY, WORKERS_SCALE_BY, Params


def _params(p: RuleParams) -> Mapping[str, str]:
    assert isinstance(p, Params)
    return {"maxGpusPerContainer": str(p.max_gpus_per_container),
            "multiGpuMax": str(p.multi_gpu_max),
            "multiGpuNamespaces": "\n".join(p.multi_gpu_namespaces),
            "multiGpuLabels": "\n".join(f"{k}={v}" for k, v in p.multi_gpu_labels.items())}


def _over(c: str, g: str, allowed: str) -> str:
    v = counted(c, g)
    return f"({asks(c, g)} && {is_q(v)} && {q(v)}.compareTo(quantity(string({allowed}))) > 0)"


_LABEL_OK = ("(l.split('=')[0] in r.labels || l.split('=')[0] in variables.objLabels) && "
             "l == l.split('=')[0] + '=' + (l.split('=')[0] in r.labels ? "
             "r.labels[l.split('=')[0]] : variables.objLabels[l.split('=')[0]])")
_MULTI = ("(variables.multiNamespace || (size(variables.multiLabels) > 0 && "
          f"variables.multiLabels.all(l, {_LABEL_OK})))")
_TOP = ("(variables.multiMax > variables.maxPer ? variables.multiMax : variables.maxPer)")

_J = "variables.firstRole"
_C = "variables.firstContainer"
_G = "variables.firstGpu"
_N = "variables.firstN"
_ALLOWED = f"string({_J}.allowed)"


def _scale_by() -> str:
    """The rule's scale_by: the field to multiply, per kind (KServe's multi-node workers:
    pipelineParallelSize)."""
    out = "'replicas'"
    for (reader, kind), word in SCALE_BY.items():
        gks = [f"{g}/{k}" for g, k in KINDS if k == kind and TABLE[(g, k)].name == reader]
        if (reader, kind) == ("kserve", "InferenceService"):
            word_cel = (f"({_J}.role.name.endsWith(' worker') ? '{WORKERS_SCALE_BY}' : "
                        f"'{word}')")
        else:
            word_cel = f"'{word}'"
        out = f"(variables.gk in {gks!r} ? {word_cel} : {out})"
    return out


_SCALE_BY = _scale_by()
_NS = "(request.namespace != '' ? request.namespace : '<namespace>')"
_MESSAGE = (
    f"{who(f'{_J}.role')} + ': container ' + {container_name(_C, 'variables.firstWhere')} + "
    f"' asks for ' + {_N} + ' × ' + {_G} + ' (' + variables.firstWhere + '.' + "
    f"{side_of(_C, _G)} + "
    f"'); at most ' + {_ALLOWED} + ' per container: run ' + {_N} + ' × the ' + {_SCALE_BY} + "
    f"' with ' + {_ALLOWED} + ' GPU' + ({_J}.allowed != 1 ? 's' : '') + "
    "' each instead (scale out, not up). If one container needs several GPUs (tensor "
    "parallelism for a model that does not fit one GPU: `gpupool estimate` tells whether one "
    "GPU holds it), allow it for its namespace or label with this rule\\'s "
    f"multiGpuNamespaces: [' + {_NS} + '] or multiGpuLabels (e.g. "
    "{gpupool.io/multi-gpu: \"true\"}), up to multiGpuMax'")

ADMISSION = AdmissionRule(
    rule_id="k8s-gpu-per-container",
    kinds=tuple(KINDS),
    variables=(
        ("gpus", GPUS),
        ("maxPer", "int(params.data.maxGpusPerContainer)"),
        ("multiMax", "int(params.data.multiGpuMax)"),
        ("multiNamespace", f"{lines('multiGpuNamespaces')}.exists(n, n == request.namespace)"),
        ("multiLabels", lines("multiGpuLabels")),
        ("objLabels", "(has(object.metadata.labels) ? object.metadata.labels : {})"),
        ("judged", f"variables.roles.map(r, {{'role': r, 'allowed': {_MULTI} ? {_TOP} : "
                   "variables.maxPer})"),
        ("over", "variables.judged.filter(j, j.role.containers.exists(c, "
                 f"variables.gpus.exists(g, {_over('c', 'g', 'j.allowed')})))"),
        # the first offence, for the message only (variables are evaluated when used)
        ("firstRole", "variables.over[0]"),
        ("firstContainer", "variables.firstRole.role.containers.filter(c, variables.gpus"
                           f".exists(g, {_over('c', 'g', 'variables.firstRole.allowed')}))[0]"),
        ("firstGpu", first_gpu("variables.firstContainer",
                               _over("variables.firstContainer", "g",
                                     "variables.firstRole.allowed"))),
        DENOMINATORS,
        # the count as the rule's shown() writes it: 4, 1000 (1k), 3/2, 1333m
        ("firstN", f"{whole(counted(_C, _G))} ? string({q(counted(_C, _G))}.asInteger()) : "
                   f"{double_shown(f'{q(counted(_C, _G))}.asApproximateFloat()')}"),
        ("firstWhere", resources_at(list(KINDS), "variables.firstRole.role",
                                    "variables.firstContainer")),
    ),
    validations=(Validation(
        expression="size(variables.over) == 0",
        message=("k8s-gpu-per-container: a container asks for more GPUs than allowed per "
                 "container; run more replicas with one GPU each (scale out, not up)"),
        message_expression=f"'k8s-gpu-per-container: ' + {_MESSAGE}"),),
    params=_params,
)

"""k8s-cpu-pods-off-gpu-nodes at admission: a pod that tolerates the GPU taint or requires GPU
nodes asks for a GPU.

Params (ConfigMap data): ``taintKeys`` (one a line), ``allowNodeAgents`` (``true``/``false``).
Each pod template of the object (the ``roles`` variable) is placed as
:func:`policies.facts.k8s.placement.placement` places it: its tolerations (an empty key with
Exists tolerates every taint; the effect empty or NoSchedule), and its required node terms
(each required node-affinity term joined with the nodeSelector entries, as ``In`` with one
value). A role none of whose containers asks for a GPU fails when it tolerates a taint key, or
when every term requires a label only GPU nodes carry
(:func:`policies.rules._gpu_nodes.gpu_label`): the rule's label sets are literals here, and the
catalog's GPU instance families are compiled into the policy at render time (``gpuFamilies``;
render again after changing the catalog). Per-node kinds (DaemonSets) pass while
``allowNodeAgents`` is true.
"""

from __future__ import annotations

import json
from collections.abc import Mapping

from gpupool.catalog import Catalog
from policies.admission.cel._gpu import GPUS, lines, role_asks_gpu, who
from policies.admission.kinds import KINDS
from policies.admission.spec import AdmissionRule, Validation
from policies.facts.k8s import ALL_READERS, Lifecycle
from policies.rules._gpu_nodes import GPU_NODE_LABELS, POOL_LABEL
from policies.rules.base import RuleParams
from policies.rules.k8s_cpu_pods_off_gpu_nodes import Params

# the rule's label sets (policies.rules._gpu_nodes), as CEL literals
_LABELS = json.dumps(sorted({*GPU_NODE_LABELS, POOL_LABEL}))
_PROVIDERS = "['karpenter.k8s.aws/', 'eks.amazonaws.com/']"
_SUFFIXES = ("['instance-gpu-count', 'instance-gpu-name', 'instance-gpu-manufacturer', "
             "'instance-gpu-memory']")
_TYPE_KEYS = "['node.kubernetes.io/instance-type', 'beta.kubernetes.io/instance-type']"
_NO = "['false', '0', '']"
PER_NODE = tuple(sorted({k for r in ALL_READERS if r.lifecycle is Lifecycle.PER_NODE
                         for k in r.kinds if k in KINDS}))


def _params(p: RuleParams) -> Mapping[str, str]:
    assert isinstance(p, Params)
    return {"taintKeys": "\n".join(p.taint_keys),
            "allowNodeAgents": "true" if p.allow_node_agents else "false"}


def _families(_: RuleParams, catalog: Catalog) -> tuple[tuple[str, str], ...]:
    return (("gpuFamilies", json.dumps(sorted(catalog.gpu_families))),)


def gpu_label(x: str) -> str:
    """Requiring ``x`` (a ``{key, operator, values}`` map) keeps a pod on GPU nodes."""
    key, op, vals = f"{x}.key", f"{x}.operator", f"{x}.values"
    provider = f"{_PROVIDERS}.exists(p, {key}.startsWith(p))"
    return (
        f"(!({op} in ['NotIn', 'DoesNotExist']) && ({op} in ['Exists', 'Gt', 'Gte'] || "
        f"({op} == 'In' && !{vals}.all(v, v in {_NO}))) && ({key} in {_LABELS} ? true : "
        f"({provider} && {_SUFFIXES}.exists(s, {key}.endsWith(s))) ? "
        f"({op} != 'In' || !('0' in {vals})) : {op} != 'In' ? false : "
        f"{key} in {_TYPE_KEYS} ? "
        f"{vals}.all(v, string(v).split('.')[0] in variables.gpuFamilies) : "
        f"({provider} && {key}.endsWith('instance-family')) ? "
        f"{vals}.all(v, v in variables.gpuFamilies) : false))")


def _tolerates(r: str, k: str) -> str:
    t = f"(has({r}.spec.tolerations) ? {r}.spec.tolerations : [])"
    return (f"{t}.exists(t, (!has(t.effect) || t.effect == '' || t.effect == 'NoSchedule') && "
            f"((has(t.key) && t.key != '') ? t.key == {k} : "
            "(has(t.operator) && t.operator == 'Exists')))")


def _selector(r: str) -> str:
    s = f"(has({r}.spec.nodeSelector) ? {r}.spec.nodeSelector : {{}})"
    return f"{s}.map(k, {{'key': k, 'operator': 'In', 'values': [string({s}[k])]}})"


def _affinity(r: str) -> str:
    """The required node-affinity terms, each a list of requirement maps."""
    path = "affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution"
    parts = f"{r}.spec"
    guards = []
    for p in (*path.split("."), "nodeSelectorTerms"):
        parts = f"{parts}.{p}"
        guards.append(f"has({parts})")
    exprs = ("(has(t.matchExpressions) ? t.matchExpressions : []).map(e, "
             "{'key': has(e.key) ? string(e.key) : '', "
             "'operator': has(e.operator) ? string(e.operator) : '', "
             "'values': has(e.values) ? e.values.map(v, string(v)) : []})")
    return f"({' && '.join(guards)} ? {parts}.map(t, {exprs}) : [])"


# each CPU-only role with what places it: the keys it tolerates, its selector and terms
_JUDGED = ("variables.cpuRoles.map(r, {'role': r, "
           f"'tolerated': variables.keys.filter(k, {_tolerates('r', 'k')}), "
           f"'selector': {_selector('r')}, 'affinity': {_affinity('r')}}})")
_TERMS = ("(size(j.affinity) == 0 ? (size(j.selector) > 0 ? [j.selector] : []) : "
          "j.affinity.map(t, j.selector + t))")
_OFF = (f"variables.judged.filter(j, size(j.tolerated) > 0 || (size({_TERMS}) > 0 && "
        f"{_TERMS}.all(t, t.exists(x, {gpu_label('x')}))))")

_J = "variables.first"
_PICKED = f"{_TERMS.replace('j.', f'{_J}.')}[0].filter(x, {gpu_label('x')})"
_SHOWN = ("(x.operator == 'In' && size(x.values) == 1 ? x.key + '=' + x.values[0] : "
          "x.operator in ['Exists', 'DoesNotExist'] ? x.key + ' ' + x.operator : "
          "x.key + ' ' + x.operator + ' [' + x.values.join(', ') + ']')")
_REASON = (f"(size({_J}.tolerated) > 0 ? 'tolerates the ' + {_J}.tolerated[0] + ' taint (' + "
           f"{_J}.role.path + '.tolerations' : 'requires GPU nodes (' + "
           f"{_PICKED}.map(x, {_SHOWN}).join(', ') + ') (' + {_J}.role.path + "
           f"({_PICKED}.all(x, {_J}.selector.exists(s, s == x)) ? '.nodeSelector' : "
           "'.affinity'))")
_MESSAGE = (
    f"{who(f'{_J}.role')} + ' ' + {_REASON} + ') but asks for no GPU in any container: it can "
    "land on a GPU node and hold it up after the GPU work is done; drop the toleration and GPU "
    "node selector, or give a container the GPU it runs on'")

ADMISSION = AdmissionRule(
    rule_id="k8s-cpu-pods-off-gpu-nodes",
    kinds=tuple(KINDS),
    variables=(
        ("gpus", GPUS),
        ("keys", lines("taintKeys")),
        ("agents", "params.data.allowNodeAgents == 'true' && ("
                   + " || ".join(f"variables.gk == '{g}/{k}'" for g, k in PER_NODE) + ")"),
        ("cpuRoles", f"variables.roles.filter(r, !({role_asks_gpu('r')}))"),
        ("judged", _JUDGED),
        ("off", _OFF),
        ("first", "variables.off[0]"),  # the first offence, for the message only
    ),
    validations=(Validation(
        expression="variables.agents || size(variables.off) == 0",
        message=("k8s-cpu-pods-off-gpu-nodes: a pod that tolerates the GPU taint or requires "
                 "GPU nodes must ask for a GPU"),
        message_expression=f"'k8s-cpu-pods-off-gpu-nodes: ' + {_MESSAGE}"),),
    params=_params,
    compiled=_families,
)

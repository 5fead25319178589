"""k8s-gpu-limits at admission: GPUs in limits, requests (if set) equal, whole counts.

The API server refuses these itself for Pods and built-in pod templates; the policy gives the
same refusal, in the PR check's words, to the custom kinds whose templates it does not
validate as pods (a PyTorchJob's replica specs, a NIMService's resources). No parameters.
"""

from __future__ import annotations

from policies.admission.cel._gpu import GPUS, count_shown, first_gpu, in_side, q, shown, who, whole
from policies.admission.kinds import KINDS, container_name, resources_at
from policies.admission.spec import AdmissionRule, Validation


def _lim(c: str, g: str) -> str:
    return f"{c}.resources.limits[{g}]"


def _req(c: str, g: str) -> str:
    return f"{c}.resources.requests[{g}]"


def _not_whole(c: str, g: str) -> str:
    return (f"(({in_side(c, g, 'limits')} && !{whole(_lim(c, g))}) || "
            f"({in_side(c, g, 'requests')} && !{whole(_req(c, g))}))")


def _requests_only(c: str, g: str) -> str:
    return f"(!{in_side(c, g, 'limits')} && {in_side(c, g, 'requests')})"


def _differ(c: str, g: str) -> str:
    return (f"({in_side(c, g, 'limits')} && {in_side(c, g, 'requests')} && "
            f"{q(_lim(c, g))}.compareTo({q(_req(c, g))}) != 0)")


def _bad(c: str, g: str) -> str:
    return f"({_not_whole(c, g)} || {_requests_only(c, g)} || {_differ(c, g)})"


_R, _C, _G = "variables.firstRole", "variables.firstContainer", "variables.firstGpu"
_AT = "variables.firstWhere"
_WHO = f"{who(_R)} + ': container ' + {container_name(_C, _AT)} + ': '"
_FRACTION = (f"({in_side(_C, _G, 'limits')} && !{whole(_lim(_C, _G))} ? "
             f"{shown(_lim(_C, _G))} : {shown(_req(_C, _G))})")
_MESSAGE = (
    f"{_WHO} + ({_not_whole(_C, _G)} ? {_FRACTION} + ' is not a whole number of GPUs "
    f"(' + {_AT} + ', ' + {_G} + '); Kubernetes rejects it: GPUs are whole devices (share one "
    "with the device plugin\\'s time-slicing or MIG instead)' : "
    f"{_requests_only(_C, _G)} ? {_G} + ' is in ' + {_AT} + '.requests but not in limits; the "
    "API server rejects it (\"Limit must be set for non overcommitable resources\"): set "
    f"limits ' + {_G} + ': ' + {count_shown(_req(_C, _G))} + ' (requests may then be left "
    f"out)' : {_G} + ' requests ' + {count_shown(_req(_C, _G))} + ' ≠ limits ' + "
    f"{count_shown(_lim(_C, _G))} + "
    f"' (' + {_AT} + '); GPUs cannot be overcommitted, so Kubernetes requires them equal: set both "
    "to the same count (or only limits)')")

ADMISSION = AdmissionRule(
    rule_id="k8s-gpu-limits",
    kinds=tuple(KINDS),
    variables=(
        ("gpus", GPUS),
        ("bad", f"variables.roles.filter(r, r.containers.exists(c, variables.gpus.exists(g, "
                f"{_bad('c', 'g')})))"),
        ("firstRole", "variables.bad[0]"),
        ("firstContainer", "variables.firstRole.containers.filter(c, variables.gpus.exists(g, "
                           f"{_bad('c', 'g')}))[0]"),
        ("firstGpu", first_gpu("variables.firstContainer",
                               _bad("variables.firstContainer", "g"))),
        ("firstWhere", resources_at(list(KINDS), _R, _C)),
    ),
    validations=(Validation(
        expression="size(variables.bad) == 0",
        message=("k8s-gpu-limits: GPUs must be set in limits, as whole devices, with requests "
                 "(if set) equal to limits"),
        message_expression=f"'k8s-gpu-limits: ' + {_MESSAGE}"),),
)

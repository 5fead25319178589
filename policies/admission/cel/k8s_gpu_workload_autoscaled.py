"""k8s-gpu-workload-autoscaled at admission: the part decidable on one object.

A kind with its own autoscaler carries the whole verdict in the object: RayCluster and
RayService worker groups (``enableInTreeAutoscaling``, min/max replicas; a head holding GPUs
never scales), KServe InferenceService components (Serverless: Knative from minReplicas to
maxReplicas on concurrency or rps; Standard: an HPA on the component's ``scaleMetric`` and
``autoScaling`` metrics; ``autoscalerClass`` none or external; a ``workerSpec``, multi-node
serving, never scales: KServe refuses an autoscaler for it), LLMInferenceService decode and
prefill pods (``scaling``: the workload variant autoscaler, or KEDA triggers on a GPU metric),
NIMService (the operator's HPA in ``spec.scale``) and each enabled service of a NIMPipeline.
Each GPU role that holds GPUs (the reader's replicas above 0) must have that autoscaler on,
with maxReplicas above minReplicas, on GPU utilisation or load; the message is the PR check's
for the first role that fails.

Only these kinds are matched. A Deployment, StatefulSet, ReplicaSet, ReplicationController or
LeaderWorkerSet is scaled by another object (an HPA or ScaledObject naming it, created before
or after it): that part stays in PR checks and the cluster-dump audit (docs/kubernetes.md), so
a Deployment is never refused at admission for lacking an HPA. Jobs, RayJobs and templates
(LLMInferenceServiceConfig) are out of the rule's scope.

No parameters: the rule has none. What each kind's reader says scales it is compiled into the
messages when the policy is rendered.
"""

from __future__ import annotations

from typing import Final

from policies.admission.cel._gpu import GPUS, role_asks_gpu
from policies.admission.cel._scalers import KSERVE, kserve, llm, nim, nim_pipeline, ray
from policies.admission.spec import AdmissionRule, Validation
from policies.facts.k8s.readers.kserve import COMPONENTS

RULE_ID: Final = "k8s-gpu-workload-autoscaled"

# (API group, kind) → its roles as units (policies/admission/cel/_scalers.py), one CEL
# variable per part (each expression stays small: cel-go parses at most 100,000 code points)
UNITS: Final[dict[tuple[str, str], tuple[tuple[str, str], ...]]] = {
    ("ray.io", "RayCluster"): (("rayCluster", ray("RayCluster", "spec")),),
    ("ray.io", "RayService"): (("rayService", ray("RayService", "spec.rayClusterConfig")),),
    ("serving.kserve.io", "InferenceService"): tuple((c, kserve(c)) for c in COMPONENTS),
    ("serving.kserve.io", "LLMInferenceService"): (("decode", llm("spec", "decode")),
                                                   ("prefill", llm("spec.prefill", "prefill"))),
    ("apps.nvidia.com", "NIMService"): (("nimService", nim()),),
    ("apps.nvidia.com", "NIMPipeline"): (("nimPipeline", nim_pipeline()),),
}


def _parts() -> tuple[tuple[str, str], ...]:
    """Each part's variable, evaluated only for its own kind."""
    return tuple((name, f"variables.gk == '{group}/{kind}' ? ({cel}) : []")
                 for (group, kind), parts in UNITS.items() for name, cel in parts)


def _chain() -> str:
    out = "[]"
    for (group, kind), parts in reversed(UNITS.items()):
        joined = " + ".join(f"variables.{name}" for name, _ in parts)
        out = f"variables.gk == '{group}/{kind}' ? ({joined}) : ({out})"
    return out


_HOLDS = f"!u.parked && u.msg != '' && {role_asks_gpu('u')}"

ADMISSION = AdmissionRule(
    rule_id=RULE_ID,
    kinds=tuple(UNITS),
    variables=(
        ("gpus", GPUS),
        *KSERVE,
        *_parts(),
        ("units", _chain()),
        # as the rule reports them: the own autoscalers' findings, then the roles nothing scales
        ("found", f"variables.units.filter(u, u.own && {_HOLDS}).map(u, u.msg) + "
                  f"variables.units.filter(u, !u.own && {_HOLDS}).map(u, u.msg)"),
    ),
    validations=(Validation(
        expression="size(variables.found) == 0",
        message=(f"{RULE_ID}: a GPU role of a kind with its own autoscaler (Ray worker groups, "
                 "KServe components, LLMInferenceService, NIMService, NIMPipeline) has it on, with "
                 "maxReplicas above minReplicas, on GPU utilisation or load"),
        message_expression=f"'{RULE_ID}: ' + variables.found[0]"),),
    uses_roles=False,
)

"""Kubeflow's training jobs (``kubeflow.org``): PyTorchJob, TFJob, MPIJob, PaddleJob,
XGBoostJob, JAXJob and MXJob — one role per replica spec (``Master``, ``Worker``, ``PS``, …)."""

from __future__ import annotations

from policies.facts.k8s.autoscalers import texts
from policies.facts.k8s.objects import K8sObject
from policies.facts.k8s.readers._base import (
    Reader,
    count_at,
    deadline_at,
    range_at,
    spec_of,
    template_role,
)
from policies.facts.k8s.workload import Autoscaler, Lifecycle, Role, Workload
from policies.facts.values import block, is_map
from policies.model import UNKNOWN

TYPE_CHECKING = False  # typing's, without importing typing (not on a check's path)
if TYPE_CHECKING:
    from typing import Final

# kind → its replica specs key (snake_case, as normalised: pytorchReplicaSpecs → …)
REPLICA_SPECS: Final = {
    "PyTorchJob": "pytorch_replica_specs", "TFJob": "tf_replica_specs",
    "MPIJob": "mpi_replica_specs", "PaddleJob": "paddle_replica_specs",
    "XGBoostJob": "xgb_replica_specs", "JAXJob": "jax_replica_specs",
    "MXJob": "mx_replica_specs",
}


def _job(obj: K8sObject) -> Workload:
    spec = spec_of(obj)
    key = REPLICA_SPECS[obj.kind]
    base = f"spec.{key}"
    specs = block(spec.get(key))
    run_policy = block(spec.get("run_policy"))
    deadline = deadline_at(run_policy if run_policy is not UNKNOWN else {},
                           "active_deadline_seconds", "spec.run_policy.active_deadline_seconds")
    if specs is UNKNOWN or run_policy is UNKNOWN:
        return Workload(obj, "kubeflow", Lifecycle.BATCH, deadlines=(deadline,),
                        unknown=f"{key if specs is UNKNOWN else 'run_policy'} unknown until apply")
    elastic = _elastic(spec) if obj.kind == "PyTorchJob" else None
    roles: list[Role] = []
    for name, rs in (specs or {}).items():
        path = f"{base}.{name}"
        if rs is UNKNOWN:
            roles.append(template_role(str(name), UNKNOWN, path))
            continue
        if not is_map(rs):
            continue
        replicas = count_at(rs, "replicas", f"{path}.replicas")
        roles.append(template_role(str(name), rs.get("template"), f"{path}.template", replicas,
                                   elastic if name == "Worker" else None))
    return Workload(obj, "kubeflow", Lifecycle.BATCH, tuple(roles), (deadline,))


def _elastic(spec: dict[str, object]) -> Autoscaler | None:
    """A PyTorchJob's elasticPolicy: the training operator scales its workers with an HPA."""
    policy = block(spec.get("elastic_policy"))
    if policy is None:
        return None
    if policy is UNKNOWN:
        return Autoscaler("PyTorchJob elasticPolicy", UNKNOWN, "spec.elastic_policy", None, None)
    bounds = range_at(policy, "min_replicas", "max_replicas", "spec.elastic_policy", None, None)
    return Autoscaler("PyTorchJob elasticPolicy", True, "spec.elastic_policy", bounds.min,
                      bounds.max, tuple(texts(policy.get("metrics"))), on_load=False)


READERS = (
    Reader("kubeflow", tuple(("kubeflow.org", k) for k in REPLICA_SPECS), Lifecycle.BATCH, _job,
           "spec.<framework>ReplicaSpecs.<role>.template, one role per replica spec; its "
           "replicas (default 1)",
           "out of scope (runs to completion); a PyTorchJob's elasticPolicy is recorded",
           "spec.runPolicy.activeDeadlineSeconds"),
)

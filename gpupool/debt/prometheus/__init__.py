"""Kubernetes and on-premises GPU pools from Prometheus: DCGM exporter and kube-state-metrics.

``gpupool debt --prometheus URL`` (and the Kubernetes pools of ``--stack``) read, through the
Prometheus HTTP API (Thanos and Mimir speak the same one):

- use: ``DCGM_FI_DEV_GPU_UTIL`` per GPU, and ``DCGM_FI_PROF_GR_ENGINE_ACTIVE`` where present
  (the better measure, and the only one MIG instances have), with the exporter's pod labels;
- allocation: ``kube_pod_container_resource_requests`` of running pods (``nvidia_com_gpu``,
  its time-sliced and MIG forms);
- capacity: ``kube_node_status_allocatable``, the nodes' instance type (catalog price) or the
  pool's ``gpuHourlyCost`` (on-premises);
- teams: the chargeback labels of namespaces (``kube_namespace_labels``).

Modules by job: ``sources`` (which Prometheus, for which pools), ``auth`` (bearer, basic, CA,
SigV4), ``client`` (the HTTP API: timeouts, retries, the deadline), ``queries`` (the PromQL and
how many queries a read takes), ``series`` (the answers, parsed), ``slots`` (what share of a GPU
a time slice or a MIG instance is), ``attribution`` (one node's bucket: who used what),
``pools`` (the report model's pools, lines and pods) and ``read`` (all of it, per source).
"""

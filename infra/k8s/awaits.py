"""How long ``pulumi up`` waits for each kind the pool declares (pulumi-kubernetes' await logic).

pulumi-kubernetes waits, by default up to 10 minutes and then fails the update, for a Deployment
to have its replicas available, a Job to complete, a DaemonSet to roll out and a Service to have
endpoints (ready pods behind its selector); it does not wait on Namespaces, quotas, RBAC,
ConfigMaps, NetworkPolicies or custom resources. Per kind, the pool:

- **Job**: ``pulumi.com/skipAwait: "true"``. A batch Job's completion is the work's outcome, not
  the deployment's: a training or evaluation run takes hours, and waiting would fail every update
  at 10 minutes.
- **Deployment** (inference, remote-GPU proxy) and its **Service**: awaited, with
  ``customTimeouts`` of the workload's ``readyTimeoutMinutes`` (default 30): a first GPU node to
  launch, a multi-GB image to pull and a model to load outlast 10 minutes, and a rollout that
  never gets ready (bad image, missing model repository) should fail ``pulumi up``, not pass it.
  Readiness is reachable: a readiness probe when the workload names one, else a running container.
- **DaemonSet** (device plugin, DCGM exporter): awaited with the default: on nodes that exist
  they run within a minute or two; with no GPU node yet (Karpenter before its first node) there is
  nothing to wait for.
- the **DCGM exporter's Service**: ``skipAwait``: it has endpoints only once a GPU node runs the
  exporter, which a pool scaled to zero (or a cluster whose GPU nodes are not labelled yet) may
  never have during an update; Prometheus finds the endpoints as they come.
"""

from __future__ import annotations

from typing import Final

import pulumi

SKIP_AWAIT: Final = {"pulumi.com/skipAwait": "true"}


def ready_within(minutes: int) -> pulumi.ResourceOptions:
    """Await creation and updates for ``minutes`` (pulumi-kubernetes reads customTimeouts)."""
    limit = f"{minutes}m"
    return pulumi.ResourceOptions(custom_timeouts=pulumi.CustomTimeouts(create=limit,
                                                                        update=limit))

"""How clients find a tier's proxies: a Cloud Map private DNS namespace, one A record per proxy.

Why Cloud Map, not a hand-kept Route 53 record: each proxy registers *itself* (its own IP, its
own instance id) with ``RegisterInstance`` and Cloud Map writes the records, so instances that
start together never race on one shared record set, and a proxy may only touch its own tier's
service (the role's policy names that service and its namespace's hosted zone, nothing else).
Clients need no SDK and no permission: ``proxy.<tier>.<stack>.gpupool.internal`` resolves, inside
the VPC only, to every registered proxy (multivalue answer, 10 s TTL). A load balancer would do
the finding too, but it would sit in the data path of every synchronous call.

Registration happens on every start of the proxy's discovery unit (a systemd service enabled
by the boot script), not once from user data: an orderly reboot stops the unit, which
deregisters the proxy, and the next boot starts it again, which registers it again. Cloud-init
runs user data once per instance, so a registration there alone would leave a rebooted proxy out
of Cloud Map for good. Deregistration: the group's termination lifecycle hook holds a
terminating proxy for up to a minute, during which the instance metadata's
``autoscaling/target-lifecycle-state`` reads ``Terminated``; the unit's watcher deregisters then
(and the unit's stop, on any orderly shutdown). A proxy that dies abruptly leaves a stale record
that nothing here removes (deregister it by hand or from a reconciliation of your own); clients
retry the next address (the records are several).
"""

from __future__ import annotations

import json
import re
from typing import Any, Final

SERVICE_NAME: Final = "proxy"
RECORD_TTL_SECONDS: Final = 10
HOOK_NAME: Final = "gpupool-deregister"
HOOK_TIMEOUT_SECONDS: Final = 60
WATCHER: Final = "/usr/local/sbin/gpupool-discovery"
UNIT: Final = "/etc/systemd/system/gpupool-discovery.service"
_LABEL = re.compile(r"[^a-z0-9-]+")


def namespace_name(tier: str, stack: str) -> str:
    """``<tier>.<stack>.gpupool.internal``, each label made a valid DNS label."""
    labels = [(_LABEL.sub("-", part.lower()).strip("-") or "x")[:63] for part in (tier, stack)]
    return ".".join([*labels, "gpupool", "internal"])


def watcher(region: str, service_id: str, port: int) -> str:
    """The proxy's own discovery script: ``register``, ``deregister``, or ``watch`` (poll the
    instance metadata's lifecycle state; deregister once the group terminates the proxy)."""
    call = f"aws servicediscovery --region {region}"
    return f"""#!/bin/bash
set -u
IMDS="${{GPUPOOL_IMDS:-http://169.254.169.254/latest}}"  # overridable for tests only
imds() {{
  local token
  token=$(curl -fsS -X PUT "$IMDS/api/token" -H "X-aws-ec2-metadata-token-ttl-seconds: 60") &&
    curl -fsS -H "X-aws-ec2-metadata-token: $token" "$IMDS/meta-data/$1"
}}
id=$(imds instance-id) || exit 1
case "${{1:-watch}}" in
  register)
    {call} register-instance --service-id {service_id} --instance-id "$id" \\
      --attributes "AWS_INSTANCE_IPV4=$(imds local-ipv4),AWS_INSTANCE_PORT={port}" ;;
  deregister)
    {call} deregister-instance --service-id {service_id} --instance-id "$id" || true ;;
  watch)
    while sleep "${{GPUPOOL_DISCOVERY_INTERVAL:-5}}"; do
      if [ "$(imds autoscaling/target-lifecycle-state)" = "Terminated" ]; then
        exec "$0" deregister
      fi
    done ;;
  *) echo "usage: $0 register|deregister|watch" >&2; exit 2 ;;
esac
"""


def unit(watcher_path: str = WATCHER) -> str:
    """The proxy's discovery service: every start registers (``ExecStartPre``: a failed
    registration fails the start, and systemd retries it), the watcher runs while the proxy
    lives, and every stop deregisters. Enabled for ``multi-user.target``, so a reboot starts it
    again."""
    return f"""[Unit]
Description=gpupool: this proxy's Cloud Map registration (registered while it runs)
Wants=network-online.target
After=network-online.target
StartLimitIntervalSec=0

[Service]
Type=simple
ExecStartPre={watcher_path} register
ExecStart={watcher_path} watch
ExecStop={watcher_path} deregister
Restart=on-failure
RestartSec=10

[Install]
WantedBy=multi-user.target
"""


def register_script(region: str, service_id: str, port: int) -> str:
    """Boot-script part: install the watcher and its unit, and start the unit (which
    registers the proxy, now and on every later boot)."""
    return f"""
# gpupool: register this proxy in Cloud Map (service {service_id}) whenever it runs.
command -v aws >/dev/null || {{ echo "gpupool: the AWS CLI is missing" >&2; exit 1; }}
cat > {WATCHER} <<'GPUPOOL_DISCOVERY'
{watcher(region, service_id, port)}GPUPOOL_DISCOVERY
chmod 0755 {WATCHER}
cat > {UNIT} <<'GPUPOOL_UNIT'
{unit()}GPUPOOL_UNIT
systemctl daemon-reload
systemctl enable --now gpupool-discovery.service
"""


def role_policy(partition: str, service_arn: str, hosted_zone_id: str) -> str:
    """What a proxy may do in Cloud Map: (de)register in its own service, whose records Cloud
    Map writes, with the caller's identity, into its namespace's hosted zone. AWS's permissions
    reference also lists Route 53 health-check actions for these calls; they are used only for
    services with a Route 53 health check, which this one does not configure, so none is
    granted."""
    doc: dict[str, Any] = {
        "Version": "2012-10-17",
        "Statement": [
            {
                "Sid": "RegisterInItsOwnService",
                "Effect": "Allow",
                "Action": ["servicediscovery:RegisterInstance",
                           "servicediscovery:DeregisterInstance"],
                "Resource": service_arn,
            },
            {
                "Sid": "RecordsInItsOwnZone",
                "Effect": "Allow",
                "Action": ["route53:ChangeResourceRecordSets", "route53:GetHostedZone"],
                "Resource": f"arn:{partition}:route53:::hostedzone/{hosted_zone_id}",
            },
        ],
    }
    return json.dumps(doc, sort_keys=True)

"""Issue 16 item 19: what a remote-GPU tier's group does over its life, as a real ``pulumi up``
would leave it (Pulumi mock runtime, the offline runner).

- ``scaleInProtection`` on a tier was accepted by ``validate`` and ignored by the program. Proxies
  hold their clients' GPU state, so a tier may ask for it as a training pool does: proxies
  launch protected, install ``gpupool-scale-in-protection`` (tests/infra/
  test_scale_in_protection_helper.py runs it), may set protection on their own group only, and
  reach Auto Scaling through the VPC's ``autoscaling`` endpoint.
- The termination lifecycle hook (the discovery watcher's minute to deregister) was the group's
  ``initialLifecycleHooks``, which AWS and the provider apply only when the group is created: a
  tier whose group already existed never got it. It is an ``aws.autoscaling.LifecycleHook`` of
  its own, linked to the group.
"""

from __future__ import annotations

import base64
import json
from pathlib import Path

from gpupool.config import load_stack
from infra.aws import protection
from infra.offline import run_offline

from .test_remote_gpu import ASG, HOOK, LT, ROLE_POLICY, children, named, write

TIER = """    - name: decode
      gpu: T4
      minSize: 1
      maxSize: 4
      port: 18515
      budget: {minGbps: 1, maxRttUs: 100}
"""


def test_a_tier_asking_for_scale_in_protection_gets_it(tmp_path: Path) -> None:
    plan = run_offline(load_stack(str(write(tmp_path, TIER + "      scaleInProtection: true\n"))))
    kids = children(plan, "t", "decode")
    asg = named(kids, ASG, "t-decode-asg")
    assert asg.inputs["protectFromScaleIn"] is True
    refresh = asg.inputs["instanceRefresh"]["preferences"]
    assert refresh["scaleInProtectedInstances"] == "Ignore"  # a refresh leaves busy proxies be
    script = base64.b64decode(named(kids, LT, "t-decode-lt").inputs["userData"]).decode()
    assert f"cat > {protection.PROTECTION_HELPER} <<" in script
    assert "register-instance" in script  # discovery stays
    (release,) = [p for p in kids[ROLE_POLICY] if p.name == "t-decode-scale-in-protection"]
    statements = json.loads(release.inputs["policy"])["Statement"]
    assert statements[0]["Action"] == ["autoscaling:SetInstanceProtection"]
    assert release.property_dependencies["policy"] == (asg.urn,)  # its own group's ARN only
    endpoints = {e.inputs["serviceName"] for e in plan.of_type("aws:ec2/vpcEndpoint:VpcEndpoint")}
    assert "com.amazonaws.us-east-1.autoscaling" in endpoints


def test_an_unprotected_tier_stays_unprotected(tmp_path: Path) -> None:
    plan = run_offline(load_stack(str(write(tmp_path, TIER))))
    kids = children(plan, "t", "decode")
    assert named(kids, ASG, "t-decode-asg").inputs["protectFromScaleIn"] is False
    assert [p.name for p in kids[ROLE_POLICY]] == ["t-decode-discovery"]
    endpoints = {e.inputs["serviceName"] for e in plan.of_type("aws:ec2/vpcEndpoint:VpcEndpoint")}
    assert "com.amazonaws.us-east-1.autoscaling" not in endpoints


def test_the_termination_hook_is_its_own_resource_on_the_group(tmp_path: Path) -> None:
    plan = run_offline(load_stack(str(write(tmp_path, TIER))))
    kids = children(plan, "t", "decode")
    asg = named(kids, ASG, "t-decode-asg")
    assert "initialLifecycleHooks" not in asg.inputs  # applied at creation only
    (hook,) = kids[HOOK]
    assert hook.property_dependencies["autoscalingGroupName"] == (asg.urn,)
    assert hook.inputs["lifecycleTransition"] == "autoscaling:EC2_INSTANCE_TERMINATING"
    assert hook.inputs["defaultResult"] == "CONTINUE" and hook.inputs["heartbeatTimeout"] == 60

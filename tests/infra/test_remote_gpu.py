"""Every resource a remote-GPU tier declares (Pulumi mock runtime, the kit's own staging and prod
stacks plus a few made here), the inputs the policies and its clients rely on, and the proxy's
discovery script run against a fake instance metadata service."""

from __future__ import annotations

import base64
import json
import os
import subprocess
import threading
from collections import Counter
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest

from gpupool.catalog import load_catalog
from gpupool.config import LoadedStack, load_stack
from gpupool.record import replace
from gpupool.tags import CLIENTS_TAG, MAX_RTT_TAG, MIN_GBPS_TAG
from infra.aws import discovery
from infra.aws.remote_gpu import (
    CLIENT_AMI_PARAMETERS,
    RemoteGpuTier,
    RemoteGpuTierArgs,
    TierRefused,
)
from infra.offline import OfflinePlan, PlannedResource, load_fixture, run_offline
from infra.offline.runner import project_name, run_program, stack_program

from .conftest import ROOT

TIER = "gpupool:aws:RemoteGpuTier"
LT = "aws:ec2/launchTemplate:LaunchTemplate"
ASG = "aws:autoscaling/group:Group"
POLICY = "aws:autoscaling/policy:Policy"
SG = "aws:ec2/securityGroup:SecurityGroup"
PG = "aws:ec2/placementGroup:PlacementGroup"
EGRESS = "aws:vpc/securityGroupEgressRule:SecurityGroupEgressRule"
INGRESS = "aws:vpc/securityGroupIngressRule:SecurityGroupIngressRule"
NAMESPACE = "aws:servicediscovery/privateDnsNamespace:PrivateDnsNamespace"
SERVICE = "aws:servicediscovery/service:Service"
ROLE_POLICY = "aws:iam/rolePolicy:RolePolicy"
SUBNET = "aws:ec2/subnet:Subnet"
HOOK = "aws:autoscaling/lifecycleHook:LifecycleHook"


def children(plan: OfflinePlan, stack: str, tier: str) -> dict[str, list[PlannedResource]]:
    component = plan.by_urn()[f"urn:pulumi:{stack}::gpupool::{TIER}::{stack}-{tier}"]
    out: dict[str, list[PlannedResource]] = {}
    for r in plan.children(component.urn):
        out.setdefault(r.type, []).append(r)
    return out


def named(kids: dict[str, list[PlannedResource]], type_: str, name: str) -> PlannedResource:
    (found,) = [r for r in kids[type_] if r.name == name]
    return found


@pytest.fixture(scope="module")
def staging(stack_plans: dict[str, tuple[LoadedStack, OfflinePlan]]
            ) -> tuple[LoadedStack, OfflinePlan, dict[str, list[PlannedResource]]]:
    loaded, plan = stack_plans["staging"]
    return loaded, plan, children(plan, "staging", "embeddings")


@pytest.fixture(scope="module")
def prod(stack_plans: dict[str, tuple[LoadedStack, OfflinePlan]]
         ) -> tuple[LoadedStack, OfflinePlan, dict[str, list[PlannedResource]]]:
    loaded, plan = stack_plans["prod"]
    return loaded, plan, children(plan, "prod", "llm-decode")


def test_tier_declares_exactly_these_resources(staging: Any, prod: Any) -> None:
    base = {PG: 1, SG: 2, LT: 1, ASG: 1, POLICY: 1, NAMESPACE: 1, SERVICE: 1, ROLE_POLICY: 1,
            "aws:iam/role:Role": 1, "aws:iam/instanceProfile:InstanceProfile": 1,
            "aws:iam/rolePolicyAttachment:RolePolicyAttachment": 2,
            HOOK: 1, INGRESS: 2,  # from-clients + into-endpoints
            EGRESS: 3}  # to-proxies, endpoints, S3
    # the client group adds its template, group, profile and HTTPS to the endpoints
    clients = {LT: 1, ASG: 1, "aws:iam/role:Role": 1, "aws:iam/instanceProfile:InstanceProfile": 1,
               "aws:iam/rolePolicyAttachment:RolePolicyAttachment": 1, INGRESS: 1, EGRESS: 2}
    for _, _, kids in (staging, prod):  # both run their clients in the tier's placement group
        assert Counter({t: len(rs) for t, rs in kids.items()}) == Counter(base) + Counter(clients)


def test_least_privilege_roles_for_proxies_and_clients(staging: Any) -> None:
    """Proxies run the CloudWatch agent and SSM; clients run no agent the kit installs, so
    their role holds Session Manager's policy only (and no inline policy)."""
    _, _, kids = staging
    roles = {r.name: r.urn for r in kids["aws:iam/role:Role"]}
    policies: dict[str, set[str]] = {}
    for att in kids["aws:iam/rolePolicyAttachment:RolePolicyAttachment"]:
        (role,) = att.property_dependencies["role"]
        policies.setdefault(role, set()).add(att.inputs["policyArn"].rpartition("/")[2])
    assert policies == {
        roles["staging-embeddings-role"]: {"CloudWatchAgentServerPolicy",
                                           "AmazonSSMManagedInstanceCore"},
        roles["staging-embeddings-client-role"]: {"AmazonSSMManagedInstanceCore"},
    }
    (inline,) = kids[ROLE_POLICY]  # the proxies' own Cloud Map service, nothing for clients
    assert inline.property_dependencies["role"] == (roles["staging-embeddings-role"],)


def test_proxies_and_clients_share_one_cluster_placement_group_and_one_subnet(
        staging: Any) -> None:
    _, plan, kids = staging
    (pg,) = kids[PG]
    assert pg.inputs["strategy"] == "cluster"
    subnets = sorted(plan.of_type(SUBNET), key=lambda s: s.inputs["availabilityZone"])
    first = next(s for s in plan.of_type(SUBNET) if s.name.endswith(
        subnets[0].inputs["availabilityZone"]))
    for lt_name, asg_name in (("staging-embeddings-lt", "staging-embeddings-asg"),
                              ("staging-embeddings-client-lt", "staging-embeddings-client-asg")):
        lt, asg = named(kids, LT, lt_name), named(kids, ASG, asg_name)
        assert lt.property_dependencies["placement"] == (pg.urn,)
        assert lt.inputs["placement"]["groupName"].startswith("staging-embeddings-pg-")
        assert len(asg.inputs["vpcZoneIdentifiers"]) == 1
        assert asg.property_dependencies["vpcZoneIdentifiers"] == (first.urn,)


def test_proxies_admit_the_remoting_port_from_the_client_group_only(staging: Any) -> None:
    loaded, _, kids = staging
    tier = loaded.config.remote_gpu[0]
    proxy_sg, client_sg = named(kids, SG, "staging-embeddings-sg"), named(
        kids, SG, "staging-embeddings-clients")
    into_proxies = [r for r in kids[INGRESS]
                    if r.property_dependencies["securityGroupId"] == (proxy_sg.urn,)]
    (rule,) = into_proxies
    assert (rule.inputs["ipProtocol"], rule.inputs["fromPort"], rule.inputs["toPort"]) == (
        "tcp", tier.port, tier.port)
    assert rule.property_dependencies["referencedSecurityGroupId"] == (client_sg.urn,)
    assert "cidrIpv4" not in rule.inputs and "cidrIpv6" not in rule.inputs
    out = named(kids, EGRESS, "staging-embeddings-clients-to-proxies")
    assert out.inputs["fromPort"] == tier.port
    assert out.property_dependencies["referencedSecurityGroupId"] == (proxy_sg.urn,)
    assert "ingress" not in proxy_sg.inputs  # no inline rules that could open it
    text = json.dumps([r.inputs for rs in kids.values() for r in rs])
    assert "0.0.0.0/0" not in text and "::/0" not in text
    assert not [t for t in kids if "lb/" in t or "elb" in t or "eip" in t.lower()]


@pytest.mark.parametrize("lt_name", ["staging-embeddings-lt", "staging-embeddings-client-lt"])
def test_hardening_as_in_gpu_pool(staging: Any, lt_name: str) -> None:
    loaded, _, kids = staging
    lt = named(kids, LT, lt_name).inputs
    assert lt["metadataOptions"]["httpTokens"] == "required"
    (root,) = lt["blockDeviceMappings"]
    assert root["ebs"]["encrypted"] == "true" and root["ebs"]["volumeType"] == "gp3"
    (nic,) = lt["networkInterfaces"]
    assert nic["associatePublicIpAddress"] == "false"
    assert "keyName" not in lt
    ssm = load_fixture(loaded.config.region).table("ssmParameters")
    if "client" in lt_name:
        assert lt["imageId"] == ssm[CLIENT_AMI_PARAMETERS["x86_64"]]["value"]
        assert lt["instanceType"] == "c6in.xlarge"
    else:
        assert lt["instanceType"] == "g4dn.xlarge"


def test_roles_and_budget_tags_on_groups_templates_and_instances(staging: Any) -> None:
    loaded, _, kids = staging
    resolved = loaded.tiers["embeddings"]
    budget = {MIN_GBPS_TAG: "3.75", MAX_RTT_TAG: "43.3", CLIENTS_TAG: "in-group"}
    assert resolved.budget_tags() == budget
    for prefix, role in (("staging-embeddings", "gpu-proxy"),
                         ("staging-embeddings-client", "gpu-client")):
        lt, asg = named(kids, LT, f"{prefix}-lt").inputs, named(kids, ASG, f"{prefix}-asg").inputs
        group_tags = {t["key"]: t for t in asg["tags"]}
        instance_tags = {s["resourceType"]: s["tags"] for s in lt["tagSpecifications"]}
        for tags in (lt["tags"], instance_tags["instance"],
                     {k: t["value"] for k, t in group_tags.items()}):
            assert tags["gpupool:role"] == role and tags["gpupool:tier"] == "embeddings"
            assert tags["team"] == "ml-platform" and tags["environment"] == "staging"
            if role == "gpu-proxy":
                assert budget.items() <= tags.items()
            else:
                assert MIN_GBPS_TAG not in tags and CLIENTS_TAG not in tags
        assert all(t["propagateAtLaunch"] for t in group_tags.values())


def test_bandwidth_sized_proxy_in_prod(prod: Any) -> None:
    loaded, _, kids = prod
    lt = named(kids, LT, "prod-llm-decode-lt").inputs
    assert lt["instanceType"] == "g4dn.2xlarge"
    assert "bandwidth, not GPU" in lt["description"]
    asg = named(kids, ASG, "prod-llm-decode-asg").inputs
    assert asg["mixedInstancesPolicy"]["launchTemplate"]["overrides"] == [
        {"instanceType": "g4dn.2xlarge"}]
    assert loaded.tiers["llm-decode"].budget_tags() == {
        MIN_GBPS_TAG: "6.4", MAX_RTT_TAG: "41.7", CLIENTS_TAG: "in-group"}
    # issue 16 item 16: 6.4 Gbps needs the 10 Gbps per flow of one cluster placement group, so
    # prod's decoding services run in the tier's client group, in the proxies' group
    client = named(kids, LT, "prod-llm-decode-client-lt").inputs
    assert client["instanceType"] == "c6in.2xlarge"
    assert client["placement"] == lt["placement"]
    assert lt["tags"][CLIENTS_TAG] == "in-group"


def test_telemetry_and_scaling_as_in_gpu_pool(prod: Any) -> None:
    _, _, kids = prod
    (policy,) = kids[POLICY]
    asg = named(kids, ASG, "prod-llm-decode-asg")
    assert policy.property_dependencies["autoscalingGroupName"] == (asg.urn,)
    ttc = policy.inputs["targetTrackingConfiguration"]
    assert ttc["customizedMetricSpecification"]["metricName"] == "nvidia_smi_utilization_gpu"
    assert ttc["targetValue"] == 70
    script = base64.b64decode(named(kids, LT, "prod-llm-decode-lt").inputs["userData"]).decode()
    assert '"nvidia_gpu"' in script and "AutoScalingGroupName" in script
    syntax = subprocess.run(["bash", "-n"], input=script, text=True, capture_output=True)
    assert syntax.returncode == 0, syntax.stderr


def test_discovery_namespace_service_policy_and_registration(prod: Any) -> None:
    _, plan, kids = prod
    (ns,) = kids[NAMESPACE]
    (svc,) = kids[SERVICE]
    assert ns.inputs["name"] == "llm-decode.prod.gpupool.internal"
    (vpc,) = plan.of_type("aws:ec2/vpc:Vpc")
    assert ns.property_dependencies["vpc"] == (vpc.urn,)
    dns = svc.inputs["dnsConfig"]
    assert dns["routingPolicy"] == "MULTIVALUE"
    assert dns["dnsRecords"] == [{"ttl": 10, "type": "A"}]
    assert svc.property_dependencies["namespaceId"] == (ns.urn,)
    (policy,) = kids[ROLE_POLICY]
    doc = json.loads(policy.inputs["policy"])
    resources = {s["Resource"] for s in doc["Statement"]}
    assert all(":servicediscovery:" in r or ":route53:::hostedzone/Z" in r for r in resources)
    assert not any("*" in r for r in resources)
    assert set(policy.property_dependencies["policy"]) == {ns.urn, svc.urn}
    lt = named(kids, LT, "prod-llm-decode-lt")
    script = base64.b64decode(lt.inputs["userData"]).decode()
    assert "--service-id srv-" in script and "AWS_INSTANCE_PORT=18515" in script
    assert lt.property_dependencies["userData"] == (svc.urn,)
    (hook,) = kids[HOOK]  # its own resource (tests/infra/test_remote_gpu_lifecycle.py)
    assert {k: v for k, v in hook.inputs.items() if k != "autoscalingGroupName"} == {
        "name": "gpupool-deregister", "defaultResult": "CONTINUE", "heartbeatTimeout": 60,
        "lifecycleTransition": "autoscaling:EC2_INSTANCE_TERMINATING"}
    assert plan.outputs["remoteGpu"]["llm-decode"]["endpoint"] == (
        "proxy.llm-decode.prod.gpupool.internal")
    endpoints = {e.inputs["serviceName"] for e in plan.of_type(
        "aws:ec2/vpcEndpoint:VpcEndpoint")}
    assert "com.amazonaws.us-east-1.servicediscovery" in endpoints


@pytest.mark.parametrize("stack", ["staging", "prod"])
def test_proxies_and_clients_wait_for_every_vpc_endpoint(stack: str) -> None:
    """As pools do: a proxy registers with Cloud Map and reports GPU figures at boot, through
    the endpoints; one that boots first fails its registration and publishes nothing."""
    loaded = load_stack(str(ROOT / "stacks" / f"Pulumi.{stack}.yaml"))
    recording = run_program(stack_program(loaded), project=project_name(loaded.path),
                            stack=loaded.name, fixture=load_fixture("us-east-1"),
                            config=loaded.flat)
    regs = {r.urn: r for r in recording.registrations}
    endpoints = {u for u, r in regs.items() if r.type == "aws:ec2/vpcEndpoint:VpcEndpoint"}
    assert any(regs[u].inputs["serviceName"].endswith(".servicediscovery") for u in endpoints)
    groups = [r for r in regs.values() if r.type == ASG and TIER in r.urn]
    assert len(groups) == 2  # both tiers run a client group
    for group in groups:
        assert endpoints <= set(group.dependencies), group.urn


# --------------------------------------------------------------------------- made here


def write(tmp_path: Path, tier: str, network: str = "createVpc: true") -> Path:
    path = tmp_path / "Pulumi.t.yaml"
    path.write_text(f"""config:
  aws:region: us-east-1
  gpupool:environment: test
  gpupool:team: vision
  gpupool:costCenter: cc-7
  gpupool:network: {{{network}}}
  gpupool:pools: [{{name: small, gpu: T4, minSize: 1, maxSize: 1}}]
  gpupool:remoteGpu:
{tier}""")
    return path


def test_ena_express_where_both_ends_support_it(tmp_path: Path) -> None:
    loaded = load_stack(str(write(tmp_path, """    - name: h100
      gpu: H100
      minSize: 1
      maxSize: 2
      port: 18515
      budget: {minGbps: 20, maxRttUs: 100}
      clients: {instanceType: c6in.8xlarge, maxSize: 1}
""")))
    plan = run_offline(loaded)
    kids = children(plan, "t", "h100")
    for name in ("t-h100-lt", "t-h100-client-lt"):
        (nic,) = named(kids, LT, name).inputs["networkInterfaces"]
        assert nic["enaSrdSpecification"] == {
            "enaSrdEnabled": True, "enaSrdUdpSpecification": {"enaSrdUdpEnabled": True}}
    assert named(kids, LT, "t-h100-lt").inputs["instanceType"] == "p5.4xlarge"


def test_existing_vpc_tier_keeps_to_the_subnet_it_names(tmp_path: Path) -> None:
    network = ("vpcId: vpc-0123456789abcdef0, "
               "subnetIds: [subnet-0aaaaaaaaaaaaaaa1, subnet-0bbbbbbbbbbbbbbb2]")
    loaded = load_stack(str(write(tmp_path, """    - name: near
      gpu: T4
      maxSize: 2
      minSize: 1
      port: 18515
      subnetId: subnet-0bbbbbbbbbbbbbbb2
      budget: {minGbps: 1, maxRttUs: 100}
""", network)))
    kids = children(run_offline(loaded), "t", "near")
    asg = named(kids, ASG, "t-near-asg").inputs
    assert asg["vpcZoneIdentifiers"] == ["subnet-0bbbbbbbbbbbbbbb2"]
    (nic,) = named(kids, LT, "t-near-lt").inputs["networkInterfaces"]
    assert "enaSrdSpecification" not in nic  # g4dn does not support ENA Express
    # no client group: only the proxies' template and group, their clients taken to be outside
    assert [r.name for r in kids[LT]] == ["t-near-lt"] and len(kids[ASG]) == 1
    assert named(kids, LT, "t-near-lt").inputs["tags"][CLIENTS_TAG] == "outside"
    assert {t["key"]: t["value"] for t in asg["tags"]}[CLIENTS_TAG] == "outside"


def test_tier_refuses_a_size_its_budget_does_not_justify(
        stack_plans: dict[str, tuple[LoadedStack, OfflinePlan]]) -> None:
    loaded, _ = stack_plans["prod"]
    resolved = loaded.tiers["llm-decode"]
    bigger = replace(resolved, proxy=load_catalog().get("g4dn.4xlarge"))  # type: ignore[arg-type]
    args = RemoteGpuTierArgs(tier=loaded.config.remote_gpu[0], resolved=bigger,
                             network=None, region="us-east-1", stack="prod")  # type: ignore[arg-type]
    with pytest.raises(TierRefused, match=r"g4dn\.4xlarge is bigger than its budget \(6\.4 "
                                          r"Gbps\) needs; the budget justifies g4dn\.2xlarge"):
        RemoteGpuTier("x", args)


# --------------------------------------------------------------------------- discovery script


class _Metadata(BaseHTTPRequestHandler):
    """IMDSv2 as a proxy sees it: a token, then its id, address and lifecycle state."""

    state = "InService"
    polled = threading.Semaphore(0)  # released once per lifecycle-state answer

    def do_PUT(self) -> None:
        self._answer("token-1" if self.path == "/latest/api/token" else None)

    def do_GET(self) -> None:
        if self.headers.get("X-aws-ec2-metadata-token") != "token-1":
            self._answer(None, 401)
            return
        answers = {"instance-id": "i-0abc", "local-ipv4": "10.66.0.12",
                   "autoscaling/target-lifecycle-state": type(self).state}
        key = self.path.removeprefix("/latest/meta-data/")
        self._answer(answers.get(key))
        if key == "autoscaling/target-lifecycle-state":
            type(self).polled.release()

    def _answer(self, body: str | None, code: int = 200) -> None:
        self.send_response(code if body is not None else (code if code != 200 else 404))
        self.end_headers()
        if body is not None:
            self.wfile.write(body.encode())

    def log_message(self, *args: Any) -> None:
        pass


def test_watcher_registers_and_deregisters_when_the_group_terminates_it(tmp_path: Path) -> None:
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Metadata)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        bin_dir = tmp_path / "bin"
        bin_dir.mkdir()
        calls = tmp_path / "calls"
        fake_aws = bin_dir / "aws"
        fake_aws.write_text(f'#!/bin/bash\necho "$*" >> {calls}\n')
        fake_aws.chmod(0o755)
        script = tmp_path / "gpupool-discovery"
        script.write_text(discovery.watcher("us-east-1", "srv-0123", 18515))
        script.chmod(0o755)
        env = {**os.environ, "PATH": f"{bin_dir}:{os.environ['PATH']}",
               "GPUPOOL_IMDS": f"http://127.0.0.1:{server.server_address[1]}/latest",
               "GPUPOOL_DISCOVERY_INTERVAL": "0.05"}
        subprocess.run([str(script), "register"], env=env, check=True, timeout=10)
        assert calls.read_text().splitlines() == [
            "servicediscovery --region us-east-1 register-instance --service-id srv-0123 "
            "--instance-id i-0abc --attributes "
            "AWS_INSTANCE_IPV4=10.66.0.12,AWS_INSTANCE_PORT=18515"]
        watch = subprocess.Popen([str(script), "watch"], env=env)
        try:
            for _ in range(3):  # in service: it asks again and again, and keeps watching
                assert _Metadata.polled.acquire(timeout=60)
            assert watch.poll() is None
            _Metadata.state = "Terminated"
            assert watch.wait(timeout=60) == 0
        finally:
            _Metadata.state = "InService"
            if watch.poll() is None:
                watch.kill()
        assert calls.read_text().splitlines()[1:] == [
            "servicediscovery --region us-east-1 deregister-instance --service-id srv-0123 "
            "--instance-id i-0abc"]
    finally:
        server.shutdown()


def test_namespace_names_are_dns_labels() -> None:
    assert discovery.namespace_name("bert", "prod") == "bert.prod.gpupool.internal"
    assert discovery.namespace_name("bert", "Team_A.dev") == "bert.team-a-dev.gpupool.internal"
    assert ROOT.is_dir()


def test_a_tier_whose_profile_bounds_no_round_trip_plans_and_passes(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """A profile without synchronous calls: the model's largest RTT is infinite. The plan, its
    tags and outputs stay finite numbers, and the kit's policies judge the tier and pass it."""
    from gpupool.cli import main

    (tmp_path / "stream.yaml").write_text(
        "name: stream\nlocal_time_s: 2\nsync_calls: 0\nasync_calls: 50000\n"
        "bytes_to_gpu: 1.0e+8\nbytes_from_gpu: 1.0e+7\n")
    path = write(tmp_path, f"""    - name: stream
      gpu: T4
      minSize: 1
      maxSize: 2
      port: 18515
      budget: {{profile: {tmp_path / "stream.yaml"}}}
      clients: {{instanceType: c6in.2xlarge, maxSize: 1}}
""")
    assert main(["plan", str(path), "--format", "json"]) == 0
    text = capsys.readouterr().out
    assert "\"inf\"" not in text and "Infinity" not in text
    doc = json.loads(text)
    kids = children(run_offline(load_stack(str(path))), "t", "stream")
    lt = named(kids, LT, "t-stream-lt").inputs
    assert lt["tags"][MAX_RTT_TAG] == "1000000" and lt["tags"][MIN_GBPS_TAG] == "8.8"
    (tier,) = doc["envelope"]["remoteGpu"]
    assert tier["maxRttUs"] == 1_000_000 and tier["rttUnbounded"] is True
    assert main(["check", "--stack", str(path), "--format", "json"]) == 0
    verdict = json.loads(capsys.readouterr().out)
    assert verdict["verdict"] == "pass" and not [
        v for v in verdict["violations"] if v["policy"].startswith("gpu-proxy")]

"""``RemoteGpuTier``: GPU proxy hosts for API remoting, and the CPU clients next to them.

Remote GPUs need a network budget, not a guess (DESIGN.md, idea 2). Everything here serves the
round trip of a synchronous CUDA call:

- one placement group with strategy ``cluster`` and one subnet (so one availability zone) for
  the proxies and the optional client group: the lowest latency EC2 offers, and 10 Gbps per
  flow instead of 5;
- proxies of the size the stack config resolved (the smallest for the GPU, or the cheapest whose
  baseline bandwidth meets the budget; :mod:`gpupool.config.remote_gpu`), ENA Express on where
  the instance type supports it (25 Gbps per flow when both ends have it);
- no public IP, no load balancer: proxies accept the remoting port from the client security
  group and nothing else; clients find them through a Cloud Map private DNS namespace
  (:mod:`infra.aws.discovery`);
- the same hardening, telemetry and scaling as ``GpuPool`` (its parts, :mod:`infra.aws.gpu_host`):
  IMDSv2, encrypted volumes, a least-privilege profile, GPU utilisation per group and target
  tracking on it — an idle proxy's GPU is allocated, not used;
- tags the policies read: ``gpupool:role`` (``gpu-proxy`` / ``gpu-client``) and the budget,
  ``gpupool:remoting-min-gbps`` and ``gpupool:remoting-max-rtt-us``.
"""

from __future__ import annotations

import base64
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Final

import pulumi
import pulumi_aws as aws

from gpupool.catalog import load_catalog
from gpupool.catalog.network import KIND_LABELS, justified_by_bandwidth
from gpupool.config.remote_gpu import RemoteGpuTierConfig, ResolvedTier
from gpupool.tags import CLIENT_ROLE, PROXY_ROLE, ROLE_TAG, TIER_TAG
from infra.aws import discovery, ena_express, gpu_host, protection, user_data
from infra.aws.network import PoolNetwork

# Canonical's Ubuntu 22.04 for the CPU clients (the proxies' DLAMI is Ubuntu 22.04 too).
CLIENT_AMI_PARAMETERS: Final = {
    arch: f"/aws/service/canonical/ubuntu/server/22.04/stable/current/{ubuntu}/hvm/ebs-gp2/ami-id"
    for arch, ubuntu in (("x86_64", "amd64"), ("arm64", "arm64"))
}
CLIENT_POLICIES: Final = ("AmazonSSMManagedInstanceCore",)
# Interface endpoints a stack with tiers adds: proxies register through Cloud Map's API.
DISCOVERY_SERVICES: Final = ("servicediscovery",)
NAMED_CHILDREN: Final = {  # type → suffix of children whose AWS name derives from the logical one
    "aws:ec2/launchTemplate:LaunchTemplate": "client-lt",
    "aws:iam/role:Role": "client-role",
    "aws:iam/instanceProfile:InstanceProfile": "client-profile",
    "aws:ec2/securityGroup:SecurityGroup": "clients",
    "aws:autoscaling/group:Group": "client-asg",
    "aws:autoscaling/policy:Policy": "gpu-utilisation",
    "aws:iam/rolePolicy:RolePolicy": "scale-in-protection",  # the longer of its two
}


class TierRefused(pulumi.RunError):
    """A tier the component will not build: a size its budget does not justify, or a name AWS
    would refuse."""


@dataclass(frozen=True, slots=True)
class RemoteGpuTierArgs:
    tier: RemoteGpuTierConfig
    resolved: ResolvedTier  # the config loader's sizing and budget (resolve_tiers)
    network: PoolNetwork
    region: str
    stack: str  # names the DNS namespace: proxy.<tier>.<stack>.gpupool.internal
    tags: Mapping[str, str] = field(default_factory=dict)  # StackConfig.chargeback(tier)
    partition: str = "aws"
    image: str | None = None  # pinned proxy AMI (gpupool:images); None: the DLAMI, kept once taken


class RemoteGpuTier(pulumi.ComponentResource):
    """Placement group, proxy group (with discovery and scaling), client security group and
    the optional client group."""

    group_name: pulumi.Output[str]
    placement_group_name: pulumi.Output[str]
    proxy_security_group_id: pulumi.Output[str]
    client_security_group_id: pulumi.Output[str]
    endpoint: pulumi.Output[str]  # what clients resolve
    instance_type: str
    port: int

    def __init__(
        self, name: str, args: RemoteGpuTierArgs, opts: pulumi.ResourceOptions | None = None
    ) -> None:
        _require_justified(args.resolved)  # before anything is registered
        _require_valid_names(name)
        super().__init__("gpupool:aws:RemoteGpuTier", name, None, opts)
        tier, resolved = args.tier, args.resolved
        proxy = resolved.proxy
        self.instance_type = proxy.instance_type
        self.port = tier.port
        common = {**args.tags, TIER_TAG: tier.name}
        proxy_tags = {**common, **resolved.budget_tags(), ROLE_TAG: PROXY_ROLE, "Name": name}
        client_tags = {**common, ROLE_TAG: CLIENT_ROLE, "Name": f"{name}-client"}
        child = gpu_host.child_of(self)
        net = args.network
        subnet: pulumi.Input[list[str]]  # one subnet, one zone
        if tier.subnet_id:
            subnet = [tier.subnet_id]
        elif net.subnet_list:
            subnet = [net.subnet_list[0]]
        else:
            subnet = net.subnet_ids.apply(lambda ids: [ids[0]])

        placement = aws.ec2.PlacementGroup(
            f"{name}-pg", aws.ec2.PlacementGroupArgs(strategy="cluster", tags=dict(common)),
            opts=child)

        # Security groups: proxies admit the remoting port from the clients' group only.
        proxy_sg = aws.ec2.SecurityGroup(f"{name}-sg", aws.ec2.SecurityGroupArgs(
            vpc_id=net.vpc_id, tags=dict(proxy_tags),
            description=f"gpupool tier {tier.name} proxies: port {tier.port} from its clients "
                        "only, HTTPS to AWS endpoints"), opts=child)
        client_sg = aws.ec2.SecurityGroup(f"{name}-clients", aws.ec2.SecurityGroupArgs(
            vpc_id=net.vpc_id, tags=dict(client_tags),
            description=f"gpupool tier {tier.name} clients: to its proxies on port {tier.port}"),
            opts=child)
        gpu_host.rule(self, f"{name}-from-clients", proxy_sg.id,
                      f"remoting from the tier {tier.name} clients", port=tier.port,
                      ingress=True, referenced_security_group_id=client_sg.id)
        gpu_host.rule(self, f"{name}-clients-to-proxies", client_sg.id,
                      f"remoting to the tier {tier.name} proxies", port=tier.port,
                      referenced_security_group_id=proxy_sg.id)
        gpu_host.endpoint_egress(self, name, proxy_sg, net, f"gpupool tier {tier.name} proxies")

        # Discovery: proxy.<tier>.<stack>.gpupool.internal, one A record per proxy.
        namespace = aws.servicediscovery.PrivateDnsNamespace(
            f"{name}-ns", aws.servicediscovery.PrivateDnsNamespaceArgs(
                name=discovery.namespace_name(tier.name, args.stack), vpc=net.vpc_id,
                description=f"gpupool tier {tier.name}: where clients find the proxies",
                tags=dict(common)), opts=child)
        service = aws.servicediscovery.Service(
            f"{name}-proxies", aws.servicediscovery.ServiceArgs(
                name=discovery.SERVICE_NAME,
                namespace_id=namespace.id,
                description=f"gpupool tier {tier.name} proxies, registered by themselves",
                dns_config=aws.servicediscovery.ServiceDnsConfigArgs(
                    namespace_id=namespace.id,
                    routing_policy="MULTIVALUE",
                    dns_records=[aws.servicediscovery.ServiceDnsConfigDnsRecordArgs(
                        ttl=discovery.RECORD_TTL_SECONDS, type="A")],
                ),
                force_destroy=True,  # a destroyed tier takes its registrations with it
                tags=dict(common)), opts=child)

        # Proxies: GpuPool's parts, in the placement group and the one subnet.
        profile, role, attachments = gpu_host.instance_profile(
            self, name, f"gpupool tier {tier.name} proxies: CloudWatch agent, SSM, and their "
                        "own Cloud Map service", proxy_tags, args.partition)
        discovery_policy = aws.iam.RolePolicy(f"{name}-discovery", aws.iam.RolePolicyArgs(
            role=role.name,
            policy=pulumi.Output.all(service.arn, namespace.hosted_zone).apply(
                lambda v: discovery.role_policy(args.partition, v[0], v[1]))), opts=child)
        protected = tier.scale_in_protection  # proxies hold their clients' GPU state
        boot = service.id.apply(lambda sid: user_data.user_data(
            args.region, extra=discovery.register_script(args.region, sid, tier.port)
            + (protection.protection_script(args.region) if protected else "")
            + (ena_express.boot_part() if resolved.ena_express else "")))
        # the pools' image rules: root device and least size read from the image, pinned
        # per stack or kept as first deployed (a new DLAMI release does not roll the proxies)
        image = gpu_host.host_image(self, proxy.arch, args.image,
                                    root_volume_gib=tier.root_volume_gib,
                                    who=f"remote GPU tier {tier.name}")
        template = gpu_host.launch_template(
            self, name,
            description=f"gpupool tier {tier.name} proxy: {proxy.instance_type} "
                        f"({proxy.gpu_model}), {resolved.why}",
            image_id=image.image_id, instance_type=proxy.instance_type,
            user_data_b64=boot, profile_arn=profile.arn, security_group_ids=[proxy_sg.id],
            root_volume_gib=tier.root_volume_gib, tags=proxy_tags,
            placement_group=placement.name, ena_express=resolved.ena_express,
            root_device_name=image.root_device_name, keep_image=not image.pinned)
        group = gpu_host.gpu_group(
            self, name, tier, template=template, instance_type=proxy.instance_type,
            subnet_ids=subnet, tags=proxy_tags,
            # as GpuPool: no proxy boots before the VPC endpoints it registers and reports through
            depends_on=[*attachments, discovery_policy, *net.endpoints],
            protect_from_scale_in=protected)
        # its own resource: a group's initial lifecycle hooks exist only if the group is new
        aws.autoscaling.LifecycleHook(f"{name}-deregister", aws.autoscaling.LifecycleHookArgs(
            autoscaling_group_name=group.name,
            name=discovery.HOOK_NAME,
            lifecycle_transition="autoscaling:EC2_INSTANCE_TERMINATING",
            default_result="CONTINUE",
            heartbeat_timeout=discovery.HOOK_TIMEOUT_SECONDS), opts=child)
        if protected:
            protection.release_policy(self, name, role, group)
        gpu_host.utilisation_policy(self, name, tier, group)

        client_group = self._clients(name, args, client_sg, placement, subnet, client_tags)

        self.group_name = group.name
        self.placement_group_name = placement.name
        self.proxy_security_group_id = proxy_sg.id
        self.client_security_group_id = client_sg.id
        self.endpoint = namespace.name.apply(lambda ns: f"{discovery.SERVICE_NAME}.{ns}")
        self.register_outputs({
            "groupName": group.name,
            "placementGroupName": placement.name,
            "proxySecurityGroupId": proxy_sg.id,
            "clientSecurityGroupId": client_sg.id,
            "clientGroupName": client_group.name if client_group is not None else None,
            "endpoint": self.endpoint,
            "port": tier.port,
            "instanceType": proxy.instance_type,
            "network": KIND_LABELS[resolved.kind],
            "minGbps": resolved.min_gbps,
            "maxRttUs": resolved.max_rtt_us,
        })

    def _clients(
        self, name: str, args: RemoteGpuTierArgs, sg: aws.ec2.SecurityGroup,
        placement: aws.ec2.PlacementGroup, subnet: pulumi.Input[list[str]],
        tags: Mapping[str, str],
    ) -> aws.autoscaling.Group | None:
        """CPU clients in the proxies' placement group and subnet (when the stack asks)."""
        clients, resolved = args.tier.clients, args.resolved
        if clients is None or resolved.client_type is None or resolved.client_arch is None:
            return None
        from gpupool.catalog.network import load_network_data

        gpu_host.endpoint_egress(self, f"{name}-client", sg, args.network,
                                 f"gpupool tier {args.tier.name} clients")
        # least privilege: the kit installs no CloudWatch agent on clients (their EC2 metrics
        # need none), so their role gets Session Manager's policy and nothing else
        profile, _, attachments = gpu_host.instance_profile(
            self, f"{name}-client", f"gpupool tier {args.tier.name} clients: SSM only", tags,
            args.partition, policies=CLIENT_POLICIES)
        ami = aws.ssm.get_parameter_output(
            name=CLIENT_AMI_PARAMETERS[resolved.client_arch],
            opts=pulumi.InvokeOutputOptions(parent=self))
        enabled = bool(load_network_data().ena_express(resolved.client_type))
        template = gpu_host.launch_template(
            self, f"{name}-client",
            description=f"gpupool tier {args.tier.name} client: {resolved.client_type}",
            image_id=ami.insecure_value, instance_type=resolved.client_type,
            user_data_b64=client_user_data(enabled), profile_arn=profile.arn,
            security_group_ids=[sg.id], root_volume_gib=clients.root_volume_gib, tags=tags,
            placement_group=placement.name, ena_express=enabled)
        return aws.autoscaling.Group(
            f"{name}-client-asg",
            aws.autoscaling.GroupArgs(
                min_size=clients.min_size,
                max_size=clients.max_size,
                desired_capacity=clients.desired_capacity,
                vpc_zone_identifiers=subnet,
                launch_template=aws.autoscaling.GroupLaunchTemplateArgs(
                    id=template.id, version=template.latest_version.apply(str)),
                health_check_type="EC2",
                enabled_metrics=list(gpu_host.GROUP_METRICS),
                metrics_granularity="1Minute",
                tags=[aws.autoscaling.GroupTagArgs(key=k, value=v, propagate_at_launch=True)
                      for k, v in sorted(tags.items())],
            ),
            opts=pulumi.ResourceOptions(
                parent=self, depends_on=[*attachments, *args.network.endpoints]),
        )


def _require_justified(resolved: ResolvedTier) -> None:
    """The proxy is the smallest size, or the one the budget's bandwidth justifies: never more."""
    catalog = load_catalog()
    name = resolved.proxy.instance_type
    if catalog.is_smallest(name):
        return
    ok, needed = justified_by_bandwidth(catalog, name, resolved.min_gbps)
    if not ok:
        hint = f"; the budget justifies {needed.instance_type}" if needed else ""
        raise TierRefused(
            f"tier {resolved.name}: {name} is bigger than its budget ({resolved.min_gbps:g} Gbps) "
            f"needs{hint}: a tier grows by more proxies, and by a bigger size only for bandwidth")


def _require_valid_names(name: str) -> None:
    """Fail before declaring anything when AWS would refuse a derived name."""
    problem = gpu_host.name_problem(name, NAMED_CHILDREN)
    if problem:
        raise TierRefused(f"tier {name!r}: {problem} (Pulumi adds 8 characters to the logical "
                          "name); shorten the stack name or the tier name")


def client_user_data(enabled: bool) -> str | None:
    """Clients get no boot script unless ENA Express is on: then its host settings."""
    if not enabled:
        return None
    return base64.b64encode(ena_express.client_boot_script().encode()).decode()

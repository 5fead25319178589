"""``GpuNetwork``: where GPU pools run — an existing VPC, or a private-only VPC with endpoints.

A created VPC has private subnets only (one per availability zone that offers every pool's
instance type), no internet gateway and no public IPs. Instances reach AWS through VPC endpoints:
interface endpoints for SSM (ssm, ssmmessages, ec2messages), CloudWatch (monitoring, logs) and
EC2 (the CloudWatch agent reads the instance's autoscaling group through DescribeTags), and an S3
gateway endpoint (agent package, SSM documents). The endpoints' security group admits HTTPS only
from the pools' security groups, which each pool adds as it joins (see ``GpuPool``).

With an existing VPC nothing is created: pools send HTTPS to the VPC's own CIDR (where its
endpoints live) and to S3's prefix list, so the VPC must provide the same endpoints.
"""

from __future__ import annotations

import ipaddress
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Final

import pulumi
import pulumi_aws as aws

from gpupool.config.models import NetworkConfig

INTERFACE_SERVICES: Final = ("ssm", "ssmmessages", "ec2messages", "monitoring", "logs", "ec2")
# pools with scale-in protection release it themselves through the Auto Scaling API
PROTECTION_SERVICES: Final = ("autoscaling",)
GATEWAY_SERVICES: Final = ("s3",)
_SUBNET_BITS: Final = 3  # room for 8 subnets, more than the 6 AZs a stack may ask for


class NotEnoughZones(pulumi.RunError):
    """The region has fewer zones offering the pools' instance types than the stack asks for."""


def zone_shortage(region: str, zones: Sequence[str], offered: Mapping[str, set[str]],
                  wanted: Sequence[str], az_count: int) -> str:
    """What is missing, where, and what to change: fewer zones, or other GPUs."""
    usable = [z for z in zones if set(wanted) <= offered.get(z, set())]
    per_type = "; ".join(
        f"{t} in {', '.join(z for z in zones if t in offered.get(z, set())) or 'no zone'}"
        for t in wanted)
    if usable:
        return (f"gpupool:network.azCount: expected at most {len(usable)} in {region}: only "
                f"{', '.join(usable)} offer every pool's instance type ({per_type}); set "
                f"azCount: {len(usable)}, or give the pools GPUs more zones offer; "
                f"got {az_count}")
    return (f"gpupool:pools: expected instance types that one zone of {region} offers together: "
            f"no zone offers all of them ({per_type}); give the pools GPUs offered in the same "
            f"zones, or deploy to another region (gpupool validate names regions offering them)")


@dataclass(frozen=True, slots=True)
class ExistingVpc:
    vpc_id: str
    subnet_ids: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class NewVpc:
    cidr: str
    az_count: int
    instance_types: tuple[str, ...]  # every chosen zone must offer all of them


@dataclass(frozen=True, slots=True)
class GpuNetworkArgs:
    region: str
    layout: ExistingVpc | NewVpc
    service_prefix: str = "com.amazonaws"  # the partition's reverse DNS prefix
    tags: Mapping[str, str] = field(default_factory=dict)
    # interface endpoints beyond INTERFACE_SERVICES (servicediscovery for proxy tiers)
    extra_services: tuple[str, ...] = ()

    @classmethod
    def from_config(
        cls,
        network: NetworkConfig,
        *,
        region: str,
        instance_types: Sequence[str],
        tags: Mapping[str, str],
        service_prefix: str = "com.amazonaws",
        extra_services: Sequence[str] = (),
    ) -> GpuNetworkArgs:
        layout: ExistingVpc | NewVpc
        if network.create_vpc:
            layout = NewVpc(network.cidr, network.az_count, tuple(sorted(set(instance_types))))
        else:
            assert network.vpc_id is not None  # guaranteed by NetworkConfig's validator
            layout = ExistingVpc(network.vpc_id, tuple(network.subnet_ids))
        return cls(region=region, layout=layout, service_prefix=service_prefix, tags=dict(tags),
                   extra_services=tuple(extra_services))


@dataclass(frozen=True, slots=True)
class PoolNetwork:
    """What a pool needs from its network; exactly one of the two HTTPS egress targets is set."""

    vpc_id: pulumi.Output[str]
    subnet_ids: pulumi.Output[list[str]]
    s3_prefix_list_id: pulumi.Output[str]
    endpoint_security_group_id: pulumi.Output[str] | None
    vpc_cidr: pulumi.Output[str] | None
    # each subnet's id on its own, in zone order: what one-zone groups (proxy tiers) name, so
    # that a plan links them to exactly that subnet
    subnet_list: tuple[pulumi.Output[str], ...] = ()
    # the VPC endpoints the stack creates: groups depend on them, so no instance boots before
    # SSM, CloudWatch and EC2 are reachable (an existing VPC brings its own: none here)
    endpoints: tuple[pulumi.Resource, ...] = ()


class GpuNetwork(pulumi.ComponentResource):
    """The VPC side of a GPU stack."""

    vpc_id: pulumi.Output[str]
    subnet_ids: pulumi.Output[list[str]]
    s3_prefix_list_id: pulumi.Output[str]
    endpoint_security_group_id: pulumi.Output[str] | None
    vpc_cidr: pulumi.Output[str] | None
    subnet_list: tuple[pulumi.Output[str], ...]
    endpoints: tuple[pulumi.Resource, ...]

    def __init__(
        self, name: str, args: GpuNetworkArgs, opts: pulumi.ResourceOptions | None = None
    ) -> None:
        super().__init__("gpupool:aws:GpuNetwork", name, None, opts)
        self._args = args
        if isinstance(args.layout, ExistingVpc):
            self._wrap(args.layout)
        else:
            self._create(name, args.layout)
        self.register_outputs(
            {
                "vpcId": self.vpc_id,
                "subnetIds": self.subnet_ids,
                "s3PrefixListId": self.s3_prefix_list_id,
                "endpointSecurityGroupId": self.endpoint_security_group_id,
            }
        )

    def attachment(self) -> PoolNetwork:
        return PoolNetwork(
            vpc_id=self.vpc_id,
            subnet_ids=self.subnet_ids,
            s3_prefix_list_id=self.s3_prefix_list_id,
            endpoint_security_group_id=self.endpoint_security_group_id,
            vpc_cidr=self.vpc_cidr,
            subnet_list=self.subnet_list,
            endpoints=self.endpoints,
        )

    def _service(self, name: str) -> str:
        return f"{self._args.service_prefix}.{self._args.region}.{name}"

    def _wrap(self, layout: ExistingVpc) -> None:
        invoke = pulumi.InvokeOutputOptions(parent=self)
        vpc = aws.ec2.get_vpc_output(id=layout.vpc_id, opts=invoke)
        s3 = aws.ec2.get_prefix_list_output(name=self._service("s3"), opts=invoke)
        self.vpc_id = pulumi.Output.from_input(layout.vpc_id)
        self.subnet_ids = pulumi.Output.from_input(list(layout.subnet_ids))
        self.subnet_list = tuple(pulumi.Output.from_input(s) for s in layout.subnet_ids)
        self.endpoints = ()
        self.s3_prefix_list_id = s3.id
        self.endpoint_security_group_id = None
        self.vpc_cidr = vpc.cidr_block

    def _create(self, name: str, layout: NewVpc) -> None:
        child = pulumi.ResourceOptions(parent=self)
        tags = dict(self._args.tags)
        zones = self._zones(layout)
        vpc = aws.ec2.Vpc(
            f"{name}-vpc",
            aws.ec2.VpcArgs(
                cidr_block=layout.cidr,
                enable_dns_support=True,  # both are required for private DNS on endpoints
                enable_dns_hostnames=True,
                tags={**tags, "Name": name},
            ),
            opts=child,
        )
        # Adopt the VPC's default security group and strip its allow-all rules.
        aws.ec2.DefaultSecurityGroup(
            f"{name}-default-sg",
            aws.ec2.DefaultSecurityGroupArgs(
                vpc_id=vpc.id, tags={**tags, "Name": f"{name}-default"}
            ),
            opts=child,
        )
        routes = aws.ec2.RouteTable(
            f"{name}-private",
            aws.ec2.RouteTableArgs(vpc_id=vpc.id, tags={**tags, "Name": f"{name}-private"}),
            opts=child,
        )
        blocks = ipaddress.ip_network(layout.cidr).subnets(prefixlen_diff=_SUBNET_BITS)
        subnets: list[aws.ec2.Subnet] = []
        for zone, block in zip(zones, blocks, strict=False):
            subnet = aws.ec2.Subnet(
                f"{name}-{zone}",
                aws.ec2.SubnetArgs(
                    vpc_id=vpc.id,
                    cidr_block=str(block),
                    availability_zone=zone,
                    map_public_ip_on_launch=False,
                    tags={**tags, "Name": f"{name}-{zone}", "gpupool:tier": "private"},
                ),
                opts=child,
            )
            aws.ec2.RouteTableAssociation(
                f"{name}-{zone}",
                aws.ec2.RouteTableAssociationArgs(subnet_id=subnet.id, route_table_id=routes.id),
                opts=child,
            )
            subnets.append(subnet)
        endpoint_sg = aws.ec2.SecurityGroup(
            f"{name}-endpoints",
            aws.ec2.SecurityGroupArgs(
                vpc_id=vpc.id,
                description="HTTPS from gpupool pools to the VPC interface endpoints",
                tags={**tags, "Name": f"{name}-endpoints"},
            ),
            opts=child,
        )
        subnet_ids = pulumi.Output.all(*[s.id for s in subnets])
        endpoints: list[pulumi.Resource] = []
        for service in (*INTERFACE_SERVICES, *self._args.extra_services):
            endpoints.append(aws.ec2.VpcEndpoint(
                f"{name}-{service}",
                aws.ec2.VpcEndpointArgs(
                    vpc_id=vpc.id,
                    service_name=self._service(service),
                    vpc_endpoint_type="Interface",
                    private_dns_enabled=True,
                    subnet_ids=subnet_ids,
                    security_group_ids=[endpoint_sg.id],
                    tags={**tags, "Name": f"{name}-{service}"},
                ),
                opts=child,
            ))
        s3 = aws.ec2.VpcEndpoint(
            f"{name}-s3",
            aws.ec2.VpcEndpointArgs(
                vpc_id=vpc.id,
                service_name=self._service("s3"),
                vpc_endpoint_type="Gateway",
                route_table_ids=[routes.id],
                tags={**tags, "Name": f"{name}-s3"},
            ),
            opts=child,
        )
        self.vpc_id = vpc.id
        self.subnet_ids = subnet_ids
        self.subnet_list = tuple(s.id for s in subnets)
        self.endpoints = (*endpoints, s3)
        self.s3_prefix_list_id = s3.prefix_list_id
        self.endpoint_security_group_id = endpoint_sg.id
        self.vpc_cidr = None

    def _zones(self, layout: NewVpc) -> list[str]:
        """The first ``az_count`` standard zones (in AWS's order) that offer every pool type."""
        invoke = pulumi.InvokeOptions(parent=self)
        zones = aws.get_availability_zones(
            state="available",
            filters=[
                aws.GetAvailabilityZonesFilterArgs(
                    name="opt-in-status", values=["opt-in-not-required"]
                )
            ],
            opts=invoke,
        )
        offers = aws.ec2.get_instance_type_offerings(
            location_type="availability-zone",
            filters=[
                aws.ec2.GetInstanceTypeOfferingsFilterArgs(
                    name="instance-type", values=list(layout.instance_types)
                )
            ],
            opts=invoke,
        )
        offered: dict[str, set[str]] = {}
        for zone, itype in zip(offers.locations, offers.instance_types, strict=True):
            offered.setdefault(zone, set()).add(itype)
        wanted = set(layout.instance_types)
        usable = [z for z in zones.names if wanted <= offered.get(z, set())]
        if len(usable) < layout.az_count:
            raise NotEnoughZones(zone_shortage(self._args.region, zones.names, offered,
                                               sorted(wanted), layout.az_count))
        return usable[: layout.az_count]

"""gpu-proxy-private: a GPU proxy is reachable only from inside: no public IP, no ingress from
the internet, no load balancer in the data path.

A remoting proxy executes whatever CUDA calls reach it; it answers the clients of its tier and
nothing else. A load balancer adds a hop to every synchronous call (and hides which proxy holds
a client's GPU state). Stack scope: security groups, rules, attachments and addresses are
separate resources linked by reference, id or name.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from policies.facts import NetworkIndex, blocks, flag, is_map
from policies.facts.network import WORLD, port_range
from policies.model import UNKNOWN, ResourceChange, ResourceKind
from policies.rules._common import cannot_verify, prop
from policies.rules.base import (
    Enforcement,
    Example,
    Finding,
    Rule,
    RuleContext,
    RuleMeta,
    lazy_examples,
)

_LT = "aws:ec2/launchTemplate:LaunchTemplate"
_ASG = "aws:autoscaling/group:Group"
_SG = "aws:ec2/securityGroup:SecurityGroup"
PROXY_TAGS = {"gpupool:role": "gpu-proxy"}
_SG_KIND = frozenset({ResourceKind.SECURITY_GROUP})


def _private_lt(**extra: object) -> dict[str, object]:
    return {"type": _LT, "name": "proxy",
            "new": {"name": "proxy-lt", "instanceType": "g4dn.xlarge", "tags": PROXY_TAGS,
                    "networkInterfaces": [{"deviceIndex": 0, "associatePublicIpAddress": "false",
                                           "securityGroups": ["sg-proxy"]}], **extra}}


def _tf_group(references: dict[str, str] | None = None, **extra: object) -> dict[str, object]:
    """A new Terraform proxy group as provider 5.x plans it: private template, one subnet; what
    the configuration does not set (its load balancers) is left out, as the plan reader does."""
    return {"type": "aws_autoscaling_group", "name": "proxy",
            "address": "aws_autoscaling_group.proxy",
            "new": {"name": "proxy", "vpc_zone_identifier": ["subnet-0a1"],
                    "launch_template": [{"id": "lt-0proxy"}],
                    "tag": [{"key": "gpupool:role", "value": "gpu-proxy",
                             "propagate_at_launch": True}], **extra},
            "references": references or {}}


class GpuProxyPrivate(Rule):
    meta = RuleMeta(
        id="gpu-proxy-private",
        title="GPU proxies have no public IP, no internet ingress and no load balancer",
        default_enforcement=Enforcement.MANDATORY,
        rationale=(
            "A GPU API remoting proxy runs the CUDA calls its clients send, so it must be "
            "reachable from its clients only: no public IP on any interface (launch template "
            "network interfaces, instances, elastic IPs, or a subnet that maps public IPs when "
            "nothing turns it off), no ingress from 0.0.0.0/0 or ::/0 on any of its security "
            "groups (inline rules and separate rule resources), and no load balancer or target "
            "group in front of the proxy group or instance: a load balancer adds a hop to every "
            "synchronous call. Applies to resources tagged gpupool:role = gpu-proxy (on "
            "themselves or on the launch template they start from)."
        ),
        scope="stack",
        kinds=frozenset({ResourceKind.AUTOSCALING_GROUP, ResourceKind.INSTANCE,
                         ResourceKind.LAUNCH_TEMPLATE, ResourceKind.SECURITY_GROUP,
                         ResourceKind.SECURITY_GROUP_RULE, ResourceKind.LB_ATTACHMENT,
                         ResourceKind.ELASTIC_IP, ResourceKind.SUBNET,
                         ResourceKind.NETWORK_INTERFACE}),
        proxy_tier=True,
    )

    examples = lazy_examples(lambda: (
        Example(
            title="Private proxy: no public IP, ingress from the client security group only",
            allowed=True,
            resources=[
                {"type": _SG, "name": "proxy", "new": {"name": "sg-proxy"}},
                {"type": "aws:vpc/securityGroupIngressRule:SecurityGroupIngressRule",
                 "name": "from-clients",
                 "new": {"securityGroupId": "sg-proxy", "referencedSecurityGroupId": "sg-client",
                         "ipProtocol": "tcp", "fromPort": 18515, "toPort": 18515}},
                _private_lt(),
                {"type": _ASG, "name": "proxy",
                 "new": {"launchTemplate": {"name": "proxy-lt"},
                         "vpcZoneIdentifiers": ["subnet-0a1"]}},
            ],
        ),
        Example(
            title="Terraform: proxy instance with a public IP",
            allowed=False,
            resources=[
                {"type": "aws_security_group", "name": "proxy",
                 "address": "aws_security_group.proxy", "new": {"id": "sg-1", "ingress": []}},
                {"type": "aws_instance", "name": "proxy", "address": "aws_instance.proxy",
                 "new": {"instance_type": "g4dn.xlarge", "associate_public_ip_address": True,
                         "vpc_security_group_ids": ["sg-1"], "tags": PROXY_TAGS}},
            ],
            message_contains=["has a public IP (associate_public_ip_address = true)"],
        ),
        Example(
            title="Security group open to the internet",
            allowed=False,
            resources=[
                {"type": _SG, "name": "proxy",
                 "new": {"name": "sg-proxy", "ingress": [
                     {"protocol": "tcp", "fromPort": 18515, "toPort": 18515,
                      "cidrBlocks": ["0.0.0.0/0"]}]}},
                _private_lt(),
            ],
            message_contains=["security group proxy admits ingress tcp 18515 from 0.0.0.0/0"],
        ),
        Example(
            title="An ALB target group in front of the proxy group",
            allowed=False,
            resources=[
                {"type": _SG, "name": "proxy", "new": {"name": "sg-proxy"}},
                _private_lt(),
                {"type": _ASG, "name": "proxy",
                 "new": {"name": "proxy-asg", "launchTemplate": {"name": "proxy-lt"},
                         "vpcZoneIdentifiers": ["subnet-0a1"]}},
                {"type": "aws:autoscaling/attachment:Attachment", "name": "alb",
                 "new": {"autoscalingGroupName": "proxy-asg",
                         "lbTargetGroupArn": "arn:aws:elasticloadbalancing:us-east-1:1:tg/x"}},
            ],
            message_contains=["a load balancer is in the data path: alb"],
        ),
        Example(
            title="Terraform: target_group_arns known after apply, from the plan's target group",
            allowed=False,
            resources=[
                {"type": "aws_lb_target_group", "name": "proxies",
                 "address": "aws_lb_target_group.proxies",
                 "new": {"name": "proxies", "arn": "(known after apply)", "port": 18515}},
                _tf_group(target_group_arns="(known after apply)",
                          references={"target_group_arns": "aws_lb_target_group.proxies"}),
            ],
            message_contains=["a load balancer is in the data path: its target_group_arns "
                              "(proxies)"],
        ),
        Example(
            title="Terraform: traffic_source known after apply and no static block",
            allowed=False,
            unknown=True,
            resources=[_tf_group(traffic_source="(known after apply)")],
            message_contains=["cannot verify", "traffic_source unknown until apply",
                              "no static traffic_source block", "--tf-root"],
        ),
        Example(
            title="Ingress rule whose security group is unknown until apply",
            allowed=False,
            unknown=True,
            resources=[
                {"type": "aws_security_group", "name": "proxy",
                 "address": "aws_security_group.proxy",
                 "new": {"id": "(known after apply)", "name": "proxy"}},
                {"type": "aws_security_group_rule", "name": "open",
                 "address": "aws_security_group_rule.open",
                 "new": {"type": "ingress", "cidr_blocks": ["0.0.0.0/0"], "from_port": 0,
                         "to_port": 65535, "protocol": "tcp",
                         "security_group_id": "(known after apply)"}},
                {"type": "aws_instance", "name": "proxy", "address": "aws_instance.proxy",
                 "new": {"instance_type": "g4dn.xlarge", "associate_public_ip_address": False,
                         "vpc_security_group_ids": ["(known after apply)"], "tags": PROXY_TAGS},
                 "references": {"vpc_security_group_ids": "aws_security_group.proxy"}},
            ],
            message_contains=["cannot verify", "ingress rule open admits 0.0.0.0/0"],
        ),
        Example(
            title="Resources without the proxy role are out of scope",
            allowed=True,
            resources=[{"type": "aws_instance", "name": "web", "address": "aws_instance.web",
                        "new": {"instance_type": "m7i.large",
                                "associate_public_ip_address": True}}],
        ),
    ))

    def check_resource(self, change: ResourceChange, ctx: RuleContext) -> Iterable[Finding]:
        return ()  # stack scope: see check

    def check(self, changes: Sequence[ResourceChange], ctx: RuleContext) -> Iterable[Finding]:
        net = ctx.plan.network
        proxies = net.proxies()
        groups: dict[str, ResourceChange] = {}
        for proxy in proxies:
            yield from self._public_ip(proxy, net)
            yield from self._ingress(proxy, net)
            yield from self._load_balancers(proxy, net)
            groups.update((g.address, g) for g in net.security_groups(proxy).targets)
        if not proxies:
            return
        # Rules and attachments the plan cannot place: said once each, on themselves.
        for rule, cidrs in net.unresolved_open_rules(groups.values()):
            opens = ("CIDRs unknown until apply" if cidrs is UNKNOWN
                     else ", ".join(sorted(cidrs & WORLD)))  # type: ignore[operator]
            yield Finding(rule.address, cannot_verify(
                f"ingress rule {rule.name} admits {opens} into a security group unknown until "
                "apply, which may be a GPU proxy's"), unknown=True)
        for att in net.unresolved_attachments(proxies):
            yield Finding(att.address, cannot_verify(
                f"{att.name} ({att.type}) attaches a load balancer to a resource unknown until "
                f"apply, which may be one of the plan's {len(proxies)} GPU proxies"),
                unknown=True)

    # -- public addresses

    def _public_ip(self, proxy: ResourceChange, net: NetworkIndex) -> Iterable[Finding]:
        decided = False
        if proxy.kind is ResourceKind.INSTANCE:
            value = flag(proxy.after.get("associate_public_ip_address"))
            key = prop(proxy.type, "associate_public_ip_address")
            if proxy.after.get("associate_public_ip_address") is None:
                pass
            elif value is UNKNOWN:
                yield Finding(proxy.address, cannot_verify(f"{key} is unknown until apply"),
                              unknown=True)
                decided = True
            elif value:
                yield Finding(proxy.address, (
                    f"GPU proxy has a public IP ({key} = true): a proxy runs whatever CUDA calls "
                    "reach it; keep it private to its tier"))
                decided = True
            else:
                decided = True
        for template in net.template_of(proxy).targets:
            verdict = self._template_public_ip(proxy, template)
            if verdict is not None:
                decided = True
                if verdict:
                    yield verdict
        for what in net.public_addresses(proxy):
            yield Finding(proxy.address, (
                f"GPU proxy has a public IP ({what}): a proxy runs whatever CUDA calls reach it; "
                "keep it private to its tier"))
        if not decided:
            yield from self._subnet_default(proxy, net)

    def _template_public_ip(self, proxy: ResourceChange, lt: ResourceChange
                            ) -> Finding | bool | None:
        """A finding, False (the template keeps its interfaces private) or None (it says
        nothing, so the subnet's default applies)."""
        nics = blocks(lt.after.get("network_interfaces"))
        key = prop(lt.type, "network_interfaces.associate_public_ip_address")
        if nics is UNKNOWN:
            return Finding(proxy.address, cannot_verify(
                f"the network interfaces of launch template {lt.name} are unknown until apply"),
                unknown=True)
        said = False
        for nic in nics:
            if not is_map(nic) or nic.get("associate_public_ip_address") is None:
                continue
            said = True
            value = flag(nic["associate_public_ip_address"])
            if value is UNKNOWN:
                return Finding(proxy.address, cannot_verify(
                    f"{key} of launch template {lt.name} is unknown until apply"), unknown=True)
            if value:
                return Finding(proxy.address, (
                    f"GPU proxy gets a public IP from launch template {lt.name} ({key} = true): "
                    "a proxy runs whatever CUDA calls reach it; keep it private to its tier"))
        return False if said else None

    def _subnet_default(self, proxy: ResourceChange, net: NetworkIndex) -> Iterable[Finding]:
        key = prop(proxy.type, "associate_public_ip_address")
        if proxy.kind is not ResourceKind.INSTANCE:
            key = prop(_LT if ":" in proxy.type else "aws_launch_template",
                       "network_interfaces.associate_public_ip_address")
        subnets = net.subnets(proxy)
        if not subnets.declared:
            yield Finding(proxy.address, cannot_verify(
                f"{key} is not set and no subnet is named, so the default subnet's public-IP "
                "setting applies; set it to false"), unknown=True)
            return
        for s in subnets.targets:
            maps = flag(s.after.get("map_public_ip_on_launch"))
            if maps is UNKNOWN:
                yield Finding(proxy.address, cannot_verify(
                    f"{key} is not set and whether subnet {s.name} maps public IPs is unknown "
                    "until apply"), unknown=True)
            elif maps:
                yield Finding(proxy.address, (
                    f"GPU proxy gets a public IP: subnet {s.name} maps public IPs on launch and "
                    f"{key} does not turn it off"))
        if subnets.outside or subnets.unknown:
            what = ", ".join(subnets.outside) or subnets.unknown
            yield Finding(proxy.address, cannot_verify(
                f"{key} is not set, so the subnet's default applies, and {what} is not known "
                "to the plan; set it to false"), unknown=True)

    # -- ingress

    def _ingress(self, proxy: ResourceChange, net: NetworkIndex) -> Iterable[Finding]:
        groups = net.security_groups(proxy)
        if not groups.declared:
            yield Finding(proxy.address, cannot_verify(
                "no security group is named, so the VPC's default security group applies, "
                "whose ingress is not in the plan"), unknown=True)
            return
        for sg in groups.targets:
            yield from self._inline(proxy, sg, net)
            for rule, cidrs in net.open_rules(sg):
                if cidrs is UNKNOWN:
                    yield Finding(proxy.address, cannot_verify(
                        f"ingress rule {rule.name} into security group {sg.name} admits CIDRs "
                        "unknown until apply"), unknown=True)
                else:
                    yield Finding(proxy.address, (
                        f"ingress rule {rule.name} admits {', '.join(sorted(cidrs & WORLD))} "
                        f"({port_range(rule.after)}) into security group {sg.name}: a GPU "
                        "proxy answers its tier's client security group only"))
        if groups.outside:
            yield Finding(proxy.address, cannot_verify(
                f"security group(s) {', '.join(groups.outside)} are not in the plan, so their "
                "ingress cannot be checked"), unknown=True)
        if groups.unknown and not groups.targets:
            yield Finding(proxy.address, cannot_verify(groups.unknown), unknown=True)

    @staticmethod
    def _inline(proxy: ResourceChange, sg: ResourceChange, net: NetworkIndex
                ) -> Iterable[Finding]:
        inline = net.inline_ingress(sg)
        if inline is UNKNOWN:
            yield Finding(proxy.address, cannot_verify(
                f"the ingress of security group {sg.name} is unknown until apply"), unknown=True)
            return
        for item, cidrs in inline:
            if cidrs is UNKNOWN:
                yield Finding(proxy.address, cannot_verify(
                    f"an ingress CIDR of security group {sg.name} is unknown until apply"),
                    unknown=True)
            elif cidrs & WORLD:
                yield Finding(proxy.address, (
                    f"security group {sg.name} admits ingress {port_range(item)} from "
                    f"{', '.join(sorted(cidrs & WORLD))}: a GPU proxy answers its tier's "
                    "client security group only"))

    # -- load balancers

    def _load_balancers(self, proxy: ResourceChange, net: NetworkIndex) -> Iterable[Finding]:
        found, unknown = net.behind_load_balancer(proxy)
        if found:
            yield Finding(proxy.address, (
                f"a load balancer is in the data path: {'; '.join(found)}; clients reach GPU "
                "proxies directly (discovery by DNS), since a load balancer adds a hop to "
                "every synchronous call and scatters a client's GPU state"))
        for why in unknown:
            yield Finding(proxy.address, cannot_verify(why), unknown=True)


RULE = GpuProxyPrivate()

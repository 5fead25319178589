"""imdsv2-required: instance metadata only through IMDSv2 session tokens."""

from __future__ import annotations

from collections.abc import Iterable, Mapping

from policies.facts import metadata_options, text
from policies.facts.values import Maybe
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

TYPE_CHECKING = False  # typing's, without importing typing (not on a check's path)
if TYPE_CHECKING:
    from typing import Any

# Bound once: on Python 3.11 an enum member read through its class costs a call (EnumType's
# __getattr__), ~10x a global; these are tested per resource.
_INSTANCE = ResourceKind.INSTANCE


class Imdsv2Required(Rule):
    meta = RuleMeta(
        id="imdsv2-required",
        title="Instance metadata requires IMDSv2",
        default_enforcement=Enforcement.MANDATORY,
        rationale=(
            "IMDSv1 answers any request from the instance, so a server-side request forgery in "
            "a model server or notebook hands out the instance role's credentials. IMDSv2 "
            "requires a session token (metadata_options.http_tokens = required). Without "
            "metadata_options, AWS's default allows IMDSv1, so a missing block is a violation; "
            "an instance that takes its metadata options from a launch template is judged by "
            "that template when it is in the plan. Disabling the endpoint altogether passes."
        ),
        scope="resource",
        kinds=frozenset({ResourceKind.INSTANCE, ResourceKind.LAUNCH_TEMPLATE,
                         ResourceKind.LAUNCH_CONFIGURATION}),
        prop="metadata_options",
    )

    examples = lazy_examples(lambda: (
        Example(
            title="Launch template requiring session tokens",
            allowed=True,
            resources=[{"type": "aws:ec2/launchTemplate:LaunchTemplate", "name": "pool",
                        "new": {"metadataOptions": {"httpTokens": "required",
                                                    "httpEndpoint": "enabled"}}}],
        ),
        Example(
            title="Terraform instance with http_tokens optional",
            allowed=False,
            resources=[{"type": "aws_instance", "name": "gpu", "address": "aws_instance.gpu",
                        "new": {"metadata_options": [{"http_tokens": "optional"}]}}],
            message_contains=['metadata_options.http_tokens = "optional"', "IMDSv1"],
        ),
        Example(
            title="Instance without metadata options",
            allowed=False,
            resources=[{"type": "aws:ec2/instance:Instance", "name": "gpu",
                        "new": {"instanceType": "g4dn.xlarge"}}],
            message_contains=["metadataOptions is not set",
                              'metadataOptions.httpTokens = "required"', "IMDSv1"],
        ),
        Example(
            title="Instance taking its metadata options from a launch template in the plan",
            allowed=True,
            resources=[
                {"type": "aws:ec2/launchTemplate:LaunchTemplate", "name": "pool",
                 "new": {"name": "pool", "metadataOptions": {"httpTokens": "required"}}},
                {"type": "aws:ec2/instance:Instance", "name": "gpu",
                 "new": {"launchTemplate": {"name": "pool"}}},
            ],
        ),
        Example(
            title="Metadata options unknown until apply",
            allowed=False,
            unknown=True,
            resources=[{"type": "aws_instance", "name": "gpu", "address": "aws_instance.gpu",
                        "new": {"metadata_options": "(known after apply)"}}],
            message_contains=["cannot verify", "metadata_options unknown until apply"],
        ),
    ))

    def check_resource(self, change: ResourceChange, ctx: RuleContext) -> Iterable[Finding]:
        inputs = change.after
        where = ""
        options = metadata_options(inputs)
        if change.kind is _INSTANCE and options is None:
            link = ctx.plan.launch_templates(change)
            if link.declared:
                if not link.targets:
                    yield Finding(change.address, cannot_verify(
                        f"metadata options come from a launch template ({link.unknown})"),
                        unknown=True)
                    return
                inputs, where = link.targets[0].after, f" (launch template {link.targets[0].name})"
                options = metadata_options(inputs)
        tokens, endpoint = _tokens_and_endpoint(options)
        if endpoint == "disabled" or tokens == "required":
            return
        options_key, tokens_key = (prop(change.type, p) for p in ("metadata_options",
                                                                  "metadata_options.http_tokens"))
        if tokens is UNKNOWN or endpoint is UNKNOWN:
            yield Finding(change.address, cannot_verify(
                f"{options_key} unknown until apply{where}"), unknown=True)
        elif tokens is None and options is None:
            yield Finding(change.address, (
                f"IMDSv1 is allowed{where}: {options_key} is not set, so "
                f'{prop(change.type, "http_tokens")} defaults to "optional"; set '
                f'{tokens_key} = "required"'))
        else:
            shown = "not set" if tokens is None else f'"{tokens}"'
            yield Finding(change.address, (
                f'IMDSv1 is allowed{where}: {tokens_key} = {shown}; set it to "required"'))


def _tokens_and_endpoint(options: Mapping[str, Any] | Maybe | None
                         ) -> tuple[str | Maybe | None, str | Maybe | None]:
    """facts.http_tokens and facts.http_endpoint of the inputs whose metadata_options block is
    ``options``: the block read once per resource, not once by each (and once more here)."""
    if options is UNKNOWN:
        return UNKNOWN, UNKNOWN
    if options is None:
        return None, None
    tokens, endpoint = options.get("http_tokens"), options.get("http_endpoint")
    # text() of each; a non-empty string, what they almost always are, without the call
    return (tokens if type(tokens) is str and tokens else text(tokens),
            endpoint if type(endpoint) is str and endpoint else text(endpoint))


RULE = Imdsv2Required()

"""A minimal policy pack that echoes what it is sent: the harness's own test subject."""

import json

from pulumi_policy import (
    EnforcementLevel,
    PolicyConfigSchema,
    PolicyPack,
    ReportViolation,
    ResourceValidationArgs,
    ResourceValidationPolicy,
    StackValidationArgs,
    StackValidationPolicy,
)


def echo_resource(args: ResourceValidationArgs, report: ReportViolation) -> None:
    if args.resource_type == "test:index:Echo":
        size = args.props["size"]  # raises UnknownValueError when unknown during preview
        report(json.dumps({"size": size, "config": dict(args.get_config())}), args.urn)


def echo_stack(args: StackValidationArgs, report: ReportViolation) -> None:
    for r in args.resources:
        deps = sorted(d.urn for d in r.dependencies)
        parent = r.parent.urn if r.parent else None
        report(json.dumps({"parent": parent, "deps": deps}), r.urn)


PolicyPack(
    name="echo",
    enforcement_level=EnforcementLevel.ADVISORY,
    policies=[
        ResourceValidationPolicy(
            name="echo-resource",
            description="Echoes a resource.",
            enforcement_level=EnforcementLevel.MANDATORY,
            config_schema=PolicyConfigSchema(
                properties={"limit": {"type": "integer", "default": 3, "minimum": 1}}
            ),
            validate=echo_resource,
        ),
        StackValidationPolicy(
            name="echo-stack", description="Echoes a stack.", validate=echo_stack
        ),
    ],
)

# ruff: noqa: RUF001  (the multiplication sign rule messages use)
"""Hand-built results covering every kind of finding the renderers must show.

They do not depend on the engine: each report is tested against data whose every count is known.
Imported by the report tests as ``report_samples`` (conftest puts this folder on sys.path).
"""

from __future__ import annotations

from policies.result import CostLine, Result, RuleError, Violation
from policies.rules.base import Enforcement

M, A = Enforcement.MANDATORY, Enforcement.ADVISORY

POLICIES = [
    {
        "id": "gpu-no-vertical-upsize",
        "title": "Never scale a GPU instance vertically",
        "enforcement": "mandatory",
        "rationale": "A bigger size of the same family carries the same GPU.",
    },
    {
        "id": "gpu-smallest-instance",
        "title": "Use the smallest size that carries the GPU",
        "enforcement": "mandatory",
        "rationale": "Scale out with more of the smallest size.",
    },
    {
        "id": "gpu-chargeback-tags",
        "title": "GPU resources carry chargeback tags",
        "enforcement": "advisory",
        "rationale": "Compute debt is reported per team.",
    },
    {
        "id": "imdsv2-required",
        "title": "IMDSv2 required",
        "enforcement": "mandatory",
        "rationale": "IMDSv1 is open to SSRF credential theft.",
    },
    {
        "id": "ebs-encrypted",
        "title": "EBS volumes encrypted",
        "enforcement": "disabled",
        "rationale": "Data at rest is encrypted.",
    },
]

TF_ADDR = 'module.gpu.aws_instance.worker["a"]'
LT_ADDR = "aws_launch_template.gpu"
ASG_ADDR = "aws_autoscaling_group.gpu"
URN = "urn:pulumi:dev::gpupool::aws:ec2/launchTemplate:LaunchTemplate::pool-lt"


def full_result(source: str = "plans/tf.json") -> Result:
    violations = [
        Violation(
            "gpu-no-vertical-upsize", M, TF_ADDR,
            "g4dn.xlarge → g4dn.2xlarge adds no GPU power | +$0.226/h\nadd 1 × g4dn.xlarge",
            "aws_instance", source,
        ),
        Violation(
            "gpu-smallest-instance", M, TF_ADDR,
            "g4dn.2xlarge is not the smallest size with a T4 (g4dn.xlarge)", "aws_instance", source,
        ),
        Violation(
            "gpu-chargeback-tags", A, LT_ADDR, "missing tags: cost-center, <team>",
            "aws_launch_template", source,
        ),
        Violation(
            "imdsv2-required", A, LT_ADDR,
            "cannot verify: metadata_options unknown until apply", "aws_launch_template", source,
            unknown=True,
        ),
        Violation(
            "gpu-smallest-instance", M, ASG_ADDR,
            "cannot verify: instance type unknown until apply", "aws_autoscaling_group", source,
            unknown=True,
        ),
        Violation(
            "gpu-smallest-instance", M, URN, "g5.2xlarge is not the smallest A10G size",
            "aws:ec2/launchTemplate:LaunchTemplate", "stack dev @ HEAD~1..worktree",
            waived_by="W-7",
            detail={"waiver": {"owner": "ml-team", "reason": "benchmark", "expires": "2027-01-31"}},
        ),
    ]
    errors = [
        RuleError("gpu-pool-scales-on-utilisation", "KeyError: 'target_value'", ASG_ADDR),
        RuleError("imdsv2-required", "rule crashed: boom"),
    ]
    cost = [
        CostLine(TF_ADDR, 0.526, 0.752),
        CostLine(LT_ADDR, None, 1.006, "new pool"),
        CostLine(ASG_ADDR, 0.526, None, "instance type unknown until apply"),
    ]
    return Result(
        violations=violations,
        errors=errors,
        sources=[source, "stack dev @ HEAD~1..worktree"],
        policies=POLICIES,
        resources_evaluated=12,
        cost=cost,
    )


def empty_result() -> Result:
    return Result(violations=[], errors=[], sources=["plans/tf.json"], policies=POLICIES,
                  resources_evaluated=3)


def advisory_only_result() -> Result:
    return Result(
        violations=[
            Violation("gpu-chargeback-tags", A, LT_ADDR, "missing tag team", "aws_launch_template",
                      "plans/tf.json"),
            Violation("gpu-smallest-instance", M, TF_ADDR, "waived one", "aws_instance",
                      "plans/tf.json", waived_by="W-1"),
        ],
        errors=[],
        sources=["plans/tf.json"],
        policies=POLICIES,
        resources_evaluated=3,
        cost=[CostLine(TF_ADDR, 4.352, 0.526)],
    )

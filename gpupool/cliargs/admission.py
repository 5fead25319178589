"""Arguments of ``gpupool admission``: the kit's rules as the cluster's admission policies."""

from __future__ import annotations

import argparse

from gpupool.cliargs.parser import command


def add_policy_inputs(p: argparse.ArgumentParser) -> None:
    """The policy config and waivers ``gpupool check`` reads, for the admission policies."""
    p.add_argument("--config", metavar="FILE",
                   help="policy configuration (YAML, as gpupool check --config): enforcement "
                        "and parameters of the admission policies")
    p.add_argument("--waivers", metavar="FILE",
                   help="waivers (YAML, as gpupool check --waivers): matchConditions")
    p.add_argument("--today", metavar="DATE",
                   help="judge waiver expiry as of this day, YYYY-MM-DD (default: today)")


def add_admission(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    a = command(sub, "admission", "the Kubernetes rules as ValidatingAdmissionPolicies",
                "Generate, from the per-object Kubernetes rules, a ValidatingAdmissionPolicy, "
                "its binding and its parameters (a ConfigMap) per rule, for Kubernetes 1.30 "
                "and later: the cluster refuses what the pull request would. mandatory rules "
                "Deny, advisory ones Warn and Audit, disabled ones are left out.",
                ["gpupool admission render --out deploy/admission",
                 "gpupool admission render --config policy.yaml --waivers waivers.yaml "
                 "--out deploy/admission",
                 "gpupool admission render --today 2026-12-31"])
    actions = a.add_subparsers(dest="action", required=True, metavar="ACTION")
    r = command(actions, "render", "write the policies, bindings and params as YAML",
                "Write the admission objects, each validated against the Kubernetes 1.30 "
                "schemas and the newest ones, one file per object in apply order (one YAML "
                "stream on stdout without --out, for kubectl apply -f -).",
                ["gpupool admission render --out deploy/admission",
                 "gpupool admission render --config policy.yaml --namespace platform"])
    add_policy_inputs(r)
    r.add_argument("--out", metavar="DIR", help="directory to write into (default: stdout)")
    r.add_argument("--namespace", metavar="NS", default="gpupool-system",
                   help="namespace of the params ConfigMaps (default gpupool-system)")

"""Arguments of the commands that read a stack or judge plans: validate, plan, check, render."""

from __future__ import annotations

import argparse

from gpupool.cliargs.parser import command

FORMATS_CHECK = ("text", "json", "sarif", "junit", "markdown")


def add_validate(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    v = command(sub, "validate", "validate a stack's configuration (every error at once)",
                "Validate a stack file against the kit's models; every problem is printed as "
                "'file: key: expected …' and the exit code is 2 when there is any.",
                ["gpupool validate dev", "gpupool validate stacks/Pulumi.prod.yaml"])
    v.add_argument("stack", metavar="STACK", help="stack name (stacks/Pulumi.<name>.yaml) or file")


def add_plan(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    pl = command(sub, "plan", "offline plan of a stack (Pulumi mock runtime)",
                 "Run the stack's Pulumi program in-process under Pulumi's mock runtime, data "
                 "sources answered from bundled fixtures; print the resources and the GPU "
                 "capacity and cost envelopes.",
                 ["gpupool plan dev", "gpupool plan prod --format json --output prod-plan.json"])
    pl.add_argument("stack", metavar="STACK")
    pl.add_argument("--format", choices=("text", "json"), default="text")
    pl.add_argument("--output", metavar="FILE")


def add_check(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    ch = command(sub, "check", "evaluate policies on plans or a stack",
                 "Evaluate the policies on Terraform plans (terraform show -json), Pulumi "
                 "previews (pulumi preview --json), gpupool offline plans, Kubernetes manifests "
                 "(YAML/JSON files or directories, judged together), or a stack planned "
                 "offline. Exit 0: nothing blocks; 1: a mandatory violation; 2: bad input.",
                 ["gpupool check plan.json", "gpupool check --stack dev --base origin/main",
                  "gpupool check k8s/ rendered.yaml",
                  "gpupool check preview.json --format sarif --output gpupool.sarif",
                  "gpupool check --stack dev --format sarif=gpupool.sarif "
                  "--format markdown=comment.md --format text",
                  "gpupool check plan.json --skip-check gpu-chargeback-tags --soft-fail"])
    ch.add_argument("plans", metavar="PLAN_FILE", nargs="*",
                    help="plan files to check; - reads one from standard input")
    ch.add_argument("--cluster-dump", metavar="FILE", action="append",
                    help="what runs on a cluster (kubectl get <kinds> -A -o json, a List): "
                         "judged with the same rules, a summary per namespace on stderr")
    ch.add_argument("--stack", metavar="STACK", action="append",
                    help="plan this stack offline and check it (repeat for several stacks)")
    ch.add_argument("--base", metavar="GIT_REF",
                    help="with --stack: diff each stack against this git ref")
    ch.add_argument("--format", metavar="FORMAT[=FILE]", action="append",
                    help=f"report format: {', '.join(FORMATS_CHECK)} (default text); repeat it "
                         "for several reports from one run, each FORMAT=FILE to its own file")
    ch.add_argument("--output", metavar="FILE",
                    help="write the report given without =FILE here instead of stdout")
    ch.add_argument("--config", metavar="FILE", help="policy configuration (YAML)")
    ch.add_argument("--waivers", metavar="FILE", help="waivers (YAML)")
    ch.add_argument("--today", metavar="DATE",
                    help="judge waiver expiry as of this day, YYYY-MM-DD (default: today)")
    ch.add_argument("--utilisation", metavar="SNAPSHOT",
                    help="gpupool debt --format json output: the measured utilisation "
                         "gpu-capacity-vs-utilisation judges capacity raises by")
    ch.add_argument("--teams", metavar="FILE",
                    help="teams file for team-gpu-quota (stacks/teams.yaml); not read by default")
    ch.add_argument("--changed-only", action="store_true", help="skip unchanged (no-op) resources")
    # As Checkov users type them: comma-separated, repeatable, * as a wildcard (k8s-*).
    ch.add_argument("--check", metavar="ID,…", action="append", dest="only_checks",
                    help="run only these policies (comma-separated IDs or patterns such as "
                         "k8s-*); every other policy is skipped")
    ch.add_argument("--skip-check", metavar="ID,…", action="append", dest="skip_checks",
                    help="skip these policies (comma-separated IDs or patterns)")
    ch.add_argument("--tf-root", metavar="DIR",
                    help="the Terraform root module's sources (*.tf): SARIF points Terraform "
                         "findings at their .tf lines (default: the plan file's directory)")
    ch.add_argument("--soft-fail", action="store_true",
                    help="report violations but exit 0 (bad input still exits 2, a rule error 1)")


def add_render(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    r = command(sub, "render", "write a stack's Kubernetes manifests as YAML (GitOps)",
                "Plan the stack offline and write the objects of its Kubernetes pools as plain "
                "YAML, one file per object in apply order, each validated against the "
                "Kubernetes OpenAPI schema of the pool's cluster version (custom resources: "
                "their CRDs' schemas), with the kit's Kubernetes rules as ValidatingAdmission"
                "Policies beside them (a pool's admissionPolicies: false leaves them out). "
                "Commit DIR for Argo CD or Flux.",
                ["gpupool render prod --out deploy/k8s",
                 "gpupool render stacks/Pulumi.prod.yaml --out /tmp/prod-manifests",
                 "gpupool check deploy/k8s"])
    from gpupool.cliargs.admission import add_policy_inputs  # (not for validate, plan, check)

    r.add_argument("stack", metavar="STACK")
    r.add_argument("--out", metavar="DIR", required=True, help="directory to write into")
    add_policy_inputs(r)  # the admission policies' enforcement, parameters and waivers

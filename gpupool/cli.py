"""The ``gpupool`` command line.

Argument parsing only: each subcommand lives in ``gpupool.commands.<name>`` and is imported when
it runs, so ``gpupool --help`` never pays for Pulumi, boto3 or rich. Bad input or usage exits 2
with one line per problem on stderr and no traceback; see ``gpupool.errors``.

Each command's arguments are declared by one ``_add_<command>`` function listed in
``COMMANDS``: a new command adds its own function and one line there. Every subparser carries a
description and an example (``epilog``), so ``gpupool <command> --help`` teaches by example.
"""

from __future__ import annotations

import argparse
import importlib
import os
import sys
from collections.abc import Callable, Sequence

from gpupool import __version__

FORMATS_CHECK = ("text", "json", "sarif", "junit", "markdown")



class _Parser(argparse.ArgumentParser):
    """argparse that teaches: a missing subcommand prints the help, a mistyped option, command
    or choice gets a "did you mean", and every usage error is one line (exit 2)."""

    def parse_known_args(self, args=None, namespace=None):  # type: ignore[no-untyped-def]
        parsed, extras = super().parse_known_args(args, namespace)
        if extras and self._is_root:
            # argparse reports them from the top parser; the subcommand's options know better
            chosen = _chosen_parser(self, parsed)
            chosen.error(f"unrecognized arguments: {' '.join(extras)}"
                         f"{_suggest_options(extras, chosen)}")
        return parsed, extras

    @property
    def _is_root(self) -> bool:
        return " " not in self.prog

    def error(self, message: str) -> None:  # type: ignore[override]
        subs = _subcommands(self)
        if (subs is not None and message.startswith("the following arguments are required:")
                and argparse._get_action_name(subs) in message):
            self.print_help()  # `gpupool`, `gpupool netcheck`: what can be done here
            raise SystemExit(0)
        sys.stderr.write(f"{self.prog}: {message}{_suggest_choice(message)}\n")
        raise SystemExit(2)


def _subcommands(parser: argparse.ArgumentParser) -> argparse.Action | None:
    return next((a for a in parser._actions if isinstance(a, argparse._SubParsersAction)), None)


def _chosen_parser(parser: argparse.ArgumentParser, ns: argparse.Namespace
                   ) -> argparse.ArgumentParser:
    """The (sub)parser that parsed the deepest subcommand given."""
    while (subs := _subcommands(parser)) is not None:
        chosen = getattr(ns, subs.dest, None)
        if not isinstance(chosen, str) or chosen not in subs.choices:
            break
        parser = subs.choices[chosen]
    return parser


def _close(word: str, choices: Sequence[str]) -> str | None:
    import difflib

    found = difflib.get_close_matches(word, list(choices), n=1, cutoff=0.6)
    return found[0] if found else None


def _suggest_options(extras: Sequence[str], parser: argparse.ArgumentParser) -> str:
    options = [o for a in parser._actions for o in a.option_strings if o.startswith("--")]
    for arg in extras:
        if arg.startswith("-"):
            near = _close(arg.split("=", 1)[0], options)
            if near is not None:
                return f" (did you mean {near}?)"
    return f" (see {parser.prog} --help)"


def _suggest_choice(message: str) -> str:
    import re

    m = re.search(r"invalid choice: '(.*?)' \(choose from (.*)\)$", message)
    if m is None:
        return ""
    near = _close(m.group(1), re.findall(r"'([^']*)'", m.group(2)))
    return f" (did you mean {near}?)" if near else ""


def _command(
    sub: argparse._SubParsersAction[argparse.ArgumentParser],
    name: str,
    summary: str,
    description: str,
    examples: Sequence[str],
) -> argparse.ArgumentParser:
    """A subparser with a one-line summary (for ``gpupool --help``), a description and examples."""
    epilog = "examples:\n" + "\n".join(f"  {e}" for e in examples)
    return sub.add_parser(
        name,
        help=summary,
        description=description,
        epilog=epilog,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )


def _add_validate(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    v = _command(sub, "validate", "validate a stack's configuration (every error at once)",
                 "Validate a stack file against the kit's models; every problem is printed as "
                 "'file: key: expected …' and the exit code is 2 when there is any.",
                 ["gpupool validate dev", "gpupool validate stacks/Pulumi.prod.yaml"])
    v.add_argument("stack", metavar="STACK", help="stack name (stacks/Pulumi.<name>.yaml) or file")


def _add_catalog(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    c = _command(sub, "catalog", "show the GPU instance catalog",
                 "GPU instance types with their GPUs, network baseline and on-demand prices, "
                 "cheapest GPU-hour first, and the smallest size per GPU marked (the size pools "
                 "scale out with). The table fits a 100-column terminal.",
                 ["gpupool catalog --gpu T4", "gpupool catalog --gpu g5",
                  "gpupool catalog --format json",
                  "gpupool catalog --gpu A10G --region eu-west-1"])
    c.add_argument("--gpu", metavar="MODEL|FAMILY",
                   help="only types carrying this GPU model (T4, A10G) or of this family (g5)")
    c.add_argument("--format", choices=("text", "json"), default="text")
    c.add_argument("--region", dest="price_region", metavar="REGION", default=None,
                   help="on-demand prices of this region (default: us-east-1)")
    csub = c.add_subparsers(dest="catalog_command", parser_class=_Parser)
    r = _command(csub, "refresh", "rebuild the catalog from EC2 DescribeInstanceTypes",
                 "Regenerate the catalog data file from EC2 DescribeInstanceTypes (boto3, "
                 "honours AWS_ENDPOINT_URL) joined with the recorded price list.",
                 ["gpupool catalog refresh --output /tmp/catalog.json"])
    r.add_argument("--output", metavar="FILE", help="where to write (default: the bundled file)")
    r.add_argument("--region", default="us-east-1")
    r.add_argument("--prices", metavar="FILE", help="price list JSON (default: the bundled one)")


def _add_plan(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    pl = _command(sub, "plan", "offline plan of a stack (Pulumi mock runtime)",
                  "Run the stack's Pulumi program in-process under Pulumi's mock runtime, data "
                  "sources answered from bundled fixtures; print the resources and the GPU "
                  "capacity and cost envelopes.",
                  ["gpupool plan dev", "gpupool plan prod --format json --output prod-plan.json"])
    pl.add_argument("stack", metavar="STACK")
    pl.add_argument("--format", choices=("text", "json"), default="text")
    pl.add_argument("--output", metavar="FILE")


def _add_check(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    ch = _command(sub, "check", "evaluate policies on plans or a stack",
                  "Evaluate the policies on Terraform plans (terraform show -json), Pulumi "
                  "previews (pulumi preview --json), gpupool offline plans, Kubernetes manifests "
                  "(YAML/JSON files or directories, judged together), or a stack planned "
                  "offline. Exit 0: nothing blocks; 1: a mandatory violation; 2: bad input.",
                  ["gpupool check plan.json", "gpupool check --stack dev --base origin/main",
                   "gpupool check k8s/ rendered.yaml",
                   "gpupool check preview.json --format sarif --output gpupool.sarif",
                   "gpupool check --stack dev --format sarif=gpupool.sarif "
                   "--format markdown=comment.md --format text"])
    ch.add_argument("plans", metavar="PLAN_FILE", nargs="*",
                    help="plan files to check; - reads one from standard input")
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


def _sizing_flags(p: argparse.ArgumentParser, defaults: bool = True) -> None:
    """The model and workload flags ``estimate`` and ``new-stack`` share (``new-stack`` takes
    its defaults from the template, so it passes ``defaults=False``)."""

    def d(value: object) -> object:
        return value if defaults else None

    model = p.add_mutually_exclusive_group()
    model.add_argument("--model-config", metavar="FILE",
                       help="a Hugging Face config.json (dense decoder or encoder)")
    model.add_argument("--params", metavar="N", help="parameter count, such as 7B or 125M")
    p.add_argument("--dtype", choices=("fp32", "bf16", "fp16", "int8", "int4"), default=d("fp16"))
    p.add_argument("--mode", choices=("inference", "training"), default=d("inference"))
    p.add_argument("--batch", type=int, default=d(1), metavar="B")
    p.add_argument("--seq-len", type=int, metavar="L",
                   help="tokens per sequence (default: the model's context, at most 8192)")
    p.add_argument("--optimizer", choices=("adam", "adamw", "sgd"), default=d("adamw"))
    p.add_argument("--gradient-checkpointing", action="store_true",
                   help="training: keep only each layer's input, recompute the rest")
    p.add_argument("--eager-attention", action="store_true",
                   help="attention scores are materialised (no FlashAttention / SDPA)")
    p.add_argument("--headroom", type=float, default=d(0.10), metavar="F",
                   help="fraction kept free for allocator fragmentation (default 0.10)")
    p.add_argument("--overhead-gib", type=float, default=d(0.5), metavar="G",
                   help="CUDA context and framework workspace per GPU (default 0.5)")
    p.add_argument("--arch", choices=("x86_64", "arm64", "any"), default=d("x86_64"))


def _add_estimate(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    e = _command(sub, "estimate", "GPU memory a model needs, and the cheapest GPU that holds it",
                 "Estimate the GPU memory of inference or training, component by component "
                 "(weights, gradients, optimizer states, activations, KV cache, CUDA context, "
                 "headroom), and recommend the cheapest catalog GPU per hour that holds it, or "
                 "the fewest GPUs of one size. Formulas and sources: docs/sizing.md.",
                 ["gpupool estimate --model-config config.json --dtype fp16 --seq-len 4096",
                  "gpupool estimate --params 7B --mode training --dtype bf16 "
                  "--gradient-checkpointing --batch 4",
                  "gpupool estimate --params 125M --arch any --format json"])
    _sizing_flags(e)
    e.add_argument("--format", choices=("text", "json"), default="text")


def _add_remoting(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    from gpupool.argtypes import count, non_negative, positive

    r = _command(sub, "remoting", "network budget of an application on a remote GPU",
                 "How much slower an application runs when its CUDA calls go to a GPU proxy "
                 "over the network, from its profile (call counts and bytes, optionally a "
                 "per-call trace): the predicted overhead at an RTT and a bandwidth, the largest "
                 "RTT at a bandwidth, or the least bandwidth at an RTT. --instance-type budgets "
                 "against what ONE flow gets on that type (its baseline, capped per flow by the "
                 "network kind) and the kind's RTT floor, and lists every network kind of the "
                 "type with its verdict. Exit 0: the budget is met (or can be); 1: it is not; "
                 "2: bad input. See docs/remoting.md.",
                 ["gpupool remoting examples/profiles/bert-inference.yaml --rtt-us 20 "
                  "--bandwidth-gbps 100",
                  "gpupool remoting examples/profiles/resnet50-inference.yaml "
                  "--instance-type g5.xlarge --format json",
                  "gpupool remoting examples/profiles/bert-inference.yaml "
                  "--instance-type p5.4xlarge --network efa"])
    r.add_argument("profile", metavar="PROFILE", help="application profile (YAML)")
    r.add_argument("--rtt-us", type=non_negative, metavar="R", help="round-trip time, µs")
    r.add_argument("--bandwidth-gbps", type=positive, metavar="B", help="bandwidth, Gbit/s")
    r.add_argument("--instance-type", metavar="T",
                   help="proxy instance type: what one flow gets on it (baseline capped per "
                        "flow) is B, unless --bandwidth-gbps is given")
    r.add_argument("--network", choices=("tcp", "ena-express", "efa"), default=None,
                   help="with --instance-type: the network kind budgeted (default tcp: TCP over "
                        "ENA in a cluster placement group)")
    r.add_argument("--max-overhead", type=positive, default=0.05, metavar="E",
                   help="budget: largest slowdown as a fraction of the local run (default 0.05)")
    r.add_argument("--top", type=count, default=3, metavar="K",
                   help="with a trace: what-ifs for the K costliest synchronous calls (default 3)")
    r.add_argument("--format", choices=("text", "json"), default="text")


def _add_netcheck(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    from gpupool.argtypes import count, non_negative, positive

    port = 9801  # gpupool.netcheck.protocol.DEFAULT_PORT (not imported: keep --help light)
    n = _command(sub, "netcheck", "measure RTT and bandwidth between a client and a GPU proxy",
                 "Run 'serve' on the proxy host and 'probe' on the client host: small-message "
                 "round trips (TCP_NODELAY) and bulk throughput, and with --profile the "
                 "application's predicted overhead on this network and a verdict. See "
                 "docs/netcheck.md.",
                 [f"gpupool netcheck serve --bind 10.0.1.7 --port {port}",
                  f"gpupool netcheck probe 10.0.1.7:{port} --profile app.yaml --seconds 10",
                  f"gpupool netcheck probe 10.0.1.7:{port} --streams 4 --format json"])
    nsub = n.add_subparsers(dest="netcheck_command", required=True, parser_class=_Parser)
    s = _command(nsub, "serve", "run the bounded responder the probe measures against",
                 "Echo small messages, swallow or send bulk streams; nothing else (no files, no "
                 "commands). Bounded: session limit, read timeout, session length; stops "
                 "cleanly on SIGTERM. Prints 'listening on ADDR:PORT' first.",
                 [f"gpupool netcheck serve --bind 10.0.1.7 --port {port}"])
    s.add_argument("--bind", default="127.0.0.1", metavar="ADDR",
                   help="address to listen on (default 127.0.0.1: give the private IP)")
    s.add_argument("--port", type=int, default=port, metavar="P", help=f"default {port}")
    s.add_argument("--max-sessions", type=count, default=8, metavar="N")
    s.add_argument("--timeout", type=positive, default=10.0, metavar="S",
                   help="seconds a read may wait (default 10)")
    s.add_argument("--max-seconds", type=positive, default=60.0, metavar="S",
                   help="longest session (default 60)")
    s.add_argument("--echo-delay-us", type=non_negative, default=0.0, metavar="D",
                   help="add D µs before each echo (calibration; a slower network on demand)")
    pr = _command(nsub, "probe", "measure RTT and bandwidth to a netcheck server",
                  "Round trips for 40 % of --seconds, then bulk streams client to server "
                  "(30 %) and server to client (30 %); bandwidth_gbps is the lower direction. "
                  "With --profile: the predicted overhead at the median RTT, bytes_to_gpu at "
                  "the client-to-server bandwidth and bytes_from_gpu at the server-to-client "
                  "one, each direction against what is left of the budget, and a verdict "
                  "(exit 1 when the budget is not met).",
                  [f"gpupool netcheck probe 10.0.1.7:{port} --profile app.yaml",
                   f"gpupool netcheck probe 10.0.1.7:{port} --cloudwatch "
                   "--dimension AutoScalingGroupName=proxies"])
    pr.add_argument("target", metavar="HOST:PORT")
    pr.add_argument("--profile", metavar="F", help="application profile (YAML) to judge")
    pr.add_argument("--max-overhead", type=positive, default=0.05, metavar="E",
                    help="with --profile: the budget, a fraction of the local run (default 0.05)")
    pr.add_argument("--seconds", type=positive, default=5.0, metavar="S",
                    help="measuring time in all (default 5)")
    pr.add_argument("--streams", type=count, default=1, metavar="N",
                    help="parallel bulk streams (default 1: what one connection gets)")
    pr.add_argument("--message-bytes", type=count, default=64, metavar="B",
                    help="size of a round-trip message (default 64, at most 65536)")
    pr.add_argument("--format", choices=("text", "json"), default="text")
    pr.add_argument("--cloudwatch", action="store_true",
                    help="also put the figures into CloudWatch (boto3)")
    pr.add_argument("--namespace", default="GPUPool/Netcheck")
    pr.add_argument("--dimension", action="append", metavar="NAME=VALUE")
    pr.add_argument("--region", metavar="R")


def _add_new_stack(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    n = _command(sub, "new-stack", "write a team's GPU stack from a template, sized and in quota",
                 "Render a template (inference-service, batch-training, notebook, "
                 "remote-gpu-client, or a template file) into stacks/Pulumi.<team>-<env>.yaml "
                 "on the cheapest GPU the team may use that holds the model, validated, within "
                 "the team's GPU quota and monthly budget from stacks/teams.yaml. Anything over "
                 "quota or budget, or a GPU the team may not use, is refused (exit 2). "
                 "remote-gpu-client writes a remote-GPU proxy tier sized for --profile. See "
                 "docs/self-service.md.",
                 ["gpupool new-stack research dev --template inference-service "
                  "--model-config config.json --max-gpus 4",
                  "gpupool new-stack research prod --template batch-training --params 1.1B",
                  "gpupool new-stack research dev --template notebook --output -",
                  "gpupool new-stack research staging --template remote-gpu-client "
                  "--profile stacks/profiles/embeddings.yaml"])
    n.add_argument("team", metavar="TEAM", help="a team of stacks/teams.yaml")
    n.add_argument("env", metavar="ENV", choices=("dev", "staging", "prod", "sandbox", "test"),
                   help="dev, staging, prod, sandbox or test")
    n.add_argument("--template", required=True, metavar="NAME",
                   help="inference-service, batch-training, notebook, remote-gpu-client, or a "
                        "template file")
    n.add_argument("--max-gpus", type=int, metavar="N", help="GPUs at max size")
    n.add_argument("--gpu", metavar="MODEL", help="this GPU model (one the team may use)")
    _sizing_flags(n, defaults=False)
    n.add_argument("--profile", metavar="FILE",
                   help="remote-gpu-client: the application's remoting profile (its network "
                        "budget sizes the proxies)")
    n.add_argument("--max-overhead", type=float, metavar="E",
                   help="remote-gpu-client: the slowdown the application accepts (default 0.05)")
    n.add_argument("--region", default="us-east-1")
    n.add_argument("--teams", metavar="FILE", help="teams file (default: stacks/teams.yaml)")
    n.add_argument("--output", metavar="FILE",
                   help="where to write (default: stacks/Pulumi.<team>-<env>.yaml; - for stdout)")
    n.add_argument("--force", action="store_true", help="replace an existing stack file")


def _add_render(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    r = _command(sub, "render", "write a stack's Kubernetes manifests as YAML (GitOps)",
                 "Plan the stack offline and write the objects of its Kubernetes pools as plain "
                 "YAML, one file per object in apply order, each validated against the "
                 "Kubernetes OpenAPI schema of the pool's cluster version (custom resources: "
                 "their CRDs' schemas). Commit DIR for Argo CD or Flux.",
                 ["gpupool render prod --out deploy/k8s",
                  "gpupool render stacks/Pulumi.prod.yaml --out /tmp/prod-manifests",
                  "gpupool check deploy/k8s"])
    r.add_argument("stack", metavar="STACK")
    r.add_argument("--out", metavar="DIR", required=True, help="directory to write into")


def _add_debt(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    d = _command(sub, "debt", "compute debt: GPU capacity, allocation and use per pool and team",
                 "Read the region's GPU autoscaling groups and their CloudWatch metrics (boto3: "
                 "standard credentials, AWS_ENDPOINT_URL honoured) and report capacity, "
                 "allocation, use and debt (allocated minus used) in GPU-hours and dollars, "
                 "per pool and team, with recommendations. A pool without GPU utilisation "
                 "metrics is 'not measured', never zero. See docs/debt.md.",
                 ["gpupool debt --since 7d", "gpupool debt --by team --chart debt.png",
                  "gpupool debt --start 2026-11-01 --end 2026-11-08 --format json "
                  "--output utilisation.json"])
    d.add_argument("--region", help="AWS region (default: AWS_REGION / the profile's)")
    d.add_argument("--since", metavar="DURATION", help="window ending now: 90m, 12h, 7d, 2w "
                   "(default 7d)")
    d.add_argument("--start", metavar="TIME", help="window start, ISO 8601 (UTC if no offset)")
    d.add_argument("--end", metavar="TIME", help="window end, ISO 8601 (default: now)")
    d.add_argument("--period", type=int, metavar="SECONDS",
                   help="CloudWatch period (default: the smallest giving ≤ 200 points)")
    d.add_argument("--by", choices=("pool", "team"), default="pool")
    d.add_argument("--format", choices=("text", "json", "csv"), default="text")
    d.add_argument("--chart", metavar="FILE", help="write a chart (.png or .svg), after the "
                   "report")
    d.add_argument("--output", metavar="FILE")
    d.add_argument("--deadline", metavar="SECONDS", default="900",
                   help="give up reading after this long in all, retries included (default "
                   "900)")


# One adder per command, in the order ``gpupool --help`` lists them.
COMMANDS: tuple[Callable[[argparse._SubParsersAction[argparse.ArgumentParser]], None], ...] = (
    _add_validate,
    _add_catalog,
    _add_plan,
    _add_check,
    _add_estimate,
    _add_remoting,
    _add_netcheck,
    _add_new_stack,
    _add_render,
    _add_debt,
)


def build_parser() -> argparse.ArgumentParser:
    p = _Parser(prog="gpupool", description="GPU pools that scale out on utilisation, never up.",
                epilog="examples:\n  gpupool validate dev\n  gpupool plan dev\n"
                       "  gpupool check --stack dev --base origin/main\n"
                       "  gpupool catalog --gpu g5\n\n"
                       "Every command explains itself: gpupool COMMAND --help",
                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--version", action="version", version=f"gpupool {__version__}")
    sub = p.add_subparsers(dest="command", required=True, parser_class=_Parser)
    for add in COMMANDS:
        add(sub)
    return p


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    # The kit's models use no pydantic plugin; looking for one reads the metadata of every
    # installed distribution when the first model is built (10-15 ms of CPU here, measured).
    # A user who sets the variable (to name plugins to skip) keeps their choice.
    os.environ.setdefault("PYDANTIC_DISABLE_PLUGINS", "__all__")
    name = args.command
    if name == "catalog" and getattr(args, "catalog_command", None) == "refresh":
        name = "catalog_refresh"
    from gpupool.errors import InputError
    from gpupool.interrupt import Terminated, signals_unwind

    try:
        with signals_unwind():  # SIGTERM cleans up (worktrees, temp dirs, children) like Ctrl-C
            module = importlib.import_module(f"gpupool.commands.{name.replace('-', '_')}")
            return int(module.run(args))
    except InputError as e:
        for line in e.problems:
            sys.stderr.write(f"gpupool {args.command}: {line}\n")
        return 2
    except KeyboardInterrupt:
        sys.stderr.write(f"gpupool {args.command}: stopped by SIGINT\n")
        return 130
    except Terminated as e:
        sys.stderr.write(f"gpupool {args.command}: stopped by {e}\n")
        return e.exit_code
    except BrokenPipeError:  # the reader of stdout went away (`| head -1`): not a failure
        from gpupool.output import stdout_gone

        stdout_gone()
        return 0


if __name__ == "__main__":
    raise SystemExit(main())

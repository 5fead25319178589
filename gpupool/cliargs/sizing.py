"""Arguments of the commands that choose GPUs: catalog, estimate, new-stack."""

from __future__ import annotations

import argparse

from gpupool.cliargs.parser import Parser, command


def add_catalog(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    c = command(sub, "catalog", "show the GPU instance catalog",
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
    csub = c.add_subparsers(dest="catalog_command", parser_class=Parser)
    r = command(csub, "refresh", "rebuild the catalog from EC2 DescribeInstanceTypes",
                "Regenerate the catalog data file from EC2 DescribeInstanceTypes (boto3, "
                "honours AWS_ENDPOINT_URL) joined with the recorded price list.",
                ["gpupool catalog refresh",
                 "gpupool catalog refresh --output gpupool/catalog/data/gpu-instance-types.json"])
    r.add_argument("--output", metavar="FILE",
                   help="where to write (default: gpu-instance-types.json in the current "
                        "directory, never the installed package)")
    r.add_argument("--region", default="us-east-1")
    r.add_argument("--prices", metavar="FILE", help="price list JSON (default: the bundled one)")


def sizing_flags(p: argparse.ArgumentParser, defaults: bool = True) -> None:
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


def add_estimate(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    e = command(sub, "estimate", "GPU memory a model needs, and the cheapest GPU that holds it",
                "Estimate the GPU memory of inference or training, component by component "
                "(weights, gradients, optimizer states, activations, KV cache, CUDA context, "
                "headroom), and recommend the cheapest catalog GPU per hour that holds it, or "
                "the fewest GPUs of one size. Formulas and sources: docs/sizing.md.",
                ["gpupool estimate --model-config config.json --dtype fp16 --seq-len 4096",
                 "gpupool estimate --params 7B --mode training --dtype bf16 "
                 "--gradient-checkpointing --batch 4",
                 "gpupool estimate --params 125M --arch any --format json"])
    sizing_flags(e)
    e.add_argument("--format", choices=("text", "json"), default="text")


def add_new_stack(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    n = command(sub, "new-stack", "write a team's GPU stack from a template, sized and in quota",
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
    sizing_flags(n, defaults=False)
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

"""``gpupool catalog refresh [--output FILE] [--region R] [--prices FILE]``.

Rebuilds the catalog data file from EC2 DescribeInstanceTypes (boto3; ``AWS_ENDPOINT_URL`` is
honoured) and the recorded price list. Without ``--output`` it writes ``gpu-instance-types.json``
in the current directory, never into the installed package: a refresh is data to review (what
the API returns today against what the kit ships), and an installed package is not the user's
to edit (nor writable for most). The shipped copy is made from a checkout with ``--output
gpupool/catalog/data/gpu-instance-types.json`` (see ``gpupool.catalog.refresh``).
"""

from __future__ import annotations

import argparse
import sys
from collections import Counter
from pathlib import Path

from gpupool.catalog.refresh import refresh

DEFAULT_OUTPUT = "gpu-instance-types.json"  # in the current directory


def run(args: argparse.Namespace) -> int:
    output = Path(args.output) if args.output else Path.cwd() / DEFAULT_OUTPUT
    doc = refresh(output, region=args.region, prices_path=args.prices)
    types = doc["types"]
    models = Counter(t["gpu_model"] for t in types)
    unpriced = [t["instance_type"] for t in types if t["price_per_hour"] is None]
    out = sys.stdout
    out.write(
        f"wrote {len(types)} GPU instance types to {output} "
        f"(from {doc['source']['endpoint']}, region {args.region})\n"
    )
    out.write("GPU models: " + ", ".join(f"{m} ({n})" for m, n in sorted(models.items())) + "\n")
    if unpriced:
        out.write(f"no recorded price for {len(unpriced)}: {', '.join(unpriced)}\n")
    return 0

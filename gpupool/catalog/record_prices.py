"""``python -m gpupool.catalog.record_prices``: write ``data/prices.json`` from its two sources.

The table's format and its checks are :mod:`gpupool.catalog.prices`; this is the maintainer's
tool that makes it, apart from it because it needs the catalog's own type list (and the catalog
reads the table: kept in one module, the two would import each other).
"""

from __future__ import annotations

import argparse
import json
from collections.abc import Sequence
from importlib import resources
from pathlib import Path

from gpupool.catalog import prices
from gpupool.catalog.model import load_catalog
from gpupool.catalog.refresh import load_supplement
from gpupool.output import write_output


def main(argv: Sequence[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m gpupool.catalog.record_prices",
                                description=prices.__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--karpenter", type=Path, required=True,
                   help="zz_generated.pricing_aws.go of aws/karpenter-provider-aws")
    p.add_argument("--karpenter-commit", required=True)
    p.add_argument("--karpenter-date", required=True, help="its 'generated at' timestamp")
    p.add_argument("--vantage", type=Path, required=True,
                   help="data/all_gpu_instances.js of tsaol/aws-gpu")
    p.add_argument("--vantage-commit", required=True)
    p.add_argument("--vantage-date", required=True, help="its 'Last updated' date")
    p.add_argument("--recorded-at", required=True)
    p.add_argument("--catalog", default=None, help="catalog data file (default: bundled)")
    p.add_argument("--output", type=Path, default=None, help="default: the bundled table")
    args = p.parse_args(argv)
    types = {t.instance_type for t in load_catalog(args.catalog)}
    types |= {r["InstanceType"] for r in load_supplement()["instance_types"]}
    primary = prices.karpenter_prices(args.karpenter.read_text())
    secondary = prices.vantage_prices(args.vantage.read_text())
    sources = {
        "karpenter": {
            "what": "AWS Price List as generated into Karpenter's pricing file",
            "url": "https://github.com/aws/karpenter-provider-aws/blob/"
                   f"{args.karpenter_commit}/pkg/providers/pricing/zz_generated.pricing_aws.go",
            "repository": "aws/karpenter-provider-aws",
            "commit": args.karpenter_commit,
            "generated_at": args.karpenter_date,
            "regions": sorted(primary),
        },
        "vantage": {
            "what": "instances.vantage.sh data (AWS Price List, every region) as committed to "
                    "tsaol/aws-gpu",
            "url": f"https://github.com/tsaol/aws-gpu/blob/{args.vantage_commit}/"
                   "data/all_gpu_instances.js",
            "repository": "tsaol/aws-gpu",
            "commit": args.vantage_commit,
            "generated_at": args.vantage_date,
            "checked": "its us-east-1 prices equal Karpenter's for every type both list",
        },
    }
    doc = prices.build_document(types, primary, secondary, sources, args.recorded_at)
    output = args.output or Path(
        str(resources.files("gpupool.catalog").joinpath("data", prices.PRICE_TABLE_FILE)))
    write_output(output, json.dumps(doc, indent=1, sort_keys=False) + "\n")  # whole or nothing
    print(f"wrote {output}: {len(doc['regions'])} regions")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

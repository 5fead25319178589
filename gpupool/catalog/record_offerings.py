"""``python -m gpupool.catalog.record_offerings``: write ``data/offerings.json`` from EC2.

What is recorded and how is :mod:`gpupool.catalog.offerings`; this is the maintainer's tool that
records it for the catalog's types, apart from it because the catalog reads the offerings (kept
in one module, the two would import each other).
"""

from __future__ import annotations

import argparse
import json
from collections.abc import Sequence
from pathlib import Path

from gpupool.catalog import offerings
from gpupool.catalog.model import load_catalog
from gpupool.errors import InputError


def main(argv: Sequence[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m gpupool.catalog.record_offerings",
                                description=offerings.__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--region", action="append", help="only these regions (repeat)")
    p.add_argument("--output", type=Path, default=None, help="default: the bundled file")
    args = p.parse_args(argv)
    types = sorted(t.instance_type for t in load_catalog())
    try:
        doc = offerings.record(types, args.region)
    except InputError as e:
        for line in e.problems:
            print(f"offerings: {line}")
        return 2
    output = args.output or offerings.bundled_path()
    output.write_text(json.dumps(doc, indent=1) + "\n")
    print(f"wrote {output}: {len(doc['regions'])} regions")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

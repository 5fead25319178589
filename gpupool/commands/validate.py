"""``gpupool validate STACK``."""

from __future__ import annotations

import argparse
import sys

from gpupool.config import load_stack


def run(args: argparse.Namespace) -> int:
    loaded = load_stack(args.stack)
    pools = ", ".join(f"{p.name}→{loaded.instance_types[p.name].instance_type}" for p in loaded.config.pools)
    sys.stdout.write(f"{loaded.path}: valid ({len(loaded.config.pools)} pool(s): {pools})\n")
    return 0

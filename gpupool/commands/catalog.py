"""``gpupool catalog [--gpu MODEL] [--format text|json]``: the GPU instance catalog.

Text is a table grouped by GPU (model, memory, architecture) with the smallest size of each
group marked, because that size is the one a pool should use and scale out with. JSON is the
row list whose keys DESIGN.md fixes, for scripts and other tools.
"""

from __future__ import annotations

import argparse
import json
from typing import Any

from gpupool.catalog import Catalog, InstanceType, load_catalog
from gpupool.errors import InputError
from gpupool.output import write_stdout

SMALLEST_MARK = "◆"
TIMES = "\u00d7"  # multiplication sign, as in "1 x T4"


def select(catalog: Catalog, gpu: str | None) -> list[InstanceType]:
    """The catalog's types, or those carrying ``gpu`` (case-insensitive model name)."""
    types = list(catalog)
    if gpu is None:
        return types
    wanted = gpu.strip().casefold()
    chosen = [t for t in types if t.gpu_model.casefold() == wanted]
    if not chosen:
        raise InputError(
            f"--gpu: expected one of {', '.join(catalog.gpu_models())}, got {gpu!r}"
        )
    return chosen


def _money(value: float | None, digits: int = 3) -> str:
    return "—" if value is None else f"{value:,.{digits}f}"


def _num(value: float) -> str:
    return f"{value:g}"


def _group_order(t: InstanceType) -> tuple[str, int, str, float, int, str]:
    return (t.gpu_model.casefold(), t.gpu_memory_mib, t.arch, t.gpu_count, t.vcpus, t.family)


def render_text(catalog: Catalog, types: list[InstanceType]) -> None:
    from rich.table import Table

    from gpupool.output import console as output_console

    console = output_console()
    if not console.is_terminal:
        console.width = max(console.width, 150)  # a pipe should get whole rows, not wrapped cells
    table = Table(header_style="bold")
    table.add_column("type", no_wrap=True)
    table.add_column("GPU", no_wrap=True)
    table.add_column("GPU mem GiB", justify="right")
    table.add_column("vCPU", justify="right")
    table.add_column("mem GiB", justify="right")
    table.add_column("arch")
    table.add_column("net Gbps base/burst", justify="right", no_wrap=True)
    table.add_column("EFA", justify="center")
    table.add_column("$/h", justify="right")
    table.add_column("$/GPU-h", justify="right")
    table.add_column(SMALLEST_MARK, justify="center")
    ordered = sorted(types, key=_group_order)
    for i, t in enumerate(ordered):
        smallest = catalog.is_smallest(t.instance_type)
        last_of_group = i + 1 == len(ordered) or ordered[i + 1].gpu_key != t.gpu_key
        table.add_row(
            t.instance_type,
            f"{_num(t.gpu_count)} {TIMES} {t.gpu_model}",
            _num(round(t.gpu_memory_gib, 2)),
            str(t.vcpus),
            _num(round(t.memory_gib, 2)),
            t.arch,
            f"{_num(t.network_baseline_gbps)}/{_num(t.network_burst_gbps)}",
            "yes" if t.efa_supported else "",
            _money(t.price_per_hour),
            _money(t.price_per_gpu_hour),
            SMALLEST_MARK if smallest else "",
            style="bold green" if smallest else None,
            end_section=last_of_group,
        )
    models = len({t.gpu_model for t in types})
    console.print(f"{len(types)} GPU instance types, {models} GPU model(s)", highlight=False)
    console.print(table)
    src = catalog.meta.get("source", {})
    region = catalog.meta.get("price_region", "?")
    console.print(
        f"{SMALLEST_MARK} smallest size for its GPU (model, memory, arch): use it and scale out.\n"
        f"Prices: on-demand {region}, {src.get('prices', 'unknown source')}, "
        f"generated {str(src.get('prices_generated_at', '?'))[:10]}; — means no recorded price.\n"
        f"Instances: {src.get('instances', '?')}, from {src.get('endpoint', '?')}, "
        f"generated {str(catalog.meta.get('generated_at', '?'))[:10]}.",
        highlight=False,
        soft_wrap=True,
    )


def rows(catalog: Catalog, types: list[InstanceType]) -> list[dict[str, Any]]:
    wanted = {t.instance_type for t in types}
    return [r for r in catalog.rows() if r["instance_type"] in wanted]


def run(args: argparse.Namespace) -> int:
    catalog = load_catalog()
    types = select(catalog, args.gpu)
    if args.format == "json":
        write_stdout(json.dumps(rows(catalog, types), indent=1) + "\n")
    else:
        render_text(catalog, types)
    return 0

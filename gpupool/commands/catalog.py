"""``gpupool catalog [--gpu MODEL|FAMILY] [--format text|json]``: the GPU instance catalog.

Text is a table that fits a 100-column terminal, cheapest GPU-hour first (the question a reader
has is "what does a GPU cost here"), with the smallest size for each GPU marked, because that
size is the one a pool should use and scale out with. JSON is the row list whose keys DESIGN.md
fixes, for scripts and other tools.
"""

from __future__ import annotations

import argparse
import difflib
import json
import re
from fractions import Fraction
from typing import Any

from gpupool.catalog import Catalog, InstanceType, load_catalog
from gpupool.errors import InputError
from gpupool.output import write_stdout

_REGION = re.compile(r"^[a-z]{2}(-gov)?-[a-z]+-\d$")
SMALLEST_MARK = "◆"
TIMES = "\u00d7"  # multiplication sign, as in "1 x T4"


def select(catalog: Catalog, gpu: str | None) -> list[InstanceType]:
    """The catalog's types, or those carrying ``gpu``: a GPU model (``T4``, ``a10g``) or an
    instance family (``g5``, ``g4dn``), case-insensitive; a near miss gets a suggestion."""
    types = list(catalog)
    if gpu is None:
        return types
    wanted = gpu.strip().casefold()
    chosen = [t for t in types if t.gpu_model.casefold() == wanted]
    if not chosen:
        chosen = [t for t in types if t.family.casefold() == wanted]
    if not chosen:
        models = catalog.gpu_models()
        families = sorted({t.family for t in types})
        names = {n.casefold(): n for n in [*models, *families]}
        near = difflib.get_close_matches(wanted, list(names), n=3, cutoff=0.5)
        hint = f" (did you mean {' or '.join(names[n] for n in near)}?)" if near else ""
        raise InputError(
            f"--gpu: expected a GPU model ({', '.join(models)}) or an instance family "
            f"({', '.join(families)}), got {gpu!r}{hint}"
        )
    return chosen


def by_price_per_gpu(t: InstanceType) -> tuple[bool, float, str, float, str]:
    """Cheapest GPU-hour first; types without a recorded price last."""
    price = t.price_per_gpu_hour
    return (price is None, price or 0.0, t.gpu_model.casefold(), t.gpu_count, t.instance_type)


def _money(value: float | None, digits: int = 3) -> str:
    return "—" if value is None else f"{value:,.{digits}f}"


def _num(value: float) -> str:
    return f"{value:g}"


def count(value: float) -> str:
    """GPUs per instance as people say it: ``8``, ``1/8`` (a partitioned L4), never 0.125."""
    if float(value).is_integer():
        return str(int(value))
    return str(Fraction(value).limit_denominator(64))


def _arch(arch: str) -> str:
    return {"x86_64": "x86", "arm64": "arm"}.get(arch, arch)


TEXT_WIDTH = 100  # the table fits a 100-column terminal; pipes get the same layout


def render_text(catalog: Catalog, types: list[InstanceType]) -> None:
    from rich import box
    from rich.table import Table

    from gpupool.output import console as output_console

    console = output_console()
    if not console.is_terminal:
        console.width = TEXT_WIDTH  # the same rows in a pipe or a CI log, whatever COLUMNS says
    table = Table(header_style="bold", box=box.SIMPLE_HEAD, pad_edge=False, show_edge=False,
                  padding=(0, 1), collapse_padding=True)
    table.add_column("type", no_wrap=True)
    table.add_column("GPUs", no_wrap=True)
    table.add_column("GPU\nGiB", justify="right", no_wrap=True)
    table.add_column("vCPU", justify="right", no_wrap=True)
    table.add_column("RAM\nGiB", justify="right", no_wrap=True)
    table.add_column("arch", no_wrap=True)
    table.add_column("net\nGbps", justify="right", no_wrap=True)
    table.add_column("EFA", no_wrap=True)
    table.add_column("$/h", justify="right", no_wrap=True)
    table.add_column("$/GPU-h", justify="right", no_wrap=True)
    table.add_column(SMALLEST_MARK, no_wrap=True)
    for t in sorted(types, key=by_price_per_gpu):
        smallest = catalog.is_smallest(t.instance_type)
        table.add_row(
            t.instance_type,
            f"{count(t.gpu_count)} {TIMES} {t.gpu_model}",
            _num(round(t.gpu_memory_gib, 1)),
            str(t.vcpus),
            _num(round(t.memory_gib)),
            _arch(t.arch),
            _num(t.network_baseline_gbps),
            "yes" if t.efa_supported else "",
            _money(t.price_per_hour),
            _money(t.price_per_gpu_hour),
            SMALLEST_MARK if smallest else "",
            style="bold green" if smallest else None,
        )
    models = len({t.gpu_model for t in types})
    console.print(f"{len(types)} GPU instance types, {models} GPU model(s), cheapest GPU-hour "
                  "first", highlight=False)
    console.print(table)
    src = catalog.meta.get("source", {})
    region = catalog.meta.get("price_region", "?")
    prices = catalog.meta.get("price_source") or (
        f"{src.get('prices', 'unknown source')}, "
        f"generated {str(src.get('prices_generated_at', '?'))[:10]}")
    console.print(
        f"{SMALLEST_MARK} smallest size for its GPU (model, memory, arch): use it and scale out. "
        "GPU GiB: memory of each GPU. net Gbps: the baseline bandwidth (budget against it; the "
        "burst is in --format json).\n"
        f"Prices: on-demand {region}, {prices}; — means no recorded price.\n"
        f"Instances: {src.get('instances', '?')}, from {src.get('endpoint', '?')}, "
        f"generated {str(catalog.meta.get('generated_at', '?'))[:10]}.",
        highlight=False,
    )


def rows(catalog: Catalog, types: list[InstanceType]) -> list[dict[str, Any]]:
    wanted = {t.instance_type for t in types}
    return [r for r in catalog.rows() if r["instance_type"] in wanted]


def run(args: argparse.Namespace) -> int:
    region = getattr(args, "price_region", None)
    if region is not None and not _REGION.match(region):
        raise InputError(f"--region: expected an AWS region such as eu-west-1, got {region!r}")
    catalog = load_catalog(region=region)
    types = select(catalog, args.gpu)
    if args.format == "json":
        write_stdout(json.dumps(rows(catalog, types), indent=1) + "\n")
    else:
        render_text(catalog, types)
    return 0

"""The page's chart: each :class:`gpupool.debt.chart.Panel` as one inline SVG, no script.

The same picture as ``--chart`` (:mod:`gpupool.debt.chart`): capacity grey, allocation yellow
(hatched where its use is not measured), use green, drawn over one another, one flat step per
bucket. A bucket nobody knows is drawn as nothing (the path breaks there) under a faint
"no data" band: a gap, never a zero.

The geometry is stated on each ``<svg>`` so a reader (the browser test) can turn what is drawn
back into GPUs: ``data-x0``/``data-x1`` are the plot's left and right edges (the window's start
and end), ``data-y0`` its baseline (0 GPUs), ``data-ytop`` the y of ``data-ymax`` GPUs, and
every series is one ``<path data-series="capacity|allocated|measured|used">``: per run of known
buckets ``M x base V y H x … V base Z``.
"""

from __future__ import annotations

import math
from datetime import datetime
from html import escape

from gpupool.debt.chart import COLOURS, Panel

WIDTH, HEIGHT = 960, 190
LEFT, RIGHT, TOP, BOTTOM = 52, 12, 8, 28  # the plot's margins inside the viewBox
SERIES = ("capacity", "allocated", "measured", "used")
FILLS = {"capacity": COLOURS["capacity"], "allocated": "url(#unmeasured)",
         "measured": COLOURS["allocated"], "used": COLOURS["used"]}


def nice_max(value: float) -> float:
    """The smallest 1, 1.5, 2, 2.5, 3, 4, 5, 6 or 8 times 10^k at or above ``value`` (1 for
    nothing)."""
    if value <= 0:
        return 1.0
    exp = 10 ** math.floor(math.log10(value))
    for step in (1, 1.5, 2, 2.5, 3, 4, 5, 6, 8, 10):
        if step * exp >= value - 1e-9:
            return step * exp
    return 10 * exp  # pragma: no cover - the loop ends at 10


def _n(v: float) -> str:
    return f"{v:.3f}".rstrip("0").rstrip(".")


def series_path(values: tuple[float | None, ...], x: list[float], base: float,
                scale: float) -> str:
    """The step area of one series; runs of known buckets, broken where a bucket is None."""
    parts: list[str] = []
    open_run = False
    for i, v in enumerate(values):
        if v is None:
            if open_run:
                parts.append(f"V{_n(base)}Z")
                open_run = False
            continue
        if not open_run:
            parts.append(f"M{_n(x[i])} {_n(base)}")
            open_run = True
        parts.append(f"V{_n(base - v * scale)}H{_n(x[i + 1])}")
    if open_run:
        parts.append(f"V{_n(base)}Z")
    return "".join(parts)


def _time(when: datetime, span_hours: float) -> str:
    return when.strftime("%m-%d %H:%M" if span_hours <= 72 else "%Y-%m-%d")


def panel_svg(panel: Panel, index: int, caption: str) -> str:
    """One panel: title, axes (GPUs against UTC time), the four series and the gaps."""
    n = len(panel.starts)
    known = [v for v in panel.capacity + panel.allocated if v is not None]
    ymax = nice_max(max(known, default=0.0))
    x0, x1 = LEFT, WIDTH - RIGHT
    base, top = HEIGHT - BOTTOM, TOP
    scale = (base - top) / ymax
    x = [x0 + (x1 - x0) * i / max(n, 1) for i in range(n + 1)]
    out = [f'<figure class="panel" id="panel-{index}">',
           f"<figcaption>{escape(panel.title)}</figcaption>",
           f'<svg viewBox="0 0 {WIDTH} {HEIGHT}" role="img" data-x0="{x0}" data-x1="{x1}" '
           f'data-y0="{_n(base)}" data-ytop="{_n(top)}" data-ymax="{_n(ymax)}" '
           f'data-buckets="{n}" aria-label="{escape(caption)}">',
           f"<title>{escape(panel.title)}: {escape(caption)}</title>"]
    for i in range(n):  # buckets with neither capacity nor allocation: no data
        if panel.capacity[i] is None and panel.allocated[i] is None:
            out.append(f'<rect class="gap" x="{_n(x[i])}" y="{top}" '
                       f'width="{_n(x[i + 1] - x[i])}" height="{_n(base - top)}"/>')
    for frac in (0.0, 0.5, 1.0):
        y = base - frac * (base - top)
        out.append(f'<line class="grid" x1="{x0}" x2="{x1}" y1="{_n(y)}" y2="{_n(y)}"/>'
                   f'<text class="tick" x="{x0 - 6}" y="{_n(y + 4)}" text-anchor="end">'
                   f"{ymax * frac:g}</text>")
    out.append(f'<text class="tick" x="12" y="{_n((base + top) / 2)}" text-anchor="middle" '
               f'transform="rotate(-90 12 {_n((base + top) / 2)})">GPUs</text>')
    span = (panel.end - panel.starts[0]).total_seconds() / 3600 if n else 0.0
    for k, anchor in ((0, "start"), (n // 2, "middle"), (n, "end")):
        when = panel.end if k == n else panel.starts[k]
        out.append(f'<text class="tick" x="{_n(x[k])}" y="{HEIGHT - 8}" '
                   f'text-anchor="{anchor}">{_time(when, span)}</text>')
    for key in SERIES:
        d = series_path(getattr(panel, key), x, base, scale)
        stroke = COLOURS["allocated"] if key in ("allocated", "measured") else COLOURS[key]
        out.append(f'<path class="series s-{key}" data-series="{key}" fill="{FILLS[key]}" '
                   f'stroke="{stroke}" d="{d}"/>')
    if not known:
        out.append(f'<text class="nodata" x="{(x0 + x1) / 2}" y="{(base + top) / 2}" '
                   'text-anchor="middle">no data in the window</text>')
    out.append("</svg></figure>")
    return "".join(out)


DEFS = ('<svg class="defs" width="0" height="0" aria-hidden="true"><defs>'
        '<pattern id="unmeasured" width="6" height="6" patternUnits="userSpaceOnUse" '
        'patternTransform="rotate(45)"><rect width="6" height="6" fill="#ffffff"/>'
        f'<line x1="0" y1="0" x2="0" y2="6" stroke="{COLOURS["allocated"]}" stroke-width="3"/>'
        "</pattern></defs></svg>")


def legend() -> str:
    items = (("capacity", "capacity (max size)"), ("allocated", "allocated, use not measured"),
             ("measured", "allocated (debt above use)"), ("used", "used"),
             ("gap", "no data (a gap, not zero)"))
    return '<ul class="legend">' + "".join(
        f'<li><svg width="14" height="14" aria-hidden="true"><rect width="14" height="14" '
        f'class="{"gap" if key == "gap" else "swatch"}" '
        f'{"" if key == "gap" else f"fill={chr(34)}{FILLS[key]}{chr(34)}"}/></svg>'
        f"{escape(text)}</li>" for key, text in items) + "</ul>"
